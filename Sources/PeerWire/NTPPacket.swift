// SPDX-License-Identifier: Apache-2.0
// The NTPv4 packet header (RFC 5905 §7.3): codec, modes, leap indicator, kiss codes.

/// The leap indicator of an NTP header.
public enum NTPLeap: UInt8, Sendable, Hashable {
    case none = 0
    case insertSecond = 1
    case deleteSecond = 2
    /// The server's clock is not synchronised; clients (chrony, ntpd) ignore it.
    case unsynchronized = 3
}

/// The association mode of an NTP header.
public enum NTPMode: UInt8, Sendable, Hashable {
    case reserved = 0, symmetricActive, symmetricPassive, client, server, broadcast, control, privateUse
}

/// Why bytes are not an NTP packet.
public enum NTPPacketError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Fewer than the 48 bytes of the header.
    case truncated(Int)
    /// Version 0 or above 4 (versions 1–3 are answered, as RFC 5905 allows).
    case unsupportedVersion(UInt8)
    /// The caller's buffer cannot hold 48 bytes.
    case bufferTooSmall

    public var description: String {
        switch self {
        case let .truncated(n): return "NTP packet of \(n) bytes is shorter than the 48-byte header"
        case let .unsupportedVersion(v): return "NTP version \(v) is not supported (1 to 4 are)"
        case .bufferTooSmall: return "buffer too small for an NTP header"
        }
    }
}

/// The 48-byte NTP header. Extension fields and a MAC that may follow it are ignored
/// when decoding and never written.
///
/// ```
/// offset size field
///      0    1 LI (2 bits) | VN (3 bits) | Mode (3 bits)
///      1    1 stratum (0 = kiss-o'-death, 1 = primary, 2–15 secondary, 16 unsynchronised)
///      2    1 poll (log2 s)
///      3    1 precision (log2 s, signed)
///      4    4 root delay (short format)
///      8    4 root dispersion (short format)
///     12    4 reference id (ASCII for stratum 0/1, IPv4 address of the upstream above)
///     16    8 reference timestamp
///     24    8 origin timestamp    (T1: client's transmit, copied by the server)
///     32    8 receive timestamp   (T2: server's receive)
///     40    8 transmit timestamp  (T3: server's transmit; T1 of a request)
/// ```
public struct NTPPacket: Sendable, Hashable {
    /// Bytes of the header.
    public static let length = 48

    public var leap: NTPLeap
    public var version: UInt8
    public var mode: NTPMode
    public var stratum: UInt8
    /// Poll interval, log2 seconds.
    public var poll: Int8
    /// Clock precision, log2 seconds (−20 ≈ 1 µs).
    public var precision: Int8
    public var rootDelay: NTPShort
    public var rootDispersion: NTPShort
    public var referenceID: UInt32
    public var reference: NTPTimestamp
    public var origin: NTPTimestamp
    public var receive: NTPTimestamp
    public var transmit: NTPTimestamp

    public init(leap: NTPLeap = .none, version: UInt8 = 4, mode: NTPMode, stratum: UInt8 = 0, poll: Int8 = 0,
                precision: Int8 = 0, rootDelay: NTPShort = NTPShort(rawValue: 0),
                rootDispersion: NTPShort = NTPShort(rawValue: 0), referenceID: UInt32 = 0,
                reference: NTPTimestamp = .zero, origin: NTPTimestamp = .zero, receive: NTPTimestamp = .zero,
                transmit: NTPTimestamp = .zero) {
        self.leap = leap
        self.version = version
        self.mode = mode
        self.stratum = stratum
        self.poll = poll
        self.precision = precision
        self.rootDelay = rootDelay
        self.rootDispersion = rootDispersion
        self.referenceID = referenceID
        self.reference = reference
        self.origin = origin
        self.receive = receive
        self.transmit = transmit
    }

    /// A four-character ASCII reference id or kiss code, e.g. `"RATE"` (padded with NULs).
    public static func asciiID(_ code: String) -> UInt32 {
        var v: UInt32 = 0
        var bytes = Array(code.utf8.prefix(4))
        while bytes.count < 4 { bytes.append(0) }
        for b in bytes { v = v << 8 | UInt32(b) }
        return v
    }

