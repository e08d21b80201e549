// SPDX-License-Identifier: Apache-2.0
// The results database: one WAL-mode SQLite file under the state directory, read from any thread.

import Foundation
import GRDB
public import Logging
public import GateCore

/// Results, athletes, sessions, bests and photo-finish images in SQLite (GRDB, WAL mode).
///
/// Thread affinity: every method may be called from any thread. Reads run concurrently
/// on a `DatabasePool`; writes are serialised by SQLite. The engine thread must not call
/// it: the daemon hands runs to a `StoreWriter`, whose thread calls `write`.
public final class RunStore: Sendable {
    /// File name of the database inside the state directory.
    public static let fileName = "sprintgate.sqlite"
    /// A run more than this long after the previous one opens a new session.
    /// Why: a training session rarely has a three-hour pause; two visits a day do.
    public static let sessionGapMs: Int64 = 3 * 3600 * 1000
    /// Largest photo-finish JPEG accepted, bytes.
    /// Why: a 1280-column slit-scan at quality 85 is under 1 MiB; 8 MiB catches runaway input.
    public static let maxPhotoBytes = 8 << 20
    /// Longest athlete name, session name and notes accepted, characters.
    public static let maxNameLength = 80
    public static let maxNotesLength = 2000
    /// Settings-table key of the "next run belongs to" athlete.
    static let nextRunKey = "next_run_athlete"

    public let path: String
    let pool: DatabasePool
    private let log: Logger
    /// The highest ids when this process opened the database: rows above them were written
    /// by this process (ids are AUTOINCREMENT, never reused).
    let openedAt: OpenMarks

    /// Opens (creating if needed) the database at `path` and migrates it to the current schema.
    public init(path: String, logger: Logger) throws(StoreError) {
        self.path = path
        self.log = logger
        var config = Configuration()
        config.foreignKeysEnabled = true
        config.label = "sprintgate.store"
        // Why: the daemon and `sprintgate export` may open the file together; wait, don't fail.
        config.busyMode = .timeout(5)
        config.prepareDatabase { db in
            // Why: FULL makes each commit durable across power loss, not only across a crash.
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        do {
            pool = try DatabasePool(path: path, configuration: config)
            try Schema.migrator().migrate(pool)
            openedAt = try pool.read(OpenMarks.init)
        } catch {
            throw StoreError(.open, "cannot open the results database \(path): \(error) (check the state directory exists and is writable)")
        }
    }

    /// Opens `<directory>/sprintgate.sqlite`, creating the directory if it is missing.
    public convenience init(directory: String, logger: Logger) throws(StoreError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StoreError(.open, "cannot create the state directory \(directory): \(error)")
        }
        try self.init(path: directory + "/" + RunStore.fileName, logger: logger)
    }

    /// The names of the schema migrations applied to the database, oldest first.
    public func appliedMigrations() throws(StoreError) -> [String] {
        try read("list migrations") { db in try Schema.migrator().appliedMigrations(db) }
    }

