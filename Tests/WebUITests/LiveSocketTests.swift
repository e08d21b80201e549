// SPDX-License-Identifier: Apache-2.0
// The live board over a real WebSocket: a snapshot change reaches a connected client.

import Foundation
import GateCore
import Hummingbird
import Testing
@testable import WebUI
#if canImport(Glibc)
import Glibc
#endif

/// A minimal WebSocket client for loopback tests: handshake, then unmasked server text
/// frames (RFC 6455 §5.2). The socket is non-blocking and waits by sleeping the task, so
/// a read never holds one of the few cooperative threads the server's hub also runs on;
/// a read gives up after `patience`.
final class TinyWebSocket {
    let fd: Int32
    let patience: Duration
    private var pending: [UInt8] = []

    private init(fd: Int32, patience: Duration) {
        self.fd = fd
        self.patience = patience
    }

    static func connect(port: Int, path: String, patience: Duration = .seconds(60)) async throws -> TinyWebSocket {
        let fd: Int32
        do { fd = try LoopbackClient.connectLoopback(port: port) } catch { throw Failure("\(error)") }
        let ws = TinyWebSocket(fd: fd, patience: patience)
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        let sent = request.withCString { send(fd, $0, strlen($0), 0) }
        guard sent == request.utf8.count else { throw Failure("send") }
        let head = try await ws.readUntilBlankLine()
        guard head.hasPrefix("HTTP/1.1 101") else { throw Failure("no upgrade: \(head)") }
        return ws
    }

    deinit { close(fd) }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ d: String) { description = d }
    }

    private func fill(_ n: Int) async throws {
        var buf = [UInt8](repeating: 0, count: 65_536)
        let deadline = ContinuousClock.now + patience
        while pending.count < n {
            let got = recv(fd, &buf, buf.count, 0)
            if got > 0 { pending += buf[0..<got]; continue }
            guard got < 0, errno == EAGAIN || errno == EWOULDBLOCK else { throw Failure("connection closed") }
            guard ContinuousClock.now < deadline else { throw Failure("nothing from the server within \(patience)") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    private func take(_ n: Int) async throws -> [UInt8] {
        try await fill(n)
        let out = Array(pending[0..<n])
        pending.removeFirst(n)
        return out
    }

    private func readUntilBlankLine() async throws -> String {
        var text: [UInt8] = []
        while !(text.count >= 4 && Array(text.suffix(4)) == [13, 10, 13, 10]) { text += try await take(1) }
        return String(decoding: text, as: UTF8.self)
    }

    /// The next text message.
    func readText() async throws -> String {
        while true {
            let h = try await take(2)
            let opcode = h[0] & 0x0F
            var len = Int(h[1] & 0x7F)
            if len == 126 { let e = try await take(2); len = Int(e[0]) << 8 | Int(e[1]) }
            else if len == 127 { len = try await take(8).reduce(0) { $0 << 8 | Int($1) } }
            let payload = try await take(len)
            if opcode == 1 { return String(decoding: payload, as: UTF8.self) }
            if opcode == 8 { throw Failure("closed by server") }
        }
    }
}

@Suite struct LiveSocketTests {
    func phase(_ text: String) -> String? {
        let obj = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
        return ((obj?["board"] as? [String: Any])?["gate"] as? [String: Any])?["phase"] as? String
    }

    @Test func snapshotChangeReachesAConnectedClient() async throws {
        let f = Fixture()
        f.bridge.snapshot.update { $0.phase = "armed" }
        try await f.server.application(host: "127.0.0.1", port: 0).test(.live) { client in
            let port = try #require(client.port)
            let ws = try await TinyWebSocket.connect(port: port, path: "/api/ws")
            let first = try await ws.readText()
            #expect(phase(first) == "armed")
            #expect(first.contains("\"nowMonoNs\":"))
            f.bridge.snapshot.update { $0.phase = "running"; $0.runStartMonoNs = 42 }
            let second = try await ws.readText()
            #expect(phase(second) == "running")
            // A finished run is pushed too, with its result.
            _ = try f.book.record(f.run(2.95))
            let third = try await ws.readText()
            #expect(third.contains("\"seconds\":2.95"))
        }
    }

    @Test func nonUpgradeRequestToSocketPathIsRefused() async throws {
        let f = Fixture()
        try await f.server.application(host: "127.0.0.1", port: 0).test(.live) { client in
            try await client.execute(uri: "/api/ws", method: .get) { r in
                #expect(r.status != .ok)
            }
        }
    }
}
