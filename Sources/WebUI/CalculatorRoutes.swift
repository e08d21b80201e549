// SPDX-License-Identifier: Apache-2.0
// Calculator endpoints: wind adjustment and equivalent performances (read-only, no PIN).

import Calculators
import Foundation
import Hummingbird

/// `GET /api/calc/events`, `/api/calc/wind`, `/api/calc/points`, `/api/calc/equivalent`,
/// `/api/calc/flying`, `/api/calc/predict100`, `/api/calc/stagger`.
/// Numbers are read as a coach writes them ("10.05", "+1.8", "1:02.35").
enum CalculatorRoutes {
    struct Events: Codable {
        var wind: [String]
        var scored: [String: [String]]
        /// Events run in lanes with a stagger.
        var staggered: [String]
        var flyingDistances: [Double]
    }
    struct Wind: Codable {
        var event: String
        /// Seconds run, wind in m/s (tail wind positive).
        var time: Double
        var wind: Double
        var stillAirTime: Double
        var atLegalLimit: Double
        var legal: Bool
    }
    struct Mark: Codable { var event: String; var sex: String; var time: Double; var points: Int }
    struct EquivalentMark: Codable { var from: Mark; var to: Mark }
    struct Flying: Codable {
        struct Equivalent: Codable { var distance: Double; var time: Double }
        var distance: Double
        var time: Double
        var metresPerSecond: Double
        var kilometresPerHour: Double
        var milesPerHour: Double
        var equivalents: [Equivalent]
    }
    struct Prediction: Codable {
        var thirty: Double
        var flyingTen: Double
        var topSpeed: Double
        var lastSeventy: Double
        var hundred: Double
        /// How much longer than at top speed the last 70 m take (the model's one factor).
        var speedEndurance: Double
    }
    struct Staggers: Codable {
        struct Lane: Codable { var lane: Int; var stagger: Double }
        var event: String
        var bends: Int
        var lanes: [Lane]
    }