    /// Result of `PRAGMA integrity_check`: `["ok"]` for a sound database.
    public func integrityCheck() throws(StoreError) -> [String] {
        try read("check integrity") { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
    }

    // MARK: - Writing runs

    /// Stores a finished (or false-started) run with its splits and crossings, inside one
    /// transaction, and files it against its athlete's bests.
    ///
    /// - A run without an athlete takes the "next run" athlete; a timed run consumes that
    ///   assignment, a false start keeps it (the athlete runs again).
    /// - Without `sessionID` the run joins the latest session, or opens a new one when the
    ///   last run is more than `sessionGapMs` older.
    /// - `preset`, when given, is recorded in the presets table (its title for search).
    @discardableResult
    public func write(_ run: StoredRun, preset: StoredPreset? = nil) throws(StoreError) -> CommittedRun {
        try Validate.run(run)
        if let preset { try Validate.preset(preset) }
        return try writeTransaction("store a run") { db throws -> CommittedRun in
            var run = run
            if run.athleteID == nil, let next = try Self.nextAthleteID(db) {
                run.athleteID = next
                if !run.falseStart {
                    try db.execute(sql: "DELETE FROM settings WHERE key = ?", arguments: [Self.nextRunKey])
                    // A rotating roster hands the next run to the athlete after this one.
                    let roster = try Self.rosterIDs(db)
                    if let i = roster.firstIndex(of: next) {
                        try Self.setSetting(Self.nextRunKey, String(roster[(i + 1) % roster.count]), db)
                    }
                }
            } else if let a = run.athleteID {
                guard try Self.athleteExists(a, db) else { throw StoreError(.notFound, "athlete \(a) does not exist") }
            }
            if let s = run.sessionID {
                guard try Int64.fetchOne(db, sql: "SELECT id FROM sessions WHERE id = ?", arguments: [s]) != nil else {
                    throw StoreError(.notFound, "session \(s) does not exist")
                }
            } else {
                run.sessionID = try Self.sessionFor(wallMs: run.wallStartMs, db)
            }
            if let p = preset {
                try db.execute(sql: """
                    INSERT INTO presets (id, title, distance_m, start_type) VALUES (?, ?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET title = excluded.title, distance_m = excluded.distance_m,
                        start_type = excluded.start_type
                    """, arguments: [p.id, p.title, p.distance, p.startType])
            } else if let pid = run.presetID {
                try db.execute(sql: "INSERT OR IGNORE INTO presets (id, title, distance_m, start_type) VALUES (?, ?, ?, ?)",
                               arguments: [pid, pid, run.distance, run.startType])
            }
            let season = Seasons.year(wallMs: run.wallStartMs)
            try db.execute(sql: """
                INSERT INTO runs (session_id, athlete_id, start_type, preset_id, distance_m, wall_start_ms, start_mono_ns,
                    total_ns, false_start, false_start_reason, gate_count, notes, best_key, season)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [run.sessionID, run.athleteID, run.startType, run.presetID, run.distance, run.wallStartMs,
                                 run.startMonoNs, run.totalNs, run.falseStart, run.falseStartReason, run.gateCount,
                                 run.notes, run.bestKey, season])
            let id = db.lastInsertedRowID
            run.id = id
            for s in run.splits {
                try db.execute(sql: """
                    INSERT INTO splits (run_id, gate_index, distance_m, time_ns, segment_ns, speed_mps, sync_uncertainty_ns)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [id, s.gateIndex, s.distance, s.timeNs, s.segmentNs, s.segmentSpeed, s.syncUncertaintyNs])
            }
            for c in run.crossings {
                try db.execute(sql: """
                    INSERT INTO crossings (run_id, mono_ns, uncertainty_ns, direction, blob_height, speed_px_s)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """, arguments: [id, c.monoNs, c.uncertaintyNs, c.direction, c.blobHeight, c.speedPixelsPerSecond])
            }
            var bests = BestsSet.none
            if let a = run.athleteID, let key = run.bestKey, let total = run.totalNs, !run.falseStart {
                bests = try Bests.record(runID: id, athleteID: a, key: key, season: season, totalNs: total,
                                         wallMs: run.wallStartMs, in: db)
            }
            return CommittedRun(run: run, bests: bests)
        }
    }

    private static func sessionFor(wallMs: Int64, _ db: Database) throws -> Int64 {
        if let row = try Row.fetchOne(db, sql: """
            SELECT s.id, MAX(s.started_wall_ms, COALESCE((SELECT MAX(wall_start_ms) FROM runs WHERE session_id = s.id), 0)) AS last
            FROM sessions s ORDER BY s.id DESC LIMIT 1
            """) {
            let last: Int64 = row["last"]
            if wallMs - last <= sessionGapMs && wallMs >= last - sessionGapMs { return row["id"] }
        }
        try db.execute(sql: "INSERT INTO sessions (started_wall_ms) VALUES (?)", arguments: [wallMs])
        return db.lastInsertedRowID
    }

    // MARK: - Reading runs

    /// Runs matching `filter`, in its order, with athlete, best flags and photo presence.
    public func history(_ filter: RunFilter = RunFilter()) throws(StoreError) -> [HistoryRow] {
        try Validate.filter(filter)
        return try read("read the history") { db in
            let (whereSQL, args) = Query.whereClause(filter)
            let order: String
            switch filter.sort {
            case .newest: order = "r.wall_start_ms DESC, r.id DESC"
            case .oldest: order = "r.wall_start_ms ASC, r.id ASC"
            case .fastest: order = "r.total_ns IS NULL, r.total_ns ASC, r.wall_start_ms ASC, r.id ASC"
            case .mostRuns: order = "group_runs DESC, r.athlete_id IS NULL, r.athlete_id, r.wall_start_ms DESC, r.id DESC"
            }
            var arguments = args
            arguments += [filter.limit, filter.offset]
            let rows = try Row.fetchAll(db, sql: """
                \(Query.select), COUNT(*) OVER (PARTITION BY r.athlete_id) AS group_runs
                \(Query.from) \(whereSQL) ORDER BY \(order) LIMIT ? OFFSET ?
                """, arguments: arguments)
            return try Query.rows(rows, db)
        }
    }

