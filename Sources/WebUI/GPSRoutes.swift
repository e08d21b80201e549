// SPDX-License-Identifier: Apache-2.0
// The acceleration timer on the page: the receiver's state and the timer's, live over a
// WebSocket at the receiver's rate, for the in-car view.

import Foundation
public import GPSTiming
public import SQLiteStore
import Hummingbird
import HummingbirdWebSocket
import NIOCore
import Synchronization

extension GPSMilestoneRecord {
    /// A milestone's time as stored and shown.
    public init(_ m: MilestoneTime) {
        self.init(name: m.milestone.description, seconds: m.seconds, uncertainty: m.uncertainty, speed: m.speed, trapSpeed: m.trapSpeed)
    }
}

extension GPSRunRecord {
    /// A finished run as stored and shown, before the store gives it an id and vehicle.
    public init(_ r: AccelerationResult, settings: AccelerationSettings, wallTime: Double) {
        self.init(wallTime: wallTime, milestones: r.times.map(GPSMilestoneRecord.init), topSpeed: r.topSpeed,
                  topSpeedSeconds: r.topSpeedSeconds, distance: r.distance, voided: r.voided, fixRate: r.fixRate,
                  rollout: settings.rollout, accuracyGate: settings.accuracy)
    }
}

/// The receiver and the timer now: `GET /api/gps` and each message of `/api/gps/ws`.
public struct GPSLive: Sendable, Hashable, Codable {
    /// Changes with every fix or state change.
    public var version: UInt64 = 0
    /// `fix`, `no-fix`, `no-receiver`, `no-gpsd`, and what to do when not `fix`.
    public var link: String
    public var linkDetail: String
    /// 0 none, 2 2D, 3 3D.
    public var mode: Int
    public var satellitesUsed: Int?
    public var satellitesSeen: Int?
    /// The fix's horizontal error (gpsd's eph), m.
    public var accuracy: Double?
    /// The timer's accuracy gate, m.
    public var accuracyGate: Double
    /// Fixes a second measured, and asked for.
    public var rate: Double?
    public var wantedRate: Double?
    public var rateWarning: String?
    public var device: String?
    /// `acquiring`, `ready`, `armed`, `running`, `complete`, `voided`, and why.
    public var state: String
    public var stateDetail: String
    /// The last fix's speed, m/s; nil without a fix.
    public var speed: Double?
    /// While running: seconds and metres from the launch, and the milestones so far.
    public var elapsed: Double?
    public var distance: Double?
    public var milestones: [GPSMilestoneRecord]
    /// The last finished run, and the latest runs (newest first, stored in the garage).
    public var last: GPSRunRecord?
    public var runs: [GPSRunRecord]
    public var rollout: Bool
    /// The vehicle runs are filed under now; nil without one.
    public var activeVehicle: String?

    public init(status: ReceiverStatus, settings: AccelerationSettings, state: AccelerationState, stateDetail: String) {
        link = status.link.rawValue
        linkDetail = status.detail
        mode = status.mode.rawValue
        satellitesUsed = status.satellitesUsed
        satellitesSeen = status.satellitesSeen
        accuracy = status.horizontalError
        accuracyGate = settings.accuracy
        rate = status.rate
        wantedRate = status.wantedRate
        rateWarning = status.rateWarning
        device = status.device
        self.state = state.rawValue
        self.stateDetail = stateDetail
        // A speed from a receiver no longer heard is no speed.
        speed = status.link == .fix ? status.speed : nil
        milestones = []
        runs = []
        rollout = settings.rollout
    }
}

/// The page's view of the GPS timer (the daemon's GPS gate) and its garage.
public protocol GPSDesk: Sendable {
    /// The receiver and the timer now.
    func live() -> GPSLive
    /// The garage's database (vehicles and runs); nil when it could not be opened.
    var garageStore: RunStore? { get }
    /// True while a run is timed: the active vehicle is locked.
    var running: Bool { get }
    /// The garage changed: the live view's active vehicle and runs are read again.
    func garageChanged()
}

extension GPSDesk {
    private func withStore<T>(_ body: (RunStore) throws(StoreError) -> T) throws(ResultsBookError) -> T {
        guard let store = garageStore else {
            throw ResultsBookError(.unavailable, field: "garage", reason: "the results database is not open: check the state directory (see the log)")
        }
        do throws(StoreError) { return try body(store) } catch { throw SQLiteResultsBook.bookError(error) }
    }

