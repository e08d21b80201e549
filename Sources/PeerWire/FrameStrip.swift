// SPDX-License-Identifier: Apache-2.0
// A gate's consecutive frames around one crossing, the payload of `calibrationFrames`.

/// The frames a gate saw around one of its crossings, oldest first, each as a small
/// JPEG with its time relative to the crossing instant, and where the gate line is in
/// them. The coach steps through them to see which frame the athlete's torso reached the
/// line in, and whether the line is where it should be.
///
/// Layout, big-endian: `count: u8` (1...`maxFrames`), `gateX: u16` (the gate line's
/// column in the frames' pixels, in 1/16 pixel), then `count` times `offset: i32`
/// (microseconds from the crossing instant, increasing), `length: u32` and that many
/// bytes of JPEG (starting with a start-of-image marker).
public struct FrameStrip: Sendable, Hashable {
    /// Most frames in a strip. Why 32: a quarter second either side at 60 fps.
    public static let maxFrames = 32

    public struct Frame: Sendable, Hashable {
        /// The frame's time minus the crossing instant, microseconds (same clock).
        public var offsetMicroseconds: Int32
        public var jpeg: [UInt8]
        public init(offsetMicroseconds: Int32, jpeg: [UInt8]) {
            self.offsetMicroseconds = offsetMicroseconds
            self.jpeg = jpeg
        }
    }

    /// The gate line's column in the frames, pixels (0 = left edge of the first column).
    public var gateX: Double
    public var frames: [Frame]

    public init(gateX: Double, frames: [Frame]) {
        self.gateX = gateX
        self.frames = frames
    }

    /// The strip's bytes; nil when it has no frame or too many, a frame is empty, the
    /// offsets do not increase, the line is outside 0..<4096 px, or the whole does not fit
    /// `ThumbnailChunk.maxChunks` chunks.
    public func encoded() -> [UInt8]? {
        guard (1 ... Self.maxFrames).contains(frames.count), frames.allSatisfy({ !$0.jpeg.isEmpty }),
              gateX.isFinite, gateX >= 0, gateX < 4096 else { return nil }
        for i in frames.indices.dropFirst() where frames[i].offsetMicroseconds <= frames[i - 1].offsetMicroseconds { return nil }
        let x = UInt16((gateX * 16).rounded())
        var out: [UInt8] = [UInt8(frames.count), UInt8(x >> 8), UInt8(x & 0xFF)]
        out.reserveCapacity(3 + frames.reduce(0) { $0 + 8 + $1.jpeg.count })
        for f in frames {
            let o = UInt32(bitPattern: f.offsetMicroseconds)
            let n = UInt32(f.jpeg.count)
            out += [UInt8(o >> 24), UInt8(o >> 16 & 0xFF), UInt8(o >> 8 & 0xFF), UInt8(o & 0xFF)]
            out += [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
            out += f.jpeg
        }
        guard out.count <= ThumbnailChunk.maxChunks * ThumbnailChunk.maxBytes else { return nil }
        return out
    }

    /// Reads a strip; throws `malformed` naming what is wrong (count, a length past the
    /// end, offsets out of order, a frame that is not JPEG, bytes left over).
    public init(decoding bytes: [UInt8]) throws(WireError) {
        guard bytes.count >= 3, (1 ... UInt8(Self.maxFrames)).contains(bytes[0]) else { throw .malformed("strip count") }
        let count = Int(bytes[0])
        gateX = Double(UInt16(bytes[1]) << 8 | UInt16(bytes[2])) / 16
        var at = 3
        var frames: [Frame] = []
        func u32(_ i: Int) -> UInt32 {
            UInt32(bytes[i]) << 24 | UInt32(bytes[i + 1]) << 16 | UInt32(bytes[i + 2]) << 8 | UInt32(bytes[i + 3])
        }
        for i in 0 ..< count {
            guard at + 8 <= bytes.count else { throw .malformed("strip frame \(i) header") }
            let offset = Int32(bitPattern: u32(at))
            let n = Int(u32(at + 4))
            at += 8
            if let last = frames.last, offset <= last.offsetMicroseconds { throw .malformed("strip frame \(i) offset") }
            guard n >= 2, n <= bytes.count - at else { throw .malformed("strip frame \(i) length") }
            guard bytes[at] == 0xFF, bytes[at + 1] == 0xD8 else { throw .malformed("strip frame \(i) is not JPEG") }
            frames.append(Frame(offsetMicroseconds: offset, jpeg: Array(bytes[at ..< at + n])))
            at += n
        }
        guard at == bytes.count else { throw .malformed("strip trailing bytes") }
        self.frames = frames
    }
}
