// SPDX-License-Identifier: Apache-2.0
// Fixed-point text for times, winds and points, without Foundation.

/// Formats and parses decimal numbers the way results are written at a track
/// ("10.05", "+1.8", "-0.4"), with no locale and no Foundation.
public enum CalcText {
    /// `value` rounded half away from zero to `places` decimals (0...9), e.g. `fixed(10.126, 2)` is "10.13".
    public static func fixed(_ value: Double, _ places: Int) -> String {
        precondition((0...9).contains(places), "0...9 decimal places")
        guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
        var scale: Int64 = 1
        for _ in 0..<places { scale *= 10 }
        let magnitude = (abs(value) * Double(scale)).rounded(.toNearestOrAwayFromZero)
        guard magnitude < 9.0e18 else { return value < 0 ? "-inf" : "inf" }
        let units = Int64(magnitude)
        let whole = units / scale
        var text = (value < 0 && units != 0 ? "-" : "") + String(whole)
        if places > 0 {
            let frac = String(units % scale)
            text += "." + String(repeating: "0", count: places - frac.count) + frac
        }
        return text
    }

    /// Like `fixed`, with an explicit "+" on positive values (wind readings: "+1.8").
    public static func signed(_ value: Double, _ places: Int) -> String {
        let text = fixed(value, places)
        return text.hasPrefix("-") || text.allSatisfy({ $0 == "0" || $0 == "." }) ? text : "+" + text
    }

    /// Parses a plain decimal number with an optional sign ("10.05", "+1.8", "-2", ".5");
    /// nil for anything else (exponents, spaces, commas, several points).
    public static func parse(_ text: String) -> Double? {
        var digits = Substring(text)
        var negative = false
        if let first = digits.first, first == "+" || first == "-" {
            negative = first == "-"
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.count <= 32 else { return nil }
        var sawPoint = false
        var sawDigit = false
        for c in digits {
            if c == "." {
                guard !sawPoint else { return nil }
                sawPoint = true
            } else if c.isASCII, c.isNumber {
                sawDigit = true
            } else {
                return nil
            }
        }
        guard sawDigit, let v = Double(String(digits)) else { return nil }
        return negative ? -v : v
    }

    /// A time written as seconds ("10.05") or minutes and seconds ("1:02.35"); nil if malformed.
    public static func parseTime(_ text: String) -> Double? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { return nil }
        if parts.count == 1 { return parse(text) }
        guard let minutes = Int(parts[0]), minutes >= 0,
              let seconds = parse(String(parts[1])), seconds >= 0, seconds < 60,
              !parts[1].hasPrefix("+"), !parts[1].hasPrefix("-") else { return nil }
        return Double(minutes) * 60 + seconds
    }
}