    private func lockedDuringRun(_ what: String) throws(ResultsBookError) {
        if running { throw ResultsBookError(.conflict, field: "vehicle", reason: "cannot \(what) during a run: wait until it is complete") }
    }

    public func garage() throws(ResultsBookError) -> Garage { try withStore { s throws(StoreError) in try s.garage() } }

    /// Adds a vehicle (its id ignored); the first becomes the default.
    public func addVehicle(_ vehicle: Vehicle) throws(ResultsBookError) -> Vehicle {
        let v = try withStore { s throws(StoreError) in try s.addVehicle(vehicle) }
        garageChanged()
        return v
    }

    public func updateVehicle(_ vehicle: Vehicle) throws(ResultsBookError) {
        try withStore { s throws(StoreError) in try s.updateVehicle(vehicle) }
        garageChanged()
    }

    /// Deletes a vehicle; its runs stay under its name.
    public func deleteVehicle(id: Int64) throws(ResultsBookError) {
        try lockedDuringRun("delete a vehicle")
        try withStore { s throws(StoreError) in try s.deleteVehicle(id: id) }
        garageChanged()
    }

    /// The vehicle the next runs are filed under; refused while a run is timed.
    public func setActiveVehicle(id: Int64?) throws(ResultsBookError) {
        try lockedDuringRun("change the active vehicle")
        try withStore { s throws(StoreError) in try s.setActiveVehicle(id: id) }
        garageChanged()
    }

    /// The vehicle active when the gate starts.
    public func setDefaultVehicle(id: Int64?) throws(ResultsBookError) {
        try withStore { s throws(StoreError) in try s.setDefaultVehicle(id: id) }
        garageChanged()
    }

    /// Keeps a JPEG as the vehicle's photo (checked to be one).
    public func setVehiclePhoto(id: Int64, jpeg: [UInt8]) throws(ResultsBookError) {
        try withStore { s throws(StoreError) in try s.setVehiclePhoto(id: id, try VehiclePhoto.read(jpeg)) }
    }

    public func vehiclePhoto(id: Int64) throws(ResultsBookError) -> VehiclePhoto {
        guard let p = try withStore({ s throws(StoreError) in try s.vehiclePhoto(id: id) }) else {
            throw ResultsBookError(.notFound, field: "photo", reason: "vehicle \(id) has no photo")
        }
        return p
    }

    public func deleteVehiclePhoto(id: Int64) throws(ResultsBookError) {
        try withStore { s throws(StoreError) in try s.deleteVehiclePhoto(id: id) }
    }

    public func runs(_ query: GPSRunQuery) throws(ResultsBookError) -> [GPSRunRecord] {
        try withStore { s throws(StoreError) in try s.gpsRuns(query) }
    }

    public func deleteRun(id: Int64) throws(ResultsBookError) {
        try withStore { s throws(StoreError) in try s.deleteGPSRun(id: id) }
        garageChanged()
    }
}

/// Where the daemon plugs its GPS timer in; empty on a gate without `[gps]`.
public final class GPSDeskSlot: Sendable {
    private let desk = Mutex<(any GPSDesk)?>(nil)
    public init() {}
    public func connect(_ d: any GPSDesk) { desk.withLock { $0 = d } }
    public var current: (any GPSDesk)? { desk.withLock { $0 } }
}

extension WebServer {
    func gpsDesk() throws -> any GPSDesk {
        guard let d = bridge.gps.current else {
            throw APIError(.notFound, field: "gps", reason: "this gate has no GPS timer: add a [gps] table to its settings (see selftest)")
        }
        return d
    }

    /// Why 20 ms: receivers give at most 25 fixes a second; each is sent once.
    static let gpsPeriod = Duration.milliseconds(20)

