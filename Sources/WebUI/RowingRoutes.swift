// SPDX-License-Identifier: Apache-2.0
// The rowing hub on the page: the coach's live board of ergs over a WebSocket, athletes put
// on ergs, one workout set on every erg, and the recorded sessions with their exports.

import Foundation
public import Rowing
public import SQLiteStore
import Hummingbird
import HummingbirdWebSocket
import NIOCore
import Synchronization

/// The hub now: `GET /api/rowing` and each message of `/api/rowing/ws`.
public struct RowingLive: Sendable, Hashable, Codable {
    /// Changes with every notification, link change or assignment.
    public var version: UInt64
    /// Where the ergs come from ("Bluetooth hci0", "synthetic ergs (demo)"), and what is
    /// wrong with it, when something is.
    public var source: String
    public var sourceProblem: String?
    public var board: RowingBoard
    /// The workout last set from the page, as its name ("2000 m"), and what each erg said.
    public var workout: String?
    public var programmed: [ErgProgramResult]
    /// Sessions finished so far (newest first, at most `recentSessions`).
    public var sessions: [ErgSession]
    /// Why strokes are not being stored, when they are not.
    public var storeError: String?
    /// Strokes received and not yet written (written about once a second).
    public var pending: Int
    /// Unix seconds when this view was made: with a tile's `heardAgo`, when its erg's last
    /// notification arrived (the page measures how long that took to show).
    public var wall: Double

    /// The ergs of the boathouse's other hubs (MQTT), and the sessions they finished
    /// lately (newest first); empty without a broker.
    public var boathouse: [BoathouseErg] = []
    public var boathouseSessions: [BoathouseSession] = []
    /// The PM5s over Bluetooth: found by a scan, picked by the coach; nil on a hub whose
    /// ergs are not on Bluetooth (the demo's).
    public var bluetooth: RowingBluetooth?

    public static let recentSessions = 20

    public init(version: UInt64, source: String, sourceProblem: String?, board: RowingBoard, workout: String?,
                programmed: [ErgProgramResult], sessions: [ErgSession], storeError: String?, pending: Int, wall: Double) {
        self.version = version
        self.source = source
        self.sourceProblem = sourceProblem
        self.board = board
        self.workout = workout
        self.programmed = programmed
        self.sessions = sessions
        self.storeError = storeError
        self.pending = pending
        self.wall = wall
    }
}

/// The hub's Bluetooth side: the PM5s a scan found and the ones the hub connects to.
public struct RowingBluetooth: Sendable, Hashable, Codable {
    /// A PM5 the hub keeps connected, as erg `erg`.
    public struct Picked: Sendable, Hashable, Codable {
        public var erg: Int
        public var address: String
        public var name: String
        /// Listed in the settings file's `[rowing] ergs`: it is let go there, not on the page.
        public var fromSettings: Bool
        public init(erg: Int, address: String, name: String, fromSettings: Bool) {
            self.erg = erg
            self.address = address
            self.name = name
            self.fromSettings = fromSettings
        }
    }
    /// "hci0".
    public var controller: String
    public var scanning: Bool
    /// The scan listens to another program's discovery (bluetoothd's), the kernel running
    /// one at a time.
    public var sharedScan = false
    public var scanProblem: String?
    /// PM5s heard by the last scan, strongest first.
    public var found: [FoundPM5]
    /// Other devices the scan heard.
    public var others: Int
    public var picked: [Picked]
    /// How many PM5s the adapter takes.
    public var limit: Int
    public init(controller: String, scanning: Bool, scanProblem: String?, found: [FoundPM5], others: Int, picked: [Picked], limit: Int) {
        self.controller = controller
        self.scanning = scanning
        self.scanProblem = scanProblem
        self.found = found
        self.others = others
        self.picked = picked
        self.limit = limit
    }
}

/// An erg of another hub, as that hub last published it.
public struct BoathouseErg: Sendable, Hashable, Codable {
    public var device: String
    public var tile: RowingBoard.Tile
    public init(device: String, tile: RowingBoard.Tile) {
        self.device = device
        self.tile = tile
    }
}