    /// How many runs match `filter` (its sort, limit and offset ignored).
    public func count(_ filter: RunFilter = RunFilter()) throws(StoreError) -> Int {
        try read("count runs") { db in
            let (whereSQL, args) = Query.whereClause(filter)
            return try Int.fetchOne(db, sql: "SELECT COUNT(*) \(Query.from) \(whereSQL)", arguments: args) ?? 0
        }
    }

    /// One run by id.
    public func run(id: Int64) throws(StoreError) -> HistoryRow {
        let rows = try read("read a run") { db in
            try Query.rows(Row.fetchAll(db, sql: "\(Query.select) \(Query.from) WHERE r.id = ?", arguments: [id]), db)
        }
        guard let row = rows.first else { throw StoreError(.notFound, "run \(id) does not exist") }
        return row
    }

    /// Runs per athlete within `filter` (its sort and paging ignored), most runs first.
    public func athleteTallies(_ filter: RunFilter = RunFilter()) throws(StoreError) -> [AthleteTally] {
        try read("count runs per athlete") { db in
            let (whereSQL, args) = Query.whereClause(filter)
            let rows = try Row.fetchAll(db, sql: """
                SELECT r.athlete_id AS aid, COUNT(*) AS n \(Query.from) \(whereSQL)
                GROUP BY r.athlete_id ORDER BY n DESC, aid IS NULL, aid
                """, arguments: args)
            return try rows.map { row in
                let aid: Int64? = row["aid"]
                let athlete = try aid.flatMap { try Self.fetchAthlete($0, db) }
                return AthleteTally(athlete: athlete, runCount: row["n"])
            }
        }
    }

