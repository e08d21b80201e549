// SPDX-License-Identifier: Apache-2.0
// The Attribute Protocol's PDUs a GATT client sends and receives over an LE link's ATT
// channel (Bluetooth Core Specification, Vol 3, Part F, section 3.4): decoded strictly,
// encoded exactly.

/// A Bluetooth UUID as ATT carries it: 16-bit (on the Bluetooth base) or 128-bit,
/// little-endian on the wire.
public struct BLEUUID: Sendable, Hashable, CustomStringConvertible {
    /// The 16 bytes, most significant first (as the UUID is written).
    public var bytes: [UInt8]

    /// The Bluetooth base UUID, 00000000-0000-1000-8000-00805F9B34FB.
    static let base: [UInt8] = [0, 0, 0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0x80, 0x5F, 0x9B, 0x34, 0xFB]

    public init(_ short: UInt16) {
        bytes = Self.base
        bytes[2] = UInt8(short >> 8)
        bytes[3] = UInt8(short & 0xFF)
    }

    /// From its text form, "CE060031-43E5-11E4-916C-0800200C9A66" (any case).
    public init?(_ text: String) {
        let hex = text.filter { $0 != "-" }
        guard hex.count == 32 else { return nil }
        var out: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex {
            let j = hex.index(i, offsetBy: 2)
            guard let b = UInt8(hex[i..<j], radix: 16) else { return nil }
            out.append(b)
            i = j
        }
        bytes = out
    }

    /// From the wire: 2 or 16 bytes, little-endian.
    public init?(wire: ArraySlice<UInt8>) {
        switch wire.count {
        case 2: self.init(UInt16(wire[wire.startIndex]) | UInt16(wire[wire.startIndex + 1]) << 8)
        case 16: self.init(littleEndian: Array(wire))
        default: return nil
        }
    }

    private init(littleEndian: [UInt8]) { bytes = littleEndian.reversed() }

    /// The 16-bit form, when the UUID is on the Bluetooth base.
    public var short: UInt16? {
        guard bytes[0] == 0, bytes[1] == 0, Array(bytes[4...]) == Array(Self.base[4...]) else { return nil }
        return UInt16(bytes[2]) << 8 | UInt16(bytes[3])
    }

    /// On the wire: 2 bytes when it has a 16-bit form, else 16.
    public var wire: [UInt8] {
        if let s = short { return [UInt8(s & 0xFF), UInt8(s >> 8)] }
        return bytes.reversed()
    }

    public var description: String {
        let h = bytes.map { b in let s = String(b, radix: 16, uppercase: true); return s.count == 1 ? "0" + s : s }
        return h[0..<4].joined() + "-" + h[4..<6].joined() + "-" + h[6..<8].joined() + "-" + h[8..<10].joined() + "-" + h[10..<16].joined()
    }

    public static let primaryService = BLEUUID(0x2800)
    public static let characteristic = BLEUUID(0x2803)
    public static let clientConfiguration = BLEUUID(0x2902)
}

/// One ATT PDU.
public enum ATTPDU: Sendable, Hashable {
    case error(request: UInt8, handle: UInt16, code: UInt8)
    case mtuRequest(UInt16)
    case mtuResponse(UInt16)
    case findInformationRequest(start: UInt16, end: UInt16)
    /// Handles with their attribute types.
    case findInformationResponse([(handle: UInt16, type: BLEUUID)])
    case readByTypeRequest(start: UInt16, end: UInt16, type: BLEUUID)
    case readByTypeResponse([(handle: UInt16, value: [UInt8])])
    case readRequest(UInt16)
    case readResponse([UInt8])
    case readByGroupTypeRequest(start: UInt16, end: UInt16, type: BLEUUID)
    case readByGroupTypeResponse([(handle: UInt16, end: UInt16, value: [UInt8])])
    case writeRequest(handle: UInt16, value: [UInt8])
    case writeResponse
    case writeCommand(handle: UInt16, value: [UInt8])
    case notification(handle: UInt16, value: [UInt8])
    case indication(handle: UInt16, value: [UInt8])
    case confirmation

    // Opcodes.
    public static let errorOp: UInt8 = 0x01
    public static let attributeNotFound: UInt8 = 0x0A
    public static let requestNotSupported: UInt8 = 0x06

    public static func == (a: ATTPDU, b: ATTPDU) -> Bool { a.encoded == b.encoded }
    public func hash(into h: inout Hasher) { h.combine(encoded) }

