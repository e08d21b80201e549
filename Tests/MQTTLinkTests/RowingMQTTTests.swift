// SPDX-License-Identifier: Apache-2.0
// A boathouse of rowing hubs on a real Mosquitto: two hubs with synthetic ergs publish
// their ergs and sessions, a third hub's board shows every erg and every session once,
// across a restart of the broker mid-session.

import Foundation
import GateConfig
import GateDaemon
import Logging
import MQTTLink
import Rowing
import SQLiteStore
import Testing
import WebUI

@Suite("Rowing hubs on MQTT", .serialized)
struct RowingMQTTTests {
    func waitUntil(_ seconds: Double, _ ok: () -> Bool) -> Bool { MQTTLinkTests().waitUntil(seconds, ok) }

    @Test("two hubs publish; a third hub's board shows all their ergs live and every session they stored once, across a broker restart")
    func boathouse() throws {
        if let why = MQTTLinkTests.skip { print("SKIP: \(why)"); return }
        let broker = try Broker()
        try broker.start()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rowing-mqtt-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let t0 = Date().timeIntervalSince1970
        let clock: @Sendable () -> Double = { Date().timeIntervalSince1970 - t0 }
        func settings(_ device: String) -> MQTTSettings {
            var m = MQTTSettings()
            m.port = broker.port
            m.device = device
            return m
        }
        struct Hub {
            var hub: RowingHub
            var store: RunStore?
            var ergs: SyntheticErgs?
            var mqtt: RowingMQTT
        }
        func hub(_ device: String, ergs n: Int) throws -> Hub {
            let dir = scratch.appendingPathComponent(device).path
            let store = n > 0 ? try RunStore(directory: dir + "/db", logger: Logger(label: device)) : nil
            let hub = RowingHub(store: store, control: nil, source: "synthetic", logger: Logger(label: device), clock: clock)
            let results = try MQTTResults(settings: settings(device), outboxDirectory: dir + "/outbox", logger: Logger(label: device))
            let mqtt = RowingMQTT(results: results, hub: hub, logger: Logger(label: device))
            var ergs: SyntheticErgs?
            if n > 0 {
                let e = SyntheticErgs(count: n, speed: 20, clock: clock) { hub.apply($0) }
                hub.setControl(e)
                for i in 1...n { hub.add(erg: i, name: SyntheticErgs.name(i)) }
                hub.start()
                e.start()
                ergs = e
            }
            mqtt.start()
            return Hub(hub: hub, store: store, ergs: ergs, mqtt: mqtt)
        }
        let board = try hub("board", ergs: 0)
        let hubs = try [hub("hub-a", ergs: 2), hub("hub-b", ergs: 3)]
        defer {
            for h in hubs + [board] {
                h.ergs?.stop()
                h.hub.stop()
                h.mqtt.stop()
                h.mqtt.results.stop()
            }
        }
        #expect(waitUntil(15) { board.hub.rowingLive().boathouse.filter { !$0.tile.stale }.count == 5 })
        // A 300 m piece on every erg (the 2000 m pieces under way are stored cut short).
        while hubs.contains(where: { $0.hub.rowingLive().board.tiles.filter(\.connected).count < ($0.ergs?.count ?? 0) }) { usleep(20_000) }
        for h in hubs { #expect(try h.hub.program(.distance(metres: 300, split: nil)).allSatisfy(\.accepted)) }
        // The broker goes away while the ergs row, and comes back once they have finished:
        // their sessions wait in the outboxes meanwhile.
        usleep(1_500_000)
        broker.stop()
        let ended = waitUntil(30) {
            ((try? hubs.map { try $0.store!.ergSessions(workout: "300 m").filter { $0.summary != nil }.count }) ?? []) == [2, 3]
        }
        usleep(1_500_000)
        let waiting = hubs.map(\.mqtt.results.link.waiting)
        try broker.start()
        #expect(ended && waiting.reduce(0, +) >= 5, "sessions waiting while the broker was away: \(waiting)")
        func stored() -> [String] {
            hubs.flatMap { h in ((try? h.store!.ergSessions()) ?? []).map { "\(h.mqtt.results.device)/\($0.id)" } }
        }
        let all = waitUntil(60) {
            let seen = board.hub.rowingLive().boathouseSessions.map { "\($0.device)/\($0.session.id)" }
            return Set(seen) == Set(stored()) && seen.count == stored().count
        }
        let acknowledged = waitUntil(15) { hubs.allSatisfy { $0.mqtt.results.link.waiting == 0 } }
        let live = board.hub.rowingLive()
        print("boathouse over MQTT across a broker restart: \(stored().count) sessions stored by 2 hubs, \(waiting) waiting in their outboxes while the broker was away, \(live.boathouseSessions.count) shown on the board, "
              + "\(live.boathouse.count) ergs; outboxes \(hubs.map(\.mqtt.results.link.waiting))")
        #expect(acknowledged, "the outboxes still hold \(hubs.map(\.mqtt.results.link.waiting)) messages")
        #expect(all, "the board shows \(live.boathouseSessions.map { "\($0.device)/\($0.session.id)" }) of \(stored())")
        #expect(live.boathouseSessions.filter { $0.session.workout == "300 m" }.allSatisfy { $0.session.summary?.distance == 300 })
        #expect(waitUntil(15) { board.hub.rowingLive().boathouse.filter { !$0.tile.stale }.count == 5 })
        #expect(Set(live.boathouse.map(\.device)) == ["hub-a", "hub-b"])
        // A hub never shows its own ergs twice.
        #expect(hubs[0].hub.rowingLive().boathouse.allSatisfy { $0.device == "hub-b" })
    }
}
