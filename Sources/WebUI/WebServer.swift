// SPDX-License-Identifier: Apache-2.0
// The gate's web server: static page, JSON API and the live board WebSocket (Hummingbird).

import Foundation
import GateCore
public import Hummingbird
public import HummingbirdWebSocket
public import Logging
public import NIOCore
import HTTPTypes
import SQLiteStore
import VideoDelay

/// Request context: remembers the client's address for the PIN limiter.
public struct WebContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?
    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
    /// Why: JSON bodies of this API are a few hundred bytes; 64 KiB refuses abuse early.
    public var maxUploadSize: Int { 65_536 }
}

/// Everything the routes need.
public struct WebServer: Sendable {
    public let hub: LiveHub
    public let pin: GatePIN
    public let attempts: PINAttempts
    public let logger: Logger
    /// Wall-clock seconds, for the PIN limiter (replaceable in tests).
    public let now: @Sendable () -> Double

    public init(hub: LiveHub, pin: GatePIN, attempts: PINAttempts = PINAttempts(), logger: Logger,
                now: @escaping @Sendable () -> Double = WebServer.wallSeconds) {
        self.hub = hub
        self.pin = pin
        self.attempts = attempts
        self.logger = logger
        self.now = now
    }

    /// Unix seconds now.
    public static let wallSeconds: @Sendable () -> Double = { Date().timeIntervalSince1970 }

    public var bridge: GateBridge { hub.bridge }
    public var book: any ResultsBook { hub.book }
    public var settings: WebSettings { hub.settings }

    /// The HTTP header carrying the PIN on control requests.
    static let pinHeader = HTTPField.Name("X-Gate-PIN")!
    /// The header name, for clients.
    public static let pinHeaderName = "X-Gate-PIN"
    /// Why: the history view pages 50 at a time; 1000 bounds one export-like page.
    public static let maxPageSize = 1000

    /// The application: routes, the live board WebSocket at `/api/ws`, and the hub service.
    public func application(host: String, port: Int) -> some ApplicationProtocol {
        let ws = Router(context: BasicWebSocketRequestContext.self)
        addWebSocket(to: ws)
        addGPSWebSocket(to: ws)
        addRowingWebSocket(to: ws)
        return Application(router: router(), server: .http1WebSocketUpgrade(webSocketRouter: ws),
                           configuration: .init(address: .hostname(host, port: port), serverName: "sprintgate"),
                           services: [hub], logger: logger)
    }

    /// Serves until the task is cancelled or the process ends (Hummingbird's threads).
    /// Throws when the address cannot be bound.
    ///
    /// Why no shutdown signals: the gate's event loop owns SIGTERM and SIGINT (it stops
    /// in order, writing what storage still holds); a signal source here would take them
    /// from it and end the page while the gate runs on.
    public func serve(host: String, port: Int) async throws {
        try await application(host: host, port: port).runService(gracefulShutdownSignals: [])
    }

