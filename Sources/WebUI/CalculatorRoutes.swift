// SPDX-License-Identifier: Apache-2.0
// Calculator endpoints: wind adjustment and equivalent performances (read-only, no PIN).

import Calculators
import Foundation
import Hummingbird

/// `GET /api/calc/events`, `/api/calc/wind`, `/api/calc/points`, `/api/calc/equivalent`.
/// Numbers are read as a coach writes them ("10.05", "+1.8", "1:02.35").
enum CalculatorRoutes {
    struct Events: Codable { var wind: [String]; var scored: [String: [String]] }
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

    static func add(to router: Router<WebContext>) {
        router.get("/api/calc/events") { _, _ in
            try json(Events(wind: WindEvent.allCases.map(\.rawValue),
                            scored: Dictionary(uniqueKeysWithValues: Sex.allCases.map { ($0.rawValue, ScoringTables.events(for: $0).map(\.rawValue)) })))
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
    }

    /// Runs a calculation; its error becomes a 400 naming the field at fault.
    static func calc<T>(_ fields: [String], _ body: () throws(CalculatorError) -> T) throws(APIError) -> T {
        do { return try body() } catch { throw APIError.invalid(field(for: error, fields), error.description) }
    }

    static func mark(_ m: ScoredMark) -> Mark { Mark(event: m.event.rawValue, sex: m.sex.rawValue, time: m.time, points: m.points) }

    /// Which field a calculator error is about, from its sentence.
    static func field(for error: CalculatorError, _ candidates: [String]) -> String {
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
