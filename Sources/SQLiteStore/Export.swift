// SPDX-License-Identifier: Apache-2.0
// CSV and JSON export of the whole database, from one consistent read snapshot.

import Foundation
import GRDB

/// The JSON export document. `format` and `version` let a reader check what it got.
struct ExportDocument: Codable {
    struct Run: Codable {
        var run: StoredRun
        var athleteName: String?
        var personalBest: Bool
        var seasonBest: Bool
        var hasPhoto: Bool
    }
    var format = "sprintgate-results"
    var version = 1
    var sessions: [StoredSession]
    var athletes: [StoredAthlete]
    var presets: [StoredPreset]
    var runs: [Run]
    var bests: [StoredBest]
}

extension RunStore {
    /// Everything in the database (photos excepted: runs say `hasPhoto`) as CSV or JSON text.
    ///
    /// CSV: one row per run, oldest first, times in seconds with millisecond resolution
    /// and the start as local date-time; then columns `gateN_*` for each split.
    /// JSON: sessions, athletes, presets, runs (with splits and crossings) and bests.
    public func export(_ format: ExportFormat) throws(StoreError) -> String {
        let doc = try read("export") { db throws -> ExportDocument in
            let sessions = try Row.fetchAll(db, sql: """
                SELECT s.*, (SELECT COUNT(*) FROM runs WHERE session_id = s.id) AS n FROM sessions s ORDER BY s.id
                """).map {
                StoredSession(id: $0["id"], startedWallMs: $0["started_wall_ms"], name: $0["name"], notes: $0["notes"], runCount: $0["n"])
            }
            let athletes = try Row.fetchAll(db, sql: "SELECT * FROM athletes ORDER BY id").map(RunStore.athlete(from:))
            let presets = try Row.fetchAll(db, sql: "SELECT * FROM presets ORDER BY id").map {
                StoredPreset(id: $0["id"], title: $0["title"], distance: $0["distance_m"], startType: $0["start_type"])
            }
            // One pass over splits and crossings rather than a query per run.
            var splits: [Int64: [StoredSplit]] = [:]
            for r in try Row.fetchAll(db, sql: "SELECT * FROM splits ORDER BY run_id, gate_index") {
                splits[r["run_id"], default: []].append(Query.split(from: r))
            }
            var crossings: [Int64: [StoredCrossing]] = [:]
            for r in try Row.fetchAll(db, sql: "SELECT * FROM crossings ORDER BY run_id, mono_ns, id") {
                crossings[r["run_id"], default: []].append(Query.crossing(from: r))
            }
            let runs = try Row.fetchAll(db, sql: "\(Query.select) \(Query.from) ORDER BY r.wall_start_ms, r.id").map { r in
                var run = Query.run(from: r)
                run.splits = splits[run.id!] ?? []
                run.crossings = crossings[run.id!] ?? []
                return ExportDocument.Run(run: run, athleteName: r["a_name"], personalBest: r["is_pb"], seasonBest: r["is_sb"],
                                          hasPhoto: r["has_photo"])
            }
            return ExportDocument(sessions: sessions, athletes: athletes, presets: presets, runs: runs,
                                  bests: try RunStore.fetchBests(athleteID: nil, db))
        }
        switch format {
        case .json:
            let enc = JSONEncoder()
            enc.outputFormatting = [.prettyPrinted, .sortedKeys]
            do { return String(decoding: try enc.encode(doc), as: UTF8.self) + "\n" } catch {
                throw StoreError(.database, "cannot encode the export: \(error)")
            }
        case .csv:
            return CSV.render(doc)
        }
    }
}

/// RFC 4180 CSV of runs.
enum CSV {
    static func render(_ doc: ExportDocument) -> String {
        let athletes = Dictionary(doc.athletes.compactMap { a in a.id.map { ($0, a) } }, uniquingKeysWith: { a, _ in a })
        let maxGates = doc.runs.map(\.run.splits.count).max() ?? 0
        var header = ["run_id", "session_id", "start_local", "athlete", "nickname", "start_type", "preset", "distance_m",
                      "time_s", "false_start", "false_start_reason", "gate_count", "personal_best", "season_best", "notes",
                      "measured_time_s"]
        for g in 0..<maxGates {
            let p = "gate\(g + 1)_"
            header += [p + "distance_m", p + "time_s", p + "segment_s", p + "speed_mps", p + "uncertainty_ms"]
        }
        var out = line(header)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone.current
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        for e in doc.runs {
            let r = e.run
            let a = r.athleteID.flatMap { athletes[$0] }
            var fields = [
                "\(r.id ?? 0)", "\(r.sessionID ?? 0)",
                formatter.string(from: Date(timeIntervalSince1970: Double(r.wallStartMs) / 1000)),
                a?.name ?? "", a?.nickname ?? "", r.startType, r.presetID ?? "", r.distance.map(decimal) ?? "",
                r.totalNs.map(seconds) ?? "", r.falseStart ? "1" : "0", r.falseStartReason ?? "", "\(r.gateCount)",
                e.personalBest ? "1" : "0", e.seasonBest ? "1" : "0", r.notes,
                // The time the gate measured, when a coach corrected the run by hand.
                r.originalTotalNs.map(seconds) ?? "",
            ]
            for g in 0..<maxGates {
                if g < r.splits.count {
                    let s = r.splits[g]
                    fields += [s.distance.map(decimal) ?? "", seconds(s.timeNs), seconds(s.segmentNs),
                               s.segmentSpeed.map { String(format: "%.2f", $0) } ?? "",
                               String(format: "%.2f", Double(s.syncUncertaintyNs) * 1e-6)]
                } else {
                    fields += ["", "", "", "", ""]
                }
            }
            out += line(fields)
        }
        return out
    }

    static func seconds(_ ns: Int64) -> String { String(format: "%.3f", Double(ns) * 1e-9) }

    static func decimal(_ v: Double) -> String {
        v == v.rounded() ? String(Int64(v)) : String(format: "%.3f", v)
    }

    static func line(_ fields: [String]) -> String { fields.map(quoted).joined(separator: ",") + "\r\n" }

    /// Quotes a field when it holds a comma, quote, or line break (RFC 4180 §2.6–2.7).
    /// Why: a leading `=`, `+`, `-` or `@` would run as a formula in a spreadsheet, so such
    /// text fields get a leading apostrophe.
    static func quoted(_ s: String) -> String {
        var s = s
        if let first = s.first, "=+@".contains(first) || (first == "-" && Double(s) == nil) { s = "'" + s }
        guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return s }
        return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
