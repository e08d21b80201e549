// SPDX-License-Identifier: Apache-2.0
// Stored dates moved by a step of the wall clock: a gate that ran on an unset clock (no
// battery clock, no network) and then took the time from a phone.

import Foundation
import GRDB

/// How many records a step of the wall clock moved, per kind.
public struct WallShift: Sendable, Hashable, Codable {
    public var runs = 0
    public var sessions = 0
    public var gpsRuns = 0
    public var skiTracks = 0
    public var ergSessions = 0
    public init() {}
}

/// The highest row ids of the tables with wall times, when a process opened the database.
struct OpenMarks: Sendable {
    var runs: Int64, sessions: Int64, gpsRuns: Int64, skiTracks: Int64, ergSessions: Int64

    init(_ db: Database) throws {
        func top(_ table: String) throws -> Int64 { try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(id), 0) FROM \(table)") ?? 0 }
        runs = try top("runs")
        sessions = try top("sessions")
        gpsRuns = try top("gps_runs")
        skiTracks = try top("ski_tracks")
        ergSessions = try top("erg_sessions")
    }
}

extension RunStore {
    /// Moves by `stepMs` the wall times this process stored within `window` (what the unset
    /// clock read from the boot up to the step): runs (their seasons and their athletes'
    /// bests follow), sessions, GPS runs, ski tracks, erg sessions with their strokes,
    /// samples and gaps. One transaction: all move or none.
    ///
    /// Why both the window and this process's rows: only this boot's readings of the unset
    /// clock are known to be off, and by exactly the step. The window alone is not enough:
    /// after a power cut a board's clock starts from its last save, up to an hour before the
    /// previous boot's last records, whose times then fall in this boot's window too. Rows
    /// written by an earlier process of this boot (before a restart) keep their times.
    public func shiftWallTimes(in window: ClosedRange<Int64>, by stepMs: Int64) throws(StoreError) -> WallShift {
        guard stepMs != 0 else { return WallShift() }
        return try writeTransaction("move the stored dates by the clock's step") { db throws -> WallShift in
            var moved = WallShift()
            let lo = window.lowerBound, hi = window.upperBound
            let mark = openedAt
            /// Moves one column's values within the window, of rows whose `key` is above
            /// `above`; returns how many rows changed.
            func shift(_ table: String, _ column: String, key: String = "id", above: Int64) throws -> Int {
                try db.execute(sql: "UPDATE \(table) SET \(column) = \(column) + ? WHERE \(key) > ? AND \(column) BETWEEN ? AND ?",
                               arguments: [stepMs, above, lo, hi])
                return db.changesCount
            }
            // Runs one by one: the season is the year of the new date.
            let runs = try Row.fetchAll(db, sql: """
                SELECT id, athlete_id, session_id, wall_start_ms FROM runs WHERE id > ? AND wall_start_ms BETWEEN ? AND ?
                ORDER BY wall_start_ms, id
                """, arguments: [mark.runs, lo, hi])
            var athletes = Set<Int64>()
            var olderSessions: [Int64: [(run: Int64, wall: Int64)]] = [:]
            for r in runs {
                let id: Int64 = r["id"]
                let wall = (r["wall_start_ms"] as Int64) + stepMs
                try db.execute(sql: "UPDATE runs SET wall_start_ms = ?, season = ? WHERE id = ?",
                               arguments: [wall, Seasons.year(wallMs: wall), id])
                if let a = r["athlete_id"] as Int64? { athletes.insert(a) }
                if let sid = r["session_id"] as Int64?, sid <= mark.sessions { olderSessions[sid, default: []].append((id, wall)) }
            }
            moved.runs = runs.count
            for a in athletes.sorted() { try Bests.recompute(athleteID: a, in: db) }
            moved.sessions = try shift("sessions", "started_wall_ms", above: mark.sessions)
            // A session an earlier process opened, which this boot's runs joined because the
            // unset clock made them look minutes apart: those runs, now far from it, get a
            // session of their own.
            for (_, moving) in olderSessions.sorted(by: { $0.key < $1.key }) {
                try db.execute(sql: "INSERT INTO sessions (started_wall_ms) VALUES (?)", arguments: [moving[0].wall])
                let session = db.lastInsertedRowID
                for m in moving { try db.execute(sql: "UPDATE runs SET session_id = ? WHERE id = ?", arguments: [session, m.run]) }
                moved.sessions += 1
            }
            moved.gpsRuns = try shift("gps_runs", "wall_ms", above: mark.gpsRuns)
            moved.skiTracks = try shift("ski_tracks", "started_wall_ms", above: mark.skiTracks)
            _ = try shift("ski_tracks", "ended_wall_ms", above: mark.skiTracks)
            moved.ergSessions = try shift("erg_sessions", "started_wall_ms", above: mark.ergSessions)
            _ = try shift("erg_sessions", "ended_wall_ms", above: mark.ergSessions)
            for (table, column) in [("erg_strokes", "wall_ms"), ("erg_samples", "wall_ms"), ("erg_gaps", "from_wall_ms"), ("erg_gaps", "to_wall_ms")] {
                _ = try shift(table, column, key: "session_id", above: mark.ergSessions)
            }
            return moved
        }
    }
}