    /// The reference id as ASCII (the kiss code of a kiss-o'-death packet), NULs dropped.
    public var referenceIDText: String {
        var s = ""
        for shift in stride(from: 24, through: 0, by: -8) {
            let b = UInt8(truncatingIfNeeded: referenceID >> UInt32(shift))
            if b != 0 { s.unicodeScalars.append(Unicode.Scalar(b)) }
        }
        return s
    }

    /// True for a kiss-o'-death packet (server mode, stratum 0): the client must back off
    /// (`RATE`) or stop (`DENY`, `RSTR`).
    public var isKissOfDeath: Bool { mode == .server && stratum == 0 }

    /// Decodes the header from `bytes` (48 bytes or more; the rest is ignored).
    public init(decoding bytes: UnsafeRawBufferPointer) throws(NTPPacketError) {
        guard bytes.count >= Self.length else { throw .truncated(bytes.count) }
        func u32(_ o: Int) -> UInt32 {
            UInt32(bytes[o]) << 24 | UInt32(bytes[o + 1]) << 16 | UInt32(bytes[o + 2]) << 8 | UInt32(bytes[o + 3])
        }
        func ts(_ o: Int) -> NTPTimestamp { NTPTimestamp(rawValue: UInt64(u32(o)) << 32 | UInt64(u32(o + 4))) }
        let first = bytes[0]
        let version = first >> 3 & 0x7
        guard (1...4).contains(version) else { throw .unsupportedVersion(version) }
        self.init(leap: NTPLeap(rawValue: first >> 6)!, version: version, mode: NTPMode(rawValue: first & 0x7)!,
                  stratum: bytes[1], poll: Int8(bitPattern: bytes[2]), precision: Int8(bitPattern: bytes[3]),
                  rootDelay: NTPShort(rawValue: u32(4)), rootDispersion: NTPShort(rawValue: u32(8)),
                  referenceID: u32(12), reference: ts(16), origin: ts(24), receive: ts(32), transmit: ts(40))
    }

    /// Decodes from an array (tests, tools).
    public init(decoding bytes: [UInt8]) throws(NTPPacketError) {
        let r: Result<NTPPacket, NTPPacketError> = bytes.withUnsafeBytes { p in
            do throws(NTPPacketError) { return .success(try NTPPacket(decoding: p)) } catch { return .failure(error) }
        }
        self = try r.get()
    }

    /// Writes the 48-byte header into `buffer` and returns 48. Allocates nothing.
    public func encode(into buffer: UnsafeMutableRawBufferPointer) throws(NTPPacketError) -> Int {
        guard buffer.count >= Self.length else { throw .bufferTooSmall }
        func put(_ v: UInt32, _ o: Int) {
            buffer[o] = UInt8(truncatingIfNeeded: v >> 24)
            buffer[o + 1] = UInt8(truncatingIfNeeded: v >> 16)
            buffer[o + 2] = UInt8(truncatingIfNeeded: v >> 8)
            buffer[o + 3] = UInt8(truncatingIfNeeded: v)
        }
        func put(_ t: NTPTimestamp, _ o: Int) {
            put(t.seconds, o)
            put(t.fraction, o + 4)
        }
        buffer[0] = leap.rawValue << 6 | (version & 0x7) << 3 | mode.rawValue
        buffer[1] = stratum
        buffer[2] = UInt8(bitPattern: poll)
        buffer[3] = UInt8(bitPattern: precision)
        put(rootDelay.rawValue, 4)
        put(rootDispersion.rawValue, 8)
        put(referenceID, 12)
        put(reference, 16)
        put(origin, 24)
        put(receive, 32)
        put(transmit, 40)
        return Self.length
    }

    /// The 48 bytes (tests, tools).
    public var bytes: [UInt8] {
        var out = [UInt8](repeating: 0, count: Self.length)
        out.withUnsafeMutableBytes { _ = try? encode(into: $0) }
        return out
    }
}
