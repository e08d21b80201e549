// SPDX-License-Identifier: Apache-2.0
// History queries: the filter as SQL, and rows back into runs with splits and crossings.

import Foundation
import GRDB

enum Query {
    static let select = """
        SELECT r.*, a.name AS a_name, a.nickname AS a_nickname, a.colour AS a_colour,
            EXISTS (SELECT 1 FROM photos ph WHERE ph.run_id = r.id) AS has_photo,
            (SELECT group_concat(gp.gate_index) FROM gate_photos gp WHERE gp.run_id = r.id) AS photo_gates,
            (SELECT group_concat(DISTINCT gf.gate_index) FROM gate_frames gf WHERE gf.run_id = r.id) AS frame_gates,
            EXISTS (SELECT 1 FROM bests b WHERE b.run_id = r.id AND b.season = 0) AS is_pb,
            EXISTS (SELECT 1 FROM bests b WHERE b.run_id = r.id AND b.season <> 0) AS is_sb
        """
    static let from = """
        FROM runs r LEFT JOIN athletes a ON a.id = r.athlete_id LEFT JOIN presets p ON p.id = r.preset_id
            LEFT JOIN sessions s ON s.id = r.session_id
        """
    /// Distances match within half a millimetre (they are stored as metres in REAL).
    static let distanceTolerance = 0.0005

    static func whereClause(_ f: RunFilter) -> (String, StatementArguments) {
        var terms: [String] = []
        var args = StatementArguments()
        if let v = f.fromWallMs { terms.append("r.wall_start_ms >= ?"); args += [v] }
        if let v = f.toWallMs { terms.append("r.wall_start_ms < ?"); args += [v] }
        if let v = f.distance { terms.append("ABS(r.distance_m - ?) < \(distanceTolerance)"); args += [v] }
        if let v = f.startType { terms.append("r.start_type = ?"); args += [v] }
        if let v = f.gateCount { terms.append("r.gate_count = ?"); args += [v] }
        if let v = f.athleteID { terms.append("r.athlete_id = ?"); args += [v] }
        if let v = f.sessionID { terms.append("r.session_id = ?"); args += [v] }
        if !f.includeFalseStarts { terms.append("r.false_start = 0") }
        if let text = f.search?.trimmingCharacters(in: .whitespaces), !text.isEmpty {
            let pattern = "%" + likeEscaped(text) + "%"
            let columns = ["a.name", "a.nickname", "r.preset_id", "p.title", "r.notes", "s.name", "s.notes"]
            terms.append("(" + columns.map { "\($0) LIKE ? ESCAPE '\\'" }.joined(separator: " OR ") + ")")
            for _ in columns { args += [pattern] }
        }
        return (terms.isEmpty ? "" : "WHERE " + terms.joined(separator: " AND "), args)
    }

    /// Escapes LIKE's wildcards so a search for "10%" finds that text.
    static func likeEscaped(_ s: String) -> String {
        var out = ""
        for ch in s {
            if ch == "%" || ch == "_" || ch == "\\" { out.append("\\") }
            out.append(ch)
        }
        return out
    }

    static func run(from r: Row) -> StoredRun {
        StoredRun(id: r["id"], sessionID: r["session_id"], startType: r["start_type"], presetID: r["preset_id"],
                  distance: r["distance_m"], athleteID: r["athlete_id"], wallStartMs: r["wall_start_ms"],
                  startMonoNs: r["start_mono_ns"], totalNs: r["total_ns"], falseStart: r["false_start"],
                  falseStartReason: r["false_start_reason"], gateCount: r["gate_count"], notes: r["notes"],
                  originalTotalNs: r["original_total_ns"])
    }

    /// Turns `select`/`from` rows into history rows, loading each run's splits and crossings.
    static func rows(_ rows: [Row], _ db: Database) throws -> [HistoryRow] {
        try rows.map { r in
            var run = run(from: r)
            let id: Int64 = r["id"]
            run.splits = try splits(runID: id, db)
            run.crossings = try crossings(runID: id, db)
            let colour: String? = r["a_colour"]
            let gates: String? = r["photo_gates"]
            let frameGates: String? = r["frame_gates"]
            return HistoryRow(run: run, athleteName: r["a_name"], athleteNickname: r["a_nickname"],
                              athleteColour: colour.flatMap(AthleteColour.init(rawValue:)),
                              bests: BestsSet(personal: r["is_pb"], season: r["is_sb"]), hasPhoto: r["has_photo"],
                              photoGates: (gates ?? "").split(separator: ",").compactMap { Int($0) }.sorted(),
                              frameGates: (frameGates ?? "").split(separator: ",").compactMap { Int($0) }.sorted())
        }
    }

    static func splits(runID: Int64, _ db: Database) throws -> [StoredSplit] {
        try Row.fetchAll(db, sql: "SELECT * FROM splits WHERE run_id = ? ORDER BY gate_index", arguments: [runID]).map(split(from:))
    }

