// SPDX-License-Identifier: Apache-2.0
// World Athletics scoring tables for sprints and hurdles: points from a time and back.

/// Sex of the scoring table.
public enum Sex: String, CaseIterable, Sendable, Hashable {
    case men
    case women

    /// Accepts "men", "women", "m", "w", "male", "female", "f" in any case.
    public init?(parsing text: String) {
        switch text.lowercased() {
        case "men", "man", "m", "male": self = .men
        case "women", "woman", "w", "f", "female": self = .women
        default: return nil
        }
    }
}

/// The sprint and hurdle events of the scoring tables. Indoor 200/300/400 m (short
/// track) have tables of their own; 50/55/60 m and their hurdles are indoor events.
public enum TrackEvent: String, CaseIterable, Sendable, Hashable {
    case m50 = "50m"
    case m55 = "55m"
    case m60 = "60m"
    case m100 = "100m"
    case m200 = "200m"
    case m300 = "300m"
    case m400 = "400m"
    case m200Indoor = "200m-indoor"
    case m300Indoor = "300m-indoor"
    case m400Indoor = "400m-indoor"
    case hurdles50 = "50mH"
    case hurdles55 = "55mH"
    case hurdles60 = "60mH"
    case hurdles100 = "100mH"
    case hurdles110 = "110mH"

    /// Accepts the spellings coaches type, in any case: "100m", "100", "60mh", "60H",
    /// "200m-indoor", "200msh", "200m sh".
    public init?(parsing text: String) {
        var key = String(text.lowercased().filter { !$0.isWhitespace })
        var indoor = false
        for suffix in ["-indoor", "indoor", "-sh", "sh"] where key.hasSuffix(suffix) {
            key.removeLast(suffix.count)
            indoor = true
            break
        }
        var hurdles = false
        if key.hasSuffix("mh") {
            key.removeLast(2)
            hurdles = true
        } else if key.hasSuffix("h") {
            key.removeLast()
            hurdles = true
        } else if key.hasSuffix("m") {
            key.removeLast()
        }
        guard !key.isEmpty, key.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        let name = key + "m" + (hurdles ? "H" : "") + (indoor ? "-indoor" : "")
        guard let match = TrackEvent(rawValue: name) else { return nil }
        self = match
    }
}

/// One event's table: `points = a·(t + b)² + c` for a time `t` in seconds faster than
/// `−b`, rounded to the nearest point.
public struct ScoringCoefficients: Sendable, Hashable {
    public let a: Double
    public let b: Double
    public let c: Double

    /// The unrounded score of `t` seconds.
    @inlinable public func score(_ t: Double) -> Double { a * (t + b) * (t + b) + c }
}

/// A mark and its points in one table.
public struct ScoredMark: Sendable, Hashable {
    public let event: TrackEvent
    public let sex: Sex
    /// The time in seconds, in hundredths as the tables list it.
    public let time: Double
    public let points: Int
}

/// An equivalent performance: the mark in `to` worth the points of the mark in `from`.
public struct Equivalent: Sendable, Hashable {
    public let from: ScoredMark
    /// The slowest time in the target event that scores at least `from.points`.
    public let to: ScoredMark
}

/// The World Athletics Scoring Tables of Athletics, 2022 edition (in force 2022–2024;
/// for the events here its values equal the 2017 edition's), for sprints and hurdles.
///
/// The tables are generated per event and sex from `points = a·(t + b)² + c` (t in
/// seconds). World Athletics does not publish the constants; the ones here are the
/// least-squares fits to the published tables by M. Moinat (github.com/MaximMoinat/
/// ScoringTablesIAAF, 2017 tables), which J. Chen's independent fit to the 2022 tables
/// (github.com/jchen1/iaaf-scoring-tables, coefficients-2023.json) reproduces to within
/// a point. Checks: men's 100 m 9.58 s gives 1356 points (the tables' value of the world
/// record), 10.00 s gives 1206.
///
/// Rounding rules:
/// - A time is first rounded up to the hundredth, as fully automatic times are
///   (World Athletics Competition Rule 19.24): 10.001 s is scored as 10.01 s.
/// - Points are the fitted score rounded to the nearest integer (J. Chen found that
///   rounding, not truncating, the fitted score reproduces the printed tables best).
/// - The tables run from 1 to 1400 points; marks outside are errors.
/// - The mark for a number of points is the slowest hundredth that scores at least
///   that many (several hundredths share a score in long events; one hundredth spans
///   several points in the 50–60 m).
///
/// Not covered: the 2025 edition, which changed at least the men's 110 m hurdles and
/// men's 50 m hurdles tables (its other sprint tables match these constants).
public enum ScoringTables {
    /// The lowest and highest scores the tables print.
    public static let minimumPoints = 1
    public static let maximumPoints = 1400

