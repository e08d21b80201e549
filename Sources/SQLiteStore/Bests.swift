// SPDX-License-Identifier: Apache-2.0
// Personal and season bests: detection on insert, recomputation after deletes and reassignments.

import Foundation
import GRDB

/// Seasons are calendar years in the gate's local time zone.
enum Seasons {
    /// The calendar year of a wall-clock instant (milliseconds since the Unix epoch).
    static func year(wallMs: Int64) -> Int {
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = TimeZone.current
        return cal.component(.year, from: Date(timeIntervalSince1970: Double(wallMs) / 1000))
    }
}

enum Bests {
    /// `season` value of the row holding the personal (all-time) best.
    static let personalSeason = 0

    /// Files a newly inserted run against its athlete's bests; returns which it set.
    /// Ties do not set a best: the earlier run keeps it.
    static func record(runID: Int64, athleteID: Int64, key: String, season: Int, totalNs: Int64, wallMs: Int64,
                       in db: Database) throws -> BestsSet {
        var set = BestsSet.none
        for (s, isPersonal) in [(personalSeason, true), (season, false)] {
            let current = try Int64.fetchOne(db, sql: "SELECT total_ns FROM bests WHERE athlete_id = ? AND key = ? AND season = ?",
                                             arguments: [athleteID, key, s])
            guard current.map({ totalNs < $0 }) ?? true else { continue }
            try db.execute(sql: """
                INSERT INTO bests (athlete_id, key, season, run_id, total_ns, wall_start_ms) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (athlete_id, key, season) DO UPDATE SET run_id = excluded.run_id,
                    total_ns = excluded.total_ns, wall_start_ms = excluded.wall_start_ms
                """, arguments: [athleteID, key, s, runID, totalNs, wallMs])
            if isPersonal { set.personal = true } else { set.season = true }
        }
        return set
    }

    /// Rebuilds one athlete's bests from their runs (after a delete or a reassignment).
    static func recompute(athleteID: Int64, in db: Database) throws {
        try db.execute(sql: "DELETE FROM bests WHERE athlete_id = ?", arguments: [athleteID])
        let rows = try Row.fetchAll(db, sql: """
            SELECT id, best_key, season, total_ns, wall_start_ms FROM runs
            WHERE athlete_id = ? AND best_key IS NOT NULL AND total_ns IS NOT NULL AND false_start = 0
            ORDER BY total_ns, wall_start_ms, id
            """, arguments: [athleteID])
        var seen = Set<String>()
        for row in rows {
            let key: String = row["best_key"]
            let season: Int = row["season"]
            for s in [personalSeason, season] where seen.insert("\(key)#\(s)").inserted {
                try db.execute(sql: "INSERT INTO bests (athlete_id, key, season, run_id, total_ns, wall_start_ms) VALUES (?, ?, ?, ?, ?, ?)",
                               arguments: [athleteID, key, s, row["id"] as Int64, row["total_ns"] as Int64,
                                           row["wall_start_ms"] as Int64])
            }
        }
    }
}
