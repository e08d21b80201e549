// SPDX-License-Identifier: Apache-2.0
// Bounds-checked big-endian readers and writers over raw buffers.

/// Reads big-endian fields from a borrowed buffer; every read checks the bounds and throws
/// `malformed(field)` when the bytes run out, so no input can trap.
struct WireReader {
    let bytes: UnsafeRawBufferPointer
    private(set) var offset: Int

    init(_ bytes: UnsafeRawBufferPointer, from offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    var remaining: Int { bytes.count - offset }

    mutating func integer<T: FixedWidthInteger>(_ field: String, as: T.Type) throws(WireError) -> T {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { throw .malformed(field) }
        let raw = bytes.loadUnaligned(fromByteOffset: offset, as: T.self)
        offset += size
        return T(bigEndian: raw)
    }

    mutating func u8(_ field: String) throws(WireError) -> UInt8 { try integer(field, as: UInt8.self) }
    mutating func u16(_ field: String) throws(WireError) -> UInt16 { try integer(field, as: UInt16.self) }
    mutating func u32(_ field: String) throws(WireError) -> UInt32 { try integer(field, as: UInt32.self) }
    mutating func i64(_ field: String) throws(WireError) -> Int64 { try integer(field, as: Int64.self) }

    /// A boolean stored as one byte, 0 or 1; anything else is not canonical.
    mutating func bool(_ field: String) throws(WireError) -> Bool {
        switch try u8(field) {
        case 0: return false
        case 1: return true
        default: throw .malformed(field)
        }
    }

    /// A finite IEEE 754 double.
    mutating func finiteDouble(_ field: String) throws(WireError) -> Double {
        let value = Double(bitPattern: try integer(field, as: UInt64.self))
        guard value.isFinite else { throw .malformed(field) }
        return value
    }

    /// A finite IEEE 754 single.
    mutating func finiteFloat(_ field: String) throws(WireError) -> Float {
        let value = Float(bitPattern: try integer(field, as: UInt32.self))
        guard value.isFinite else { throw .malformed(field) }
        return value
    }

    /// `count` raw bytes, copied out.
    mutating func bytes(_ field: String, count: Int) throws(WireError) -> [UInt8] {
        guard count >= 0, remaining >= count else { throw .malformed(field) }
        let out = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[offset ..< offset + count]))
        offset += count
        return out
    }

    /// A string: one length byte, then at most `maxBytes` bytes of valid UTF-8.
    mutating func string(_ field: String, maxBytes: Int = Wire.maxNameBytes) throws(WireError) -> String {
        let count = Int(try u8(field))
        guard count <= maxBytes, remaining >= count else { throw .malformed(field) }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[offset ..< offset + count])
        guard let text = String(validating: slice, as: UTF8.self) else { throw .malformed(field) }
        offset += count
        return text
    }

    /// Throws unless every byte was consumed: the payload must be exactly its message.
    func expectEnd() throws(WireError) {
        guard remaining == 0 else { throw .malformed("payload length") }
    }
}

/// Writes big-endian fields into a caller's buffer; running out of room throws
/// `bufferTooSmall`.
struct WireWriter {
    let buffer: UnsafeMutableRawBufferPointer
    private(set) var offset: Int

    init(_ buffer: UnsafeMutableRawBufferPointer, from offset: Int = 0) {
        self.buffer = buffer
        self.offset = offset
    }

    mutating func integer<T: FixedWidthInteger>(_ value: T) throws(WireError) {
        let size = MemoryLayout<T>.size
        guard buffer.count - offset >= size else { throw .bufferTooSmall }
        buffer.storeBytes(of: value.bigEndian, toByteOffset: offset, as: T.self)
        offset += size
    }

    mutating func u8(_ value: UInt8) throws(WireError) { try integer(value) }
    mutating func u16(_ value: UInt16) throws(WireError) { try integer(value) }
    mutating func u32(_ value: UInt32) throws(WireError) { try integer(value) }
    mutating func i64(_ value: Int64) throws(WireError) { try integer(value) }
    mutating func bool(_ value: Bool) throws(WireError) { try integer(UInt8(value ? 1 : 0)) }

    mutating func finiteDouble(_ value: Double, _ field: String) throws(WireError) {
        guard value.isFinite else { throw .malformed(field) }
        try integer(value.bitPattern)
    }

    mutating func finiteFloat(_ value: Float, _ field: String) throws(WireError) {
        guard value.isFinite else { throw .malformed(field) }
        try integer(value.bitPattern)
    }

    mutating func bytes(_ value: [UInt8]) throws(WireError) {
        guard buffer.count - offset >= value.count else { throw .bufferTooSmall }
        value.withUnsafeBytes { source in
            UnsafeMutableRawBufferPointer(rebasing: buffer[offset ..< offset + source.count]).copyMemory(from: source)
        }
        offset += value.count
    }

    mutating func string(_ value: String, _ field: String, maxBytes: Int = Wire.maxNameBytes) throws(WireError) {
        let utf8 = Array(value.utf8)
        guard utf8.count <= maxBytes else { throw .malformed(field) }
        try u8(UInt8(utf8.count))
        try bytes(utf8)
    }

    /// Overwrites a big-endian UInt16 at `at` (the header's payload length, known last).
    func patch(_ value: UInt16, at: Int) {
        buffer.storeBytes(of: value.bigEndian, toByteOffset: at, as: UInt16.self)
    }
}