    /// The PDU's bytes.
    public var encoded: [UInt8] {
        func le(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
        switch self {
        case .error(let r, let h, let c): return [0x01, r] + le(h) + [c]
        case .mtuRequest(let m): return [0x02] + le(m)
        case .mtuResponse(let m): return [0x03] + le(m)
        case .findInformationRequest(let s, let e): return [0x04] + le(s) + le(e)
        case .findInformationResponse(let list):
            let long = list.contains { $0.type.short == nil }
            return [0x05, long ? 2 : 1] + list.flatMap { le($0.handle) + (long ? $0.type.bytes.reversed() : $0.type.wire) }
        case .readByTypeRequest(let s, let e, let t): return [0x08] + le(s) + le(e) + t.wire
        case .readByTypeResponse(let list):
            return [0x09, UInt8(2 + (list.first?.value.count ?? 0))] + list.flatMap { le($0.handle) + $0.value }
        case .readRequest(let h): return [0x0A] + le(h)
        case .readResponse(let v): return [0x0B] + v
        case .readByGroupTypeRequest(let s, let e, let t): return [0x10] + le(s) + le(e) + t.wire
        case .readByGroupTypeResponse(let list):
            return [0x11, UInt8(4 + (list.first?.value.count ?? 0))] + list.flatMap { le($0.handle) + le($0.end) + $0.value }
        case .writeRequest(let h, let v): return [0x12] + le(h) + v
        case .writeResponse: return [0x13]
        case .writeCommand(let h, let v): return [0x52] + le(h) + v
        case .notification(let h, let v): return [0x1B] + le(h) + v
        case .indication(let h, let v): return [0x1D] + le(h) + v
        case .confirmation: return [0x1E]
        }
    }

    /// Reads one PDU; a PDU of the wrong length or an unknown opcode is an error naming it.
    public static func decode(_ b: [UInt8]) throws(ATTError) -> ATTPDU {
        guard let op = b.first else { throw ATTError("an empty PDU") }
        func u16(_ i: Int) -> UInt16 { UInt16(b[i]) | UInt16(b[i + 1]) << 8 }
        func need(_ n: Int, exact: Bool = true) throws(ATTError) {
            guard exact ? b.count == n : b.count >= n else {
                throw ATTError("opcode 0x\(hex(op)): \(b.count) bytes, \(exact ? "" : "at least ")\(n) expected")
            }
        }
        func uuid(_ from: Int) throws(ATTError) -> BLEUUID {
            guard let u = BLEUUID(wire: b[from...]) else { throw ATTError("opcode 0x\(hex(op)): a UUID of \(b.count - from) bytes") }
            return u
        }
        /// A list of records of `size` bytes from byte `from`.
        func records(_ from: Int, _ size: Int, min: Int) throws(ATTError) -> [ArraySlice<UInt8>] {
            guard size >= min, (b.count - from) % size == 0, b.count > from else {
                throw ATTError("opcode 0x\(hex(op)): \(b.count - from) bytes of records of \(size)")
            }
            return stride(from: from, to: b.count, by: size).map { b[$0..<($0 + size)] }
        }
        switch op {
        case 0x01: try need(5); return .error(request: b[1], handle: u16(2), code: b[4])
        case 0x02: try need(3); return .mtuRequest(u16(1))
        case 0x03: try need(3); return .mtuResponse(u16(1))
        case 0x04: try need(5); return .findInformationRequest(start: u16(1), end: u16(3))
        case 0x05:
            try need(2, exact: false)
            guard b[1] == 1 || b[1] == 2 else { throw ATTError("find information: format \(b[1])") }
            return .findInformationResponse(try records(2, b[1] == 1 ? 4 : 18, min: 4).map { r in
                (UInt16(r[r.startIndex]) | UInt16(r[r.startIndex + 1]) << 8, BLEUUID(wire: r.dropFirst(2))!)
            })
        case 0x08: try need(7, exact: false); return .readByTypeRequest(start: u16(1), end: u16(3), type: try uuid(5))
        case 0x09:
            try need(2, exact: false)
            return .readByTypeResponse(try records(2, Int(b[1]), min: 2).map { r in
                (UInt16(r[r.startIndex]) | UInt16(r[r.startIndex + 1]) << 8, Array(r.dropFirst(2)))
            })
        case 0x0A: try need(3); return .readRequest(u16(1))
        case 0x0B: return .readResponse(Array(b.dropFirst()))
        case 0x10: try need(7, exact: false); return .readByGroupTypeRequest(start: u16(1), end: u16(3), type: try uuid(5))
        case 0x11:
            try need(2, exact: false)
            return .readByGroupTypeResponse(try records(2, Int(b[1]), min: 4).map { r in
                let s = r.startIndex
                return (UInt16(r[s]) | UInt16(r[s + 1]) << 8, UInt16(r[s + 2]) | UInt16(r[s + 3]) << 8, Array(r.dropFirst(4)))
            })
        case 0x12: try need(3, exact: false); return .writeRequest(handle: u16(1), value: Array(b.dropFirst(3)))
        case 0x13: try need(1); return .writeResponse
        case 0x52: try need(3, exact: false); return .writeCommand(handle: u16(1), value: Array(b.dropFirst(3)))
        case 0x1B: try need(3, exact: false); return .notification(handle: u16(1), value: Array(b.dropFirst(3)))
        case 0x1D: try need(3, exact: false); return .indication(handle: u16(1), value: Array(b.dropFirst(3)))
        case 0x1E: try need(1); return .confirmation
        default: throw ATTError("opcode 0x\(hex(op)) is not one a GATT client handles")
        }
    }

    /// A request the peer sent that a client must answer (the server may ask too).
    public var isRequest: Bool {
        guard let op = encoded.first else { return false }
        return op & 0x40 == 0 && op != 0x1B && op != 0x1D && op != 0x1E && op % 2 == 0 && op != 0x52
    }
}

/// A malformed or unexpected ATT PDU.
public struct ATTError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    public init(_ why: String) { description = "ATT: " + why }
}

/// Two upper-case hex digits (GATT and Rowing print ids and bytes with it).
package func hex(_ b: UInt8) -> String { let s = String(b, radix: 16, uppercase: true); return s.count == 1 ? "0" + s : s }
