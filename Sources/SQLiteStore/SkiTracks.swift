// SPDX-License-Identifier: Apache-2.0
// The ski track logger's tracks: every fix of a tracking session, or of an imported GPX
// file, in the results database.

import Foundation
import GRDB

/// A track: one tracking session of the gate's receiver, or one imported GPX file.
public struct SkiTrack: Sendable, Hashable, Codable {
    public enum Sport: String, Sendable, Hashable, Codable, CaseIterable {
        case ski, snowboard
    }
    public enum Source: String, Sendable, Hashable, Codable {
        /// Recorded by this gate's receiver.
        case gate
        /// Imported from a GPX file.
        case gpx
    }
    public var id: Int64
    public var name: String
    public var sport: Sport
    public var source: Source
    /// Unix seconds: when tracking started (or the file was imported), and when it stopped
    /// (nil while the gate is recording it).
    public var startedWall: Double
    public var endedWall: Double?
    /// Its fixes, and the first and last fix's time (receiver's timeline, ns since 1970;
    /// nil without fixes).
    public var points: Int
    public var firstNs: Int64?
    public var lastNs: Int64?
    public var recording: Bool { source == .gate && endedWall == nil }
}

/// One stored fix: the receiver's UTC time (ns since 1970), degrees, metres above mean sea
/// level, and the Doppler speed in m/s.
public struct SkiTrackPoint: Sendable, Hashable, Codable {
    public var timeNs: Int64
    public var latitude: Double
    public var longitude: Double
    public var altitude: Double
    public var speed: Double

    public init(timeNs: Int64, latitude: Double, longitude: Double, altitude: Double, speed: Double) {
        self.timeNs = timeNs
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.speed = speed
    }
}

extension RunStore {
    /// Starts recording a track (the gate's receiver). Refused while another is recording:
    /// one receiver, one track.
    public func startSkiTrack(name: String, sport: SkiTrack.Sport, wallTime: Double) throws(StoreError) -> SkiTrack {
        let name = try Self.trackName(name)
        return try writeTransaction("start a ski track") { db in
            if let open = try Self.recordingTrackID(db) {
                throw StoreError(.invalid, "tracking: track \(open) is already being recorded; stop it first")
            }
            try db.execute(sql: "INSERT INTO ski_tracks (name, sport, source, started_wall_ms) VALUES (?, ?, 'gate', ?)",
                           arguments: [name, sport.rawValue, Self.ms(wallTime)])
            return try Self.track(db.lastInsertedRowID, db)!
        }
    }

    /// The track being recorded, if any (it survives a restart: the gate goes on with it).
    public func recordingSkiTrack() throws(StoreError) -> SkiTrack? {
        try read("read the ski track being recorded") { db in try Self.recordingTrackID(db).flatMap { try Self.track($0, db) } }
    }

    /// Stops recording a track.
    public func stopSkiTrack(id: Int64, wallTime: Double) throws(StoreError) {
        try writeTransaction("stop a ski track") { db in
            try db.execute(sql: "UPDATE ski_tracks SET ended_wall_ms = ? WHERE id = ? AND ended_wall_ms IS NULL",
                           arguments: [Self.ms(wallTime), id])
            if db.changesCount == 0 { throw StoreError(.notFound, "ski track \(id) is not being recorded") }
        }
    }

    /// Adds fixes to a track in one transaction (durable when this returns) and says how
    /// many were new. A fix at an instant the track already has is left out (a receiver's
    /// fix sent again).
    @discardableResult
    public func appendSkiPoints(trackID: Int64, _ points: [SkiTrackPoint]) throws(StoreError) -> Int {
        guard !points.isEmpty else { return 0 }
        return try writeTransaction("store ski track fixes") { db in
            let insert = try db.cachedStatement(sql: "INSERT OR IGNORE INTO ski_points (track_id, t_ns, lat, lon, alt, speed) VALUES (?, ?, ?, ?, ?, ?)")
            var added = 0
            for p in points {
                try insert.execute(arguments: [trackID, p.timeNs, p.latitude, p.longitude, p.altitude, p.speed])
                added += db.changesCount
            }
            return added
        }
    }

