// SPDX-License-Identifier: Apache-2.0
// The GPS acceleration timer's garage: vehicles, the default and active one, and every run
// with its milestones, in the results database.

import Foundation
import GRDB

/// A vehicle of the garage.
public struct Vehicle: Sendable, Hashable, Codable {
    public var id: Int64?
    /// Required.
    public var name: String
    public var year: Int?
    public var make: String
    public var model: String
    public var trim: String
    public var colour: String
    public var notes: String

    public init(id: Int64? = nil, name: String, year: Int? = nil, make: String = "", model: String = "", trim: String = "",
                colour: String = "", notes: String = "") {
        self.id = id
        self.name = name
        self.year = year
        self.make = make
        self.model = model
        self.trim = trim
        self.colour = colour
        self.notes = notes
    }
}

/// One milestone of a stored run: seconds from the start, its one-sigma uncertainty, and
/// speeds in m/s (the trap speed at 1/8 and 1/4 mile).
public struct GPSMilestoneRecord: Sendable, Hashable, Codable {
    public var name: String
    public var seconds: Double
    public var uncertainty: Double
    public var speed: Double
    public var trapSpeed: Double?

    public init(name: String, seconds: Double, uncertainty: Double, speed: Double, trapSpeed: Double? = nil) {
        self.name = name
        self.seconds = seconds
        self.uncertainty = uncertainty
        self.speed = speed
        self.trapSpeed = trapSpeed
    }
}

/// A GPS acceleration run, timed or voided.
public struct GPSRunRecord: Sendable, Hashable, Codable {
    public var id: Int64?
    public var vehicleID: Int64?
    /// The vehicle's name when the run was made (kept when the vehicle is deleted).
    public var vehicleName: String?
    /// Unix seconds when it finished.
    public var wallTime: Double
    public var milestones: [GPSMilestoneRecord]
    /// m/s, and seconds from the start.
    public var topSpeed: Double
    public var topSpeedSeconds: Double
    /// Metres.
    public var distance: Double
    /// Why the run has no times; nil for a timed run.
    public var voided: String?
    public var fixRate: Double
    public var rollout: Bool
    /// The accuracy gate it was timed with, m.
    public var accuracyGate: Double

    public init(id: Int64? = nil, vehicleID: Int64? = nil, vehicleName: String? = nil, wallTime: Double, milestones: [GPSMilestoneRecord],
                topSpeed: Double, topSpeedSeconds: Double, distance: Double, voided: String?, fixRate: Double, rollout: Bool,
                accuracyGate: Double) {
        self.id = id
        self.vehicleID = vehicleID
        self.vehicleName = vehicleName
        self.wallTime = wallTime
        self.milestones = milestones
        self.topSpeed = topSpeed
        self.topSpeedSeconds = topSpeedSeconds
        self.distance = distance
        self.voided = voided
        self.fixRate = fixRate
        self.rollout = rollout
        self.accuracyGate = accuracyGate
    }

    public func milestone(_ name: String) -> GPSMilestoneRecord? { milestones.first { $0.name == name } }
}

/// A vehicle with its run count and best time per milestone.
public struct GarageVehicle: Sendable, Hashable, Codable {
    public var vehicle: Vehicle
    /// Runs stored for it, timed and voided.
    public var runs: Int
    /// Milestone name → best seconds, over its timed runs.
    public var bests: [String: Double]
    /// True when it has a photo (`vehiclePhoto(id:)`).
    public var hasPhoto: Bool
}

/// A vehicle's photo: a JPEG and its size in pixels.
public struct VehiclePhoto: Sendable, Hashable {
    public var jpeg: [UInt8]
    public var width: Int
    public var height: Int

    /// The largest photo kept. Why 1 MB: the page scales a phone's photo to 800 pixels
    /// before sending it (about 100 kB); a full-size one would be slow on the gate's Wi-Fi.
    public static let maxBytes = 1 << 20
    public static let maxSide = 4096