/// A session another hub finished.
public struct BoathouseSession: Sendable, Hashable, Codable {
    public var device: String
    public var session: ErgSession
    public init(device: String, session: ErgSession) {
        self.device = device
        self.session = session
    }
}

/// What one erg made of the workout the coach set.
public struct ErgProgramResult: Sendable, Hashable, Codable {
    public var erg: Int
    public var name: String
    /// True when the PM took every command of the workout.
    public var accepted: Bool
    public var problem: String?
    public init(erg: Int, name: String, accepted: Bool, problem: String?) {
        self.erg = erg
        self.name = name
        self.accepted = accepted
        self.problem = problem
    }
}

/// The page's view of the rowing hub (the daemon's `RowingHub`).
public protocol RowingDesk: Sendable {
    func rowingLive() -> RowingLive
    /// Puts `athlete` on erg `erg` (empty: nobody); the erg's next session is theirs.
    func assign(erg: Int, athlete: String) throws(ResultsBookError)
    /// Sets `workout` on every connected erg and says what each made of it.
    func program(_ workout: PM5Workout) throws(ResultsBookError) -> [ErgProgramResult]
    /// The sessions' database; nil when it could not be opened.
    var rowingStore: RunStore? { get }
    /// Scans for PM5s for a while; `rowingLive().bluetooth` shows what it finds.
    func scanPM5s() throws(ResultsBookError)
    /// Connects the PM5 at `address` as the next free erg, and keeps it connected across
    /// restarts; its erg number.
    func pickPM5(address: String) throws(ResultsBookError) -> Int
    /// Lets erg `erg`'s PM5 go: its link is closed and its tile leaves the board.
    func letGo(erg: Int) throws(ResultsBookError)
}

/// Where the daemon plugs its rowing hub in; empty on a gate without one.
public final class RowingDeskSlot: Sendable {
    private let desk = Mutex<(any RowingDesk)?>(nil)
    public init() {}
    public func connect(_ d: any RowingDesk) { desk.withLock { $0 = d } }
    public var current: (any RowingDesk)? { desk.withLock { $0 } }
}

/// A session with its strokes, splits and gaps: `GET /api/rowing/sessions/:id`.
struct ErgSessionDetail: Encodable {
    struct Split: Encodable {
        var number: Int
        var time: Double
        var distance: Double
        var rest: Double
    }
    var session: ErgSession
    var strokes: [StoredErgStroke]
    var splits: [Split]
    var gaps: [ErgGap]
}

extension WebServer {
    func rowingDesk() throws -> any RowingDesk {
        guard let d = bridge.rowing.current else {
            throw APIError(.notFound, field: "rowing", reason: "this gate runs no rowing hub: add a [rowing] table to its settings")
        }
        return d
    }

    func rowingStore() throws -> RunStore {
        guard let s = try rowingDesk().rowingStore else {
            throw APIError(.serviceUnavailable, field: "sessions", reason: "the results database is not open: check the state directory (see the log)")
        }
        return s
    }

    /// Why 20 ms: eight ergs at the PM5's fastest sample rate (100 ms) change the board
    /// about a hundred times a second; each client gets the newest at most 50 times a second,
    /// so a tile is never more than a few tens of milliseconds behind its erg.
    static let rowingPeriod = Duration.milliseconds(20)