    /// Deletes a run with its splits, crossings and photo; the athlete's bests are rebuilt.
    public func deleteRun(id: Int64) throws(StoreError) {
        try writeTransaction("delete a run") { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT athlete_id FROM runs WHERE id = ?", arguments: [id]) else {
                throw StoreError(.notFound, "run \(id) does not exist")
            }
            try db.execute(sql: "DELETE FROM runs WHERE id = ?", arguments: [id])
            if let a: Int64 = row["athlete_id"] { try Bests.recompute(athleteID: a, in: db) }
        }
    }

    /// Gives a stored run to another athlete (nil: nobody); returns the bests it now holds.
    public func assignRun(id: Int64, athleteID: Int64?) throws(StoreError) -> BestsSet {
        try writeTransaction("reassign a run") { db throws -> BestsSet in
            guard let row = try Row.fetchOne(db, sql: "SELECT athlete_id FROM runs WHERE id = ?", arguments: [id]) else {
                throw StoreError(.notFound, "run \(id) does not exist")
            }
            if let a = athleteID, try !Self.athleteExists(a, db) { throw StoreError(.notFound, "athlete \(a) does not exist") }
            let old: Int64? = row["athlete_id"]
            try db.execute(sql: "UPDATE runs SET athlete_id = ? WHERE id = ?", arguments: [athleteID, id])
            for a in Set([old, athleteID].compactMap { $0 }) { try Bests.recompute(athleteID: a, in: db) }
            return try Query.bestFlags(runID: id, db)
        }
    }

    /// Replaces a run's notes.
    public func setNotes(runID: Int64, notes: String) throws(StoreError) {
        guard notes.count <= Self.maxNotesLength else {
            throw StoreError(.invalid, "notes: longer than \(Self.maxNotesLength) characters")
        }
        try writeTransaction("save notes") { db in
            try db.execute(sql: "UPDATE runs SET notes = ? WHERE id = ?", arguments: [notes, runID])
            if db.changesCount == 0 { throw StoreError(.notFound, "run \(runID) does not exist") }
        }
    }

    // MARK: - Sessions

    /// Sessions with their run counts.
    public func sessions(sort: SessionSort = .newest, limit: Int = 100) throws(StoreError) -> [StoredSession] {
        guard (1...10_000).contains(limit) else { throw StoreError(.invalid, "limit: \(limit) is not in 1...10000") }
        return try read("list sessions") { db in
            let order: String
            switch sort {
            case .newest: order = "s.started_wall_ms DESC, s.id DESC"
            case .oldest: order = "s.started_wall_ms ASC, s.id ASC"
            case .mostRuns: order = "n DESC, s.started_wall_ms DESC"
            }
            return try Row.fetchAll(db, sql: """
                SELECT s.id, s.started_wall_ms, s.name, s.notes, (SELECT COUNT(*) FROM runs WHERE session_id = s.id) AS n
                FROM sessions s ORDER BY \(order) LIMIT ?
                """, arguments: [limit]).map {
                StoredSession(id: $0["id"], startedWallMs: $0["started_wall_ms"], name: $0["name"], notes: $0["notes"], runCount: $0["n"])
            }
        }
    }

    /// Opens a new session now; later runs join it until the next gap or explicit start.
    public func startSession(name: String = "", notes: String = "", wallMs: Int64) throws(StoreError) -> StoredSession {
        try Validate.text(name, field: "name", max: Self.maxNameLength)
        try Validate.text(notes, field: "notes", max: Self.maxNotesLength)
        return try writeTransaction("start a session") { db in
            try db.execute(sql: "INSERT INTO sessions (started_wall_ms, name, notes) VALUES (?, ?, ?)", arguments: [wallMs, name, notes])
            return StoredSession(id: db.lastInsertedRowID, startedWallMs: wallMs, name: name, notes: notes, runCount: 0)
        }
    }

    /// Renames a session or replaces its notes.
    public func updateSession(id: Int64, name: String, notes: String) throws(StoreError) {
        try Validate.text(name, field: "name", max: Self.maxNameLength)
        try Validate.text(notes, field: "notes", max: Self.maxNotesLength)
        try writeTransaction("update a session") { db in
            try db.execute(sql: "UPDATE sessions SET name = ?, notes = ? WHERE id = ?", arguments: [name, notes, id])
            if db.changesCount == 0 { throw StoreError(.notFound, "session \(id) does not exist") }
        }
    }

    /// Deletes a session and all its runs; returns how many runs went. Bests are rebuilt.
    @discardableResult
    public func deleteSession(id: Int64) throws(StoreError) -> Int {
        try writeTransaction("delete a session") { db throws -> Int in
            guard try Int64.fetchOne(db, sql: "SELECT id FROM sessions WHERE id = ?", arguments: [id]) != nil else {
                throw StoreError(.notFound, "session \(id) does not exist")
            }
            let athletes = try Int64.fetchAll(db, sql: "SELECT DISTINCT athlete_id FROM runs WHERE session_id = ? AND athlete_id IS NOT NULL",
                                              arguments: [id])
            let n = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM runs WHERE session_id = ?", arguments: [id]) ?? 0
            try db.execute(sql: "DELETE FROM sessions WHERE id = ?", arguments: [id])
            for a in athletes { try Bests.recompute(athleteID: a, in: db) }
            return n
        }
    }

    // MARK: - Athletes

    /// All athletes, by name.
    public func athletes() throws(StoreError) -> [StoredAthlete] {
        try read("list athletes") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM athletes ORDER BY name COLLATE NOCASE, id").map(Self.athlete(from:))
        }
    }

    public func athlete(id: Int64) throws(StoreError) -> StoredAthlete {
        let a = try read("read an athlete") { db in try Self.fetchAthlete(id, db) }
        guard let a else { throw StoreError(.notFound, "athlete \(id) does not exist") }
        return a
    }

    /// Adds an athlete (its `id` is ignored) and returns it with its new id.
    public func addAthlete(_ athlete: StoredAthlete) throws(StoreError) -> StoredAthlete {
        let a = try Validate.athlete(athlete)
        return try writeTransaction("add an athlete") { db in
            try db.execute(sql: "INSERT INTO athletes (name, nickname, colour, birthdate, gender) VALUES (?, ?, ?, ?, ?)",
                           arguments: [a.name, a.nickname, a.colour.rawValue, a.birthdate?.description, a.gender.rawValue])
            var stored = a
            stored.id = db.lastInsertedRowID
            return stored
        }
    }

    /// Replaces an athlete's details (matched by `id`).
    public func updateAthlete(_ athlete: StoredAthlete) throws(StoreError) {
        guard let id = athlete.id else { throw StoreError(.invalid, "id: an athlete to update needs its id") }
        let a = try Validate.athlete(athlete)
        try writeTransaction("update an athlete") { db in
            try db.execute(sql: "UPDATE athletes SET name = ?, nickname = ?, colour = ?, birthdate = ?, gender = ? WHERE id = ?",
                           arguments: [a.name, a.nickname, a.colour.rawValue, a.birthdate?.description, a.gender.rawValue, id])
            if db.changesCount == 0 { throw StoreError(.notFound, "athlete \(id) does not exist") }
        }
    }

    /// Deletes an athlete: their runs stay, unassigned; their bests go; a pending
    /// next-run assignment to them is cleared.
    public func deleteAthlete(id: Int64) throws(StoreError) {
        try writeTransaction("delete an athlete") { db in
            try db.execute(sql: "DELETE FROM athletes WHERE id = ?", arguments: [id])
            if db.changesCount == 0 { throw StoreError(.notFound, "athlete \(id) does not exist") }
            try db.execute(sql: "DELETE FROM settings WHERE key = ? AND value = ?", arguments: [Self.nextRunKey, String(id)])
            let roster = try Self.rosterIDs(db)
            if roster.contains(id) { try Self.saveRoster(roster.filter { $0 != id }, db) }
        }
    }

    /// The next stored run belongs to athlete `athleteID` (nil clears). Persisted: a
    /// restart keeps it. A timed run consumes it; a false start does not.
    public func assignNextRun(athleteID: Int64?) throws(StoreError) {
        try writeTransaction("assign the next run") { db in
            guard let a = athleteID else {
                try db.execute(sql: "DELETE FROM settings WHERE key = ?", arguments: [Self.nextRunKey])
                return
            }
            guard try Self.athleteExists(a, db) else { throw StoreError(.notFound, "athlete \(a) does not exist") }
            try db.execute(sql: "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                           arguments: [Self.nextRunKey, String(a)])
        }
    }

    /// The athlete the next run will be filed under, if one is assigned.
    public func nextRunAthlete() throws(StoreError) -> StoredAthlete? {
        try read("read the next-run athlete") { db in
            try Self.nextAthleteID(db).flatMap { try Self.fetchAthlete($0, db) }
        }
    }

    // MARK: - Bests

    /// Current bests (personal: `season` nil; season bests by year), by athlete then key.
    public func bests(athleteID: Int64? = nil) throws(StoreError) -> [StoredBest] {
        try read("read bests") { db in try Self.fetchBests(athleteID: athleteID, db) }
    }

    static func fetchBests(athleteID: Int64?, _ db: Database) throws -> [StoredBest] {
        let rows = try Row.fetchAll(db, sql: """
            SELECT * FROM bests \(athleteID == nil ? "" : "WHERE athlete_id = ?") ORDER BY athlete_id, key, season
            """, arguments: athleteID.map { [$0] } ?? [])
        return rows.map { r in
            let season: Int = r["season"]
            return StoredBest(athleteID: r["athlete_id"], key: r["key"], season: season == Bests.personalSeason ? nil : season,
                              runID: r["run_id"], totalNs: r["total_ns"], wallStartMs: r["wall_start_ms"])
        }
    }

    /// Presets runs were timed with.
    public func presets() throws(StoreError) -> [StoredPreset] {
        try read("list presets") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM presets ORDER BY id").map {
                StoredPreset(id: $0["id"], title: $0["title"], distance: $0["distance_m"], startType: $0["start_type"])
            }
        }
    }

    // MARK: - Photos

    /// Stores (or replaces) the photo-finish image of a run: a JPEG and its thumbnails,
    /// smallest first. Each must be a JPEG (starts with FF D8) of at most `maxPhotoBytes`.
    /// `scale` places the image on the run's time axis (nil: the image has none).
    public func savePhoto(runID: Int64, jpeg: [UInt8], thumbnails: [[UInt8]], scale: PhotoScale? = nil) throws(StoreError) {
        try Validate.jpeg(jpeg, field: "jpeg")
        for (i, t) in thumbnails.enumerated() { try Validate.jpeg(t, field: "thumbnails[\(i)]") }
        if let s = scale, !s.isUsable { throw StoreError(.invalid, "scale: not a usable time scale (\(s))") }
        try writeTransaction("store a photo") { db in
            guard try Int64.fetchOne(db, sql: "SELECT id FROM runs WHERE id = ?", arguments: [runID]) != nil else {
                throw StoreError(.notFound, "run \(runID) does not exist")
            }
            try db.execute(sql: "DELETE FROM photos WHERE run_id = ?", arguments: [runID])
            try db.execute(sql: """
                INSERT INTO photos (run_id, jpeg, crossing_x, ns_per_column, composite_x, composite_width) VALUES (?, ?, ?, ?, ?, ?)
                """, arguments: [runID, Data(jpeg), scale?.crossingX, scale?.nanosecondsPerColumn, scale?.compositeX, scale?.compositeWidth])
            for (i, t) in thumbnails.enumerated() {
                try db.execute(sql: "INSERT INTO photo_thumbnails (run_id, position, jpeg) VALUES (?, ?, ?)",
                               arguments: [runID, i, Data(t)])
            }
        }
    }

    /// The photo-finish image of a run, or nil when none was stored.
    public func photo(runID: Int64) throws(StoreError) -> StoredPhoto? {
        try read("read a photo") { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM photos WHERE run_id = ?", arguments: [runID]) else { return nil }
            let full: Data = row["jpeg"]
            let thumbs = try Data.fetchAll(db, sql: "SELECT jpeg FROM photo_thumbnails WHERE run_id = ? ORDER BY position",
                                           arguments: [runID])
            return StoredPhoto(runID: runID, jpeg: [UInt8](full), thumbnails: thumbs.map { [UInt8]($0) }, scale: Self.scale(from: row))
        }
    }

    /// Stores (or replaces) the image gate `gateIndex` (0: the start) took of its crossing
    /// in a multi-gate run. A JPEG of at most `maxPhotoBytes`; the index 0...15.
    public func saveGatePhoto(runID: Int64, gateIndex: Int, jpeg: [UInt8]) throws(StoreError) {
        try Validate.jpeg(jpeg, field: "jpeg")
        guard (0...15).contains(gateIndex) else { throw StoreError(.invalid, "gate index \(gateIndex) is outside 0...15") }
        try writeTransaction("store a gate's photo") { db in
            guard try Int64.fetchOne(db, sql: "SELECT id FROM runs WHERE id = ?", arguments: [runID]) != nil else {
                throw StoreError(.notFound, "run \(runID) does not exist")
            }
            try db.execute(sql: "INSERT OR REPLACE INTO gate_photos (run_id, gate_index, jpeg) VALUES (?, ?, ?)",
                           arguments: [runID, gateIndex, Data(jpeg)])
        }
    }

    /// Gate `gateIndex`'s image of its crossing in run `runID`, or nil.
    public func gatePhoto(runID: Int64, gateIndex: Int) throws(StoreError) -> [UInt8]? {
        try read("read a gate's photo") { db in
            try Data.fetchOne(db, sql: "SELECT jpeg FROM gate_photos WHERE run_id = ? AND gate_index = ?",
                              arguments: [runID, gateIndex]).map { [UInt8]($0) }
        }
    }

    /// Most frames in one gate's strip.
    public static let maxStripFrames = 32

    /// Stores (or replaces) the frames gate `gateIndex` saw around its crossing in run
    /// `runID`: 1...`maxStripFrames` JPEGs in time order (offsets increasing), and the gate
    /// line's column in them.
    public func saveGateFrames(runID: Int64, gateIndex: Int, gateX: Double, frames: [StoredFrame]) throws(StoreError) {
        guard (0...15).contains(gateIndex) else { throw StoreError(.invalid, "gate index \(gateIndex) is outside 0...15") }
        guard (1...Self.maxStripFrames).contains(frames.count) else {
            throw StoreError(.invalid, "frames: \(frames.count) is outside 1...\(Self.maxStripFrames)")
        }
        guard gateX.isFinite, gateX >= 0, gateX < 65_536 else { throw StoreError(.invalid, "gateX: \(gateX) is not a column") }
        for (i, f) in frames.enumerated() {
            try Validate.jpeg(f.jpeg, field: "frames[\(i)]")
            if i > 0, f.offsetMicroseconds <= frames[i - 1].offsetMicroseconds {
                throw StoreError(.invalid, "frames[\(i)]: offsets must increase")
            }
        }
        try writeTransaction("store a gate's frames") { db in
            guard try Int64.fetchOne(db, sql: "SELECT id FROM runs WHERE id = ?", arguments: [runID]) != nil else {
                throw StoreError(.notFound, "run \(runID) does not exist")
            }
            try db.execute(sql: "DELETE FROM gate_frames WHERE run_id = ? AND gate_index = ?", arguments: [runID, gateIndex])
            for (i, f) in frames.enumerated() {
                try db.execute(sql: """
                    INSERT INTO gate_frames (run_id, gate_index, position, offset_us, gate_x, jpeg) VALUES (?, ?, ?, ?, ?, ?)
                    """, arguments: [runID, gateIndex, i, f.offsetMicroseconds, gateX, Data(f.jpeg)])
            }
        }
    }

    /// The frame strip gate `gateIndex` stored for run `runID`, without the images, or nil.
    public func gateFrames(runID: Int64, gateIndex: Int) throws(StoreError) -> StoredFrameStrip? {
        try read("read a gate's frames") { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT offset_us, gate_x FROM gate_frames WHERE run_id = ? AND gate_index = ? ORDER BY position
                """, arguments: [runID, gateIndex])
            guard let first = rows.first else { return nil }
            return StoredFrameStrip(runID: runID, gateIndex: gateIndex, gateX: first["gate_x"],
                                    offsetsMicroseconds: rows.map { $0["offset_us"] })
        }
    }

    /// Frame `position` (0 = oldest) of gate `gateIndex`'s strip of run `runID`, or nil.
    public func gateFrame(runID: Int64, gateIndex: Int, position: Int) throws(StoreError) -> [UInt8]? {
        try read("read a gate's frame") { db in
            try Data.fetchOne(db, sql: "SELECT jpeg FROM gate_frames WHERE run_id = ? AND gate_index = ? AND position = ?",
                              arguments: [runID, gateIndex, position]).map { [UInt8]($0) }
        }
    }

    /// One thumbnail (0 = smallest) of a run's photo, or nil.
    public func thumbnail(runID: Int64, index: Int) throws(StoreError) -> [UInt8]? {
        try read("read a thumbnail") { db in
            try Data.fetchOne(db, sql: "SELECT jpeg FROM photo_thumbnails WHERE run_id = ? AND position = ?",
                              arguments: [runID, index]).map { [UInt8]($0) }
        }
    }

    // MARK: - Helpers

    static func nextAthleteID(_ db: Database) throws -> Int64? {
        guard let v = try String.fetchOne(db, sql: "SELECT value FROM settings WHERE key = ?", arguments: [nextRunKey]),
              let id = Int64(v), try athleteExists(id, db) else { return nil }
        return id
    }

    static func athleteExists(_ id: Int64, _ db: Database) throws -> Bool {
        try Int64.fetchOne(db, sql: "SELECT id FROM athletes WHERE id = ?", arguments: [id]) != nil
    }

    static func fetchAthlete(_ id: Int64, _ db: Database) throws -> StoredAthlete? {
        try Row.fetchOne(db, sql: "SELECT * FROM athletes WHERE id = ?", arguments: [id]).map(athlete(from:))
    }

    static func athlete(from r: Row) -> StoredAthlete {
        let birth: String? = r["birthdate"]
        return StoredAthlete(id: r["id"], name: r["name"], nickname: r["nickname"],
                             colour: AthleteColour(rawValue: r["colour"]) ?? .blue,
                             birthdate: birth.flatMap { CalendarDate($0) },
                             gender: AthleteGender(rawValue: r["gender"]) ?? .unspecified)
    }

    func read<T>(_ what: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        do { return try pool.read(body) } catch { throw Self.wrap(error, what) }
    }

    func writeTransaction<T>(_ what: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        do { return try pool.write(body) } catch { throw Self.wrap(error, what) }
    }

    static func wrap(_ error: any Error, _ what: String) -> StoreError {
        if let e = error as? StoreError { return e }
        return StoreError(.database, "cannot \(what): \(error)")
    }
}
