// SPDX-License-Identifier: Apache-2.0
// One PM5 over GATT, as the hub drives it: its services found, its device information
// read, the sample rate set, the rowing notifications and the CSAFE answers subscribed,
// and workouts written to its control characteristic. A state machine over GATTClient: the
// Bluetooth adapter moves the bytes.

import GATT

/// A connected PM5's session. Feed it the ATT channel's PDUs; send what it says to send.
public struct PM5Link: Sendable {
    public enum Event: Sendable, Hashable {
        /// ATT bytes for the peer.
        case send([UInt8])
        /// A notification of one of the PM5's characteristics (its short id, e.g. 0x0031).
        case notification(characteristic: UInt16, bytes: [UInt8])
        /// A device information string read (0x0011 model … 0x0016 machine type).
        case information(characteristic: UInt16, text: String)
        /// Discovered, configured and subscribed: the erg's figures will come.
        case ready
        /// Something the hub should say (a characteristic missing, a request refused).
        case problem(String)
    }

    /// The notifications subscribed: the rowing data and the CSAFE answers.
    public static let subscribed: [UInt16] = [0x0031, 0x0032, 0x0033, 0x0035, 0x0036, 0x0037, 0x0038, 0x0039, 0x003A, 0x003D, 0x0022]
    public static let information: [UInt16] = [0x0011, 0x0012, 0x0013, 0x0014, 0x0015, 0x0016]

    private var gatt = GATTClient()
    public let sampleRate: PM5SampleRate
    /// Value handles of the PM5's characteristics, by short id.
    public private(set) var handles: [UInt16: UInt16] = [:]
    private var byHandle: [UInt16: UInt16] = [:]
    /// Configuration writes still to be answered before the link is ready.
    private var pendingSetup: Set<UInt16> = []
    public private(set) var ready = false

    public init(sampleRate: PM5SampleRate = .tenthSecond) { self.sampleRate = sampleRate }

    public mutating func start() -> [Event] { map(gatt.start()) }

    /// A PDU from the PM5.
    public mutating func receive(_ bytes: [UInt8]) -> [Event] { map(gatt.receive(bytes)) }

    /// Writes a CSAFE frame to the control characteristic in 20-byte writes; the PM5's
    /// answer comes as `.notification(characteristic: 0x0022, …)`.
    public mutating func writeControl(_ frame: [UInt8]) -> [Event] {
        guard let h = handles[0x0021] else { return [.problem("the PM5 has no control characteristic (0x0021)")] }
        var out: [Event] = []
        for w in PM5Workout.writes(frame) { out += map(gatt.write(h, w)) }
        return out
    }

    private mutating func map(_ actions: [GATTClient.Action]) -> [Event] {
        var out: [Event] = []
        for a in actions {
            switch a {
            case .send(let pdu): out.append(.send(pdu.encoded))
            case .discovered(let services): out += configure(services)
            case .notification(let h, let v):
                if let c = byHandle[h] { out.append(.notification(characteristic: c, bytes: v)) }
            case .read(let h, let v):
                if let c = byHandle[h] {
                    out.append(.information(characteristic: c, text: String(decoding: v.prefix { $0 != 0 }, as: UTF8.self)))
                }
                out += setupDone(h)
            case .written(let h): out += setupDone(h)
            case .failed(let why): out.append(.problem(why))
            }
        }
        return out
    }

    /// The PM5's characteristics found: read its information, set the rate, subscribe.
    private mutating func configure(_ services: [GATTService]) -> [Event] {
        for s in services {
            for c in s.characteristics {
                // Concept2's base with the short id in the first group.
                guard c.uuid.bytes[0] == 0xCE, c.uuid.bytes[1] == 0x06, Array(c.uuid.bytes[4...]) == Self.base else { continue }
                let short = UInt16(c.uuid.bytes[2]) << 8 | UInt16(c.uuid.bytes[3])
                handles[short] = c.valueHandle
                byHandle[c.valueHandle] = short
                if let cfg = c.configuration, Self.subscribed.contains(short) { handles[short | 0x8000] = cfg }
            }
        }
        guard handles[0x0031] != nil else { return [.problem("not a PM5: no rowing service (CE060030-…)")] }
        var actions: [GATTClient.Action] = []
        for c in Self.information where handles[c] != nil {
            pendingSetup.insert(handles[c]!)
            actions += gatt.read(handles[c]!)
        }
        if let h = handles[0x0034] {
            pendingSetup.insert(h)
            actions += gatt.write(h, [sampleRate.rawValue])
        }
        var missing: [String] = []
        for c in Self.subscribed {
            guard let cfg = handles[c | 0x8000] else { missing.append("0x" + hex16(c)); continue }
            pendingSetup.insert(cfg)
            actions += gatt.write(cfg, [0x01, 0x00])
        }
        var out = map(actions)
        if !missing.isEmpty { out.append(.problem("the PM5 offers no notifications of \(missing.joined(separator: ", "))")) }
        return out
    }

    private mutating func setupDone(_ handle: UInt16) -> [Event] {
        guard pendingSetup.remove(handle) != nil, pendingSetup.isEmpty, !ready else { return [] }
        ready = true
        return [.ready]
    }

    /// The bytes after the short id of "CE06xxxx-43E5-11E4-916C-0800200C9A66".
    static let base: [UInt8] = [0x43, 0xE5, 0x11, 0xE4, 0x91, 0x6C, 0x08, 0x00, 0x20, 0x0C, 0x9A, 0x66]
}
