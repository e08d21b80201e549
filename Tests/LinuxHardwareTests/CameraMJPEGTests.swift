// SPDX-License-Identifier: Apache-2.0
// MJPEG to luma through libjpeg-turbo: round trip, corrupt and truncated frames, UVC-style frames without Huffman tables.

import CMJPEG
import Testing
#if canImport(CMallocCounter)
import CMallocCounter
#endif

@Suite struct CameraMJPEGTests {
    static let width = 640, height = 480

    /// A test card: gradients, hard vertical edges (a torso against the track) and noise.
    static func card() -> [UInt8] {
        var img = [UInt8](repeating: 0, count: width * height)
        var seed: UInt32 = 12345
        for y in 0..<height {
            for x in 0..<width {
                seed = seed &* 1_664_525 &+ 1_013_904_223
                var v = (x * 255 / width + y * 64 / height) & 0xFF
                if x >= 300 && x < 360 && y >= 100 && y < 400 { v = 30 }
                v = min(255, max(0, v + Int(seed >> 29) - 4))
                img[y * width + x] = UInt8(v)
            }
        }
        return img
    }

    static func encode(_ img: [UInt8], quality: Int32 = 90, color: Int32 = 1) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: width * height * 2)
        var length = 0
        let r = img.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                sprintgate_luma_to_jpeg(src.baseAddress, Int32(width), Int32(height), Int32(width), quality, color,
                                        dst.baseAddress, dst.count, &length)
            }
        }
        precondition(r == 0, "encoder failed with \(r)")
        return Array(out[0..<length])
    }

    static func decode(_ jpeg: [UInt8], into dst: inout [UInt8], stride: Int = width) -> Int32 {
        jpeg.withUnsafeBufferPointer { src in
            dst.withUnsafeMutableBufferPointer { d in
                sprintgate_mjpeg_to_luma(src.baseAddress, src.count, d.baseAddress, Int32(width), Int32(height), Int32(stride))
            }
        }
    }

    /// Mean and largest absolute difference over the image.
    static func error(_ a: [UInt8], _ b: [UInt8], stride: Int = width) -> (mean: Double, max: Int) {
        var sum = 0, worst = 0
        for y in 0..<height {
            for x in 0..<width {
                let d = abs(Int(a[y * width + x]) - Int(b[y * stride + x]))
                sum += d
                worst = max(worst, d)
            }
        }
        return (Double(sum) / Double(width * height), worst)
    }

    @Test(arguments: [Int32(0), 1]) func roundTripWithinJPEGError(color: Int32) {
        let img = Self.card()
        let jpeg = Self.encode(img, color: color)
        let stride = Self.width + 32
        var out = [UInt8](repeating: 7, count: stride * Self.height)
        #expect(Self.decode(jpeg, into: &out, stride: stride) == 0)
        let e = Self.error(img, out, stride: stride)
        // Quality 90 on this card: about 1 level on average, a few tens at the hard edges.
        #expect(e.mean < 2.0, "mean error \(e.mean)")
        #expect(e.max <= 40, "max error \(e.max)")
        // Padding between rows is left alone.
        #expect(out[Self.width] == 7 && out[stride * (Self.height - 1) + Self.width + 31] == 7)
    }

    @Test func truncatedFrameIsCorrupt() {
        let jpeg = Self.encode(Self.card())
        var out = [UInt8](repeating: 0, count: Self.width * Self.height)
        #expect(Self.decode(Array(jpeg.prefix(jpeg.count / 2)), into: &out) == -1)
        #expect(Self.decode(Array(jpeg.prefix(100)), into: &out) == -1)
        #expect(Self.decode(Array(jpeg.prefix(2)), into: &out) == -1)
        #expect(Self.decode([], into: &out) == -1)
    }

    @Test func garbageIsCorrupt() {
        var rng: UInt64 = 99
        let junk = (0..<20_000).map { _ -> UInt8 in rng = rng &* 6_364_136_223_846_793_005 &+ 1; return UInt8(rng >> 56) }
        var out = [UInt8](repeating: 0, count: Self.width * Self.height)
        #expect(Self.decode(junk, into: &out) == -1)
        // A valid start marker followed by junk.
        #expect(Self.decode([0xFF, 0xD8] + junk, into: &out) == -1)
        // A damaged scan: bytes in the middle of the entropy-coded data replaced by a marker.
        var damaged = Self.encode(Self.card())
        let mid = damaged.count / 2
        damaged.replaceSubrange(mid..<(mid + 4), with: [0xFF, 0xD9, 0xFF, 0xD9])
        #expect(Self.decode(damaged, into: &out) == -1)
    }

    @Test func wrongSizeIsReported() {
        let jpeg = Self.encode(Self.card())
        var out = [UInt8](repeating: 0, count: Self.width * Self.height)
        let r = jpeg.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { d in
                sprintgate_mjpeg_to_luma(src.baseAddress, src.count, d.baseAddress, 320, 240, 320)
            }
        }
        #expect(r == -2)
    }

    /// UVC cameras leave the Huffman tables (DHT) out of MJPEG frames and rely on the
    /// standard ones; libjpeg-turbo supplies them.
    @Test func frameWithoutHuffmanTablesDecodes() throws {
        let img = Self.card()
        let jpeg = Self.encode(img, quality: 80)
        var stripped: [UInt8] = [0xFF, 0xD8]
        var i = 2
        var removed = 0
        while i + 4 <= jpeg.count, jpeg[i] == 0xFF {
            let marker = jpeg[i + 1]
            if marker == 0xDA { break }  // start of scan: the rest is entropy data
            let len = Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3])
            if marker == 0xC4 { removed += 1 } else { stripped += jpeg[i..<(i + 2 + len)] }
            i += 2 + len
        }
        stripped += jpeg[i...]
        try #require(removed > 0)
        var out = [UInt8](repeating: 0, count: Self.width * Self.height)
        #expect(Self.decode(stripped, into: &out) == 0)
        #expect(Self.error(img, out).mean < 3.0)
    }

    @Test func reusableDecoderSurvivesErrors() throws {
        let img = Self.card()
        let jpeg = Self.encode(img)
        let d = try #require(sprintgate_mjpeg_decoder_create())
        defer { sprintgate_mjpeg_decoder_destroy(d) }
        var out = [UInt8](repeating: 0, count: Self.width * Self.height)
        for round in 0..<7 {  // ends on a good frame
            let input = round % 2 == 1 ? Array(jpeg.prefix(jpeg.count / 3)) : jpeg
            let r = input.withUnsafeBufferPointer { src in
                out.withUnsafeMutableBufferPointer { o in
                    sprintgate_mjpeg_decode(d, src.baseAddress, src.count, o.baseAddress, Int32(Self.width), Int32(Self.height), Int32(Self.width))
                }
            }
            #expect(r == (round % 2 == 1 ? -1 : 0), "round \(round)")
        }
        #expect(Self.error(img, out).mean < 2.0)
    }

    #if canImport(CMallocCounter)
    /// The reusable decoder serves libjpeg's per-image memory from its own arena: after
    /// the first frame, decoding allocates nothing (also after a corrupt frame).
    @Test func decodeAllocations() throws {
        let jpeg = Self.encode(Self.card())
        let d = try #require(sprintgate_mjpeg_decoder_create())
        defer { sprintgate_mjpeg_decoder_destroy(d) }
        var out = [UInt8](repeating: 0, count: Self.width * Self.height)
        var counts: [Int64] = []
        jpeg.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { o in
                for round in 0..<6 {
                    let n = round == 3 ? src.count / 2 : src.count  // one truncated frame
                    sprintgate_alloc_count_begin()
                    let r = sprintgate_mjpeg_decode(d, src.baseAddress, n, o.baseAddress,
                                                    Int32(Self.width), Int32(Self.height), Int32(Self.width))
                    counts.append(sprintgate_alloc_count_end())
                    precondition(r == (round == 3 ? -1 : 0))
                }
            }
        }
        print("mallocs per MJPEG decode (reused decoder): \(counts)")
        #expect(counts.dropFirst().allSatisfy { $0 == 0 }, "\(counts)")
    }
    #endif
}
