// SPDX-License-Identifier: Apache-2.0
// The gate's runs and status published to an MQTT broker (`[mqtt]`): topics and payloads
// in docs/mqtt.md.

import Foundation
public import GateConfig
public import Logging
public import MQTTLink
public import SQLiteStore
import Synchronization

/// Publishes every run the database commits to `sprintgate/<device>/runs` (QoS 1, from an
/// outbox under the state directory, so a broker away or a restart of the gate loses
/// none), and the gate's status, retained, to `sprintgate/<device>/status`.
public final class MQTTResults: Sendable {
    public let link: MQTTLink
    public let device: String
    /// Where messages of the link's subscriptions go (the rowing board's boathouse).
    public let received: MQTTReceiver
    private let logger: Logger

    /// The run as published: what a board, Home Assistant or Node-RED needs, in SI units.
    public struct RunMessage: Codable, Sendable, Hashable {
        public struct Split: Codable, Sendable, Hashable {
            public var gate: Int
            public var distance: Double?
            public var seconds: Double
            public init(gate: Int, distance: Double?, seconds: Double) {
                self.gate = gate
                self.distance = distance
                self.seconds = seconds
            }
        }
        /// `<device>/run/<id>`: the same run is the same message, however often it is sent.
        public var id: String
        public var device: String
        public var run: Int64
        /// ISO 8601, UTC.
        public var started: String
        public var seconds: Double?
        public var distance: Double?
        public var startType: String
        public var preset: String?
        public var athlete: Int64?
        public var falseStart: Bool
        public var splits: [Split]
    }

    public static func topicPrefix(_ device: String) -> String { "sprintgate/\(device)" }

    /// Starts the link (it keeps trying while the broker is away) with its outbox in
    /// `outboxDirectory` (nil: in memory).
    public init(settings: MQTTSettings, outboxDirectory: String?, logger: Logger) throws {
        device = settings.device
        self.logger = logger
        let outbox: any MQTTOutboxStorage = try outboxDirectory.map { try FolderOutbox(directory: $0) } ?? MemoryOutbox()
        let receiver = MQTTReceiver()
        received = receiver
        link = MQTTLink(configuration: .init(host: settings.host, port: settings.port, clientID: "sprintgate-\(settings.device)",
                                             statusTopic: Self.topicPrefix(settings.device) + "/status"),
                        outbox: outbox, logger: logger) { topic, payload in receiver.deliver(topic, payload) }
        try link.start()
    }

    /// Publishes each committed run from now on.
    public func attach(to commits: CommitRelay) {
        commits.add { [self] committed in
            // Why: a run the outbox cannot keep (a full card) is still in the database; it is
            // said, not retried.
            do { try publish(committed.run) } catch { logger.error("MQTT: run \(committed.run.id ?? 0) not published: \(error)") }
        }
    }

    /// Publishes one stored run.
    public func publish(_ run: StoredRun) throws {
        guard let id = run.id else { return }
        let message = Self.message(run, device: device)
        let payload = try JSONEncoder().encode(message)
        try link.send(MQTTMessage(id: message.id, topic: Self.topicPrefix(device) + "/runs", payload: Array(payload)))
    }

    public static func message(_ run: StoredRun, device: String) -> RunMessage {
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return RunMessage(id: "\(device)/run/\(run.id ?? 0)", device: device, run: run.id ?? 0,
                          started: iso.string(from: Date(timeIntervalSince1970: Double(run.wallStartMs) / 1000)),
                          seconds: run.totalNs.map { Double($0) / 1e9 }, distance: run.distance, startType: run.startType,
                          preset: run.presetID, athlete: run.athleteID, falseStart: run.falseStart,
                          splits: run.splits.map { .init(gate: $0.gateIndex, distance: $0.distance, seconds: Double($0.timeNs) / 1e9) })
    }

    /// Says "offline" and stops; runs not yet acknowledged wait in the outbox.
    public func stop() { link.stop() }
}

/// Hands each message of a link's subscriptions to whoever asked for them, on
/// libmosquitto's thread.
public final class MQTTReceiver: Sendable {
    private let handlers = Mutex<[@Sendable (String, [UInt8]) -> Void]>([])
    public init() {}
    public func add(_ handler: @escaping @Sendable (String, [UInt8]) -> Void) { handlers.withLock { $0.append(handler) } }
    public func deliver(_ topic: String, _ payload: [UInt8]) {
        for h in handlers.withLock({ $0 }) { h(topic, payload) }
    }
}
