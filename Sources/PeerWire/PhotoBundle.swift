// SPDX-License-Identifier: Apache-2.0
// The image a gate sends the host for one crossing: its photo-finish JPEG and thumbnails.

/// A photo-finish image and its thumbnails as one byte string, the payload that
/// `ThumbnailChunk`s carry (image id = the crossing id it shows).
///
/// Layout, big-endian: `count: u8` (1...16), then `count` times `length: u32` followed by
/// that many bytes of JPEG. The first image is the photo finish, the others its
/// thumbnails in time order. Each part must start with a JPEG start-of-image marker.
public struct PhotoBundle: Sendable, Hashable {
    /// Most parts: the photo and up to 15 thumbnails.
    public static let maxParts = 16

    public var photo: [UInt8]
    public var thumbnails: [[UInt8]]

    public init(photo: [UInt8], thumbnails: [[UInt8]]) {
        self.photo = photo
        self.thumbnails = thumbnails
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
        guard at == bytes.count else { throw .malformed("bundle trailing bytes") }
        photo = parts[0]
        thumbnails = Array(parts.dropFirst())
    }
}
