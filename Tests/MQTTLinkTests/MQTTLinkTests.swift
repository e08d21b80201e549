// SPDX-License-Identifier: Apache-2.0
// The MQTT link against a real Mosquitto broker on loopback: results reach a board across
// a broker restart, none lost and none counted twice; status retained; the outbox on disk.

import Foundation
import Logging
import MQTTLink
import Synchronization
import Testing

/// A Mosquitto broker of its own on a free loopback port, with persistence in a scratch
/// folder, so a restart keeps the queued messages of a durable subscriber as Debian's
/// broker does with its default configuration.
final class Broker {
    static let binary = ["/usr/sbin/mosquitto", "/usr/bin/mosquitto"].first { FileManager.default.isExecutableFile(atPath: $0) }
    let dir: URL
    let port: Int
    private var pid: pid_t = 0

    init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("mqtt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        port = Broker.freePort()
        let conf = """
            listener \(port) 127.0.0.1
            allow_anonymous true
            persistence true
            user root
            persistence_location \(dir.path)/
            log_dest none

            """
        try conf.write(to: dir.appendingPathComponent("mosquitto.conf"), atomically: true, encoding: .utf8)
    }

    func start() throws {
        // Why: posix_spawn with an empty signal mask. A child started from a test thread
        // inherits its blocked signals, and a broker that never sees SIGTERM never saves
        // its queues nor stops.
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attr, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attr, &all)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let args = [Broker.binary!, "-c", dir.appendingPathComponent("mosquitto.conf").path]
        var argv: [UnsafeMutablePointer<CChar>?] = args.map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var child: pid_t = 0
        guard posix_spawn(&child, Broker.binary!, nil, &attr, &argv, environ) == 0 else { throw MQTTError("cannot start mosquitto") }
        pid = child
        // Ready when it takes a connection.
        let end = Date().addingTimeInterval(10)
        while Date() < end {
            if Broker.accepts(port) { return }
            usleep(20_000)
        }
        throw MQTTError("the broker did not start on port \(port)")
    }

    /// Stops the broker as a service stop does (SIGTERM: it saves its queues).
    func stop() {
        guard pid > 0 else { return }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        pid = 0
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: dir)
    }

    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = in_port_t(UInt16(port).bigEndian)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } } == 0
    }

    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return Int(UInt16(bigEndian: a.sin_port))
    }
}

@Suite("MQTT link against Mosquitto", .serialized)
struct MQTTLinkTests {
    static let skip: String? = Broker.binary == nil ? "mosquitto is not installed (apt install mosquitto)" : nil

    /// Waits until `ok` holds, polling every 20 ms for at most `seconds`.
    func waitUntil(_ seconds: Double, _ ok: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if ok() { return true }
            usleep(20_000)
        }
        return ok()
    }

    @Test("two devices publish results and status; a board sees both, every result once, across a broker restart mid-session")
    func brokerRestart() throws {
        if let why = Self.skip { print("SKIP: \(why)"); return }
        let broker = try Broker()
        try broker.start()
        let received = Mutex<(MQTTDeduplicator, Int, [String: String])>((MQTTDeduplicator(), 0, [:]))
        let board = MQTTLink(configuration: .init(host: "127.0.0.1", port: broker.port, clientID: "board", statusTopic: "test/board/status"),
                             outbox: MemoryOutbox(), logger: Logger(label: "board")) { topic, payload in
            let text = String(decoding: payload, as: UTF8.self)
            received.withLock { r in
                if topic.hasSuffix("/status") { r.2[topic] = text; return }
                r.1 += 1
                _ = r.0.first(text)
            }
        }
        try board.start()
        board.subscribe("test/+/results")
        board.subscribe("test/+/status")
        #expect(waitUntil(10) { board.connected })
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("outbox-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let devices = try ["hub-a", "gate-b"].map { name in
            MQTTLink(configuration: .init(host: "127.0.0.1", port: broker.port, clientID: name, statusTopic: "test/\(name)/status"),
                     outbox: try FolderOutbox(directory: scratch.appendingPathComponent(name).path), logger: Logger(label: name))
        }
        for d in devices { try d.start() }
        #expect(waitUntil(10) { devices.allSatisfy(\.connected) })
        var sent = 0
        for i in 0..<60 {
            if i == 25 {
                broker.stop()
                #expect(waitUntil(10) { devices.allSatisfy { !$0.connected } })
            }
            if i == 40 { try broker.start() }
            for d in devices {
                let id = "\(d.configuration.clientID)/result/\(i)"
                try d.send(MQTTMessage(id: id, topic: "test/\(d.configuration.clientID)/results", payload: Array(id.utf8)))
                sent += 1
            }
            usleep(20_000)
        }
        let all = waitUntil(60) { received.withLock { $0.0.count } == sent && devices.allSatisfy { $0.waiting == 0 } }
        let (distinct, raw, status) = received.withLock { ($0.0.count, $0.1, $0.2) }
        print("MQTT across a broker restart: \(sent) results sent by 2 devices, \(distinct) distinct received, \(raw - distinct) repeats set aside, outboxes \(devices.map(\.waiting))")
        #expect(all, "received \(distinct) of \(sent); outboxes \(devices.map(\.waiting))")
        #expect(status["test/hub-a/status"] == "online" && status["test/gate-b/status"] == "online")
        // A device that stops says so, retained.
        devices[0].stop()
        #expect(waitUntil(10) { received.withLock { $0.2["test/hub-a/status"] } == "offline" })
        devices[1].stop()
        board.stop()
    }

    @Test("the outbox on disk keeps what the broker has not acknowledged, through a restart of the device, oldest first")
    func outboxSurvivesRestart() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("outbox-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        var box = try FolderOutbox(directory: scratch.path)
        for i in 0..<5 { try box.keep(MQTTMessage(id: "run/\(i)", topic: "t", payload: [UInt8(i)])) }
        try box.keep(MQTTMessage(id: "run/1", topic: "t", payload: [9]))
        try box.delivered(id: "run/3")
        box = try FolderOutbox(directory: scratch.path)
        let left = try box.pending()
        #expect(left.map(\.id) == ["run/0", "run/1", "run/2", "run/4"])
        #expect(left[1].payload == [9])
    }

    @Test("with no broker, results wait in the outbox and the link says why; they go when a broker appears")
    func noBrokerYet() throws {
        if let why = Self.skip { print("SKIP: \(why)"); return }
        let broker = try Broker()
        let link = MQTTLink(configuration: .init(host: "127.0.0.1", port: broker.port, clientID: "lonely", statusTopic: "test/lonely/status"),
                            outbox: MemoryOutbox(), logger: Logger(label: "lonely"))
        try link.start()
        try link.send(MQTTMessage(id: "r1", topic: "test/lonely/results", payload: Array("r1".utf8)))
        #expect(waitUntil(3) { link.problem != nil })
        #expect(!link.connected && link.waiting == 1)
        #expect(link.problem?.contains("127.0.0.1:\(broker.port)") == true)
        try broker.start()
        #expect(waitUntil(30) { link.connected && link.waiting == 0 }, "\(link.problem ?? "no problem"), \(link.waiting) waiting")
        link.stop()
    }
}
