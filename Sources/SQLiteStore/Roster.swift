// SPDX-License-Identifier: Apache-2.0
// A rotating roster: each timed run hands the next run to the next athlete in the list.

import Foundation
import GRDB

extension RunStore {
    static let rosterKey = "roster"
    /// Why 50: a training group; a longer list is a mistake on the page, not a squad.
    public static let maxRoster = 50

    /// The roster's athletes in running order (empty: no rotation).
    public func roster() throws(StoreError) -> [StoredAthlete] {
        try read("read the roster") { db in try Self.rosterIDs(db).compactMap { try Self.fetchAthlete($0, db) } }
    }

    /// Sets the roster (empty: stops the rotation) and gives the next run to its first
    /// athlete. Every athlete must exist, each once.
    public func setRoster(_ ids: [Int64]) throws(StoreError) {
        guard ids.count <= Self.maxRoster else { throw StoreError(.invalid, "athleteIds: at most \(Self.maxRoster) athletes") }
        guard Set(ids).count == ids.count else { throw StoreError(.invalid, "athleteIds: an athlete is listed twice") }
        try writeTransaction("set the roster") { db in
            for a in ids where try !Self.athleteExists(a, db) { throw StoreError(.notFound, "athlete \(a) does not exist") }
            try Self.saveRoster(ids, db)
            if let first = ids.first { try Self.setSetting(Self.nextRunKey, String(first), db) }
        }
    }

    /// The athletes who ran in the latest session, in the order they first ran.
    public func latestSessionAthletes() throws(StoreError) -> [StoredAthlete] {
        try read("read the session's athletes") { db in
            guard let session = try Int64.fetchOne(db, sql: "SELECT id FROM sessions ORDER BY id DESC LIMIT 1") else { return [] }
            let ids = try Int64.fetchAll(db, sql: """
                SELECT athlete_id FROM runs WHERE session_id = ? AND athlete_id IS NOT NULL
                GROUP BY athlete_id ORDER BY MIN(wall_start_ms), MIN(id)
                """, arguments: [session])
            return try ids.compactMap { try Self.fetchAthlete($0, db) }
        }
    }

    /// The roster's ids that still name an athlete.
    static func rosterIDs(_ db: Database) throws -> [Int64] {
        guard let text = try String.fetchOne(db, sql: "SELECT value FROM settings WHERE key = ?", arguments: [rosterKey]) else { return [] }
        return try text.split(separator: ",").compactMap { Int64($0) }.filter { try athleteExists($0, db) }
    }

    static func saveRoster(_ ids: [Int64], _ db: Database) throws {
        if ids.isEmpty {
            try db.execute(sql: "DELETE FROM settings WHERE key = ?", arguments: [rosterKey])
        } else {
            try setSetting(rosterKey, ids.map(String.init).joined(separator: ","), db)
        }
    }

    static func setSetting(_ key: String, _ value: String, _ db: Database) throws {
        try db.execute(sql: "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                       arguments: [key, value])
    }
}