    /// A JPEG file's width and height from its frame header, or why it is not a JPEG
    /// picture the page can show.
    public static func read(_ bytes: [UInt8]) throws(StoreError) -> VehiclePhoto {
        guard bytes.count <= maxBytes else { throw StoreError(.invalid, "photo: at most \(maxBytes >> 10) kB") }
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[2] == 0xFF else {
            throw StoreError(.invalid, "photo: not a JPEG picture (choose a photo; the page sends it as JPEG)")
        }
        // The markers up to the frame header (SOF0...SOF15 but DHT, JPG and DAC).
        var i = 2
        while i + 9 < bytes.count {
            guard bytes[i] == 0xFF else { break }
            let marker = bytes[i + 1]
            if marker == 0xFF { i += 1; continue }
            let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            if (0xC0 ... 0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                let h = Int(bytes[i + 5]) << 8 | Int(bytes[i + 6]), w = Int(bytes[i + 7]) << 8 | Int(bytes[i + 8])
                guard (1 ... maxSide).contains(w), (1 ... maxSide).contains(h) else {
                    throw StoreError(.invalid, "photo: \(w) × \(h) pixels; at most \(maxSide) on a side")
                }
                return VehiclePhoto(jpeg: bytes, width: w, height: h)
            }
            guard length >= 2 else { break }
            i += 2 + length
        }
        throw StoreError(.invalid, "photo: the JPEG is cut short or damaged (no frame header)")
    }
}

/// The garage: its vehicles, the default one (active when the gate starts) and the active one.
public struct Garage: Sendable, Hashable, Codable {
    public var vehicles: [GarageVehicle]
    public var defaultID: Int64?
    public var activeID: Int64?
}

/// Which runs, in which order.
public struct GPSRunQuery: Sendable, Hashable {
    public enum Order: Sendable, Hashable {
        case newest, oldest
        /// Fastest first at this milestone (runs without it left out).
        case fastest(String)
        /// Highest top speed first.
        case topSpeed
    }
    public var vehicleID: Int64?
    public var order: Order
    public var limit: Int
    public init(vehicleID: Int64? = nil, order: Order = .newest, limit: Int = 100) {
        self.vehicleID = vehicleID
        self.order = order
        self.limit = limit
    }
}

extension RunStore {
    static let defaultVehicleKey = "gps_default_vehicle"
    static let activeVehicleKey = "gps_active_vehicle"

    // MARK: vehicles