    static func split(from s: Row) -> StoredSplit {
        StoredSplit(gateIndex: s["gate_index"], distance: s["distance_m"], timeNs: s["time_ns"], segmentNs: s["segment_ns"],
                    segmentSpeed: s["speed_mps"], syncUncertaintyNs: s["sync_uncertainty_ns"])
    }

    static func crossings(runID: Int64, _ db: Database) throws -> [StoredCrossing] {
        try Row.fetchAll(db, sql: "SELECT * FROM crossings WHERE run_id = ? ORDER BY mono_ns, id", arguments: [runID]).map(crossing(from:))
    }

    static func crossing(from c: Row) -> StoredCrossing {
        StoredCrossing(monoNs: c["mono_ns"], uncertaintyNs: c["uncertainty_ns"], direction: c["direction"],
                       blobHeight: c["blob_height"], speedPixelsPerSecond: c["speed_px_s"])
    }

    static func bestFlags(runID: Int64, _ db: Database) throws -> BestsSet {
        let pb = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM bests WHERE run_id = ? AND season = 0)", arguments: [runID]) ?? false
        let sb = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM bests WHERE run_id = ? AND season <> 0)", arguments: [runID]) ?? false
        return BestsSet(personal: pb, season: sb)
    }
}

/// Checks on values handed to the store, each naming the field at fault.
enum Validate {
    static func run(_ r: StoredRun) throws(StoreError) {
        guard !r.startType.isEmpty, r.startType.count <= 40 else { throw StoreError(.invalid, "startType: empty or too long") }
        if let d = r.distance, !(d.isFinite && d > 0 && d <= 100_000) {
            throw StoreError(.invalid, "distance: \(d) m is not in (0, 100000]")
        }
        if let t = r.totalNs, t < 0 { throw StoreError(.invalid, "totalNs: \(t) is negative") }
        guard (1...64).contains(r.gateCount) else { throw StoreError(.invalid, "gateCount: \(r.gateCount) is not in 1...64") }
        guard r.notes.count <= RunStore.maxNotesLength else { throw StoreError(.invalid, "notes: too long") }
        var lastIndex = 0
        for s in r.splits {
            guard s.gateIndex > lastIndex else { throw StoreError(.invalid, "splits: gate indices must rise from 1 (got \(s.gateIndex))") }
            lastIndex = s.gateIndex
            guard s.timeNs >= 0, s.segmentNs >= 0, s.syncUncertaintyNs >= 0 else {
                throw StoreError(.invalid, "splits[\(s.gateIndex)]: negative time")
            }
            if let v = s.segmentSpeed, !v.isFinite { throw StoreError(.invalid, "splits[\(s.gateIndex)]: speed is not finite") }
        }
        for c in r.crossings where !(c.blobHeight.isFinite && c.speedPixelsPerSecond.isFinite) {
            throw StoreError(.invalid, "crossings: non-finite value at mono \(c.monoNs) ns")
        }
    }

    static func preset(_ p: StoredPreset) throws(StoreError) {
        guard !p.id.isEmpty, p.id.count <= 40 else { throw StoreError(.invalid, "preset.id: empty or too long") }
        try text(p.title, field: "preset.title", max: RunStore.maxNameLength)
    }

    static func filter(_ f: RunFilter) throws(StoreError) {
        guard (1...10_000).contains(f.limit) else { throw StoreError(.invalid, "limit: \(f.limit) is not in 1...10000") }
        guard f.offset >= 0 else { throw StoreError(.invalid, "offset: \(f.offset) is negative") }
        if let d = f.distance, !d.isFinite { throw StoreError(.invalid, "distance: not a number") }
    }

    static func text(_ s: String, field: String, max: Int) throws(StoreError) {
        guard s.count <= max else { throw StoreError(.invalid, "\(field): longer than \(max) characters") }
    }

    /// Trims the name and nickname; an empty nickname becomes nil.
    static func athlete(_ a: StoredAthlete) throws(StoreError) -> StoredAthlete {
        var a = a
        a.name = a.name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !a.name.isEmpty else { throw StoreError(.invalid, "name: an athlete needs a name") }
        try text(a.name, field: "name", max: RunStore.maxNameLength)
        if let n = a.nickname?.trimmingCharacters(in: .whitespacesAndNewlines) {
            a.nickname = n.isEmpty ? nil : n
            try text(n, field: "nickname", max: RunStore.maxNameLength)
        }
        return a
    }

    static func jpeg(_ bytes: [UInt8], field: String) throws(StoreError) {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else {
            throw StoreError(.invalid, "\(field): not a JPEG (it must start with FF D8)")
        }
        guard bytes.count <= RunStore.maxPhotoBytes else {
            throw StoreError(.invalid, "\(field): \(bytes.count) bytes is more than \(RunStore.maxPhotoBytes)")
        }
    }
}
