// SPDX-License-Identifier: Apache-2.0
// Protocol constants and the fixed datagram header.

/// Constants of the peer protocol, version 3.
///
/// One UDP datagram carries exactly one message: a 22-byte header, the payload, and (added
/// by `PeerAuth`) an authentication trailer. All integers are big-endian.
///
/// ```
/// offset size field
///      0    2 magic "SG" (0x53 0x47)
///      2    1 protocol version (3)
///      3    1 message type (MessageType)
///      4    4 session id (0 = not in a session)
///      8    4 sender gate id
///     12    4 sender boot epoch (increases with each start of the sender)
///     16    4 sequence number (per sender and boot epoch, from 1)
///     20    2 payload length in bytes
///     22    … payload
/// ```
public enum Wire {
    /// "SG": rejects stray traffic on the port before any further work.
    public static let magic: (UInt8, UInt8) = (0x53, 0x47)
    /// The protocol version spoken; the message set follows the reference app's version 3.
    public static let version: UInt8 = 3
    /// Bytes of the fixed header.
    public static let headerLength = 22
    /// Largest datagram sent, trailer included. Why: the IPv6 minimum MTU (1280) minus IP
    /// and UDP headers leaves room for 1200 bytes, the figure QUIC uses, so no datagram is
    /// ever fragmented on any Wi-Fi path (a lost fragment loses the whole datagram).
    public static let maxDatagramLength = 1200
    /// Room kept after the payload for the authentication trailer (16 bytes today), with
    /// slack so a longer tag would not change the payload limit.
    public static let trailerAllowance = 32
    /// Largest payload in bytes: 1200 − 22 − 32 = 1146.
    public static let maxPayloadLength = maxDatagramLength - headerLength - trailerAllowance
    /// Longest string field (gate and session names) in UTF-8 bytes; a phone screen shows
    /// about this many characters in a results column.
    public static let maxNameBytes = 32
}

/// A gate's identity in a group: chosen at random (non-zero) when the gate is first set up
/// and kept across restarts. 32 bits make a clash among 8 gates about 1 in 600 million.
public struct GateID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    @inlinable public init(rawValue: UInt32) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt32) { self.rawValue = rawValue }
    @inlinable public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "gate:\(rawValue)" }
}

/// A race session, chosen by the host gate; 0 means "not in a session" (announce messages
/// of gates waiting to join).
public struct SessionID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    @inlinable public init(rawValue: UInt32) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt32) { self.rawValue = rawValue }
    /// No session yet.
    public static let none = SessionID(0)
    public var description: String { "session:\(rawValue)" }
}

/// The fixed header of a datagram, readable before the payload is trusted.
public struct Header: Sendable, Hashable {
    /// Protocol version (always `Wire.version` once parsed).
    public var version: UInt8
    /// Raw message type byte (validated when the payload is decoded).
    public var typeCode: UInt8
    public var session: SessionID
    public var sender: GateID
    /// The sender's boot epoch: larger after every restart of the sender.
    public var bootEpoch: UInt32
    /// The sender's sequence number within `bootEpoch`, from 1.
    public var sequence: UInt32
    /// Payload bytes following the header.
    public var payloadLength: Int

    /// Reads and checks the header at the start of `bytes`: length, magic, version and the
    /// payload limit. It does not check that the payload is present.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(WireError) -> Header {
        guard bytes.count >= Wire.headerLength else { throw .truncated }
        guard bytes[0] == Wire.magic.0, bytes[1] == Wire.magic.1 else { throw .badMagic }
        guard bytes[2] == Wire.version else { throw .unsupportedVersion(bytes[2]) }
        var r = WireReader(bytes, from: 3)
        let type = try r.u8("type")
        let session = try r.u32("session")
        let sender = try r.u32("sender")
        let epoch = try r.u32("bootEpoch")
        let sequence = try r.u32("sequence")
        let length = Int(try r.u16("payloadLength"))
        guard length <= Wire.maxPayloadLength else { throw .oversized(length) }
        return Header(version: Wire.version, typeCode: type, session: SessionID(session), sender: GateID(sender),
                      bootEpoch: epoch, sequence: sequence, payloadLength: length)
    }

    /// Bytes of header and payload together.
    public var messageLength: Int { Wire.headerLength + payloadLength }
}
