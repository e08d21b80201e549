// SPDX-License-Identifier: Apache-2.0
// Debug images of what the detector sees: one PNG per frame (work image, mask, bodies, tracks, gate).

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CZlib
public import Detector

/// Writes one PNG per frame into a folder: three panels side by side.
/// - left: the work image, motion pixels tinted red, bodies boxed (green: timed size,
///   yellow: followed only, red: a vehicle) with the trunk inside boxed in pink, the torso's leading edges marked (magenta: rightward,
///   cyan: leftward), track centres as squares (white: armed, orange: crossing pending, violet: coasting
///   through a body shared with another person),
///   the gate line in blue, the whole panel framed in red on a frame with a crossing;
/// - middle: the learned background;
/// - right: each pixel's motion threshold (brighter is less sensitive).
public final class DetectorDebugDump {
    public let directory: String
    private var rgb: [UInt8] = []

    public init(directory: String) throws(ClipError) {
        self.directory = directory
        if mkdir(directory, 0o755) != 0 && errno != EEXIST {
            throw ClipError("\(directory): cannot create (\(String(cString: strerror(errno))))")
        }
    }

    /// Writes `frame-NNNNN.png` for the detector's last frame.
    public func write(frame: Int, detector: borrowing PhotoFinishDetector, crossed: Bool) throws(ClipError) {
        let w = detector.geometry.width, h = detector.geometry.height
        let pw = 3 * w
        rgb = [UInt8](repeating: 0, count: pw * h * 3)
        detector.withDebugImages { work, background, deviation, mask in
            for y in 0..<h {
                for x in 0..<w {
                    let i = y * w + x
                    let v = work[i]
                    let o = (y * pw + x) * 3
                    if mask[i] != 0 {
                        rgb[o] = UInt8(min(255, Int(v) / 2 + 128)); rgb[o + 1] = v / 3; rgb[o + 2] = v / 3
                    } else {
                        rgb[o] = v; rgb[o + 1] = v; rgb[o + 2] = v
                    }
                    let b = UInt8(truncatingIfNeeded: background[i] >> 8)
                    let ob = (y * pw + w + x) * 3
                    rgb[ob] = b; rgb[ob + 1] = b; rgb[ob + 2] = b
                    let t = UInt8(min(255, 3 * Int(deviation[i]) / 256 * 4))
                    let ot = (y * pw + 2 * w + x) * 3
                    rgb[ot] = t; rgb[ot + 1] = t; rgb[ot + 2] = t
                }
            }
        }
        func put(_ x: Int, _ y: Int, _ c: (UInt8, UInt8, UInt8)) {
            guard x >= 0, x < w, y >= 0, y < h else { return }
            let o = (y * pw + x) * 3
            rgb[o] = c.0; rgb[o + 1] = c.1; rgb[o + 2] = c.2
        }
        func box(_ l: Int, _ r: Int, _ t: Int, _ b: Int, _ c: (UInt8, UInt8, UInt8)) {
            for x in l...r { put(x, t, c); put(x, b, c) }
            for y in t...b { put(l, y, c); put(r, y, c) }
        }
        let gx = Int(detector.gateWorkX)
        for y in stride(from: 0, to: h, by: 2) { put(gx, y, (40, 90, 255)) }
        for b in detector.debugBodies {
            let c: (UInt8, UInt8, UInt8) = b.vehicle ? (255, 60, 60) : b.small ? (230, 220, 0) : (0, 230, 0)
            box(b.left, b.right, b.top, b.bottom, c)
            if let t = b.trunk { box(t.left, t.right, t.top, t.bottom, (255, 120, 255)) }
            if let e = b.edgeRight { for dy in -2...2 { put(Int(e), b.rowRight + dy, (255, 0, 255)) } }
            if let e = b.edgeLeft { for dy in -2...2 { put(Int(e), b.rowLeft + dy, (0, 230, 255)) } }
        }
        for t in detector.debugTracks {
            let c: (UInt8, UInt8, UInt8) = t.coasting ? (160, 90, 255)
                : t.pending ? (255, 140, 0) : (t.armedLeft || t.armedRight ? (255, 255, 255) : (120, 120, 120))
            let cx = Int(t.center)
            for dy in 0..<4 { for dx in 0..<4 { put(cx - 2 + dx, 1 + dy + Int(t.id % 4) * 5, c) } }
        }
        if crossed { box(0, w - 1, 0, h - 1, (255, 0, 0)) }
        var name = String(frame)
        while name.count < 5 { name = "0" + name }
        try writePNG(path: "\(directory)/frame-\(name).png", width: pw, height: h, rgb: rgb)
    }
}

/// Writes an 8-bit RGB PNG, compressed with zlib.
public func writePNG(path: String, width: Int, height: Int, rgb: [UInt8]) throws(ClipError) {
    precondition(rgb.count == width * height * 3, "rgb holds width × height × 3 bytes")
    // Each scanline starts with filter type 0 (none).
    var raw = [UInt8](repeating: 0, count: height * (width * 3 + 1))
    for y in 0..<height {
        let o = y * (width * 3 + 1)
        for i in 0..<(width * 3) { raw[o + 1 + i] = rgb[y * width * 3 + i] }
    }
    var packed = [UInt8](repeating: 0, count: Int(compressBound(uLong(raw.count))))
    var packedLength = uLong(packed.count)
    guard compress2(&packed, &packedLength, raw, uLong(raw.count), 6) == Z_OK else {
        throw ClipError("\(path): compression failed")
    }
    var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
    func chunk(_ type: String, _ data: [UInt8]) {
        let body = Array(type.utf8) + data
        png += be32(UInt32(data.count)) + body
        png += be32(UInt32(crc32(0, body, uInt(body.count))))
    }
    chunk("IHDR", be32(UInt32(width)) + be32(UInt32(height)) + [8, 2, 0, 0, 0])
    chunk("IDAT", Array(packed[0..<Int(packedLength)]))
    chunk("IEND", [])
    guard let f = fopen(path, "wb") else {
        throw ClipError("\(path): cannot create (\(String(cString: strerror(errno))))")
    }
    defer { fclose(f) }
    guard fwrite(png, 1, png.count, f) == png.count else { throw ClipError("\(path): write failed") }
}
