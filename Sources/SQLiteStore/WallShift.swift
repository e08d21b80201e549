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

extension RunStore {
    /// Moves by `stepMs` every wall time stamped within `window` (what the unset clock read
    /// from the boot up to the step): runs (their seasons and their athletes' bests follow),
    /// sessions, GPS runs, ski tracks, erg sessions with their strokes, samples and gaps.
    /// Each time is moved on its own merit, so a track that began before the window keeps
    /// its start and has its end moved. One transaction: all move or none.
    ///
    /// Why a window, not "everything": times from earlier boots were read from that boot's
    /// clock, which may have been right; only this boot's readings of the unset clock are
    /// known to be off, and by exactly the step.
    public func shiftWallTimes(in window: ClosedRange<Int64>, by stepMs: Int64) throws(StoreError) -> WallShift {
        guard stepMs != 0 else { return WallShift() }
        return try writeTransaction("move the stored dates by the clock's step") { db throws -> WallShift in
            var moved = WallShift()
            let lo = window.lowerBound, hi = window.upperBound
            /// Moves one column's values within the window; returns how many rows changed.
            func shift(_ table: String, _ column: String) throws -> Int {
                try db.execute(sql: "UPDATE \(table) SET \(column) = \(column) + ? WHERE \(column) BETWEEN ? AND ?",
                               arguments: [stepMs, lo, hi])
                return db.changesCount
            }
            // Runs one by one: the season is the year of the new date.
            let runs = try Row.fetchAll(db, sql: "SELECT id, athlete_id, wall_start_ms FROM runs WHERE wall_start_ms BETWEEN ? AND ?",
                                        arguments: [lo, hi])
            var athletes = Set<Int64>()
            for r in runs {
                let wall = (r["wall_start_ms"] as Int64) + stepMs
                try db.execute(sql: "UPDATE runs SET wall_start_ms = ?, season = ? WHERE id = ?",
                               arguments: [wall, Seasons.year(wallMs: wall), r["id"] as Int64])
                if let a = r["athlete_id"] as Int64? { athletes.insert(a) }
            }
            moved.runs = runs.count
            for a in athletes.sorted() { try Bests.recompute(athleteID: a, in: db) }
            moved.sessions = try shift("sessions", "started_wall_ms")
            moved.gpsRuns = try shift("gps_runs", "wall_ms")
            moved.skiTracks = try shift("ski_tracks", "started_wall_ms")
            _ = try shift("ski_tracks", "ended_wall_ms")
            moved.ergSessions = try shift("erg_sessions", "started_wall_ms")
            _ = try shift("erg_sessions", "ended_wall_ms")
            _ = try shift("erg_strokes", "wall_ms")
            _ = try shift("erg_samples", "wall_ms")
            _ = try shift("erg_gaps", "from_wall_ms")
            _ = try shift("erg_gaps", "to_wall_ms")
            return moved
        }
    }
}