    static func add(to router: Router<WebContext>) {
        router.get("/api/calc/events") { _, _ in
            try json(Events(wind: WindEvent.allCases.map(\.rawValue),
                            scored: Dictionary(uniqueKeysWithValues: Sex.allCases.map { ($0.rawValue, ScoringTables.events(for: $0).map(\.rawValue)) }),
                            staggered: Stagger.bends.keys.sorted(), flyingDistances: FlyingSprint.distances))
        }
        router.get("/api/calc/wind") { request, _ in
            let q = request.uri.queryParameters
            let name = try text(q, "event")
            guard let event = WindEvent(parsing: name) else {
                throw APIError.invalid("event", "one of \(WindEvent.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            let time = try seconds(q, "time")
            guard let wind = CalcText.parse(try text(q, "wind")) else { throw APIError.invalid("wind", "a number of m/s such as +1.8 or -0.4") }
            let r = try calc(["wind", "time"]) { () throws(CalculatorError) in try WindAdjustment.adjust(event, time: time, wind: wind) }
            return try json(Wind(event: r.event.rawValue, time: r.time, wind: r.wind, stillAirTime: r.stillAirTime,
                                 atLegalLimit: r.atLegalLimit, legal: r.legal))
        }
        router.get("/api/calc/points") { request, _ in
            let q = request.uri.queryParameters
            let (event, sex) = try eventAndSex(q, "event")
            let time = try seconds(q, "time")
            let m = try calc(["event", "time"]) { () throws(CalculatorError) in try ScoringTables.points(event, sex, time: time) }
            return try json(mark(m))
        }
        router.get("/api/calc/equivalent") { request, _ in
            let q = request.uri.queryParameters
            let (from, sex) = try eventAndSex(q, "from")
            let time = try seconds(q, "time")
            guard let to = TrackEvent(parsing: try text(q, "to")) else { throw APIError.invalid("to", "unknown event") }
            let e = try calc(["to", "time"]) { () throws(CalculatorError) in try ScoringTables.equivalent(from: from, time: time, to: to, sex: sex) }
            return try json(EquivalentMark(from: mark(e.from), to: mark(e.to)))
        }
        router.get("/api/calc/flying") { request, _ in
            let q = request.uri.queryParameters
            let distance = try number(q, "distance", "metres, such as 30")
            let time = try seconds(q, "time")
            let c = try calc(["distance", "time"]) { () throws(CalculatorError) in try FlyingSprint.convert(distance: distance, time: time) }
            return try json(Flying(distance: c.distance, time: c.time, metresPerSecond: c.metresPerSecond,
                                   kilometresPerHour: c.kilometresPerHour, milesPerHour: c.milesPerHour,
                                   equivalents: c.equivalents.map { .init(distance: $0.distance, time: $0.time) }))
        }
        router.get("/api/calc/predict100") { request, _ in
            let q = request.uri.queryParameters
            let thirty = try seconds(q, "thirty")
            let flyingTen = try seconds(q, "flyingTen")
            let p = try calc(["thirty", "flyingTen"]) { () throws(CalculatorError) in try HundredPredictor.predict(thirty: thirty, flyingTen: flyingTen) }
            return try json(Prediction(thirty: p.thirty, flyingTen: p.flyingTen, topSpeed: p.topSpeed, lastSeventy: p.lastSeventy,
                                       hundred: p.hundred, speedEndurance: HundredPredictor.speedEndurance))
        }
        router.get("/api/calc/stagger") { request, _ in
            let q = request.uri.queryParameters
            let event = try text(q, "event")
            let lanes = Int(try number(q, "lanes", "a lane count 1...9"))
            let s = try calc(["event", "lanes"]) { () throws(CalculatorError) in try Stagger.staggers(event: event, laneCount: lanes) }
            return try json(Staggers(event: event, bends: Stagger.bends[event] ?? 0,
                                     lanes: s.enumerated().map { .init(lane: $0.offset + 1, stagger: $0.element) }))
        }
    }

    static func number(_ q: Parameters, _ key: String, _ what: String) throws -> Double {
        guard let v = CalcText.parse(try text(q, key)), v.isFinite else { throw APIError.invalid(key, what) }
        return v
    }

    /// Runs a calculation; its error becomes a 400 naming the field at fault.
    static func calc<T>(_ fields: [String], _ body: () throws(CalculatorError) -> T) throws(APIError) -> T {
        do { return try body() } catch { throw APIError.invalid(field(for: error, fields), error.description) }
    }

    static func mark(_ m: ScoredMark) -> Mark { Mark(event: m.event.rawValue, sex: m.sex.rawValue, time: m.time, points: m.points) }

    /// Which field a calculator error is about, from its sentence.
    static func field(for error: CalculatorError, _ candidates: [String]) -> String {
        // The newer modes' errors start with the field's own name.
        if let first = error.description.split(separator: " ").first.map(String.init), candidates.contains(first) { return first }
        let d = error.description.lowercased()
        if d.hasPrefix("wind") { return "wind" }
        if d.hasPrefix("time") || d.contains("outside the") && !d.contains("wind") { return "time" }
        if d.contains("not scored") || d.contains("unknown event") { return candidates.first ?? "event" }
        return candidates.last ?? "time"
    }

    static func text(_ q: Parameters, _ key: String) throws -> String {
        guard let v = q[key[...]], !v.isEmpty else { throw APIError.invalid(key, "required") }
        guard v.count <= 32 else { throw APIError.invalid(key, "at most 32 characters") }
        return String(v)
    }

    static func seconds(_ q: Parameters, _ key: String) throws -> Double {
        guard let t = CalcText.parseTime(try text(q, key)), t > 0, t.isFinite else {
            throw APIError.invalid(key, "a time in seconds (10.05) or minutes and seconds (1:02.35)")
        }
        return t
    }

    static func eventAndSex(_ q: Parameters, _ eventKey: String) throws -> (TrackEvent, Sex) {
        guard let event = TrackEvent(parsing: try text(q, eventKey)) else {
            throw APIError.invalid(eventKey, "one of \(TrackEvent.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let sex = Sex(parsing: try text(q, "sex")) else { throw APIError.invalid("sex", "men or women") }
        return (event, sex)
    }

    static func json<T: Encodable>(_ v: T) throws -> Response {
        let data = try JSONEncoder.board.encode(v)
        return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                        body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