    /// The live board: one text message per change, at most every `LiveHub.period`.
    /// Clients send nothing; a closed socket ends the sender. The first message goes out
    /// at once (the hub builds one if it has not yet).
    public func addWebSocket(to router: Router<BasicWebSocketRequestContext>) {
        let hub = self.hub
        router.ws("/api/ws") { inbound, outbound, _ in
            if hub.message().version == 0 { hub.refresh() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    // Drain (and ignore) what the client sends until it closes.
                    for try await _ in inbound {}
                }
                group.addTask {
                    var sent: UInt64 = 0
                    // Why: only the hub service refreshes (20 Hz); fifty clients each
                    // refreshing would contend with the gate loop for the snapshot lock.
                    while !Task.isCancelled {
                        let (v, text) = hub.framed(now: monotonicNowNs())
                        if v != sent {
                            try await outbound.write(.text(text))
                            sent = v
                        }
                        try await Task.sleep(for: LiveHub.period)
                    }
                }
                try await group.next()
                group.cancelAll()
            }
        }
    }

    /// All HTTP routes (listed in docs/web-api.md).
    public func router() -> Router<WebContext> {
        let router = Router(context: WebContext.self)
        let s = self
        router.add(middleware: SecurityHeaders())
        router.add(middleware: PINRequired(server: s))

        // Static page.
        for asset in WebAssets.all {
            router.get(RouterPath(asset.path)) { request, _ in asset.response(for: request) }
        }
        if let index = WebAssets.all.first(where: { $0.path == "/index.html" }) {
            router.get("/") { request, _ in index.response(for: request) }
        }

        addGateRoutes(to: router)
        addAthleteRoutes(to: router)
        addResultRoutes(to: router)
        CalculatorRoutes.add(to: router)
        addVideoRoutes(to: router)
        addRunVideoRoutes(to: router)
        addArcheryRoutes(to: router)
        addGPSRoutes(to: router)
        addSkiRoutes(to: router)
        addRowingRoutes(to: router)
        addClockRoutes(to: router)
        return router
    }

    // MARK: helpers

    func view(_ r: RunRecord) -> RunView { RunView(run: r, speed: settings.speed(distance: r.distanceMetres, seconds: r.seconds)) }

    func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try JSONEncoder.board.encode(value)
        return Response(status: status, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
                        body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    func json(raw: String) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
                 body: .init(byteBuffer: ByteBuffer(string: raw)))
    }

    func enqueue(_ c: GateCommand) throws -> Response {
        guard bridge.send(c) else {
            throw APIError(.serviceUnavailable, field: "command", reason: "the gate is not taking commands (queue full); try again")
        }
        return try json(["queued": "\(c)"], status: .accepted)
    }

    func client(_ context: WebContext) -> String {
        guard let a = context.remoteAddress else { return "unknown" }
        return a.ipAddress ?? "\(a)"
    }

    func requirePIN(_ request: Request, _ context: WebContext) throws {
        guard let candidate = request.headers[Self.pinHeader] else {
            throw APIError(.unauthorized, field: "X-Gate-PIN", reason: "this action needs the gate's PIN (see `sprintgate status`)")
        }
        try checkPIN(candidate, context)
    }

    func checkPIN(_ candidate: String, _ context: WebContext) throws {
        let who = client(context), t = now()
        if let wait = attempts.retryAfter(client: who, now: t) {
            throw APIError(.tooManyRequests, field: "pin", reason: "too many wrong PINs; wait and try again", retryAfter: wait)
        }
        guard pin.matches(candidate) else {
            let wait = attempts.failed(client: who, now: t)
            logger.notice("wrong PIN from \(who)")
            if let wait {
                throw APIError(.tooManyRequests, field: "pin", reason: "wrong PIN; too many tries, wait and try again", retryAfter: wait)
            }
            throw APIError(.unauthorized, field: "pin", reason: "wrong PIN")
        }
        attempts.succeeded(client: who)
    }

    /// A file sent as the request's body (a photo, a GPX file), at most `limit` bytes;
    /// larger is 413 naming `field`, with `advice`.
    func fileBody(_ request: Request, upTo limit: Int, field: String, advice: String) async throws -> [UInt8] {
        var request = request
        do { return Array(try await request.collectBody(upTo: limit).readableBytesView) } catch {
            throw APIError(.contentTooLarge, field: field, reason: "at most \(limit >> 20 > 0 ? "\(limit >> 20) MB" : "\(limit >> 10) kB"): \(advice)")
        }
    }

    func body(_ request: Request, _ context: WebContext) async throws -> [String: Any] {
        var request = request
        let buffer: ByteBuffer
        do { buffer = try await request.collectBody(upTo: context.maxUploadSize) } catch {
            throw APIError(.contentTooLarge, field: "body", reason: "at most \(context.maxUploadSize) bytes")
        }
        guard buffer.readableBytes > 0 else { throw APIError.invalid("body", "a JSON object is required") }
        let data = Data(buffer.readableBytesView)
        guard let obj = try? JSONSerialization.jsonObject(with: data), let dict = obj as? [String: Any] else {
            throw APIError.invalid("body", "not a JSON object")
        }
        return dict
    }

    func optionalString(_ body: [String: Any], _ key: String) throws -> String? {
        switch body[key] {
        case nil, is NSNull: return nil
        case let s as String:
            guard !s.isEmpty, s.count <= 64 else { throw APIError.invalid(key, "must be 1 to 64 characters") }
            return s
        default: throw APIError.invalid(key, "must be a string")
        }
    }

    /// The number `N` of a `{file}` path parameter `N.jpg`, within `range`; 400 naming
    /// `what` otherwise.
    func jpegIndex(_ context: WebContext, _ range: ClosedRange<Int>, _ what: String) throws -> Int {
        guard let file = context.parameters.get("file"), file.hasSuffix(".jpg"),
              let index = Int(file.dropLast(4)), range.contains(index) else {
            throw APIError.invalid("file", "must be \(what) \(range.lowerBound)...\(range.upperBound) followed by .jpg")
        }
        return index
    }

    /// A stored JPEG; images of a run never change, so phones may keep them a day.
    func jpeg(_ bytes: [UInt8]) -> Response {
        Response(status: .ok, headers: [.contentType: "image/jpeg", .cacheControl: "private, max-age=86400"],
                 body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// An athlete from a request body: `name` (required, 1–60 characters), `nickname`
    /// (at most 30), `colour` (one of the eight), `birthdate` (YYYY-MM-DD, not in the
    /// future), `gender`; absent optional fields are cleared, colour and gender default.
    func athlete(_ body: [String: Any], id: Int64) throws -> Athlete {
        func text(_ key: String, max: Int, required: Bool) throws -> String? {
            guard let v = body[key], !(v is NSNull) else {
                if required { throw APIError.invalid(key, "a \(key) is required") }
                return nil
            }
            guard let raw = v as? String else { throw APIError.invalid(key, "must be text") }
            let t = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if t.isEmpty {
                if required { throw APIError.invalid(key, "the \(key) is empty") }
                return nil
            }
            guard t.count <= max else { throw APIError.invalid(key, "at most \(max) characters") }
            guard !t.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) }) else {
                throw APIError.invalid(key, "control characters are not allowed")
            }
            return t
        }
        let name = try text("name", max: 60, required: true) ?? ""
        let nickname = try text("nickname", max: 30, required: false)
        let colour = try text("colour", max: 10, required: false) ?? "blue"
        guard Athlete.colours.contains(colour) else { throw APIError.invalid("colour", "one of \(Athlete.colours.joined(separator: ", "))") }
        let gender = try text("gender", max: 12, required: false) ?? "unspecified"
        guard Athlete.genders.contains(gender) else { throw APIError.invalid("gender", "one of \(Athlete.genders.joined(separator: ", "))") }
        let birthdate = try text("birthdate", max: 10, required: false)
        if let b = birthdate {
            guard let d = CalendarDate(b) else { throw APIError.invalid("birthdate", "a date YYYY-MM-DD") }
            let c = Calendar(identifier: .gregorian).dateComponents(in: TimeZone.current, from: Date())
            let today = CalendarDate(year: c.year ?? 2999, month: c.month ?? 12, day: c.day ?? 31)
            guard today.map({ d <= $0 }) ?? true else { throw APIError.invalid("birthdate", "is in the future") }
        }
        return Athlete(id: id, name: name, nickname: nickname, colour: colour, birthdate: birthdate, gender: gender)
    }

    /// The camera view's feed, told that a viewer wants pictures; 404 without a camera view.
    func watchedCamera() throws -> CameraFeed {
        let feed = bridge.camera
        guard feed.connected else { throw APIError(.notFound, field: "camera", reason: "this gate has no camera view") }
        feed.watch()
        return feed
    }

    /// Refuses (409, `phase`) while a run is under way, with `advice` for the coach.
    func requireBetweenRuns(_ advice: String) throws {
        let phase = bridge.snapshot.read().snapshot.phase
        if ["running", "starting", "holding", "in-frame"].contains(phase) {
            throw APIError(.conflict, field: "phase", reason: "a run is under way (\(phase)); \(advice)")
        }
    }

    /// The `:gate` of a route: a gate's place on the course, 0...15.
    func gateIndex(_ context: WebContext) throws -> Int {
        guard let raw = context.parameters.get("gate"), let g = Int(raw), (0...15).contains(g) else {
            throw APIError.invalid("gate", "must be a gate index 0...15")
        }
        return g
    }

    func runID(_ context: WebContext) throws -> Int64 {
        guard let raw = context.parameters.get("id"), let id = Int64(raw), id >= 1 else {
            throw APIError.invalid("id", "must be a positive whole number")
        }
        return id
    }

    func optionalID(_ q: Parameters, _ key: String) throws -> Int64? {
        guard let raw = q[key[...]] else { return nil }
        guard let v = Int64(raw), v >= 1 else { throw APIError.invalid(key, "must be a positive whole number") }
        return v
    }

    func historyQuery(_ p: Parameters, defaultLimit: Int = 50) throws -> HistoryQuery {
        let known: Set<Substring> = ["athlete", "preset", "startType", "from", "to", "q", "sort", "order", "limit", "offset",
                                     "distance", "gates", "session"]
        for (k, _) in p where !known.contains(k) {
            throw APIError.invalid(String(k), "unknown parameter; known: \(known.sorted().joined(separator: ", "))")
        }
        var q = HistoryQuery()
        q.limit = min(defaultLimit, Self.maxPageSize)
        q.athleteID = try optionalID(p, "athlete")
        if let v = p["preset"] {
            guard settings.presets.contains(where: { $0.id == v }) else { throw APIError.invalid("preset", "unknown preset '\(v)'") }
            q.preset = String(v)
        }
        if let v = p["startType"] {
            guard settings.startTypes.contains(String(v)) else { throw APIError.invalid("startType", "unknown start type '\(v)'") }
            q.startType = String(v)
        }
        for key in ["from", "to"] {
            guard let v = p[key[...]] else { continue }
            guard let t = Self.parseTime(String(v)) else {
                throw APIError.invalid(key, "a date (YYYY-MM-DD), an ISO 8601 time or Unix seconds")
            }
            if key == "from" { q.from = t } else { q.to = Self.isDateOnly(String(v)) ? t + 86_399.999 : t }
        }
        if let f = q.from, let t = q.to, f > t { throw APIError.invalid("from", "is after 'to'") }
        if let v = p["distance"] {
            guard let d = Double(v), d.isFinite, d > 0, d <= 100_000 else { throw APIError.invalid("distance", "metres, more than 0") }
            q.distance = d
        }
        if let v = p["gates"] {
            guard let n = Int(v), (1...16).contains(n) else { throw APIError.invalid("gates", "a gate count 1...16") }
            q.gateCount = n
        }
        q.sessionID = try optionalID(p, "session")
        if let v = p["q"] {
            guard v.count <= 64 else { throw APIError.invalid("q", "at most 64 characters") }
            Self.search(String(v), into: &q)
        }
        if let v = p["sort"] {
            guard let sort = HistoryQuery.Sort(rawValue: String(v)) else {
                throw APIError.invalid("sort", "one of \(HistoryQuery.Sort.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            q.sort = sort
            // Why: a coach sorting by time wants the fastest first; by name, A to Z.
            q.descending = sort == .date || sort == .runs
        }
        if let v = p["order"] {
            switch v {
            case "asc": q.descending = false
            case "desc": q.descending = true
            default: throw APIError.invalid("order", "asc or desc")
            }
        }
        if let v = p["limit"] {
            guard let n = Int(v), (1...Self.maxPageSize).contains(n) else { throw APIError.invalid("limit", "1 to \(Self.maxPageSize)") }
            q.limit = n
        }
        if let v = p["offset"] {
            guard let n = Int(v), n >= 0 else { throw APIError.invalid("offset", "a whole number, 0 or more") }
            q.offset = n
        }
        return q
    }

    /// A finite JSON number (not a boolean, not a string), else nil.
    static func number(_ value: Any?) -> Double? {
        guard let value, !(value is String), let n = value as? NSNumber, !isBoolean(n), n.doubleValue.isFinite else { return nil }
        return n.doubleValue
    }

    /// A JSON true or false, else nil (a number is not one).
    static func boolean(_ value: Any?) -> Bool? {
        guard let n = value as? NSNumber, isBoolean(n) else { return nil }
        return n.boolValue
    }

    /// Why objCType: Foundation bridges 0 and 1 to Bool too; only JSON true and false are
    /// booleans ("c").
    private static func isBoolean(_ n: NSNumber) -> Bool { String(cString: n.objCType) == "c" }

    /// A JSON number that is a whole number (not a boolean, not 1.5), else nil.
    static func wholeNumber(_ value: Any?) -> Int64? {
        guard let d = number(value), d == d.rounded(), abs(d) < 9e15 else { return nil }
        return Int64(d)
    }

    /// The roster and the latest session's athletes (`/api/roster`).
    func rosterView() throws -> RosterView {
        RosterView(athletes: try book.roster(), sessionAthletes: try book.sessionAthletes())
    }

    /// Places run `id`'s finish `offsetMs` from the timed crossing (nil: back to the
    /// measured time) and answers with the run.
    func correct(_ id: Int64, offsetMs: Double?) throws -> Response {
        do {
            let r = try book.correctFinish(id: id, offsetMs: offsetMs)
            if offsetMs == nil {
                logger.notice("run \(id): correction undone, \(r.seconds) s as measured")
            } else {
                logger.notice("run \(id) corrected by hand: \(r.measuredSeconds ?? r.seconds) s measured, \(r.seconds) s now")
            }
            hub.bookChanged()
            return try json(view(r))
        } catch { throw apiError(error) }
    }

    static func isDateOnly(_ s: String) -> Bool { s.count == 10 && s.dropFirst(4).first == "-" }

    /// The history's search box: a date (`2026-11-25`) finds that day (the gate's time
    /// zone), a distance (`30m`, `30 m`) that distance; other text is looked for in the
    /// athletes' names and nicknames, the preset, the notes and the session.
    static func search(_ text: String, into q: inout HistoryQuery) {
        let t = text.trimmingCharacters(in: .whitespaces)
        if isDateOnly(t), let d = CalendarDate(t) {
            var cal = Calendar(identifier: .gregorian)
            cal.timeZone = TimeZone.current
            if let start = cal.date(from: DateComponents(year: d.year, month: d.month, day: d.day)),
               let end = cal.date(byAdding: .day, value: 1, to: start) {
                q.from = max(q.from ?? 0, start.timeIntervalSince1970)
                q.to = min(q.to ?? .infinity, end.timeIntervalSince1970 - 0.001)
                return
            }
        }
        let lower = t.lowercased()
        if lower.hasSuffix("m"), let d = Double(lower.dropLast().trimmingCharacters(in: .whitespaces)), d.isFinite, d > 0 {
            q.distance = d
            return
        }
        q.search = t
    }

    /// Unix seconds from `YYYY-MM-DD` (UTC midnight), ISO 8601 with zone, or a number.
    static func parseTime(_ s: String) -> Double? {
        if let v = Double(s), v.isFinite, v >= 0 { return v }
        if isDateOnly(s) {
            let f = ISO8601DateFormatter()
            f.formatOptions = [.withFullDate]
            return f.date(from: s)?.timeIntervalSince1970
        }
        let f = ISO8601DateFormatter()
        if let d = f.date(from: s) { return d.timeIntervalSince1970 }
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.date(from: s)?.timeIntervalSince1970
    }
}

/// The one PIN check. Every request that changes something (any method but GET and HEAD)
/// needs the gate's PIN in `X-Gate-PIN`, whatever its route, with the wrong-PIN back-off;
/// only `POST /api/pin`, which checks a PIN given in its body, is open. A route added later
/// is guarded without a line of its own: forgetting the check cannot open a door.
struct PINRequired: RouterMiddleware {
    typealias Context = WebContext
    let server: WebServer
    /// Routes that change nothing and check a PIN themselves.
    static let open: Set<String> = ["/api/pin"]

    static func needsPIN(_ request: Request) -> Bool {
        request.method != .get && request.method != .head && !open.contains(request.uri.path)
    }

    func handle(_ request: Request, context: WebContext, next: (Request, WebContext) async throws -> Response) async throws -> Response {
        if Self.needsPIN(request) { try server.requirePIN(request, context) }
        return try await next(request, context)
    }
}

/// Headers every answer carries: the page works offline and never loads outside code.
struct SecurityHeaders: RouterMiddleware {
    typealias Context = WebContext
    func handle(_ request: Request, context: WebContext, next: (Request, WebContext) async throws -> Response) async throws -> Response {
        var r: Response
        do { r = try await next(request, context) } catch let e as APIError {
            r = try e.response(from: request, context: context)
        } catch let e as HTTPError where e.status == .notFound {
            r = try APIError(.notFound, field: "path", reason: "no such page or API route: \(request.uri.path)").response(from: request, context: context)
        }
        r.headers[.xContentTypeOptions] = "nosniff"
        r.headers[HTTPField.Name("Content-Security-Policy")!] = "default-src 'self'; img-src 'self' data: blob:; connect-src 'self'; style-src 'self'; script-src 'self'"
        return r
    }
}

/// `GET /api/roster`: the roster in running order, and the latest session's athletes to
/// build one from.
struct RosterView: Codable {
    var athletes: [Athlete]
    var sessionAthletes: [Athlete]
}

/// `GET /api/camera`: the camera view's geometry, for drawing the gate line over it.
struct CameraInfo: Codable {
    var width: Int
    var height: Int
    var frameWidth: Int
    var frameHeight: Int
    /// The gate line in camera pixels; in the picture at `gateX * width / frameWidth`.
    var gateX: Double
    var sequence: UInt64
}
