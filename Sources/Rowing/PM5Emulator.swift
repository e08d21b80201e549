// SPDX-License-Identifier: Apache-2.0
// An emulated PM5's GATT server, for the tests of the hub's Bluetooth side: unit tests
// drive it directly, the rig's tests over an L2CAP socket on a virtual controller.

public import GATT

/// An emulated PM5's GATT server: the attribute table of Concept2's interface definition
/// (device information, control, rowing services; configuration descriptors on every
/// characteristic that notifies), answering ATT requests as a PM5 does, taking workouts
/// from its control characteristic with `PM5WorkoutReader`, and sending notifications of
/// what it is given when the client subscribed. Pure: the emulator's transport (an L2CAP
/// socket on a virtual controller, or nothing in unit tests) moves the bytes.
public struct PM5Emulator: Sendable {
    public struct Attribute: Sendable {
        public var handle: UInt16
        public var type: BLEUUID
        public var value: [UInt8]
    }
    public var attributes: [Attribute] = []
    public var groups: [(start: UInt16, end: UInt16, uuid: BLEUUID)] = []
    public private(set) var subscribed: Set<UInt16> = []
    public private(set) var sampleRate: UInt8?
    private var control: [UInt8] = []
    private var reader = PM5WorkoutReader()
    public private(set) var workouts: [PM5Workout] = []
    public private(set) var mtu: UInt16 = 23
    public private(set) var handleOf: [UInt16: UInt16] = [:]

    public static func pm5(_ short: UInt16) -> BLEUUID { BLEUUID(PM5UUID.full(short))! }

    public init(name: String = "PM5 430123456", serial: String = "430123456") {
        var h: UInt16 = 1
        func service(_ uuid: BLEUUID, _ chars: [(BLEUUID, UInt8, [UInt8], UInt16?)]) {
            let start = h
            attributes.append(Attribute(handle: h, type: .primaryService, value: uuid.wire))
            h += 1
            for (u, props, value, short) in chars {
                attributes.append(Attribute(handle: h, type: .characteristic, value: [props, UInt8((h + 1) & 0xFF), UInt8((h + 1) >> 8)] + u.wire))
                attributes.append(Attribute(handle: h + 1, type: u, value: value))
                if let short { handleOf[short] = h + 1 }
                h += 2
                if props & 0x30 != 0 {
                    attributes.append(Attribute(handle: h, type: .clientConfiguration, value: [0, 0]))
                    h += 1
                }
            }
            groups.append((start, h - 1, uuid))
        }
        service(BLEUUID(0x1800), [(BLEUUID(0x2A00), 0x02, Array(name.utf8), nil)])
        service(Self.pm5(0x0010), [(Self.pm5(0x0011), 0x02, Array("PM5".utf8), 0x11), (Self.pm5(0x0012), 0x02, Array(serial.utf8), 0x12),
                                   (Self.pm5(0x0013), 0x02, Array("907".utf8), 0x13), (Self.pm5(0x0014), 0x02, Array("210".utf8), 0x14),
                                   (Self.pm5(0x0015), 0x02, Array("Concept2".utf8), 0x15), (Self.pm5(0x0016), 0x02, Array("0".utf8), 0x16)])
        service(Self.pm5(0x0020), [(Self.pm5(0x0021), 0x0C, [], 0x21), (Self.pm5(0x0022), 0x10, [], 0x22)])
        service(Self.pm5(0x0030), [0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3A, 0x3D].map { (s: UInt16) in
            (Self.pm5(s), s == 0x34 ? 0x0A : 0x10, s == 0x34 ? [1] : [], s)
        })
    }

    /// Answers one request; notifications it sends as a result come after the answer.
    public mutating func handle(_ bytes: [UInt8]) -> [[UInt8]] {
        guard let pdu = try? ATTPDU.decode(bytes) else { return [ATTPDU.error(request: bytes.first ?? 0, handle: 0, code: 0x04).encoded] }
        let notFound = { (op: UInt8, h: UInt16) in [ATTPDU.error(request: op, handle: h, code: ATTPDU.attributeNotFound).encoded] }
        switch pdu {
        case .mtuRequest(let m):
            mtu = min(m, 247)
            return [ATTPDU.mtuResponse(247).encoded]
        case .readByGroupTypeRequest(let s, let e, _):
            let g = groups.filter { $0.start >= s && $0.start <= e }
            guard let first = g.first else { return notFound(0x10, s) }
            let same = g.filter { $0.uuid.wire.count == first.uuid.wire.count }.prefix(Int(mtu - 2) / (4 + first.uuid.wire.count))
            return [ATTPDU.readByGroupTypeResponse(same.map { ($0.start, $0.end, $0.uuid.wire) }).encoded]
        case .readByTypeRequest(let s, let e, let t):
            let a = attributes.filter { $0.handle >= s && $0.handle <= e && $0.type == t }
            guard let first = a.first else { return notFound(0x08, s) }
            let same = a.filter { $0.value.count == first.value.count }.prefix(Int(mtu - 2) / (2 + first.value.count))
            return [ATTPDU.readByTypeResponse(same.map { ($0.handle, $0.value) }).encoded]
        case .findInformationRequest(let s, let e):
            let a = attributes.filter { $0.handle >= s && $0.handle <= e }
            guard !a.isEmpty else { return notFound(0x04, s) }
            return [ATTPDU.findInformationResponse(a.prefix(4).map { ($0.handle, $0.type) }).encoded]
        case .readRequest(let h):
            guard let a = attributes.first(where: { $0.handle == h }) else { return [ATTPDU.error(request: 0x0A, handle: h, code: 0x01).encoded] }
            return [ATTPDU.readResponse(a.value).encoded]
        case .writeRequest(let h, let v):
            guard let a = attributes.first(where: { $0.handle == h }) else { return [ATTPDU.error(request: 0x12, handle: h, code: 0x01).encoded] }
            var after: [[UInt8]] = []
            if a.type == .clientConfiguration {
                if v == [1, 0] { subscribed.insert(h - 1) } else { subscribed.remove(h - 1) }
            } else if h == handleOf[0x34] {
                sampleRate = v.first
            } else if h == handleOf[0x21] {
                control += v
                if v.last == CSAFEFrame.stop, let (outcome, answer) = try? reader.take(control) {
                    control = []
                    if case .workout(let w) = outcome { workouts.append(w) }
                    if subscribed.contains(handleOf[0x22]!) { after.append(ATTPDU.notification(handle: handleOf[0x22]!, value: answer).encoded) }
                }
            }
            return [ATTPDU.writeResponse.encoded] + after
        default:
            return [ATTPDU.error(request: bytes[0], handle: 0, code: ATTPDU.requestNotSupported).encoded]
        }
    }

    /// A notification carrying `data`, if the client subscribed to its characteristic.
    public func notify(_ data: PM5Data) -> [UInt8]? {
        let (c, bytes) = data.encoded
        return notify(c, bytes)
    }

    /// A notification of characteristic `short`, if the client subscribed.
    public func notify(_ short: UInt16, _ value: [UInt8]) -> [UInt8]? {
        guard let h = handleOf[short], subscribed.contains(h) else { return nil }
        return ATTPDU.notification(handle: h, value: value).encoded
    }
}