    /// A whole track from a file: the track and its fixes in one transaction.
    public func importSkiTrack(name: String, sport: SkiTrack.Sport, wallTime: Double, points: [SkiTrackPoint]) throws(StoreError) -> SkiTrack {
        let name = try Self.trackName(name)
        guard !points.isEmpty else { throw StoreError(.invalid, "points: a track needs fixes") }
        return try writeTransaction("import a ski track") { db in
            try db.execute(sql: "INSERT INTO ski_tracks (name, sport, source, started_wall_ms, ended_wall_ms) VALUES (?, ?, 'gpx', ?, ?)",
                           arguments: [name, sport.rawValue, Self.ms(wallTime), Self.ms(wallTime)])
            let id = db.lastInsertedRowID
            let insert = try db.cachedStatement(sql: "INSERT OR IGNORE INTO ski_points (track_id, t_ns, lat, lon, alt, speed) VALUES (?, ?, ?, ?, ?, ?)")
            for p in points {
                try insert.execute(arguments: [id, p.timeNs, p.latitude, p.longitude, p.altitude, p.speed])
            }
            return try Self.track(id, db)!
        }
    }

    /// Every track, newest first.
    public func skiTracks() throws(StoreError) -> [SkiTrack] {
        try read("read ski tracks") { db in
            try Row.fetchAll(db, sql: Self.trackSQL + " GROUP BY t.id ORDER BY t.started_wall_ms DESC, t.id DESC").map(Self.track(from:))
        }
    }

    public func skiTrack(id: Int64) throws(StoreError) -> SkiTrack {
        let t = try read("read a ski track") { db in try Self.track(id, db) }
        guard let t else { throw StoreError(.notFound, "ski track \(id) does not exist") }
        return t
    }

    /// A track's fixes in time order.
    public func skiPoints(trackID: Int64) throws(StoreError) -> [SkiTrackPoint] {
        try read("read a ski track's fixes") { db in
            try Row.fetchAll(db, sql: "SELECT t_ns, lat, lon, alt, speed FROM ski_points WHERE track_id = ? ORDER BY t_ns", arguments: [trackID])
                .map { SkiTrackPoint(timeNs: $0[0], latitude: $0[1], longitude: $0[2], altitude: $0[3], speed: $0[4]) }
        }
    }

    /// Renames a track or changes its sport (its runs are found again with that sport's settings).
    public func updateSkiTrack(id: Int64, name: String?, sport: SkiTrack.Sport?) throws(StoreError) {
        let name = try name.map { n throws(StoreError) in try Self.trackName(n) }
        try writeTransaction("change a ski track") { db in
            try db.execute(sql: "UPDATE ski_tracks SET name = COALESCE(?, name), sport = COALESCE(?, sport) WHERE id = ?",
                           arguments: [name, sport?.rawValue, id])
            if db.changesCount == 0 { throw StoreError(.notFound, "ski track \(id) does not exist") }
        }
    }

    /// Deletes a track and its fixes; refused while it is being recorded.
    public func deleteSkiTrack(id: Int64) throws(StoreError) {
        try writeTransaction("delete a ski track") { db in
            if try Self.recordingTrackID(db) == id { throw StoreError(.invalid, "tracking: stop recording track \(id) before deleting it") }
            try db.execute(sql: "DELETE FROM ski_tracks WHERE id = ?", arguments: [id])
            if db.changesCount == 0 { throw StoreError(.notFound, "ski track \(id) does not exist") }
        }
    }

    // MARK: rows

    static let trackSQL = """
        SELECT t.*, COUNT(p.t_ns) AS n, MIN(p.t_ns) AS first_ns, MAX(p.t_ns) AS last_ns
        FROM ski_tracks t LEFT JOIN ski_points p ON p.track_id = t.id
        """

    static func track(_ id: Int64, _ db: Database) throws -> SkiTrack? {
        try Row.fetchOne(db, sql: trackSQL + " WHERE t.id = ? GROUP BY t.id", arguments: [id]).map(track(from:))
    }

    static func track(from row: Row) -> SkiTrack {
        SkiTrack(id: row["id"], name: row["name"], sport: SkiTrack.Sport(rawValue: row["sport"]) ?? .ski,
                 source: SkiTrack.Source(rawValue: row["source"]) ?? .gpx, startedWall: Double(row["started_wall_ms"] as Int64) / 1000,
                 endedWall: (row["ended_wall_ms"] as Int64?).map { Double($0) / 1000 }, points: row["n"],
                 firstNs: row["first_ns"], lastNs: row["last_ns"])
    }

    static func recordingTrackID(_ db: Database) throws -> Int64? {
        try Int64.fetchOne(db, sql: "SELECT id FROM ski_tracks WHERE source = 'gate' AND ended_wall_ms IS NULL ORDER BY id DESC LIMIT 1")
    }

    static func ms(_ wall: Double) -> Int64 { Int64((wall * 1000).rounded()) }

    static func trackName(_ name: String) throws(StoreError) -> String {
        let n = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard n.count <= maxNameLength else { throw StoreError(.invalid, "name: at most \(maxNameLength) characters") }
        return n
    }
}
