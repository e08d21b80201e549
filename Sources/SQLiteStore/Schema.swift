// SPDX-License-Identifier: Apache-2.0
// The database schema as GRDB migrations, oldest first; never edit a shipped migration.

import GRDB

enum Schema {
    /// Identifiers of the migrations in order. A database records which it has applied.
    static let v1 = "v1-sessions-runs-athletes"
    static let v2 = "v2-photos-bests-presets"
    static let v3 = "v3-gate-photos"
    static let v4 = "v4-gate-frames"
    static let v5 = "v5-athlete-colours"
    static let v6 = "v6-photo-scale-corrections"
    static let v7 = "v7-gps-garage"
    static let v8 = "v8-ski-tracks"
    static let v9 = "v9-vehicle-photos"
    static let v10 = "v10-erg-sessions"
    static let v11 = "v11-erg-intervals"

    static func migrator() -> DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration(v1) { db in
            try db.execute(sql: """
                CREATE TABLE sessions (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    started_wall_ms INTEGER NOT NULL,
                    name TEXT NOT NULL DEFAULT '',
                    notes TEXT NOT NULL DEFAULT ''
                );
                CREATE TABLE athletes (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    name TEXT NOT NULL,
                    nickname TEXT,
                    colour TEXT NOT NULL,
                    birthdate TEXT,
                    gender TEXT NOT NULL
                );
                CREATE TABLE runs (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                    athlete_id INTEGER REFERENCES athletes(id) ON DELETE SET NULL,
                    start_type TEXT NOT NULL,
                    preset_id TEXT,
                    distance_m REAL,
                    wall_start_ms INTEGER NOT NULL,
                    start_mono_ns INTEGER NOT NULL,
                    total_ns INTEGER,
                    false_start INTEGER NOT NULL,
                    false_start_reason TEXT,
                    gate_count INTEGER NOT NULL,
                    notes TEXT NOT NULL DEFAULT ''
                );
                CREATE INDEX runs_wall ON runs(wall_start_ms);
                CREATE INDEX runs_athlete ON runs(athlete_id);
                CREATE INDEX runs_session ON runs(session_id);
                CREATE TABLE splits (
                    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                    gate_index INTEGER NOT NULL,
                    distance_m REAL,
                    time_ns INTEGER NOT NULL,
                    segment_ns INTEGER NOT NULL,
                    speed_mps REAL,
                    sync_uncertainty_ns INTEGER NOT NULL,
                    PRIMARY KEY (run_id, gate_index)
                );
                CREATE TABLE crossings (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                    mono_ns INTEGER NOT NULL,
                    uncertainty_ns INTEGER NOT NULL,
                    direction TEXT NOT NULL,
                    blob_height REAL NOT NULL,
                    speed_px_s REAL NOT NULL
                );
                CREATE INDEX crossings_run ON crossings(run_id);
                CREATE TABLE settings (
                    key TEXT PRIMARY KEY,
                    value TEXT NOT NULL
                );
                """)
        }
        m.registerMigration(v2) { db in
            // Bests are filed by key and calendar year; both are derived once, at insert.
            try db.execute(sql: """
                ALTER TABLE runs ADD COLUMN best_key TEXT;
                ALTER TABLE runs ADD COLUMN season INTEGER NOT NULL DEFAULT 0;
                CREATE INDEX runs_best ON runs(athlete_id, best_key, total_ns);
                CREATE TABLE presets (
                    id TEXT PRIMARY KEY,
                    title TEXT NOT NULL,
                    distance_m REAL,
                    start_type TEXT NOT NULL
                );
                CREATE TABLE photos (
                    run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
                    jpeg BLOB NOT NULL
                );
                CREATE TABLE photo_thumbnails (
                    run_id INTEGER NOT NULL REFERENCES photos(run_id) ON DELETE CASCADE,
                    position INTEGER NOT NULL,
                    jpeg BLOB NOT NULL,
                    PRIMARY KEY (run_id, position)
                );
                CREATE TABLE bests (
                    athlete_id INTEGER NOT NULL REFERENCES athletes(id) ON DELETE CASCADE,
                    key TEXT NOT NULL,
                    season INTEGER NOT NULL,
                    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                    total_ns INTEGER NOT NULL,
                    wall_start_ms INTEGER NOT NULL,
                    PRIMARY KEY (athlete_id, key, season)
                );
                CREATE INDEX bests_run ON bests(run_id);
                """)
            // Backfill: key and season for runs stored under v1, then every athlete's bests.
            let rows = try Row.fetchAll(db, sql: "SELECT id, start_type, distance_m, wall_start_ms FROM runs")
            for row in rows {
                let id: Int64 = row["id"]
                let type: String = row["start_type"]
                let distance: Double? = row["distance_m"]
                let wall: Int64 = row["wall_start_ms"]
                try db.execute(sql: "UPDATE runs SET best_key = ?, season = ? WHERE id = ?",
                               arguments: [distance.map { BestKey.make(startType: type, distance: $0) },
                                           Seasons.year(wallMs: wall), id])
            }
            let athletes = try Int64.fetchAll(db, sql: "SELECT DISTINCT athlete_id FROM runs WHERE athlete_id IS NOT NULL")
            for a in athletes { try Bests.recompute(athleteID: a, in: db) }
        }
        m.registerMigration(v3) { db in
            // Every gate's image of its crossing in a multi-gate run (the run's own photo
            // finish stays in `photos`).
            try db.execute(sql: """
                CREATE TABLE gate_photos (
                    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                    gate_index INTEGER NOT NULL,
                    jpeg BLOB NOT NULL,
                    PRIMARY KEY (run_id, gate_index)
                );
                """)
        }
        m.registerMigration(v4) { db in
            // The frames each gate saw around its crossing of a run (the frame strip), in
            // time order, with the gate line's column in them.
            try db.execute(sql: """
                CREATE TABLE gate_frames (
                    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                    gate_index INTEGER NOT NULL,
                    position INTEGER NOT NULL,
                    offset_us INTEGER NOT NULL,
                    gate_x REAL NOT NULL,
                    jpeg BLOB NOT NULL,
                    PRIMARY KEY (run_id, gate_index, position)
                );
                """)
        }
        m.registerMigration(v5) { db in
            // The reference app's eight colours have gray where v1 had teal.
            try db.execute(sql: "UPDATE athletes SET colour = 'gray' WHERE colour = 'teal'")
        }
        m.registerMigration(v6) { db in
            // A photo finish's time scale (where the crossing is and the time per column),
            // so a coach can place the crossing by hand; a corrected run keeps the time the
            // gate measured in `original_total_ns`.
            try db.execute(sql: """
                ALTER TABLE photos ADD COLUMN crossing_x REAL;
                ALTER TABLE photos ADD COLUMN ns_per_column REAL;
                ALTER TABLE photos ADD COLUMN composite_x INTEGER;
                ALTER TABLE photos ADD COLUMN composite_width INTEGER;
                ALTER TABLE runs ADD COLUMN original_total_ns INTEGER;
                """)
        }
        m.registerMigration(v7) { db in
            // The GPS acceleration timer's garage and runs. A run keeps its vehicle's name,
            // so deleting a vehicle never loses its runs.
            try db.execute(sql: """
                CREATE TABLE vehicles (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    name TEXT NOT NULL,
                    year INTEGER,
                    make TEXT NOT NULL DEFAULT '',
                    model TEXT NOT NULL DEFAULT '',
                    trim TEXT NOT NULL DEFAULT '',
                    colour TEXT NOT NULL DEFAULT '',
                    notes TEXT NOT NULL DEFAULT ''
                );
                CREATE TABLE gps_runs (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    vehicle_id INTEGER REFERENCES vehicles(id) ON DELETE SET NULL,
                    vehicle_name TEXT,
                    wall_ms INTEGER NOT NULL,
                    milestones TEXT NOT NULL,
                    top_speed REAL NOT NULL,
                    top_speed_s REAL NOT NULL,
                    distance_m REAL NOT NULL,
                    voided TEXT,
                    fix_rate REAL NOT NULL,
                    rollout INTEGER NOT NULL,
                    accuracy_m REAL NOT NULL
                );
                CREATE INDEX gps_runs_vehicle ON gps_runs(vehicle_id, wall_ms);
                """)
        }
        m.registerMigration(v8) { db in
            // The ski track logger: a track per tracking session (or GPX file), every fix
            // of it on the receiver's timeline. A fix is stored once per instant, so a fix
            // sent again after a restart is not doubled.
            try db.execute(sql: """
                CREATE TABLE ski_tracks (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    name TEXT NOT NULL DEFAULT '',
                    sport TEXT NOT NULL,
                    source TEXT NOT NULL,
                    started_wall_ms INTEGER NOT NULL,
                    ended_wall_ms INTEGER
                );
                CREATE TABLE ski_points (
                    track_id INTEGER NOT NULL REFERENCES ski_tracks(id) ON DELETE CASCADE,
                    t_ns INTEGER NOT NULL,
                    lat REAL NOT NULL,
                    lon REAL NOT NULL,
                    alt REAL NOT NULL,
                    speed REAL NOT NULL,
                    PRIMARY KEY (track_id, t_ns)
                ) WITHOUT ROWID;
                """)
        }
        m.registerMigration(v9) { db in
            // A vehicle's photo for the garage: one JPEG, gone with its vehicle.
            try db.execute(sql: """
                CREATE TABLE vehicle_photos (
                    vehicle_id INTEGER PRIMARY KEY REFERENCES vehicles(id) ON DELETE CASCADE,
                    jpeg BLOB NOT NULL,
                    width INTEGER NOT NULL,
                    height INTEGER NOT NULL
                );
                """)
        }
        m.registerMigration(v10) { db in
            // The rowing hub's record: a session per erg and athlete, every stroke once
            // (by its stroke count and the PM5's elapsed time, so a stroke sent again after
            // a reconnect is not doubled), status samples, splits, and the stretches the
            // erg was out of reach.
            try db.execute(sql: """
                CREATE TABLE erg_sessions (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    erg TEXT NOT NULL,
                    athlete TEXT NOT NULL DEFAULT '',
                    workout TEXT NOT NULL DEFAULT '',
                    started_wall_ms INTEGER NOT NULL,
                    ended_wall_ms INTEGER,
                    summary_json TEXT
                );
                CREATE INDEX erg_sessions_athlete ON erg_sessions(athlete, started_wall_ms);
                CREATE TABLE erg_strokes (
                    session_id INTEGER NOT NULL REFERENCES erg_sessions(id) ON DELETE CASCADE,
                    stroke INTEGER NOT NULL,
                    elapsed_cs INTEGER NOT NULL,
                    wall_ms INTEGER NOT NULL,
                    distance_m REAL NOT NULL,
                    drive_length_m REAL NOT NULL,
                    drive_time_s REAL NOT NULL,
                    recovery_time_s REAL NOT NULL,
                    stroke_distance_m REAL NOT NULL,
                    peak_force_lbf REAL NOT NULL,
                    average_force_lbf REAL NOT NULL,
                    work_j REAL NOT NULL,
                    power_w INTEGER,
                    calories_per_hour INTEGER,
                    force_curve TEXT NOT NULL DEFAULT '',
                    PRIMARY KEY (session_id, stroke, elapsed_cs)
                ) WITHOUT ROWID;
                CREATE TABLE erg_samples (
                    session_id INTEGER NOT NULL REFERENCES erg_sessions(id) ON DELETE CASCADE,
                    elapsed_cs INTEGER NOT NULL,
                    wall_ms INTEGER NOT NULL,
                    distance_m REAL,
                    pace_s REAL,
                    stroke_rate INTEGER,
                    heart_rate INTEGER,
                    drag_factor INTEGER,
                    PRIMARY KEY (session_id, elapsed_cs)
                ) WITHOUT ROWID;
                CREATE TABLE erg_splits (
                    session_id INTEGER NOT NULL REFERENCES erg_sessions(id) ON DELETE CASCADE,
                    number INTEGER NOT NULL,
                    elapsed_cs INTEGER NOT NULL,
                    time_s REAL NOT NULL,
                    distance_m REAL NOT NULL,
                    rest_time_s REAL NOT NULL,
                    rest_distance_m REAL NOT NULL,
                    PRIMARY KEY (session_id, number, elapsed_cs)
                ) WITHOUT ROWID;
                CREATE TABLE erg_gaps (
                    session_id INTEGER NOT NULL REFERENCES erg_sessions(id) ON DELETE CASCADE,
                    from_wall_ms INTEGER NOT NULL,
                    to_wall_ms INTEGER,
                    last_stroke INTEGER,
                    next_stroke INTEGER,
                    PRIMARY KEY (session_id, from_wall_ms)
                ) WITHOUT ROWID;
                """)
        }
        m.registerMigration(v11) { db in
            // Workouts of intervals: the PM5 starts its elapsed time and stroke count again
            // at each interval, so strokes and samples are keyed by their interval too
            // (those stored before are all of interval 1). A gap says the intervals of the
            // strokes either side of it. SQLite cannot change a primary key in place: the
            // two tables are made anew and their rows copied.
            try db.execute(sql: """
                CREATE TABLE erg_strokes_v11 (
                    session_id INTEGER NOT NULL REFERENCES erg_sessions(id) ON DELETE CASCADE,
                    interval INTEGER NOT NULL DEFAULT 1,
                    stroke INTEGER NOT NULL,
                    elapsed_cs INTEGER NOT NULL,
                    wall_ms INTEGER NOT NULL,
                    distance_m REAL NOT NULL,
                    drive_length_m REAL NOT NULL,
                    drive_time_s REAL NOT NULL,
                    recovery_time_s REAL NOT NULL,
                    stroke_distance_m REAL NOT NULL,
                    peak_force_lbf REAL NOT NULL,
                    average_force_lbf REAL NOT NULL,
                    work_j REAL NOT NULL,
                    power_w INTEGER,
                    calories_per_hour INTEGER,
                    force_curve TEXT NOT NULL DEFAULT '',
                    PRIMARY KEY (session_id, interval, stroke, elapsed_cs)
                ) WITHOUT ROWID;
                INSERT INTO erg_strokes_v11 (session_id, interval, stroke, elapsed_cs, wall_ms, distance_m, drive_length_m, drive_time_s,
                    recovery_time_s, stroke_distance_m, peak_force_lbf, average_force_lbf, work_j, power_w, calories_per_hour, force_curve)
                    SELECT session_id, 1, stroke, elapsed_cs, wall_ms, distance_m, drive_length_m, drive_time_s, recovery_time_s,
                        stroke_distance_m, peak_force_lbf, average_force_lbf, work_j, power_w, calories_per_hour, force_curve
                    FROM erg_strokes;
                DROP TABLE erg_strokes;
                ALTER TABLE erg_strokes_v11 RENAME TO erg_strokes;
                CREATE TABLE erg_samples_v11 (
                    session_id INTEGER NOT NULL REFERENCES erg_sessions(id) ON DELETE CASCADE,
                    interval INTEGER NOT NULL DEFAULT 1,
                    elapsed_cs INTEGER NOT NULL,
                    wall_ms INTEGER NOT NULL,
                    distance_m REAL,
                    pace_s REAL,
                    stroke_rate INTEGER,
                    heart_rate INTEGER,
                    drag_factor INTEGER,
                    PRIMARY KEY (session_id, interval, elapsed_cs)
                ) WITHOUT ROWID;
                INSERT INTO erg_samples_v11 (session_id, interval, elapsed_cs, wall_ms, distance_m, pace_s, stroke_rate, heart_rate, drag_factor)
                    SELECT session_id, 1, elapsed_cs, wall_ms, distance_m, pace_s, stroke_rate, heart_rate, drag_factor FROM erg_samples;
                DROP TABLE erg_samples;
                ALTER TABLE erg_samples_v11 RENAME TO erg_samples;
                ALTER TABLE erg_gaps ADD COLUMN last_interval INTEGER;
                ALTER TABLE erg_gaps ADD COLUMN next_interval INTEGER;
                """)
        }
        return m
    }
}

extension RunStore {
    /// Creates a database at `path` migrated only to v1 and runs `sql` in it: the fixture
    /// the migration tests upgrade, as a gate running the first release would have left it.
    static func createV1Database(path: String, sql: String) throws {
        try createDatabase(path: path, upTo: Schema.v1, sql: sql)
    }

    /// Creates a database at `path` migrated only up to migration `last` and runs `sql` in
    /// it: a database as an earlier release left it.
    static func createDatabase(path: String, upTo last: String, sql: String) throws {
        let pool = try DatabasePool(path: path)
        try Schema.migrator().migrate(pool, upTo: last)
        try pool.write { try $0.execute(sql: sql) }
    }
}
