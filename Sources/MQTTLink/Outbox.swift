// SPDX-License-Identifier: Apache-2.0
// Messages kept until the broker has them: a broker that restarts or a Wi-Fi drop loses
// no finished result.

import Foundation

/// A message for the broker. `id` names what it reports (a run, a session) once and for
/// all: a receiver that sees an id again (sent twice around a broker restart) counts it once.
public struct MQTTMessage: Sendable, Hashable, Codable {
    public var id: String
    public var topic: String
    public var payload: [UInt8]
    /// Kept by the broker for later subscribers (device status).
    public var retain: Bool

    public init(id: String, topic: String, payload: [UInt8], retain: Bool = false) {
        self.id = id
        self.topic = topic
        self.payload = payload
        self.retain = retain
    }
}

/// Where messages wait until the broker acknowledged them (QoS 1). Calls come from any
/// thread.
public protocol MQTTOutboxStorage: Sendable {
    /// Every message not yet acknowledged, oldest first.
    func pending() throws -> [MQTTMessage]
    /// Keeps `message`, durably when this returns, replacing one with the same id.
    func keep(_ message: MQTTMessage) throws
    /// Forgets the message `id`: the broker has it.
    func delivered(id: String) throws
}

/// An outbox in a folder: one file per message, written to a temporary name, synced and
/// renamed, so a power cut leaves each message whole or absent, never torn.
public final class FolderOutbox: MQTTOutboxStorage, @unchecked Sendable {
    let directory: URL
    private let lock = NSLock()

    public init(directory: String) throws {
        self.directory = URL(fileURLWithPath: directory, isDirectory: true)
        try FileManager.default.createDirectory(at: self.directory, withIntermediateDirectories: true)
    }

    public func pending() throws -> [MQTTMessage] {
        lock.lock()
        defer { lock.unlock() }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }.sorted()
        var out: [MQTTMessage] = []
        for n in names {
            let data = try Data(contentsOf: directory.appendingPathComponent(n))
            // Why: a file that does not decode was written by something else; it is left
            // where it is rather than sent.
            if let m = try? JSONDecoder().decode(Stored.self, from: data) { out.append(m.message) }
        }
        return out
    }

    public func keep(_ message: MQTTMessage) throws {
        lock.lock()
        defer { lock.unlock() }
        let existing = try? FileManager.default.contentsOfDirectory(atPath: directory.path).first { $0.hasSuffix("-" + Self.fileKey(message.id) + ".json") }
        // Why: the name starts with the time it was first kept, so `pending` gives the
        // oldest first; a message kept again under its id keeps its place.
        let name = existing ?? String(format: "%020lld", Int64(Date().timeIntervalSince1970 * 1e6)) + "-" + Self.fileKey(message.id) + ".json"
        let data = try JSONEncoder().encode(Stored(message: message))
        let tmp = directory.appendingPathComponent(".tmp-" + name)
        try data.write(to: tmp)
        try Self.sync(tmp.path)
        if rename(tmp.path, directory.appendingPathComponent(name).path) != 0 {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: tmp.path])
        }
        try Self.sync(directory.path)
    }

    public func delivered(id: String) throws {
        lock.lock()
        defer { lock.unlock() }
        let key = "-" + Self.fileKey(id) + ".json"
        for n in try FileManager.default.contentsOfDirectory(atPath: directory.path) where n.hasSuffix(key) && !n.hasPrefix(".tmp-") {
            try FileManager.default.removeItem(at: directory.appendingPathComponent(n))
        }
    }

    private struct Stored: Codable {
        var message: MQTTMessage
    }

    /// A file-name-safe form of an id: its UTF-8 bytes in hex.
    static func fileKey(_ id: String) -> String { id.utf8.map { String(format: "%02x", $0) }.joined() }

    static func sync(_ path: String) throws {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw CocoaError(.fileReadNoPermission, userInfo: [NSFilePathErrorKey: path]) }
        defer { close(fd) }
        _ = fsync(fd)
    }
}

/// An outbox in memory, for a gate without a state directory: it survives a broker
/// restart and Wi-Fi drops, not a restart of the gate.
public final class MemoryOutbox: MQTTOutboxStorage, @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [MQTTMessage] = []

    public init() {}

    public func pending() throws -> [MQTTMessage] {
        lock.lock()
        defer { lock.unlock() }
        return messages
    }

    public func keep(_ message: MQTTMessage) throws {
        lock.lock()
        defer { lock.unlock() }
        if let i = messages.firstIndex(where: { $0.id == message.id }) { messages[i] = message } else { messages.append(message) }
    }

    public func delivered(id: String) throws {
        lock.lock()
        defer { lock.unlock() }
        messages.removeAll { $0.id == id }
    }
}
