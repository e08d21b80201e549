// SPDX-License-Identifier: Apache-2.0
// What the coach's page reads across the whole book: bests with the times they beat, the
// storage used, and clearing everything.

import Foundation
import GRDB

/// One athlete's best over one course (start type and distance), as the bests view shows it.
public struct BestLine: Sendable, Hashable {
    public var athleteID: Int64
    /// The best key, e.g. `flying_30m`.
    public var key: String
    public var startType: String
    public var distance: Double
    /// The personal (all-time) best.
    public var personal: StoredBest
    /// The best of `season` (the season asked for), if the athlete ran the course in it.
    public var season: StoredBest?
    /// The athlete's fastest over the course before the personal best was run; nil when
    /// the personal best was their first time.
    public var previousNs: Int64?
    /// Timed runs of the athlete over the course (false starts not counted).
    public var runCount: Int

    public init(athleteID: Int64, key: String, startType: String, distance: Double, personal: StoredBest, season: StoredBest?,
                previousNs: Int64?, runCount: Int) {
        self.athleteID = athleteID
        self.key = key
        self.startType = startType
        self.distance = distance
        self.personal = personal
        self.season = season
        self.previousNs = previousNs
        self.runCount = runCount
    }

    /// How much the personal best improved on the previous best, nanoseconds.
    public var improvementNs: Int64? { previousNs.map { $0 - personal.totalNs } }
}

/// The database's size on disk and what it holds.
public struct StorageUsage: Sendable, Hashable {
    /// The database file with its write-ahead log, bytes.
    public var bytes: Int64
    public var runs: Int
    public var sessions: Int
    public var athletes: Int
    /// Photo-finish images, gate images and frame-strip frames.
    public var images: Int
    public init(bytes: Int64, runs: Int, sessions: Int, athletes: Int, images: Int) {
        self.bytes = bytes
        self.runs = runs
        self.sessions = sessions
        self.athletes = athletes
        self.images = images
    }
}

extension RunStore {
    /// The calendar year (the gate's time zone) of a wall-clock instant: the season it is in.
    public static func season(wallMs: Int64) -> Int { Seasons.year(wallMs: wallMs) }

