// SPDX-License-Identifier: Apache-2.0
// The image a gate sends the host for one crossing: its photo-finish JPEG and thumbnails.

public import GateCore

/// A photo-finish image and its thumbnails as one byte string, the payload that
/// `ThumbnailChunk`s carry (image id = the crossing id it shows).
///
/// Layout, big-endian: `count: u8` (1...16), then `count` times `length: u32` followed by
/// that many bytes of JPEG. The first image is the photo finish, the others its
/// thumbnails in time order. Each part must start with a JPEG start-of-image marker.
/// The photo's time scale may follow: `"S"` (0x53), `crossingX: f64`, `nsPerColumn: f64`
/// (IEEE 754 bits), `compositeX: u32`, `compositeWidth: u32`, so the host can place a
/// crossing by hand on the photo of another gate.
public struct PhotoBundle: Sendable, Hashable {
    /// Most parts: the photo and up to 15 thumbnails.
    public static let maxParts = 16

    /// The trailer's tag and size: tag, two f64, two u32.
    static let scaleTag: UInt8 = 0x53
    static let scaleSize = 1 + 8 + 8 + 4 + 4

    public var photo: [UInt8]
    public var thumbnails: [[UInt8]]
    /// The photo's time scale, so the host can place a crossing by hand on it.
    public var scale: PhotoScale?

    public init(photo: [UInt8], thumbnails: [[UInt8]], scale: PhotoScale? = nil) {
        self.photo = photo
        self.thumbnails = thumbnails
        self.scale = scale
    }

    /// The bundle's bytes; nil when a part is empty, there are too many, or the whole does
    /// not fit `ThumbnailChunk.maxChunks` chunks.
    public func encoded() -> [UInt8]? {
        let parts = [photo] + thumbnails
        guard parts.count <= Self.maxParts, parts.allSatisfy({ !$0.isEmpty }) else { return nil }
        var out: [UInt8] = [UInt8(parts.count)]
        out.reserveCapacity(1 + parts.reduce(0) { $0 + 4 + $1.count })
        for p in parts {
            let n = UInt32(p.count)
            out += [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
            out += p
        }
        if let scale {
            guard scale.isUsable, scale.compositeX <= Int(UInt32.max), scale.compositeWidth <= Int(UInt32.max) else { return nil }
            out.append(Self.scaleTag)
            for v in [scale.crossingX.bitPattern, scale.nanosecondsPerColumn.bitPattern] {
                for k in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: v >> UInt64(k))) }
            }
            for v in [UInt32(scale.compositeX), UInt32(scale.compositeWidth)] {
                for k in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: v >> UInt32(k))) }
            }
        }
        guard out.count <= ThumbnailChunk.maxChunks * ThumbnailChunk.maxBytes else { return nil }
        return out
    }

    /// Reads a bundle; throws `malformed` naming what is wrong (count, a length past the
    /// end, a part that is not JPEG, bytes left over).
    public init(decoding bytes: [UInt8]) throws(WireError) {
        guard let count = bytes.first, (1 ... UInt8(Self.maxParts)).contains(count) else { throw .malformed("bundle count") }
        var at = 1
        var parts: [[UInt8]] = []
        for i in 0 ..< Int(count) {
            guard at + 4 <= bytes.count else { throw .malformed("bundle part \(i) length") }
            let n = Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            at += 4
            guard n >= 2, n <= bytes.count - at else { throw .malformed("bundle part \(i) length") }
            guard bytes[at] == 0xFF, bytes[at + 1] == 0xD8 else { throw .malformed("bundle part \(i) is not JPEG") }
            parts.append(Array(bytes[at ..< at + n]))
            at += n
        }
        if at < bytes.count {
            guard bytes.count - at == Self.scaleSize, bytes[at] == Self.scaleTag else { throw .malformed("bundle trailing bytes") }
            func u(_ from: Int, _ n: Int) -> UInt64 { bytes[from ..< from + n].reduce(0) { $0 << 8 | UInt64($1) } }
            let s = PhotoScale(crossingX: Double(bitPattern: u(at + 1, 8)), nanosecondsPerColumn: Double(bitPattern: u(at + 9, 8)),
                          compositeX: Int(u(at + 17, 4)), compositeWidth: Int(u(at + 21, 4)))
            guard s.isUsable else { throw .malformed("bundle scale") }
            scale = s
        } else {
            scale = nil
        }
        photo = parts[0]
        thumbnails = Array(parts.dropFirst())
    }
}
