// SPDX-License-Identifier: Apache-2.0
// Wind adjustment of sprint and hurdle times after Moinat, Fabius and Emanuel (2018).

/// The events the wind model covers, spelled as on results lists.
public enum WindEvent: String, CaseIterable, Sendable, Hashable {
    case m100 = "100m"
    case m200 = "200m"
    case hurdles100 = "100mH"
    case hurdles110 = "110mH"

    /// Accepts the spellings coaches type: "100m", "100", "100mh", "100H", "110 mH".
    public init?(parsing text: String) {
        let key = String(text.lowercased().filter { !$0.isWhitespace })
        switch key {
        case "100m", "100": self = .m100
        case "200m", "200": self = .m200
        case "100mh", "100h": self = .hurdles100
        case "110mh", "110h": self = .hurdles110
        default: return nil
        }
    }
}

/// Coefficients of one event in the wind model (see `WindAdjustment`).
public struct WindCoefficients: Sendable, Hashable {
    /// Linear term, seconds per (m/s).
    public let a: Double
    /// Quadratic term, seconds per (m/s)².
    public let b: Double
    /// Performance-level term, seconds per (m/s) per second of performance (100 m only).
    public let cp: Double
}

/// The wind model of Moinat, Fabius and Emanuel (2018), "Data-driven quantification of
/// the effect of wind on athletics performance", European Journal of Sport Science
/// 18(9), 1185–1190, doi:10.1080/17461391.2018.1480062: a quadratic mixed-effects model
/// fitted to 150,169 competition results.
///
/// The correction of a performance `P` (seconds) run with wind `w` (m/s, positive is a
/// tail wind, negative a head wind, as on the wind gauge) is
///
///     Δ(P, w) = (a + cp·P)·w + b·w²
///
/// and the still-air time is `P₀ = P + Δ(P, w)`: a tail wind made the run faster, so the
/// still-air time is slower. The coefficients are the paper's practical formulas, as in
/// the authors' public calculator:
///
/// | event           | a       | b       | cp       |
/// |-----------------|---------|---------|----------|
/// | 100 m           | −0.0449 | −0.0042 | 0.009459 |
/// | 200 m           |  0.090  | −0.010  | 0        |
/// | 100 m / 110 m H |  0.093  | −0.010  | 0        |
///
/// Only for the 100 m did performance level change the effect significantly, hence its
/// `cp` term. The published summary checks these numbers: a +2.0 m/s tail wind is worth
/// 0.140 s over 200 m and 0.146 s over the hurdles, and a 13 s 100 m runner gains 69 %
/// more from it than a 10 s one.
///
/// The reverse (`time(for:stillAirTime:wind:)`) solves `P + Δ(P, w) = P₀` for `P`
/// exactly, so the two directions are inverses of each other.
///
/// Valid wind: −4.0...+4.0 m/s (`validWind`), the range of the authors' calculator and
/// of the readings the model was fitted on; outside it the quadratic turns back (the
/// 100 m correction peaks near +6 m/s) and the functions throw `windOutOfRange` rather
/// than extrapolate.
public enum WindAdjustment {
    /// Wind readings the model accepts, m/s. Why: the fit saw competition readings, which
    /// rarely pass ±4 m/s, and the authors' calculator stops there.
    public static let validWind: ClosedRange<Double> = -4.0...4.0

    /// The record limit for a tail wind, m/s (World Athletics rules: above +2.0 a time
    /// stands in the competition but not for records).
    public static let legalTailWind = 2.0

    /// The model's coefficients for `event`.
    public static func coefficients(_ event: WindEvent) -> WindCoefficients {
        switch event {
        case .m100: return WindCoefficients(a: -0.0449, b: -0.0042, cp: 0.009459)
        case .m200: return WindCoefficients(a: 0.090, b: -0.010, cp: 0)
        case .hurdles100, .hurdles110: return WindCoefficients(a: 0.093, b: -0.010, cp: 0)
        }
    }

    /// The correction Δ in seconds for a performance `time` (s) run with `wind` (m/s,
    /// + tail): how much faster the wind made the run (negative for a head wind).
    public static func correction(_ event: WindEvent, time: Double, wind: Double) throws(CalculatorError) -> Double {
        try check(time: time, wind: wind)
        let k = coefficients(event)
        return (k.a + k.cp * time) * wind + k.b * wind * wind
    }

    /// The still-air (0.0 m/s) equivalent in seconds of `time` (s) run with `wind` (m/s, + tail).
    public static func stillAirTime(_ event: WindEvent, time: Double, wind: Double) throws(CalculatorError) -> Double {
        time + (try correction(event, time: time, wind: wind))
    }

    /// The time in seconds that `stillAirTime` (s) becomes with `wind` (m/s, + tail): the
    /// exact inverse of `stillAirTime(_:time:wind:)`.
    public static func time(_ event: WindEvent, stillAirTime: Double, wind: Double) throws(CalculatorError) -> Double {
        try check(time: stillAirTime, wind: wind)
        let k = coefficients(event)
        // P·(1 + cp·w) = P₀ − a·w − b·w²; 1 + cp·w stays near 1 within the valid range.
        let t = (stillAirTime - k.a * wind - k.b * wind * wind) / (1 + k.cp * wind)
        guard t > 0 else { throw .notAPositiveTime(t) }
        return t
    }

    /// Both directions at once, for a page or command that shows a whole line.
    public static func adjust(_ event: WindEvent, time: Double, wind: Double) throws(CalculatorError) -> WindAdjusted {
        let still = try stillAirTime(event, time: time, wind: wind)
        return WindAdjusted(event: event, time: time, wind: wind, stillAirTime: still,
                            atLegalLimit: try self.time(event, stillAirTime: still, wind: legalTailWind),
                            legal: wind <= legalTailWind)
    }

    private static func check(time: Double, wind: Double) throws(CalculatorError) {
        guard time.isFinite, time > 0 else { throw .notAPositiveTime(time) }
        guard wind.isFinite, validWind.contains(wind) else { throw .windOutOfRange(wind) }
    }
}

/// One wind adjustment: the time as run and its equivalents.
public struct WindAdjusted: Sendable, Hashable {
    public let event: WindEvent
    /// The time as run, seconds.
    public let time: Double
    /// The wind reading, m/s, positive for a tail wind.
    public let wind: Double
    /// The equivalent with no wind, seconds.
    public let stillAirTime: Double
    /// The equivalent with the largest record-legal tail wind (+2.0 m/s), seconds.
    public let atLegalLimit: Double
    /// Whether the reading is within the record limit.
    public let legal: Bool
}
