// SPDX-License-Identifier: Apache-2.0
// The page's routes under test: `.router` hands each request to the application's responder
// in this process, as the server would; `.live` serves the application on a loopback port
// and sends each request on a connection of its own over a plain socket.
//
// Why not HummingbirdTesting: it links AsyncHTTPClient, and with it NIOSSL's BoringSSL
// (some 400 C files), which made up about a quarter of a build from scratch (567 s against
// 428 s without) for tests that speak plain HTTP/1.1.

import Foundation
import Glibc
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOEmbedded
import ServiceLifecycle
import Synchronization

/// How a test reaches the application: `.router` in this process, with no socket (what
/// most tests need, and what never waits for a thread of its own); `.live` on a loopback
/// port, for what needs a real connection (web sockets).
enum TestingSetup {
    case router, live
}

/// A response as the tests read it: status, header fields and the whole body.
struct TestResponse: Sendable {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var body: ByteBuffer
}

/// Sends requests to the application: on `port`, or in process through `handle`.
struct LoopbackClient: Sendable {
    let port: Int?
    var handle: (@Sendable (HTTPRequest, ByteBuffer?) async throws -> TestResponse)?

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ d: String) { description = d }
    }

    /// Sends one request on a new connection and hands the whole response to `check`.
    @discardableResult
    func execute<Return>(uri: String, method: HTTPRequest.Method, headers: HTTPFields = [:], body: ByteBuffer? = nil,
                         testCallback check: @escaping (TestResponse) async throws -> Return = { $0 }) async throws -> Return {
        if let handle {
            var fields = headers
            if let body { fields[.contentLength] = String(body.readableBytes) }
            let head = HTTPRequest(method: method, scheme: "http", authority: "localhost", path: uri, headerFields: fields)
            return try await check(try await handle(head, body))
        }
        guard let port else { throw Failure("no port") }
        var head = "\(method.rawValue) \(uri) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for field in headers { head += "\(field.name.rawName): \(field.value)\r\n" }
        let payload = body.map { Array($0.readableBytesView) } ?? []
        if body != nil || [.post, .put, .patch].contains(method) { head += "Content-Length: \(payload.count)\r\n" }
        let raw = try await Self.exchange(port: port, request: Array((head + "\r\n").utf8) + payload)
        return try await check(try Self.parse(raw))
    }

    /// A TCP connection to 127.0.0.1:`port`, made non-blocking once connected; the caller
    /// closes it.
    static func connectLoopback(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure("socket: errno \(errno)") }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            let e = errno
            close(fd)
            throw Failure("connect to 127.0.0.1:\(port): errno \(e)")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return fd
    }

    /// Connects, sends `request` and reads until the server closes the connection
    /// (the request asked it to), polling a non-blocking socket so no thread of the
    /// cooperative pool, which the routes' handlers run on, is ever blocked.
    static func exchange(port: Int, request: [UInt8], patience: Duration = .seconds(60)) async throws -> [UInt8] {
        let fd = try connectLoopback(port: port)
        defer { close(fd) }
        let deadline = ContinuousClock.now + patience
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 { sent += n; continue }
            guard n < 0, errno == EAGAIN || errno == EWOULDBLOCK else { throw Failure("send: errno \(errno)") }
            guard ContinuousClock.now < deadline else { throw Failure("the server took nothing within \(patience)") }
            try await Task.sleep(for: .milliseconds(2))
        }
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65_536)
        while true {
            let got = recv(fd, &buf, buf.count, 0)
            if got > 0 { out += buf[0 ..< got]; continue }
            if got == 0 { return out }
            guard errno == EAGAIN || errno == EWOULDBLOCK else {
                // A reset after a whole response (the server closed with unread input) ends it too.
                if errno == ECONNRESET, !out.isEmpty { return out }
                throw Failure("recv: errno \(errno)")
            }
            guard ContinuousClock.now < deadline else { throw Failure("no whole answer within \(patience)") }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// An HTTP/1.1 response read to the end of the connection: a body of
    /// `Content-Length` bytes, chunked, or up to the close.
    static func parse(_ raw: [UInt8]) throws -> TestResponse {
        let crlf2: [UInt8] = [13, 10, 13, 10]
        guard let end = raw.indices.dropLast(3).first(where: { raw[$0 ..< $0 + 4].elementsEqual(crlf2) }) else {
            throw Failure("no response head in \(raw.count) bytes")
        }
        let lines = String(decoding: raw[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ", maxSplits: 2)
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let code = Int(statusParts[1]) else {
            throw Failure("not a status line: \(lines[0])")
        }
        var headers = HTTPFields()
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":"), let name = HTTPField.Name(String(line[..<colon])) else {
                throw Failure("not a header line: \(line)")
            }
            headers.append(HTTPField(name: name, value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var body = Array(raw[(end + 4)...])
        if headers[.transferEncoding]?.lowercased().contains("chunked") == true {
            body = try dechunk(body)
        } else if let length = headers[.contentLength].flatMap(Int.init) {
            guard body.count >= length else { throw Failure("body of \(body.count) bytes, \(length) announced") }
            body = Array(body[..<length])
        }
        let reason = statusParts.count > 2 ? String(statusParts[2]) : ""
        return TestResponse(status: HTTPResponse.Status(code: code, reasonPhrase: reason), headers: headers, body: ByteBuffer(bytes: body))
    }

    static func dechunk(_ data: [UInt8]) throws -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while true {
            guard let lineEnd = data[i...].indices.dropLast().first(where: { data[$0] == 13 && data[$0 + 1] == 10 }) else {
                throw Failure("a chunk without its size line")
            }
            let sizeText = String(decoding: data[i ..< lineEnd], as: UTF8.self).split(separator: ";")[0]
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { throw Failure("chunk size \(sizeText)") }
            i = lineEnd + 2
            if size == 0 { return out }
            guard i + size <= data.count else { throw Failure("a chunk cut short") }
            out += data[i ..< i + size]
            i += size + 2
        }
    }
}

/// The application under test on an ephemeral loopback port, which it reports once bound.
struct LoopbackApplication<Base: ApplicationProtocol>: ApplicationProtocol {
    typealias Responder = Base.Responder
    let base: Base
    let bound = BoundPort()

    var responder: Responder { get async throws { try await base.responder } }
    var server: HTTPServerBuilder { base.server }
    var eventLoopGroup: any EventLoopGroup { base.eventLoopGroup }
    var configuration: ApplicationConfiguration { base.configuration.with(address: .hostname("127.0.0.1", port: 0)) }
    var logger: Logger { base.logger }
    var services: [any Service] { base.services }
    var processesRunBeforeServerStart: [@Sendable () async throws -> Void] { base.processesRunBeforeServerStart }

    @Sendable func onServerRunning(_ channel: any Channel) async {
        await base.onServerRunning(channel)
        bound.port.withLock { $0 = channel.localAddress?.port }
    }
}

/// The port the server bound, once it has.
final class BoundPort: Sendable {
    let port = Mutex<Int?>(nil)
}

extension ApplicationProtocol {
    /// Serves the application on a loopback port for as long as `body` runs, then shuts
    /// it down gracefully (open connections finish first).
    func test<Value: Sendable>(_ setup: TestingSetup, _ body: @escaping @Sendable (LoopbackClient) async throws -> Value) async throws -> Value {
        if setup == .router { return try await body(LoopbackClient(port: nil, handle: try await inProcess())) }
        let app = LoopbackApplication(base: self)
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: app.logger))
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let result: Result<Value, any Error>
            do {
                // Why so long: while other suites' synchronous tests hold every thread of
                // the cooperative pool (2 on a 2-core machine), the server cannot start;
                // it does once they let go.
                let deadline = ContinuousClock.now + .seconds(600)
                var port = app.bound.port.withLock { $0 }
                while port == nil {
                    guard ContinuousClock.now < deadline else {
                        throw LoopbackClient.Failure("the application did not start serving within 600 s")
                    }
                    try await Task.sleep(for: .milliseconds(5))
                    port = app.bound.port.withLock { $0 }
                }
                result = .success(try await body(LoopbackClient(port: port)))
            } catch {
                result = .failure(error)
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return try result.get()
        }
    }
}