    func addGPSRoutes(to router: Router<WebContext>) {
        let s = self
        @Sendable func call<T>(_ body: (any GPSDesk) throws(ResultsBookError) -> T) throws -> T {
            let desk = try s.gpsDesk()
            do { return try body(desk) } catch { throw error.api }
        }
        @Sendable func vehicle(_ body: [String: Any], id: Int64?) throws -> Vehicle {
            func text(_ key: String) throws -> String {
                guard let v = body[key] else { return "" }
                guard let t = v as? String else { throw APIError.invalid(key, "must be text") }
                return t
            }
            guard let name = body["name"] as? String else { throw APIError.invalid("name", "a vehicle needs a name") }
            var year: Int?
            if let y = body["year"], !(y is NSNull) {
                guard let n = y as? Int else { throw APIError.invalid("year", "must be a whole number, e.g. 2019") }
                year = n
            }
            return Vehicle(id: id, name: name, year: year, make: try text("make"), model: try text("model"), trim: try text("trim"),
                           colour: try text("colour"), notes: try text("notes"))
        }
        @Sendable func optionalVehicleID(_ body: [String: Any]) throws -> Int64? {
            guard let v = body["id"], !(v is NSNull) else { return nil }
            guard let n = v as? Int, n > 0 else { throw APIError.invalid("id", "a vehicle's id, or null for none") }
            return Int64(n)
        }
        @Sendable func query(_ p: Parameters, defaultLimit: Int = 100) throws -> GPSRunQuery {
            var q = GPSRunQuery(limit: defaultLimit)
            q.vehicleID = try s.optionalID(p, "vehicle")
            switch p["sort"].map(String.init) ?? "date" {
            case "date": q.order = .newest
            case "oldest": q.order = .oldest
            case "top": q.order = .topSpeed
            case let m where Milestone.allCases.contains { $0.description == m }: q.order = .fastest(m)
            case let other:
                throw APIError.invalid("sort", "\"\(other)\" is not date, oldest, top or a milestone (\(Milestone.allCases.map(\.description).joined(separator: ", ")))")
            }
            if let l = p["limit"].map(String.init) {
                guard let n = Int(l), (1 ... WebServer.maxPageSize).contains(n) else {
                    throw APIError.invalid("limit", "must be 1...\(WebServer.maxPageSize)")
                }
                q.limit = n
            }
            return q
        }

        router.get("/api/gps") { _, _ in try s.json(try s.gpsDesk().live()) }
        router.get("/api/gps/garage") { _, _ in try s.json(try call { d throws(ResultsBookError) in try d.garage() }) }
        router.get("/api/gps/runs") { request, _ in
            let q = try query(request.uri.queryParameters)
            return try s.json(try call { d throws(ResultsBookError) in try d.runs(q) })
        }
        router.get("/api/gps/export.json") { request, _ in
            let q = try query(request.uri.queryParameters, defaultLimit: Int.max)
            var r = try s.json(try call { d throws(ResultsBookError) in try d.runs(q) })
            r.headers[.contentDisposition] = "attachment; filename=\"sprintgate-gps-runs.json\""
            return r
        }
        router.get("/api/gps/export.csv") { request, _ in
            let q = try query(request.uri.queryParameters, defaultLimit: Int.max)
            let rows = try call { d throws(ResultsBookError) in try d.runs(q) }
            return Response(status: .ok,
                            headers: [.contentType: "text/csv; charset=utf-8",
                                      .contentDisposition: "attachment; filename=\"sprintgate-gps-runs.csv\""],
                            body: .init(byteBuffer: ByteBuffer(string: GPSExport.csv(rows))))
        }
        // Control: PIN.
        router.post("/api/gps/vehicles") { request, context in
            let v = try vehicle(try await s.body(request, context), id: nil)
            return try s.json(try call { d throws(ResultsBookError) in try d.addVehicle(v) }, status: .created)
        }
        router.put("/api/gps/vehicles/:id") { request, context in
            let v = try vehicle(try await s.body(request, context), id: try s.runID(context))
            try call { d throws(ResultsBookError) in try d.updateVehicle(v) }
            return Response(status: .noContent)
        }
        router.delete("/api/gps/vehicles/:id") { request, context in
            let v = try s.runID(context)
            try call { d throws(ResultsBookError) in try d.deleteVehicle(id: v) }
            return Response(status: .noContent)
        }
        router.get("/api/gps/vehicles/:id/photo") { _, context in
            let v = try s.runID(context)
            let photo = try call { d throws(ResultsBookError) in try d.vehiclePhoto(id: v) }
            return Response(status: .ok, headers: [.contentType: "image/jpeg", .cacheControl: "no-cache"],
                            body: .init(byteBuffer: ByteBuffer(bytes: photo.jpeg)))
        }
        // The body is the JPEG (the page scales a phone's photo down first).
        router.put("/api/gps/vehicles/:id/photo") { request, context in
            let v = try s.runID(context)
            let jpeg = try await s.fileBody(request, upTo: VehiclePhoto.maxBytes, field: "photo", advice: "choose a smaller picture")
            try call { d throws(ResultsBookError) in try d.setVehiclePhoto(id: v, jpeg: jpeg) }
            return Response(status: .noContent)
        }
        router.delete("/api/gps/vehicles/:id/photo") { request, context in
            let v = try s.runID(context)
            try call { d throws(ResultsBookError) in try d.deleteVehiclePhoto(id: v) }
            return Response(status: .noContent)
        }
        router.put("/api/gps/active") { request, context in
            let v = try optionalVehicleID(try await s.body(request, context))
            try call { d throws(ResultsBookError) in try d.setActiveVehicle(id: v) }
            return Response(status: .noContent)
        }
        router.put("/api/gps/default") { request, context in
            let v = try optionalVehicleID(try await s.body(request, context))
            try call { d throws(ResultsBookError) in try d.setDefaultVehicle(id: v) }
            return Response(status: .noContent)
        }
        router.delete("/api/gps/runs/:id") { request, context in
            let r = try s.runID(context)
            try call { d throws(ResultsBookError) in try d.deleteRun(id: r) }
            return Response(status: .noContent)
        }
    }

