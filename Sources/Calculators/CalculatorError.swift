// SPDX-License-Identifier: Apache-2.0
// The one error type of the calculators: bad input, named so a coach can correct it.

/// Input a calculator cannot use. `description` is one sentence naming the value and
/// the accepted range, fit to show on the web page or the command line as is.
public struct CalculatorError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Kind: Sendable, Hashable {
        case notAPositiveTime(Double)
        case windOutOfRange(Double)
        case unknownEvent(String)
        case unknownSex(String)
        case eventNotScored(String, Sex)
        case outsideTable(String, Sex, Double)
        case pointsOutsideTable(Int)
        case badNumber(String, String)
        case outOfRange(String, Double, ClosedRange<Double>, String)
        case inconsistent(String)
    }

    private let kind: Kind
    private init(_ kind: Kind) { self.kind = kind }

    static func notAPositiveTime(_ t: Double) -> Self { Self(.notAPositiveTime(t)) }
    static func windOutOfRange(_ w: Double) -> Self { Self(.windOutOfRange(w)) }
    static func unknownEvent(_ name: String) -> Self { Self(.unknownEvent(name)) }
    static func unknownSex(_ name: String) -> Self { Self(.unknownSex(name)) }
    static func eventNotScored(_ event: String, _ sex: Sex) -> Self { Self(.eventNotScored(event, sex)) }
    static func outsideTable(_ event: String, _ sex: Sex, _ time: Double) -> Self { Self(.outsideTable(event, sex, time)) }
    static func pointsOutsideTable(_ p: Int) -> Self { Self(.pointsOutsideTable(p)) }
    static func badNumber(_ what: String, _ text: String) -> Self { Self(.badNumber(what, text)) }
    /// `what` (a field name first: "time", "distance") is outside `range`, in `unit`.
    static func outOfRange(_ what: String, _ value: Double, _ range: ClosedRange<Double>, _ unit: String) -> Self {
        Self(.outOfRange(what, value, range, unit))
    }
    /// Values that cannot belong together, said in one sentence starting with the field.
    static func inconsistent(_ sentence: String) -> Self { Self(.inconsistent(sentence)) }

    public var description: String {
        switch kind {
        case let .notAPositiveTime(t):
            return "time \(CalcText.fixed(t, 3)) s is not a positive, finite number of seconds"
        case let .windOutOfRange(w):
            return "wind \(CalcText.signed(w, 1)) m/s is outside the model's range "
                + "\(CalcText.signed(WindAdjustment.validWind.lowerBound, 1))...\(CalcText.signed(WindAdjustment.validWind.upperBound, 1)) m/s"
        case let .unknownEvent(name):
            return "unknown event '\(name)'; events: \(TrackEvent.allCases.map(\.rawValue).joined(separator: ", "))"
        case let .unknownSex(name):
            return "unknown sex '\(name)'; use men or women"
        case let .eventNotScored(event, sex):
            return "the scoring tables have no \(sex.rawValue)'s \(event)"
        case let .outsideTable(event, sex, t):
            return "\(CalcText.fixed(t, 2)) s is outside the scoring table of \(sex.rawValue)'s \(event) "
                + "(\(ScoringTables.minimumPoints)...\(ScoringTables.maximumPoints) points)"
        case let .pointsOutsideTable(p):
            return "\(p) points is outside the scoring tables (\(ScoringTables.minimumPoints)...\(ScoringTables.maximumPoints))"
        case let .badNumber(what, text):
            return "\(what) '\(text)' is not a number"
        case let .outOfRange(what, v, range, unit):
            // Whole numbers (lane counts, metres) print without decimals.
            let places = [v, range.lowerBound, range.upperBound].allSatisfy { $0 == $0.rounded() } ? 0 : 2
            return "\(what) \(CalcText.fixed(v, places))\(unit) is outside "
                + "\(CalcText.fixed(range.lowerBound, places))...\(CalcText.fixed(range.upperBound, places))\(unit)"
        case let .inconsistent(sentence):
            return sentence
        }
    }
}
