// SPDX-License-Identifier: Apache-2.0
// The rowing hub on the boathouse's MQTT broker: its ergs' live figures and its finished
// sessions published, and the other hubs' taken in for the coach's board. Topics and
// payloads in docs/mqtt.md.

import Foundation
public import Logging
public import MQTTLink
public import Rowing
public import SQLiteStore
import Synchronization
public import WebUI

/// Publishes each erg's tile to `sprintgate/<device>/ergs/<erg>` twice a second (QoS 0: a
/// lost one is replaced half a second later) and each finished session to
/// `sprintgate/<device>/erg-sessions` (QoS 1 from the outbox, id `<device>/erg-session/<n>`:
/// a broker restart or a Wi-Fi drop loses none, and a board counts each once). Subscribes
/// to the same topics of every device and hands the others' to the hub.
public final class RowingMQTT: Sendable {
    public let results: MQTTResults
    private let hub: RowingHub
    private let seen = Mutex(MQTTDeduplicator())
    private let running = Atomic(false)
    private let finishedThread = Atomic(true)

    /// Why twice a second: a boathouse board shows another hub's ergs within a second,
    /// and eight ergs cost sixteen small messages a second.
    public static let livePeriod = 0.5

    /// `sprintgate/<device>/ergs/<erg>`: one erg's tile.
    public struct LiveMessage: Codable, Sendable, Hashable {
        public var device: String
        public var tile: RowingBoard.Tile
    }

    /// `sprintgate/<device>/erg-sessions`: a finished session.
    public struct SessionMessage: Codable, Sendable, Hashable {
        /// `<device>/erg-session/<id>`: the same session is the same message, however often sent.
        public var id: String
        public var device: String
        public var session: ErgSession
    }

    public static func liveTopic(_ device: String, erg: Int) -> String { MQTTResults.topicPrefix(device) + "/ergs/\(erg)" }
    public static func sessionsTopic(_ device: String) -> String { MQTTResults.topicPrefix(device) + "/erg-sessions" }

    public init(results: MQTTResults, hub: RowingHub, logger: Logger) {
        self.results = results
        self.hub = hub
        results.received.add { [self] topic, payload in receive(topic, payload) }
        results.link.subscribe("sprintgate/+/ergs/+")
        results.link.subscribe("sprintgate/+/erg-sessions")
        hub.whenSessionFinished { [results] session in
            do { try RowingMQTT.publish(session, results: results) } catch {
                // Stored in the database all the same; said, not retried.
                logger.error("MQTT: erg session \(session.id) not published: \(error)")
            }
        }
    }

    /// A message of the subscriptions, on libmosquitto's thread: another hub's erg or
    /// finished session (each session once, however often the broker delivers it).
    private func receive(_ topic: String, _ payload: [UInt8]) {
        let parts = topic.split(separator: "/")
        guard parts.count >= 3, parts[0] == "sprintgate", parts[1] != results.device else { return }
        if parts.count == 4, parts[2] == "ergs", let m = try? JSONDecoder().decode(LiveMessage.self, from: Data(payload)) {
            hub.heard(device: m.device, tile: m.tile)
        } else if parts.count == 3, parts[2] == "erg-sessions", let m = try? JSONDecoder().decode(SessionMessage.self, from: Data(payload)),
                  seen.withLock({ $0.first(m.id) }) {
            hub.heard(device: m.device, session: m.session)
        }
    }

    static func publish(_ session: ErgSession, results: MQTTResults) throws {
        let m = SessionMessage(id: "\(results.device)/erg-session/\(session.id)", device: results.device, session: session)
        try results.link.send(MQTTMessage(id: m.id, topic: sessionsTopic(results.device), payload: Array(try JSONEncoder().encode(m))))
    }

    /// Starts publishing the live tiles.
    public func start() {
        running.store(true, ordering: .relaxed)
        finishedThread.store(false, ordering: .relaxed)
        Thread.detachNewThread { [self] in
            defer { finishedThread.store(true, ordering: .relaxed) }
            let encoder = JSONEncoder()
            while running.load(ordering: .relaxed) {
                for t in hub.rowingLive().board.tiles {
                    guard let payload = try? encoder.encode(LiveMessage(device: results.device, tile: t)) else { continue }
                    results.link.publishNow(topic: Self.liveTopic(results.device, erg: t.erg), payload: Array(payload))
                }
                usleep(useconds_t(Self.livePeriod * 1e6))
            }
        }
    }

    /// Stops publishing the live tiles (the link itself is stopped by its owner).
    public func stop() {
        running.store(false, ordering: .relaxed)
        while !finishedThread.load(ordering: .relaxed) { usleep(10_000) }
    }
}