    /// Every athlete's (or one athlete's) personal best per course, with the best of
    /// `season` and the best before the personal best, by athlete id then key.
    public func bestLines(athleteID: Int64? = nil, season: Int) throws(StoreError) -> [BestLine] {
        try read("read the bests") { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT b.athlete_id, b.key, b.run_id, b.total_ns, b.wall_start_ms, r.start_type, r.distance_m,
                    (SELECT s.run_id FROM bests s WHERE s.athlete_id = b.athlete_id AND s.key = b.key AND s.season = ?) AS sb_run,
                    (SELECT s.total_ns FROM bests s WHERE s.athlete_id = b.athlete_id AND s.key = b.key AND s.season = ?) AS sb_ns,
                    (SELECT s.wall_start_ms FROM bests s WHERE s.athlete_id = b.athlete_id AND s.key = b.key AND s.season = ?) AS sb_wall,
                    (SELECT COUNT(*) FROM runs c WHERE c.athlete_id = b.athlete_id AND c.best_key = b.key
                        AND c.false_start = 0 AND c.total_ns IS NOT NULL) AS n
                FROM bests b JOIN runs r ON r.id = b.run_id
                WHERE b.season = \(Bests.personalSeason) \(athleteID == nil ? "" : "AND b.athlete_id = ?")
                ORDER BY b.athlete_id, b.key
                """, arguments: [season, season, season] + (athleteID.map { [$0] } ?? []))
            return try rows.map { r in
                let athlete: Int64 = r["athlete_id"], key: String = r["key"]
                let pb = StoredBest(athleteID: athlete, key: key, season: nil, runID: r["run_id"], totalNs: r["total_ns"],
                                    wallStartMs: r["wall_start_ms"])
                var sb: StoredBest?
                if let run: Int64 = r["sb_run"], let ns: Int64 = r["sb_ns"], let wall: Int64 = r["sb_wall"] {
                    sb = StoredBest(athleteID: athlete, key: key, season: season, runID: run, totalNs: ns, wallStartMs: wall)
                }
                return BestLine(athleteID: athlete, key: key, startType: r["start_type"], distance: r["distance_m"] ?? 0,
                                personal: pb, season: sb,
                                previousNs: try Self.bestBefore(athleteID: athlete, key: key, runID: pb.runID, wallMs: pb.wallStartMs, db),
                                runCount: r["n"])
            }
        }
    }

    /// The athlete's fastest over the run's course before the run, nanoseconds; nil
    /// when the run has no athlete or course, or nothing came before it.
    public func bestBefore(runID: Int64) throws(StoreError) -> Int64? {
        try read("read the best before a run") { db in
            guard let r = try Row.fetchOne(db, sql: "SELECT athlete_id, best_key, wall_start_ms FROM runs WHERE id = ?", arguments: [runID]) else {
                throw StoreError(.notFound, "run \(runID) does not exist")
            }
            guard let athlete: Int64 = r["athlete_id"], let key: String = r["best_key"] else { return nil }
            return try Self.bestBefore(athleteID: athlete, key: key, runID: runID, wallMs: r["wall_start_ms"], db)
        }
    }

    /// Runs started before (`wallMs`, `runID`) in time order count as before.
    static func bestBefore(athleteID: Int64, key: String, runID: Int64, wallMs: Int64, _ db: Database) throws -> Int64? {
        try Int64.fetchOne(db, sql: """
            SELECT MIN(total_ns) FROM runs WHERE athlete_id = ? AND best_key = ? AND false_start = 0 AND total_ns IS NOT NULL
                AND (wall_start_ms < ? OR (wall_start_ms = ? AND id < ?))
            """, arguments: [athleteID, key, wallMs, wallMs, runID])
    }

    /// The database's size on disk (with its write-ahead log) and what it holds.
    public func usage() throws(StoreError) -> StorageUsage {
        let counts = try read("count what is stored") { db in
            try Row.fetchOne(db, sql: """
                SELECT (SELECT COUNT(*) FROM runs) AS runs, (SELECT COUNT(*) FROM sessions) AS sessions,
                    (SELECT COUNT(*) FROM athletes) AS athletes,
                    (SELECT COUNT(*) FROM photos) + (SELECT COUNT(*) FROM gate_photos) + (SELECT COUNT(*) FROM gate_frames) AS images
                """)
        }
        var bytes: Int64 = 0
        for file in [path, path + "-wal"] {
            if let size = (try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? NSNumber { bytes += size.int64Value }
        }
        return StorageUsage(bytes: bytes, runs: counts?["runs"] ?? 0, sessions: counts?["sessions"] ?? 0,
                            athletes: counts?["athletes"] ?? 0, images: counts?["images"] ?? 0)
    }

    /// Deletes every run (with its splits, crossings and images), session, athlete and
    /// best, the next-run assignment and the roster, every GPS run, and every ski track and
    /// erg session that has ended (with their fixes and strokes), then gives the space back
    /// to the file system. Presets and the garage's vehicles stay, and so do a ski track
    /// and erg sessions still being recorded, which go on.
    /// Returns how many runs went.
    @discardableResult
    public func clearAll() throws(StoreError) -> Int {
        let runs = try writeTransaction("clear all results") { db throws -> Int in
            let n = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM runs") ?? 0
            // Children first would be redundant: runs cascade to splits, crossings and images.
            try db.execute(sql: "DELETE FROM runs; DELETE FROM bests; DELETE FROM sessions; DELETE FROM athletes")
            try db.execute(sql: "DELETE FROM gps_runs; DELETE FROM ski_tracks WHERE ended_wall_ms IS NOT NULL; "
                + "DELETE FROM erg_sessions WHERE ended_wall_ms IS NOT NULL")
            try db.execute(sql: "DELETE FROM settings WHERE key IN (?, ?)", arguments: [Self.nextRunKey, Self.rosterKey])
            return n
        }
        do {
            try pool.writeWithoutTransaction { db in
                try db.execute(sql: "VACUUM")
                try db.checkpoint(.truncate)
            }
        } catch {
            // The rows are gone; only the space is not yet returned.
            throw StoreError(.database, "cleared \(runs) runs but cannot compact the database: \(error)")
        }
        return runs
    }
}
