// SPDX-License-Identifier: Apache-2.0
// The gate's runs published through `[mqtt]`: each committed run reaches a subscriber as
// the documented JSON, once by its id, and the gate's status is retained.

import Foundation
import GateConfig
import GateDaemon
import Logging
import MQTTLink
import SQLiteStore
import Synchronization
import Testing

@Suite("Runs published to MQTT", .serialized)
struct MQTTResultsTests {
    @Test("a committed run reaches a subscriber on sprintgate/<device>/runs as JSON with its id, splits in seconds; status online, then offline")
    func runsPublished() throws {
        if let why = MQTTLinkTests.skip { print("SKIP: \(why)"); return }
        let broker = try Broker()
        try broker.start()
        let got = Mutex<[String: [UInt8]]>([:])
        let board = MQTTLink(configuration: .init(host: "127.0.0.1", port: broker.port, clientID: "board", statusTopic: "x/board/status"),
                             outbox: MemoryOutbox(), logger: Logger(label: "board")) { topic, payload in
            got.withLock { $0[topic] = payload }
        }
        try board.start()
        board.subscribe("sprintgate/#")
        var settings = MQTTSettings()
        settings.port = broker.port
        settings.device = "finish"
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("outbox-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let results = try MQTTResults(settings: settings, outboxDirectory: scratch.path, logger: Logger(label: "gate"))
        let relay = CommitRelay()
        results.attach(to: relay)
        // A run is not retained: one published before the board's subscription is in place
        // never reaches it. The gate's status is retained, so once the board has it, the
        // board is listening.
        let end = Date().addingTimeInterval(20)
        while Date() < end, got.withLock({ $0["sprintgate/finish/status"] }) == nil { usleep(20_000) }
        #expect(got.withLock { $0["sprintgate/finish/status"] } == Array("online".utf8), "the board never heard the gate")
        let run = StoredRun(id: 42, startType: "flying", presetID: "flying-30m", distance: 30, athleteID: 7, wallStartMs: 1_780_000_000_250,
                            totalNs: 3_456_000_000, gateCount: 2,
                            splits: [StoredSplit(gateIndex: 1, distance: 30, timeNs: 3_456_000_000, segmentNs: 3_456_000_000,
                                                 segmentSpeed: 8.68, syncUncertaintyNs: 500_000)])
        relay.deliver(CommittedRun(run: run, bests: BestsSet(personal: true, season: true)))
        while Date() < end, got.withLock({ $0["sprintgate/finish/runs"] }) == nil { usleep(20_000) }
        let payload = try #require(got.withLock { $0["sprintgate/finish/runs"] })
        let m = try JSONDecoder().decode(MQTTResults.RunMessage.self, from: Data(payload))
        #expect(m.id == "finish/run/42" && m.device == "finish" && m.run == 42 && m.seconds == 3.456 && m.distance == 30)
        #expect(m.started == "2026-05-28T20:26:40.250Z" && m.startType == "flying" && m.preset == "flying-30m" && m.athlete == 7)
        #expect(m.splits == [.init(gate: 1, distance: 30, seconds: 3.456)] && !m.falseStart)
        #expect(got.withLock { $0["sprintgate/finish/status"] } == Array("online".utf8))
        #expect(results.link.waiting == 0)
        results.stop()
        while Date() < end, got.withLock({ $0["sprintgate/finish/status"] }) != Array("offline".utf8) { usleep(20_000) }
        #expect(got.withLock { $0["sprintgate/finish/status"] } == Array("offline".utf8))
        board.stop()
    }
}

@Suite("A running gate publishing to MQTT", .serialized)
struct MQTTGateTests {
    @Test("sprintgate demo --mqtt: its stored runs reach a subscriber, each once; killed, its last will says offline")
    func demoGate() throws {
        if let why = MQTTLinkTests.skip { print("SKIP: \(why)"); return }
        let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let binary = URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("sprintgate")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            Issue.record("\(binary.path) is missing: build all products first (scripts/test does)")
            return
        }
        let broker = try Broker()
        try broker.start()
        let got = Mutex<(MQTTDeduplicator, [String: String])>((MQTTDeduplicator(), [:]))
        let board = MQTTLink(configuration: .init(host: "127.0.0.1", port: broker.port, clientID: "board", statusTopic: "x/board/status"),
                             outbox: MemoryOutbox(), logger: Logger(label: "board")) { topic, payload in
            got.withLock { g in
                if topic.hasSuffix("/status") { g.1[topic] = String(decoding: payload, as: UTF8.self) }
                if topic == "sprintgate/demo/runs", let m = try? JSONDecoder().decode(MQTTResults.RunMessage.self, from: Data(payload)) {
                    _ = g.0.first(m.id)
                }
            }
        }
        try board.start()
        board.subscribe("sprintgate/#")
        // Runs are not retained: the board hears its own probe before the demo starts, so
        // its subscription is in place before the first run is published.
        var end = Date().addingTimeInterval(20)
        while Date() < end, got.withLock({ $0.1["sprintgate/probe/status"] }) == nil {
            board.publishNow(topic: "sprintgate/probe/status", payload: Array("probe".utf8))
            usleep(100_000)
        }
        #expect(got.withLock { $0.1["sprintgate/probe/status"] } == "probe", "the board never heard its own probe")
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("demo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let p = Process()
        p.executableURL = binary
        p.arguments = ["demo", "--web", "\(Broker.freePort())", "--web-host", "127.0.0.1", "--lone-gate", "--fps", "60",
                       "--mqtt", "\(broker.port)", "--state-dir", state.path, "--seconds", "120"]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        // The demo's clip gives a run every few seconds.
        end = Date().addingTimeInterval(60)
        while Date() < end, got.withLock({ $0.0.count }) < 3 { usleep(50_000) }
        let runs = got.withLock { $0.0.count }
        #expect(runs >= 3, "\(runs) runs received")
        #expect(got.withLock { $0.1["sprintgate/demo/status"] } == "online")
        // Killed: its connection closes with no goodbye, and the broker publishes its will.
        // (A power cut, whose connection is never closed, the broker notices after one and a
        // half keep-alives, 15 s; that is not tried here.)
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        end = Date().addingTimeInterval(30)
        while Date() < end, got.withLock({ $0.1["sprintgate/demo/status"] }) != "offline" { usleep(50_000) }
        #expect(got.withLock { $0.1["sprintgate/demo/status"] } == "offline")
        #expect(got.withLock { $0.0.repeats } == 0)
        board.stop()
    }
}