    /// A workout from the page's form: `{"kind": "distance", "metres": 2000, "split": 500}`,
    /// `{"kind": "time", "seconds": 1200, "split": 240}`, `{"kind": "justRow"}` or
    /// `{"kind": "intervals", "intervals": [{"metres": 500, "rest": 60}, {"seconds": 240, "rest": 90}]}`.
    static func workout(_ body: [String: Any]) throws -> PM5Workout {
        func whole(_ v: Any?, _ field: String, optional: Bool = false) throws -> Int? {
            switch v {
            case nil, is NSNull:
                if optional { return nil }
                throw APIError.invalid(field, "a whole number is required")
            case let n as Int: return n
            case let d as Double where d == d.rounded() && abs(d) < 1e9: return Int(d)
            default: throw APIError.invalid(field, "must be a whole number")
            }
        }
        func seconds(_ v: Any?, _ field: String, optional: Bool = false) throws -> Double? {
            switch v {
            case nil, is NSNull:
                if optional { return nil }
                throw APIError.invalid(field, "a number of seconds is required")
            case let n as Int: return Double(n)
            case let d as Double where d.isFinite: return d
            default: throw APIError.invalid(field, "must be a number of seconds")
            }
        }
        let known: Set<String> = ["kind", "metres", "seconds", "split", "intervals"]
        if let k = body.keys.first(where: { !known.contains($0) }) {
            throw APIError.invalid(k, "unknown field; known: \(known.sorted().joined(separator: ", "))")
        }
        let w: PM5Workout
        switch body["kind"] as? String {
        case "justRow": w = .justRow
        case "distance": w = .distance(metres: try whole(body["metres"], "metres")!, split: try whole(body["split"], "split", optional: true))
        case "time": w = .time(seconds: try seconds(body["seconds"], "seconds")!, split: try seconds(body["split"], "split", optional: true))
        case "intervals":
            guard let list = body["intervals"] as? [[String: Any]] else {
                throw APIError.invalid("intervals", "a list of intervals, each {\"metres\": 500, \"rest\": 60} or {\"seconds\": 240, \"rest\": 60}")
            }
            w = .intervals(try list.enumerated().map { i, v in
                let field = "intervals[\(i)]"
                let rest = try whole(v["rest"], field + ".rest", optional: true) ?? 0
                if v["metres"] != nil, v["seconds"] != nil { throw APIError.invalid(field, "metres or seconds, not both") }
                if let m = try whole(v["metres"], field + ".metres", optional: true) { return .init(.metres(m), restSeconds: rest) }
                return .init(.seconds(try seconds(v["seconds"], field + ".seconds")!), restSeconds: rest)
            })
        case let other:
            throw APIError.invalid("kind", "\(other.map { "\"\($0)\"" } ?? "nothing") is not distance, time, intervals or justRow")
        }
        do { try w.validate() } catch { throw APIError.invalid("workout", error.description.replacingOccurrences(of: "CSAFE: ", with: "")) }
        return w
    }

    func addRowingRoutes(to router: Router<WebContext>) {
        let s = self
        @Sendable func call<T>(_ body: (any RowingDesk) throws(ResultsBookError) -> T) throws -> T {
            let desk = try s.rowingDesk()
            do { return try body(desk) } catch { throw error.api }
        }
        @Sendable func store<T>(_ body: (RunStore) throws(StoreError) -> T) throws -> T {
            let st = try s.rowingStore()
            do throws(StoreError) { return try body(st) } catch { throw SQLiteResultsBook.bookError(error).api }
        }
        @Sendable func date(_ p: Parameters, _ key: String) throws -> Double? {
            guard let raw = p[key[...]] else { return nil }
            guard let v = Double(raw), v.isFinite else { throw APIError.invalid(key, "Unix seconds") }
            return v
        }

        router.get("/api/rowing") { _, _ in try s.json(try s.rowingDesk().rowingLive()) }
        router.get("/api/rowing/sessions") { request, _ in
            let p = request.uri.queryParameters
            let known: Set<Substring> = ["athlete", "workout", "from", "to", "limit"]
            for (k, _) in p where !known.contains(k) {
                throw APIError.invalid(String(k), "unknown parameter; known: \(known.sorted().joined(separator: ", "))")
            }
            var limit = 100
            if let l = p["limit"] {
                guard let n = Int(l), (1...WebServer.maxPageSize).contains(n) else { throw APIError.invalid("limit", "must be 1...\(WebServer.maxPageSize)") }
                limit = n
            }
            let athlete = p["athlete"].map(String.init), workout = p["workout"].map(String.init)
            let from = try date(p, "from"), to = try date(p, "to")
            return try s.json(try store { st throws(StoreError) in
                try st.ergSessions(athlete: athlete, workout: workout, from: from, to: to, limit: limit)
            })
        }
        router.get("/api/rowing/sessions/:id") { _, context in
            let id = try s.runID(context)
            return try s.json(try store { st throws(StoreError) in
                ErgSessionDetail(session: try st.ergSession(id: id), strokes: try st.ergStrokes(sessionID: id),
                                 splits: try st.ergSplits(sessionID: id).map { .init(number: $0.number, time: $0.time, distance: $0.distance, rest: $0.rest) },
                                 gaps: try st.ergGaps(sessionID: id))
            })
        }
        for format in ErgExportFormat.allCases {
            router.get(RouterPath("/api/rowing/sessions/:id/export.\(format.rawValue)")) { _, context in
                let id = try s.runID(context)
                let text = try store { st throws(StoreError) in try st.exportErgSession(id: id, format) }
                let type = switch format {
                case .csv: "text/csv; charset=utf-8"
                case .json: "application/json; charset=utf-8"
                case .tcx: "application/vnd.garmin.tcx+xml"
                }
                return Response(status: .ok,
                                headers: [.contentType: type, .contentDisposition: "attachment; filename=\"erg-session-\(id).\(format.rawValue)\""],
                                body: .init(byteBuffer: ByteBuffer(string: text)))
            }
        }
        // Control: PIN.
        router.delete("/api/rowing/sessions/:id") { request, context in
            let id = try s.runID(context)
            try store { st throws(StoreError) in try st.deleteErgSession(id: id) }
            return Response(status: .noContent)
        }
        router.put("/api/rowing/ergs/:erg") { request, context in
            guard let raw = context.parameters.get("erg"), let erg = Int(raw), erg >= 0 else {
                throw APIError.invalid("erg", "an erg's number from the board")
            }
            let body = try await s.body(request, context)
            guard let athlete = body["athlete"] as? String else { throw APIError.invalid("athlete", "a name, or \"\" for nobody") }
            try call { d throws(ResultsBookError) in try d.assign(erg: erg, athlete: athlete) }
            return Response(status: .noContent)
        }
        router.post("/api/rowing/workout") { request, context in
            let w = try WebServer.workout(try await s.body(request, context))
            // On a thread of its own: the ergs' answers take up to seconds over Bluetooth,
            // and the server's event loop must not wait for them.
            let desk = try s.rowingDesk()
            let results = try await withCheckedThrowingContinuation { (c: CheckedContinuation<[ErgProgramResult], any Error>) in
                Thread {
                    do throws(ResultsBookError) { c.resume(returning: try desk.program(w)) } catch { c.resume(throwing: error.api) }
                }.start()
            }
            return try s.json(results)
        }
        router.post("/api/rowing/scan") { request, context in
            try call { d throws(ResultsBookError) in try d.scanPM5s() }
            return Response(status: .accepted)
        }
        router.post("/api/rowing/pm5s") { request, context in
            let body = try await s.body(request, context)
            guard let address = body["address"] as? String else { throw APIError.invalid("address", "a PM5's Bluetooth address from the scan, e.g. \"C2:11:22:33:44:55\"") }
            let erg = try call { d throws(ResultsBookError) in try d.pickPM5(address: address) }
            return try s.json(["erg": erg])
        }
        router.delete("/api/rowing/pm5s/:erg") { request, context in
            guard let raw = context.parameters.get("erg"), let erg = Int(raw), erg >= 0 else {
                throw APIError.invalid("erg", "an erg's number from the board")
            }
            try call { d throws(ResultsBookError) in try d.letGo(erg: erg) }
            return Response(status: .noContent)
        }
    }

    /// The coach's board feed: the hub's state as JSON text, once per change.
    func addRowingWebSocket(to router: Router<BasicWebSocketRequestContext>) {
        let slot = bridge.rowing
        Self.addVersionedFeed(to: router, path: "/api/rowing/ws", period: WebServer.rowingPeriod,
                              missing: "this gate runs no rowing hub: add a [rowing] table to its settings") {
            slot.current.map { desk in { @Sendable in let l = desk.rowingLive(); return (l.version, l) } }
        }
    }
}
