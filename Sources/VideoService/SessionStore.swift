// SPDX-License-Identifier: Apache-2.0
// Delay sessions, their clips and archery scores in SQLite (GRDB): one row a session, one
// a clip, the score sheet as JSON in its session's row. The clip files stay on disk.

import Archery
import Foundation
import GRDB
import VideoDelay

/// The session history's database, `sessions.sqlite` beside the session folders. Every
/// change of a session is one transaction (the session's row and its clips), committed
/// with `synchronous = FULL`, so a power cut keeps each change whole or not at all.
final class VideoSessionStore: Sendable {
    let path: String
    private let queue: DatabaseQueue

    init(path: String) throws(ClipLibraryError) {
        self.path = path
        var config = Configuration()
        config.foreignKeysEnabled = true
        config.label = "sprintgate.video-sessions"
        config.busyMode = .timeout(5)
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            // Why: FULL makes each commit durable across power loss, not only across a crash.
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        do {
            queue = try DatabaseQueue(path: path, configuration: config)
            try Self.migrator().migrate(queue)
        } catch {
            throw ClipLibraryError(description: "cannot open the video session history \(path): \(error)")
        }
    }

    private static func migrator() -> DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE video_session (
                    id TEXT PRIMARY KEY NOT NULL,
                    started_at REAL NOT NULL,
                    ended_at REAL,
                    delay_s REAL NOT NULL,
                    pre_roll_s REAL NOT NULL,
                    post_roll_s REAL NOT NULL,
                    archery TEXT
                );
                CREATE TABLE video_clip (
                    id TEXT PRIMARY KEY NOT NULL,
                    session TEXT NOT NULL REFERENCES video_session(id) ON DELETE CASCADE,
                    idx INTEGER NOT NULL,
                    kind TEXT NOT NULL,
                    mark_ns INTEGER NOT NULL,
                    mark_sequence INTEGER NOT NULL,
                    start_ns INTEGER NOT NULL,
                    end_ns INTEGER NOT NULL,
                    frames INTEGER NOT NULL,
                    bytes INTEGER NOT NULL,
                    truncated_start INTEGER NOT NULL,
                    saved_at REAL NOT NULL
                );
                CREATE INDEX video_clip_session ON video_clip(session, idx);
                """)
        }
        // Clips cut short at their end (the delay mode went off during the post-roll).
        m.registerMigration("v2 truncated_end") { db in
            try db.execute(sql: "ALTER TABLE video_clip ADD COLUMN truncated_end INTEGER NOT NULL DEFAULT 0")
        }
        return m
    }

    /// Every session, oldest first, each with its clips in order.
    func load() throws(ClipLibraryError) -> [SessionRecord] {
        do {
            return try queue.read { db in
                var clips: [String: [ClipRecord]] = [:]
                for r in try Row.fetchAll(db, sql: "SELECT * FROM video_clip ORDER BY session, idx") {
                    let c = ClipRecord(id: r["id"], session: r["session"], index: r["idx"], kind: r["kind"], markNs: r["mark_ns"],
                                       markSequence: UInt64(bitPattern: r["mark_sequence"]), startNs: r["start_ns"], endNs: r["end_ns"],
                                       frames: r["frames"], bytes: r["bytes"], truncatedStart: r["truncated_start"],
                                       truncatedEnd: r["truncated_end"], savedAt: r["saved_at"])
                    clips[c.session, default: []].append(c)
                }
                return try Row.fetchAll(db, sql: "SELECT * FROM video_session ORDER BY started_at, id").map { r in
                    let id: String = r["id"]
                    let sheet = (r["archery"] as String?).flatMap { try? JSONDecoder().decode(ScoreSheet.self, from: Data($0.utf8)) }
                    return SessionRecord(id: id, startedAt: r["started_at"], endedAt: r["ended_at"], delaySeconds: r["delay_s"],
                                         preRollSeconds: r["pre_roll_s"], postRollSeconds: r["post_roll_s"], clips: clips[id] ?? [],
                                         archery: sheet)
                }
            }
        } catch {
            throw ClipLibraryError(description: "cannot read the video session history \(path): \(error)")
        }
    }

    /// Whether session `id` is stored.
    func contains(_ id: String) -> Bool {
        (try? queue.read { db in try Bool.fetchOne(db, sql: "SELECT 1 FROM video_session WHERE id = ?", arguments: [id]) }) == true
    }

    /// Writes session `record` and exactly its clips, in one transaction.
    func save(_ record: SessionRecord) throws(ClipLibraryError) {
        do {
            let sheet = try record.archery.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
            try queue.write { db in
                try db.execute(sql: """
                    INSERT INTO video_session (id, started_at, ended_at, delay_s, pre_roll_s, post_roll_s, archery)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(id) DO UPDATE SET started_at = excluded.started_at, ended_at = excluded.ended_at,
                        delay_s = excluded.delay_s, pre_roll_s = excluded.pre_roll_s, post_roll_s = excluded.post_roll_s,
                        archery = excluded.archery
                    """, arguments: [record.id, record.startedAt, record.endedAt, record.delaySeconds, record.preRollSeconds,
                                     record.postRollSeconds, sheet])
                try db.execute(sql: "DELETE FROM video_clip WHERE session = ?", arguments: [record.id])
                for c in record.clips {
                    try db.execute(sql: """
                        INSERT INTO video_clip (id, session, idx, kind, mark_ns, mark_sequence, start_ns, end_ns, frames, bytes,
                                                truncated_start, truncated_end, saved_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """, arguments: [c.id, c.session, c.index, c.kind, c.markNs, Int64(bitPattern: c.markSequence), c.startNs, c.endNs,
                                         c.frames, c.bytes, c.truncatedStart, c.truncatedEnd, c.savedAt])
                }
            }
        } catch {
            throw ClipLibraryError(description: "cannot store session \(record.id) in \(path): \(error)")
        }
    }

    /// Deletes session `id` and its clips.
    func delete(_ id: String) throws(ClipLibraryError) {
        do { try queue.write { db in try db.execute(sql: "DELETE FROM video_session WHERE id = ?", arguments: [id]) } } catch {
            throw ClipLibraryError(description: "cannot delete session \(id) from \(path): \(error)")
        }
    }
}