    public func garage() throws(StoreError) -> Garage {
        try read("read the garage") { db in
            let vehicles = try Row.fetchAll(db, sql: "SELECT * FROM vehicles ORDER BY name COLLATE NOCASE, id").map(Self.vehicle(from:))
            var runs: [Int64: Int] = [:], bests: [Int64: [String: Double]] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT vehicle_id, milestones, voided FROM gps_runs WHERE vehicle_id IS NOT NULL") {
                let id: Int64 = row["vehicle_id"]
                runs[id, default: 0] += 1
                guard (row["voided"] as String?) == nil else { continue }
                for m in try Self.milestones(row["milestones"]) {
                    bests[id, default: [:]][m.name] = min(bests[id]?[m.name] ?? .infinity, m.seconds)
                }
            }
            let photos = Set(try Int64.fetchAll(db, sql: "SELECT vehicle_id FROM vehicle_photos"))
            return Garage(vehicles: vehicles.map {
                GarageVehicle(vehicle: $0, runs: runs[$0.id!] ?? 0, bests: bests[$0.id!] ?? [:], hasPhoto: photos.contains($0.id!))
            },
                          defaultID: try Self.vehicleSetting(Self.defaultVehicleKey, db), activeID: try Self.activeVehicleID(db))
        }
    }

    /// Adds a vehicle (its `id` ignored); the first one becomes the default.
    public func addVehicle(_ vehicle: Vehicle) throws(StoreError) -> Vehicle {
        let v = try Self.validate(vehicle)
        return try writeTransaction("add a vehicle") { db in
            try db.execute(sql: "INSERT INTO vehicles (name, year, make, model, trim, colour, notes) VALUES (?, ?, ?, ?, ?, ?, ?)",
                           arguments: [v.name, v.year, v.make, v.model, v.trim, v.colour, v.notes])
            var stored = v
            stored.id = db.lastInsertedRowID
            if try Self.vehicleSetting(Self.defaultVehicleKey, db) == nil {
                try Self.setSetting(Self.defaultVehicleKey, String(stored.id!), db)
            }
            return stored
        }
    }

    public func updateVehicle(_ vehicle: Vehicle) throws(StoreError) {
        let v = try Self.validate(vehicle)
        guard let id = v.id else { throw StoreError(.invalid, "id: a vehicle to change needs its id") }
        try writeTransaction("change a vehicle") { db in
            try db.execute(sql: "UPDATE vehicles SET name = ?, year = ?, make = ?, model = ?, trim = ?, colour = ?, notes = ? WHERE id = ?",
                           arguments: [v.name, v.year, v.make, v.model, v.trim, v.colour, v.notes, id])
            if db.changesCount == 0 { throw StoreError(.notFound, "vehicle \(id) does not exist") }
        }
    }

    /// Deletes a vehicle; its runs stay, under the name they were made with.
    public func deleteVehicle(id: Int64) throws(StoreError) {
        try writeTransaction("delete a vehicle") { db in
            try db.execute(sql: "DELETE FROM vehicles WHERE id = ?", arguments: [id])
            if db.changesCount == 0 { throw StoreError(.notFound, "vehicle \(id) does not exist") }
            for key in [Self.defaultVehicleKey, Self.activeVehicleKey] {
                try db.execute(sql: "DELETE FROM settings WHERE key = ? AND value = ?", arguments: [key, String(id)])
            }
        }
    }

    /// Keeps `photo` as the vehicle's photo (replacing one it had).
    public func setVehiclePhoto(id: Int64, _ photo: VehiclePhoto) throws(StoreError) {
        try writeTransaction("store a vehicle's photo") { db in
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM vehicles WHERE id = ?)", arguments: [id]) == true else {
                throw StoreError(.notFound, "vehicle \(id) does not exist")
            }
            try db.execute(sql: "INSERT OR REPLACE INTO vehicle_photos (vehicle_id, jpeg, width, height) VALUES (?, ?, ?, ?)",
                           arguments: [id, Data(photo.jpeg), photo.width, photo.height])
        }
    }

    /// The vehicle's photo; nil when it has none.
    public func vehiclePhoto(id: Int64) throws(StoreError) -> VehiclePhoto? {
        try read("read a vehicle's photo") { db in
            try Row.fetchOne(db, sql: "SELECT jpeg, width, height FROM vehicle_photos WHERE vehicle_id = ?", arguments: [id]).map {
                VehiclePhoto(jpeg: [UInt8]($0["jpeg"] as Data), width: $0["width"], height: $0["height"])
            }
        }
    }

    public func deleteVehiclePhoto(id: Int64) throws(StoreError) {
        try writeTransaction("delete a vehicle's photo") { db in
            try db.execute(sql: "DELETE FROM vehicle_photos WHERE vehicle_id = ?", arguments: [id])
            if db.changesCount == 0 { throw StoreError(.notFound, "vehicle \(id) has no photo") }
        }
    }

    /// The vehicle runs are filed under from now on (nil: none); kept across restarts.
    public func setActiveVehicle(id: Int64?) throws(StoreError) {
        try setVehicleSetting(Self.activeVehicleKey, id, "choose the active vehicle")
    }

    /// The vehicle active when the gate starts (nil: none).
    public func setDefaultVehicle(id: Int64?) throws(StoreError) {
        try setVehicleSetting(Self.defaultVehicleKey, id, "choose the default vehicle")
    }

    private func setVehicleSetting(_ key: String, _ id: Int64?, _ what: String) throws(StoreError) {
        try writeTransaction(what) { db in
            guard let id else {
                try db.execute(sql: "DELETE FROM settings WHERE key = ?", arguments: [key])
                return
            }
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM vehicles WHERE id = ?)", arguments: [id]) == true else {
                throw StoreError(.notFound, "vehicle \(id) does not exist")
            }
            try Self.setSetting(key, String(id), db)
        }
    }

    /// The vehicle runs are filed under now (the default one unless another was chosen).
    public func activeVehicle() throws(StoreError) -> Vehicle? {
        try read("read the active vehicle") { db in
            try Self.activeVehicleID(db).flatMap { id in
                try Row.fetchOne(db, sql: "SELECT * FROM vehicles WHERE id = ?", arguments: [id]).map(Self.vehicle(from:))
            }
        }
    }

    /// The active vehicle at the gate's start is the default one.
    public func activateDefaultVehicle() throws(StoreError) {
        try writeTransaction("activate the default vehicle") { db in
            try db.execute(sql: "DELETE FROM settings WHERE key = ?", arguments: [Self.activeVehicleKey])
        }
    }

    // MARK: runs

    /// Stores a finished run under the active vehicle and returns it with its id.
    public func addGPSRun(_ run: GPSRunRecord) throws(StoreError) -> GPSRunRecord {
        try writeTransaction("store a GPS run") { db in
            let vehicleID = try Self.activeVehicleID(db)
            let name = try vehicleID.flatMap { try String.fetchOne(db, sql: "SELECT name FROM vehicles WHERE id = ?", arguments: [$0]) }
            let json = String(decoding: try JSONEncoder().encode(run.milestones), as: UTF8.self)
            try db.execute(sql: """
                INSERT INTO gps_runs (vehicle_id, vehicle_name, wall_ms, milestones, top_speed, top_speed_s, distance_m, voided,
                                      fix_rate, rollout, accuracy_m) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [vehicleID, name, Int64((run.wallTime * 1000).rounded()), json, run.topSpeed, run.topSpeedSeconds,
                                 run.distance, run.voided, run.fixRate, run.rollout, run.accuracyGate])
            var stored = run
            stored.id = db.lastInsertedRowID
            stored.vehicleID = vehicleID
            stored.vehicleName = name
            return stored
        }
    }

    public func gpsRuns(_ q: GPSRunQuery) throws(StoreError) -> [GPSRunRecord] {
        let all = try read("read GPS runs") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM gps_runs WHERE ? IS NULL OR vehicle_id = ? ORDER BY wall_ms DESC, id DESC",
                             arguments: [q.vehicleID, q.vehicleID]).map(Self.gpsRun(from:))
        }
        let ordered: [GPSRunRecord]
        switch q.order {
        case .newest: ordered = all
        case .oldest: ordered = all.reversed()
        case .topSpeed: ordered = all.filter { $0.voided == nil }.sorted { $0.topSpeed > $1.topSpeed }
        case .fastest(let name):
            ordered = all.filter { $0.voided == nil && $0.milestone(name) != nil }
                .sorted { $0.milestone(name)!.seconds < $1.milestone(name)!.seconds }
        }
        return Array(ordered.prefix(max(0, q.limit)))
    }

    public func deleteGPSRun(id: Int64) throws(StoreError) {
        try writeTransaction("delete a GPS run") { db in
            try db.execute(sql: "DELETE FROM gps_runs WHERE id = ?", arguments: [id])
            if db.changesCount == 0 { throw StoreError(.notFound, "GPS run \(id) does not exist") }
        }
    }

    // MARK: rows

    static func activeVehicleID(_ db: Database) throws -> Int64? {
        try vehicleSetting(activeVehicleKey, db) ?? vehicleSetting(defaultVehicleKey, db)
    }

    static func vehicleSetting(_ key: String, _ db: Database) throws -> Int64? {
        try String.fetchOne(db, sql: "SELECT value FROM settings WHERE key = ?", arguments: [key]).flatMap { Int64($0) }
    }

    static func vehicle(from row: Row) -> Vehicle {
        Vehicle(id: row["id"], name: row["name"], year: row["year"], make: row["make"], model: row["model"], trim: row["trim"],
                colour: row["colour"], notes: row["notes"])
    }

    static func milestones(_ json: String) throws -> [GPSMilestoneRecord] {
        try JSONDecoder().decode([GPSMilestoneRecord].self, from: Data(json.utf8))
    }

    static func gpsRun(from row: Row) throws -> GPSRunRecord {
        GPSRunRecord(id: row["id"], vehicleID: row["vehicle_id"], vehicleName: row["vehicle_name"],
                     wallTime: Double(row["wall_ms"] as Int64) / 1000, milestones: try milestones(row["milestones"]),
                     topSpeed: row["top_speed"], topSpeedSeconds: row["top_speed_s"], distance: row["distance_m"],
                     voided: row["voided"], fixRate: row["fix_rate"], rollout: row["rollout"], accuracyGate: row["accuracy_m"])
    }

    static func validate(_ vehicle: Vehicle) throws(StoreError) -> Vehicle {
        var v = vehicle
        v.name = v.name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !v.name.isEmpty else { throw StoreError(.invalid, "name: a vehicle needs a name") }
        for (field, text, limit) in [("name", v.name, maxNameLength), ("make", v.make, maxNameLength), ("model", v.model, maxNameLength),
                                     ("trim", v.trim, maxNameLength), ("colour", v.colour, maxNameLength), ("notes", v.notes, maxNotesLength)]
            where text.count > limit {
            throw StoreError(.invalid, "\(field): at most \(limit) characters")
        }
        if let y = v.year, !(1886 ... 2100).contains(y) { throw StoreError(.invalid, "year: \(y) is not a model year (1886 to 2100)") }
        return v
    }
}
