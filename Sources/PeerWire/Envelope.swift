// SPDX-License-Identifier: Apache-2.0
// One datagram's message with its header fields: encoding into a buffer and decoding.

/// A message with the header fields that travel with it.
///
/// `encode(into:)` writes header and payload (no authentication trailer: `PeerAuth`
/// appends it); `decode(_:)` reads exactly one header and payload and rejects anything
/// else (a short datagram, trailing bytes, a field out of range) with a `WireError`,
/// never a trap.
public struct Envelope: Sendable, Hashable {
    public var session: SessionID
    public var sender: GateID
    /// The sender's boot epoch: larger after every restart of the sender.
    public var bootEpoch: UInt32
    /// The sender's sequence number within `bootEpoch`, from 1.
    public var sequence: UInt32
    public var message: Message

    public init(session: SessionID, sender: GateID, bootEpoch: UInt32, sequence: UInt32, message: Message) {
        self.session = session
        self.sender = sender
        self.bootEpoch = bootEpoch
        self.sequence = sequence
        self.message = message
    }

    /// Writes header and payload at the start of `buffer` and returns the byte count.
    /// Throws `bufferTooSmall`, `oversized` (payload over `Wire.maxPayloadLength`) or
    /// `malformed(field)` for a value the decoder would refuse; the buffer's content is
    /// then unspecified.
    public func encode(into buffer: UnsafeMutableRawBufferPointer) throws(WireError) -> Int {
        var w = WireWriter(buffer)
        try w.u8(Wire.magic.0)
        try w.u8(Wire.magic.1)
        try w.u8(Wire.version)
        try w.u8(message.type.rawValue)
        try w.u32(session.rawValue)
        try w.u32(sender.rawValue)
        try w.u32(bootEpoch)
        try w.u32(sequence)
        try w.u16(0)  // Payload length, patched below.
        try message.encodePayload(into: &w)
        let payloadLength = w.offset - Wire.headerLength
        guard payloadLength <= Wire.maxPayloadLength else { throw .oversized(payloadLength) }
        w.patch(UInt16(payloadLength), at: Wire.headerLength - 2)
        return w.offset
    }

    /// Header and payload as a new array (allocates; `encode(into:)` does not).
    public func encoded() throws(WireError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Wire.maxDatagramLength)
        let result = out.withUnsafeMutableBytes { raw in Result { () throws(WireError) -> Int in try encode(into: raw) } }
        out.removeSubrange(try result.get()...)
        return out
    }

    /// Decodes one message that fills `bytes` exactly.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(WireError) -> Envelope {
        let header = try Header.parse(bytes)
        guard bytes.count >= header.messageLength else { throw .truncated }
        guard bytes.count == header.messageLength else { throw .trailingBytes(bytes.count - header.messageLength) }
        guard let type = MessageType(rawValue: header.typeCode) else { throw .unknownType(header.typeCode) }
        var r = WireReader(UnsafeRawBufferPointer(rebasing: bytes[..<header.messageLength]), from: Wire.headerLength)
        let message = try Message.decodePayload(type, from: &r)
        return Envelope(session: header.session, sender: header.sender, bootEpoch: header.bootEpoch,
                        sequence: header.sequence, message: message)
    }

    /// Decodes one message that fills `bytes` exactly.
    public static func decode(_ bytes: [UInt8]) throws(WireError) -> Envelope {
        try bytes.withUnsafeBytes { raw in Result { () throws(WireError) -> Envelope in try decode(raw) } }.get()
    }
}