extension ApplicationProtocol {
    /// A request handed to the responder as the server hands it, and its response read
    /// whole; an error the responder throws is answered with its status (a body the
    /// router did not make is not the tests' business).
    func inProcess() async throws -> @Sendable (HTTPRequest, ByteBuffer?) async throws -> TestResponse {
        let responder = try await self.responder
        let logger = self.logger
        return { head, body in
            let context = Self.Context(source: ApplicationRequestContextSource(channel: EmbeddedChannel(), logger: logger))
            let request = Request(head: head, body: RequestBody(buffer: body ?? ByteBuffer()))
            let response: Response
            do {
                response = try await responder.respond(to: request, context: context)
            } catch let error as any HTTPResponseError {
                response = Response(status: error.status)
            } catch {
                response = Response(status: .internalServerError)
            }
            let collected = CollectedBody()
            try await response.body.write(CollectingWriter(into: collected))
            return TestResponse(status: response.status, headers: response.headers, body: collected.bytes.withLock { $0 })
        }
    }
}

/// A response body as it is written.
final class CollectedBody: Sendable {
    let bytes = Mutex(ByteBuffer())
}

struct CollectingWriter: ResponseBodyWriter {
    let into: CollectedBody
    mutating func write(_ buffer: ByteBuffer) async throws {
        var buffer = buffer
        into.bytes.withLock { $0.writeBuffer(&buffer) }
    }
    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
