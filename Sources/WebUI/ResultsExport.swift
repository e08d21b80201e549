// SPDX-License-Identifier: Apache-2.0
// CSV export of the history, quoted per RFC 4180 and safe to open in a spreadsheet.

import Foundation

enum ResultsExport {
    /// `measured_time_s`: the time the gate measured, when the run was corrected by hand
    /// (`time_s` is then the corrected time); empty otherwise.
    static let header = "id,date_utc,athlete,preset,start_type,time_s,splits_s,distance_m,speed,speed_unit,personal_best,season_best,measured_time_s"

    static func csv(_ rows: [RunRecord], settings: WebSettings) -> String {
        let f = ISO8601DateFormatter()
        var out = header + "\r\n"
        for r in rows {
            let speed = settings.speed(distance: r.distanceMetres, seconds: r.seconds)
            let fields = [
                String(r.id),
                f.string(from: Date(timeIntervalSince1970: r.wallTime)),
                r.athleteName ?? "",
                r.preset ?? "",
                r.startType,
                fixed(r.seconds, 3),
                r.splits.map { fixed($0, 3) }.joined(separator: " "),
                r.distanceMetres.map { fixed($0, 3) } ?? "",
                speed.map { fixed($0, 2) } ?? "",
                settings.speedUnit,
                r.personalBest ? "yes" : "no",
                r.seasonBest ? "yes" : "no",
                r.measuredSeconds.map { fixed($0, 3) } ?? "",
            ]
            out += fields.map(quote).joined(separator: ",") + "\r\n"
        }
        return out
    }

    static func fixed(_ v: Double, _ d: Int) -> String { String(format: "%.\(d)f", v) }

    /// Quotes a field when needed; a leading `= + - @` gets a `'` so a spreadsheet
    /// does not run an athlete's name as a formula.
    static func quote(_ field: String) -> String {
        var s = field
        if let c = s.first, "=+-@\t\r".contains(c), Double(s) == nil { s = "'" + s }
        if s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) {
            return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        return s
    }
}
