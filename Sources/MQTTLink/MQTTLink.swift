// SPDX-License-Identifier: Apache-2.0
// A device's link to an MQTT broker through libmosquitto: its status retained with a last
// will, results at QoS 1 from an outbox, and subscriptions.

import CMosquitto
import Foundation
public import Logging

/// Connects to a broker on libmosquitto's own thread, reconnecting with back-off. What is
/// sent waits in the outbox until the broker acknowledged it, and goes again after a
/// reconnect; the device's status is retained under `statusTopic`: "online" while
/// connected, "offline" when it stops or, as its last will, when the broker loses it.
public final class MQTTLink: @unchecked Sendable {
    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        /// Also the broker's session name: subscriptions survive a reconnect.
        public var clientID: String
        public var statusTopic: String
        /// Seconds between keep-alive pings. Why 10: a broker notices a device that lost
        /// power within 15 s and publishes its will.
        public var keepAlive: Int = 10

        public init(host: String, port: Int, clientID: String, statusTopic: String) {
            self.host = host
            self.port = port
            self.clientID = clientID
            self.statusTopic = statusTopic
        }
    }

    public let configuration: Configuration
    private let outbox: any MQTTOutboxStorage
    private let logger: Logger
    private let onMessage: @Sendable (String, [UInt8]) -> Void
    private var mosq: OpaquePointer?
    private let lock = NSLock()
    // Guarded by `lock`.
    private var isConnected = false
    private var inFlight: [Int32: String] = [:]
    private var subscriptions: [String] = []
    private var lastError: String?
    private var stopping = false
    private var looping = false
    private var connecting: DispatchSemaphore?

    /// `onMessage` is called on libmosquitto's thread with each message of a subscription.
    public init(configuration: Configuration, outbox: any MQTTOutboxStorage, logger: Logger,
                onMessage: @escaping @Sendable (String, [UInt8]) -> Void = { _, _ in }) {
        self.configuration = configuration
        self.outbox = outbox
        self.logger = logger
        self.onMessage = onMessage
    }

    deinit { stop() }

    /// Whether the broker has the connection now.
    public var connected: Bool { lock.withLock { isConnected } }
    /// Messages waiting for the broker.
    public var waiting: Int { (try? outbox.pending().count) ?? 0 }
    /// Why the link is down, when it is.
    public var problem: String? { lock.withLock { isConnected ? nil : lastError } }

    /// Starts connecting (the broker may be away: the link keeps trying).
    public func start() throws(MQTTError) {
        guard mosq == nil else { return }
        mosquitto_lib_init()
        guard let m = mosquitto_new(configuration.clientID, false, Unmanaged.passUnretained(self).toOpaque()) else {
            throw MQTTError("cannot create an MQTT client (out of memory?)")
        }
        mosq = m
        _ = mosquitto_int_option(m, MOSQ_OPT_PROTOCOL_VERSION, Int32(MQTT_PROTOCOL_V311))
        let offline = Array("offline".utf8)
        _ = mosquitto_will_set(m, configuration.statusTopic, Int32(offline.count), offline, 1, true)
        // Why: 1 s doubling to 30 s: a broker back after a restart is found within a
        // second or two, and one away for long costs a try every half minute.
        _ = mosquitto_reconnect_delay_set(m, 1, 30, true)
        mosquitto_connect_callback_set(m) { _, obj, rc in MQTTLink.from(obj).didConnect(rc) }
        mosquitto_disconnect_callback_set(m) { _, obj, rc in MQTTLink.from(obj).didDisconnect(rc) }
        mosquitto_publish_callback_set(m) { _, obj, mid in MQTTLink.from(obj).didPublish(mid) }
        mosquitto_message_callback_set(m) { _, obj, msg in
            guard let msg else { return }
            let topic = String(cString: msg.pointee.topic)
            let bytes = msg.pointee.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(msg.pointee.payloadlen))) } ?? []
            MQTTLink.from(obj).onMessage(topic, bytes)
        }
        // Why: libmosquitto's thread reconnects a connection it once had, but not one whose
        // first attempt failed (a gate switched on before the broker); until the first
        // connection, it is tried here, 1 s doubling to 30 s, and the thread starts after.
        let done = DispatchSemaphore(value: 0)
        connecting = done
        Thread.detachNewThread { [self] in
            defer { done.signal() }
            guard let m = mosq else { return }
            var delay = 1.0
            while !lock.withLock({ stopping }) {
                let rc = mosquitto_connect_async(m, configuration.host, Int32(configuration.port), Int32(configuration.keepAlive))
                if rc == MOSQ_ERR_SUCCESS.rawValue {
                    let loop = mosquitto_loop_start(m)
                    if loop == MOSQ_ERR_SUCCESS.rawValue {
                        lock.withLock { looping = true }
                    } else {
                        logger.error("MQTT: cannot start its thread: \(Self.describe(loop))")
                    }
                    break
                }
                lock.withLock { lastError = "MQTT broker \(configuration.host):\(configuration.port): \(Self.describe(rc)); retrying" }
                let until = Date().addingTimeInterval(delay)
                while Date() < until, !lock.withLock({ stopping }) { usleep(50_000) }
                delay = min(30, delay * 2)
            }
        }
    }

    /// Says "offline" (retained), disconnects and stops the thread. Messages not yet
    /// acknowledged stay in the outbox for the next start.
    public func stop() {
        guard let m = mosq else { return }
        lock.withLock { stopping = true }
        connecting?.wait()
        connecting = nil
        if connected {
            let offline = Array("offline".utf8)
            _ = mosquitto_publish(m, nil, configuration.statusTopic, Int32(offline.count), offline, 1, true)
        }
        // Why: libmosquitto's thread ends on its own only after a disconnect it could
        // send; while the broker is away it keeps retrying, and is stopped by force.
        let sent = mosquitto_disconnect(m) == MOSQ_ERR_SUCCESS.rawValue
        if lock.withLock({ looping }) { mosquitto_loop_stop(m, !sent) }
        mosquitto_destroy(m)
        mosq = nil
        lock.withLock {
            isConnected = false
            looping = false
            stopping = false
        }
    }

    /// Sends `message` at QoS 1: kept in the outbox first (durably, when the outbox is on
    /// disk), published now if the broker is there, else at the next connection.
    public func send(_ message: MQTTMessage) throws(MQTTError) {
        do { try outbox.keep(message) } catch { throw MQTTError("cannot keep a message for the broker: \(error)") }
        if connected { publish(message) }
    }

    /// Publishes at QoS 0 and keeps nothing: live figures, where the next one stands in for
    /// one lost. Dropped while the broker is away.
    public func publishNow(topic: String, payload: [UInt8]) {
        guard connected, let m = mosq else { return }
        _ = payload.withUnsafeBytes { p in mosquitto_publish(m, nil, topic, Int32(p.count), p.baseAddress, 0, false) }
    }

    /// Subscribes to `filter` at QoS 1, now and after every reconnect.
    public func subscribe(_ filter: String) {
        lock.withLock { if !subscriptions.contains(filter) { subscriptions.append(filter) } }
        if connected, let m = mosq { _ = mosquitto_subscribe(m, nil, filter, 1) }
    }

    // MARK: libmosquitto's thread

    private static func from(_ obj: UnsafeMutableRawPointer?) -> MQTTLink {
        Unmanaged<MQTTLink>.fromOpaque(obj!).takeUnretainedValue()
    }

    private func didConnect(_ rc: Int32) {
        guard rc == 0 else {
            lock.withLock { lastError = "MQTT broker \(configuration.host):\(configuration.port) refused the connection (\(rc))" }
            return
        }
        let subs = lock.withLock { () -> [String] in
            isConnected = true
            lastError = nil
            inFlight.removeAll()
            return subscriptions
        }
        logger.info("MQTT: connected to \(configuration.host):\(configuration.port)")
        guard let m = mosq else { return }
        let online = Array("online".utf8)
        _ = mosquitto_publish(m, nil, configuration.statusTopic, Int32(online.count), online, 1, true)
        for s in subs { _ = mosquitto_subscribe(m, nil, s, 1) }
        // Why: whatever the broker did not acknowledge before goes again; a receiver that
        // got it already knows its id.
        for message in (try? outbox.pending()) ?? [] { publish(message) }
    }

    private func didDisconnect(_ rc: Int32) {
        let was = lock.withLock { () -> Bool in
            let was = isConnected
            isConnected = false
            if rc != 0 { lastError = "MQTT broker \(configuration.host):\(configuration.port) went away: \(Self.describe(rc)); retrying" }
            return was
        }
        if was && rc != 0 { logger.warning("MQTT: lost the broker (\(Self.describe(rc))); messages wait in the outbox") }
    }

    private func didPublish(_ mid: Int32) {
        guard let id = lock.withLock({ inFlight.removeValue(forKey: mid) }) else { return }
        do { try outbox.delivered(id: id) } catch { logger.warning("MQTT: cannot forget delivered message \(id): \(error)") }
    }

    private func publish(_ message: MQTTMessage) {
        guard let m = mosq else { return }
        var mid: Int32 = 0
        // Why: the id is noted under the lock before the acknowledgement can come back on
        // libmosquitto's thread.
        lock.lock()
        let rc = message.payload.withUnsafeBytes { p in
            mosquitto_publish(m, &mid, message.topic, Int32(p.count), p.baseAddress, 1, message.retain)
        }
        if rc == MOSQ_ERR_SUCCESS.rawValue { inFlight[mid] = message.id }
        lock.unlock()
        if rc != MOSQ_ERR_SUCCESS.rawValue && rc != MOSQ_ERR_NO_CONN.rawValue {
            logger.warning("MQTT: cannot publish \(message.id) on \(message.topic): \(Self.describe(rc))")
        }
    }

    static func describe(_ rc: Int32) -> String {
        guard let s = mosquitto_strerror(rc) else { return "error \(rc)" }
        return String(cString: s)
    }
}

/// A link that cannot start, or a message that cannot be kept.
public struct MQTTError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Counts each id once: what a receiver uses when QoS 1 delivers a message twice (a
/// broker restart between delivery and acknowledgement).
public struct MQTTDeduplicator: Sendable {
    private var seen: Set<String> = []
    public private(set) var repeats = 0
    public init() {}
    /// Whether `id` is new; a repeat is counted.
    public mutating func first(_ id: String) -> Bool {
        if seen.insert(id).inserted { return true }
        repeats += 1
        return false
    }
    public var count: Int { seen.count }
}