    /// The constants of one table, or nil when the tables have no such event (no men's
    /// 100 m hurdles, no women's 110 m hurdles).
    public static func coefficients(_ event: TrackEvent, _ sex: Sex) -> ScoringCoefficients? {
        switch (event, sex) {
        case (.m50, .men): return .init(a: 95.822353863, b: -9.1994010874, c: -0.3765978316)
        case (.m55, .men): return .init(a: 78.9227608846, b: -9.9991682963, c: -0.3262593216)
        case (.m60, .men): return .init(a: 68.6203220047, b: -10.6992800164, c: -0.3594275681)
        case (.m100, .men): return .init(a: 24.6422116633, b: -16.9975315583, c: -0.218662048)
        case (.m200, .men): return .init(a: 5.0833296257, b: -35.4911115974, c: 0.0957410215)
        case (.m300, .men): return .init(a: 1.8296570247, b: -57.1976881434, c: -0.0553585925)
        case (.m400, .men): return .init(a: 1.0210130426, b: -78.9946930564, c: 0.0029880052)
        case (.m200Indoor, .men): return .init(a: 5.0432159856, b: -35.9910107213, c: 0.1193936923)
        case (.m300Indoor, .men): return .init(a: 1.8029166507, b: -57.9959412461, c: -0.0339878087)
        case (.m400Indoor, .men): return .init(a: 0.9810343085, b: -80.5943092492, c: 0.0100805172)
        case (.hurdles50, .men): return .init(a: 34.2123772242, b: -12.3484992509, c: -0.2978589247)
        case (.hurdles55, .men): return .init(a: 30.0853077082, b: -13.3476676416, c: -0.2329919571)
        case (.hurdles60, .men): return .init(a: 23.9163242706, b: -14.5966339421, c: -0.1644943777)
        case (.hurdles110, .men): return .init(a: 7.6652061276, b: -25.7930225928, c: 0.0141087786)
        case (.m50, .women): return .init(a: 33.0462434523, b: -12.0979307449, c: -0.2321096149)
        case (.m55, .women): return .init(a: 27.6922288869, b: -13.1481380284, c: -0.3043705117)
        case (.m60, .women): return .init(a: 24.9117754427, b: -13.9976515376, c: -0.2293776923)
        case (.m100, .women): return .init(a: 9.9274264508, b: -21.9933700028, c: 0.0421329658)
        case (.m200, .women): return .init(a: 2.2422237149, b: -45.4938200765, c: 0.0245765276)
        case (.m300, .women): return .init(a: 0.6999743364, b: -76.9959087143, c: -0.01399444)
        case (.m400, .women): return .init(a: 0.3350059758, b: -109.9942273774, c: 0.0076554298)
        case (.m200Indoor, .women): return .init(a: 1.9616411646, b: -47.4976950867, c: -0.0697455752)
        case (.m300Indoor, .women): return .init(a: 0.6595165231, b: -78.9940494903, c: 0.0176083216)
        case (.m400Indoor, .women): return .init(a: 0.322396617, b: -111.9954899416, c: -0.0058333313)
        case (.hurdles50, .women): return .init(a: 16.2126653261, b: -15.2953835346, c: -0.1053761359)
        case (.hurdles55, .women): return .init(a: 13.1982215478, b: -16.7954274775, c: -0.0911772754)
        case (.hurdles60, .women): return .init(a: 11.168281889, b: -18.1940019446, c: 0.0085061498)
        case (.hurdles100, .women): return .init(a: 3.9822963262, b: -29.9904801411, c: 0.1130387851)
        case (.hurdles100, .men), (.hurdles110, .women): return nil
        }
    }

    /// The events a sex has tables for.
    public static func events(for sex: Sex) -> [TrackEvent] {
        TrackEvent.allCases.filter { coefficients($0, sex) != nil }
    }

    /// The points of `time` seconds in `event` for `sex` (time rounded up to the hundredth).
    public static func points(_ event: TrackEvent, _ sex: Sex, time: Double) throws(CalculatorError) -> ScoredMark {
        guard time.isFinite, time > 0 else { throw .notAPositiveTime(time) }
        guard let k = coefficients(event, sex) else { throw .eventNotScored(event.rawValue, sex) }
        // Why: a float such as 10.05 is 10.0499999…; shave a nanosecond before rounding up.
        let hundredths = Int(((time * 100) - 1e-7).rounded(.up))
        let p = points(k, hundredths: hundredths)
        guard let p, (minimumPoints...maximumPoints).contains(p) else {
            throw .outsideTable(event.rawValue, sex, Double(hundredths) / 100)
        }
        return ScoredMark(event: event, sex: sex, time: Double(hundredths) / 100, points: p)
    }

    /// The slowest time (in hundredths) in `event` for `sex` that scores at least `points`.
    public static func mark(_ event: TrackEvent, _ sex: Sex, points: Int) throws(CalculatorError) -> ScoredMark {
        guard (minimumPoints...maximumPoints).contains(points) else { throw .pointsOutsideTable(points) }
        guard let k = coefficients(event, sex) else { throw .eventNotScored(event.rawValue, sex) }
        // Continuous time at which the score reaches points − 0.5 (where rounding gives `points`).
        let t = -k.b - ((Double(points) - 0.5 - k.c) / k.a).squareRoot()
        var h = Int((t * 100).rounded(.down))
        // Settle the last hundredth with the same integer rule `points(…)` uses.
        while h > 1, (self.points(k, hundredths: h) ?? Int.min) < points { h -= 1 }
        while (self.points(k, hundredths: h + 1) ?? Int.min) >= points { h += 1 }
        guard h > 0, let p = self.points(k, hundredths: h) else { throw .pointsOutsideTable(points) }
        return ScoredMark(event: event, sex: sex, time: Double(h) / 100, points: p)
    }

    /// The mark in `to` worth as many points as `time` seconds in `from`, for `sex`.
    public static func equivalent(from: TrackEvent, time: Double, to: TrackEvent, sex: Sex) throws(CalculatorError) -> Equivalent {
        let source = try points(from, sex, time: time)
        return Equivalent(from: source, to: try mark(to, sex, points: source.points))
    }

    /// Rounded points of a time in hundredths; nil at or beyond the parabola's vertex,
    /// where slower times would score more.
    private static func points(_ k: ScoringCoefficients, hundredths: Int) -> Int? {
        let t = Double(hundredths) / 100
        guard t < -k.b else { return nil }
        return Int(k.score(t).rounded(.toNearestOrAwayFromZero))
    }
}
