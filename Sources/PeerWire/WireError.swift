// SPDX-License-Identifier: Apache-2.0
// Why a datagram cannot be decoded or a message cannot be encoded.

/// A decoding or encoding failure of the peer protocol. Decoding never traps: every input
/// that is not one well-formed message ends in one of these.
public struct WireError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Kind: Hashable, Sendable {
        case truncated, badMagic, unsupportedVersion, unknownType, malformed, oversized, trailingBytes, bufferTooSmall
    }
    private let kind: Kind
    /// The field concerned, for `malformed`; empty otherwise.
    public let field: String
    /// The offending number: the version or type byte seen, the length declared or the
    /// count of extra bytes; 0 when there is none.
    public let value: Int

    private init(_ kind: Kind, field: String = "", value: Int = 0) {
        self.kind = kind
        self.field = field
        self.value = value
    }

    /// The datagram ends before its header or its declared payload does.
    public static let truncated = Self(.truncated)
    /// The first two bytes are not the protocol's magic: not a SprintGate datagram.
    public static let badMagic = Self(.badMagic)
    /// The header names a protocol version this gate does not speak.
    public static func unsupportedVersion(_ version: UInt8) -> Self { Self(.unsupportedVersion, value: Int(version)) }
    /// The header names a message type this version does not define.
    public static func unknownType(_ type: UInt8) -> Self { Self(.unknownType, value: Int(type)) }
    /// A field is out of range, not canonical (a boolean that is not 0 or 1, unknown flag
    /// bits, a non-finite number, invalid UTF-8) or the payload is shorter or longer than
    /// its message needs.
    public static func malformed(_ field: String) -> Self { Self(.malformed, field: field) }
    /// The declared or encoded payload exceeds `Wire.maxPayloadLength`.
    public static func oversized(_ length: Int) -> Self { Self(.oversized, value: length) }
    /// Bytes follow the declared payload: two messages coalesced, or garbage appended.
    public static func trailingBytes(_ count: Int) -> Self { Self(.trailingBytes, value: count) }
    /// The caller's buffer cannot hold the encoded message.
    public static let bufferTooSmall = Self(.bufferTooSmall)

    /// True for `truncated`: the datagram was cut short.
    public var isTruncation: Bool { kind == .truncated }
    /// True for `unsupportedVersion`: a peer speaking another protocol version.
    public var isVersionMismatch: Bool { kind == .unsupportedVersion }

    public var description: String {
        switch kind {
        case .truncated: return "datagram truncated"
        case .badMagic: return "not a SprintGate datagram (bad magic)"
        case .unsupportedVersion: return "unsupported protocol version \(value) (this gate speaks \(Wire.version))"
        case .unknownType: return "unknown message type \(value)"
        case .malformed: return "malformed field '\(field)'"
        case .oversized: return "payload of \(value) bytes exceeds \(Wire.maxPayloadLength)"
        case .trailingBytes: return "\(value) bytes after the message (coalesced datagrams?)"
        case .bufferTooSmall: return "output buffer too small for the message"
        }
    }
}