    /// The in-car view's feed: the live state as JSON text, once per change.
    func addGPSWebSocket(to router: Router<BasicWebSocketRequestContext>) {
        let slot = bridge.gps
        Self.addVersionedFeed(to: router, path: "/api/gps/ws", period: WebServer.gpsPeriod,
                              missing: "this gate has no GPS timer: add a [gps] table to its settings") {
            slot.current.map { desk in { @Sendable in let l = desk.live(); return (l.version, l) } }
        }
    }

    /// A WebSocket at `path` that sends a view as JSON text each time its version changes,
    /// looked at every `period`. `source` is asked once per connection: nil sends one
    /// `{"error": missing}` message and closes the socket. Clients send nothing; a closed
    /// socket ends the sender.
    static func addVersionedFeed<View: Encodable & Sendable>(
        to router: Router<BasicWebSocketRequestContext>, path: String, period: Duration, missing: String,
        source: @escaping @Sendable () -> (@Sendable () -> (UInt64, View))?
    ) {
        router.ws(RouterPath(path)) { inbound, outbound, _ in
            guard let view = source() else {
                let text = String(decoding: try JSONEncoder().encode(["error": missing]), as: UTF8.self)
                try await outbound.write(.text(text))
                return
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { for try await _ in inbound {} }
                group.addTask {
                    var sent: UInt64 = .max
                    while !Task.isCancelled {
                        let (version, value) = view()
                        if version != sent {
                            let data = try JSONEncoder.board.encode(value)
                            try await outbound.write(.text(String(decoding: data, as: UTF8.self)))
                            sent = version
                        }
                        try await Task.sleep(for: period)
                    }
                }
                try await group.next()
                group.cancelAll()
            }
        }
    }
}

/// GPS runs as CSV: one row per run, a column per milestone (seconds), speeds in m/s.
public enum GPSExport {
    public static func csv(_ runs: [GPSRunRecord]) -> String {
        let names = Milestone.allCases.map(\.description)
        var out = (["id", "finished_utc", "vehicle", "voided"] + names.map { "\($0) s" }
            + ["1/8 mile trap m/s", "1/4 mile trap m/s", "top speed m/s", "top speed at s", "distance m", "fix rate Hz", "rollout", "accuracy gate m"])
            .map(ResultsExport.quote).joined(separator: ",") + "\r\n"
        let iso = ISO8601DateFormatter()
        let fixed = ResultsExport.fixed
        for r in runs {
            var row = [r.id.map(String.init) ?? "", iso.string(from: Date(timeIntervalSince1970: r.wallTime)), r.vehicleName ?? "", r.voided ?? ""]
            row += names.map { n in r.milestone(n).map { fixed($0.seconds, 3) } ?? "" }
            row += ["1/8 mile", "1/4 mile"].map { n in r.milestone(n)?.trapSpeed.map { fixed($0, 2) } ?? "" }
            row += [fixed(r.topSpeed, 2), fixed(r.topSpeedSeconds, 2), fixed(r.distance, 1), fixed(r.fixRate, 1),
                    r.rollout ? "yes" : "no", fixed(r.accuracyGate, 0)]
            out += row.map(ResultsExport.quote).joined(separator: ",") + "\r\n"
        }
        return out
    }

}
