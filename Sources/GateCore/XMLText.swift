// SPDX-License-Identifier: Apache-2.0
// Text put into XML files the gate writes (GPX, TCX).

public enum XMLText {
    /// `s` as XML character data or an attribute value: `&`, `<`, `>` and `"` escaped,
    /// control characters XML 1.0 has no place for (all but tab and newline) as spaces.
    public static func escape(_ s: String) -> String {
        var out = ""
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case _ where c.value < 0x20 && c != "\n" && c != "\t": out += " "
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }
}
