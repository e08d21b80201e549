// SPDX-License-Identifier: Apache-2.0
// Reading and writing clips: YUV4MPEG2 (mono or 4:2:0, 4:2:2, 4:4:4) and headerless 8-bit gray.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CZlib

/// Why a clip could not be read or written. `description` is one line a user can act on.
public struct ClipError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ message: String) { description = message }
}

/// A sequence of luma frames from a file, read one at a time into a reused buffer. The
/// file may be gzip-compressed (`.raw.gz`, `.y4m.gz`); zlib reads plain files as they are.
public final class ClipReader {
    public let path: String
    public let width: Int
    public let height: Int
    /// Frames per second, from the header or the caller.
    public let fps: Double
    /// Bytes per frame in the file, luma plane first.
    public let frameBytes: Int
    private let file: gzFile
    private let isY4M: Bool
    public private(set) var framesRead = 0
    /// The luma plane of the last frame read, `width × height` bytes.
    public let luma: UnsafeMutableRawBufferPointer
    private let scratch: UnsafeMutableRawBufferPointer

    /// Opens `path`. A `.y4m` file (or any file starting with the YUV4MPEG2 signature)
    /// describes itself; for headerless gray frames pass `size` and `fps`.
    public init(path: String, size: (width: Int, height: Int)? = nil, fps: Double? = nil) throws(ClipError) {
        self.path = path
        guard let f = gzopen(path, "rb") else {
            throw ClipError("\(path): cannot open (\(String(cString: strerror(errno))))")
        }
        file = f
        var magic = [UInt8](repeating: 0, count: 10)
        let got = Int(gzread(f, &magic, 10))
        let y4m = got == 10 && magic == Array("YUV4MPEG2 ".utf8)
        if y4m {
            let header: Y4MHeader
            do { header = try Self.readHeader(f, path: path) } catch { gzclose(f); throw error }
            width = header.width
            height = header.height
            self.fps = fps ?? header.fps
            frameBytes = header.frameBytes
            isY4M = true
        } else {
            var lower = path.lowercased()
            if lower.hasSuffix(".gz") { lower.removeLast(3) }
            guard lower.hasSuffix(".raw") || lower.hasSuffix(".gray") || lower.hasSuffix(".y8") else {
                gzclose(f)
                throw ClipError("\(path): not a YUV4MPEG2 file (no 'YUV4MPEG2 ' signature) and not .raw/.gray")
            }
            guard let size, let fps else {
                gzclose(f)
                throw ClipError("\(path): headerless gray frames need --size WxH and --fps F")
            }
            guard size.width > 0, size.height > 0, size.width <= 8192, size.height <= 8192 else {
                gzclose(f)
                throw ClipError("\(path): --size \(size.width)x\(size.height) is outside 1x1...8192x8192")
            }
            gzrewind(f)
            width = size.width
            height = size.height
            self.fps = fps
            frameBytes = width * height
            isY4M = false
        }
        guard self.fps > 0, self.fps <= 1000 else {
            gzclose(f)
            throw ClipError("\(path): frame rate \(self.fps) is outside 0...1000 fps")
        }
        luma = .allocate(byteCount: width * height, alignment: 64)
        scratch = .allocate(byteCount: max(1, frameBytes - width * height), alignment: 16)
    }

    deinit {
        gzclose(file)
        luma.deallocate()
        scratch.deallocate()
    }

    struct Y4MHeader {
        var width = 0, height = 0, fps = 0.0, frameBytes = 0
    }

    private static func readLine(_ f: gzFile, limit: Int) -> [UInt8]? {
        var line: [UInt8] = []
        while line.count < limit {
            let c = gzgetc(f)
            if c < 0 { return line.isEmpty ? nil : line }
            if c == 0x0A { return line }
            line.append(UInt8(c))
        }
        return nil
    }

    private static func readHeader(_ f: gzFile, path: String) throws(ClipError) -> Y4MHeader {
        guard let line = readLine(f, limit: 1024) else { throw ClipError("\(path): YUV4MPEG2 header is not terminated") }
        var h = Y4MHeader()
        var colour = "420jpeg"
        for token in line.split(separator: 0x20) {
            guard let tag = token.first else { continue }
            let value = String(decoding: token.dropFirst(), as: UTF8.self)
            switch tag {
            case UInt8(ascii: "W"): h.width = Int(value) ?? -1
            case UInt8(ascii: "H"): h.height = Int(value) ?? -1
            case UInt8(ascii: "F"):
                let parts = value.split(separator: ":")
                guard parts.count == 2, let n = Double(parts[0]), let d = Double(parts[1]), d > 0 else {
                    throw ClipError("\(path): bad frame rate 'F\(value)' in YUV4MPEG2 header")
                }
                h.fps = n / d
            case UInt8(ascii: "C"): colour = value
            default: break  // interlacing, aspect and extensions do not matter here
            }
        }
        guard h.width > 0, h.height > 0, h.width <= 8192, h.height <= 8192 else {
            throw ClipError("\(path): bad frame size \(h.width)x\(h.height) in YUV4MPEG2 header")
        }
        let luma = h.width * h.height
        let cw = (h.width + 1) / 2, ch = (h.height + 1) / 2
        switch colour {
        case "mono": h.frameBytes = luma
        case "420", "420jpeg", "420paldv", "420mpeg2": h.frameBytes = luma + 2 * cw * ch
        case "422": h.frameBytes = luma + 2 * cw * h.height
        case "444": h.frameBytes = 3 * luma
        default: throw ClipError("\(path): colour space 'C\(colour)' is not supported (use mono or 4:2:0)")
        }
        return h
    }

    private static func gzError(_ f: gzFile) -> String {
        var code: Int32 = 0
        guard let m = gzerror(f, &code) else { return "read failed" }
        return "read failed (\(String(cString: m)))"
    }

    /// Reads the next frame's luma into `luma`. Returns false at a clean end of file.
    public func next() throws(ClipError) -> Bool {
        if isY4M {
            guard let line = Self.readLine(file, limit: 256) else { return false }
            guard line.starts(with: Array("FRAME".utf8)) else {
                throw ClipError("\(path): frame \(framesRead) does not start with FRAME (file corrupt or truncated)")
            }
        }
        let got = Int(gzread(file, luma.baseAddress, UInt32(width * height)))
        guard got >= 0 else { throw ClipError("\(path): frame \(framesRead): \(Self.gzError(file))") }
        if got == 0 && !isY4M && gzeof(file) != 0 { return false }
        let rest = frameBytes - width * height
        let gotRest = rest > 0 ? Int(gzread(file, scratch.baseAddress, UInt32(rest))) : 0
        guard got == width * height, gotRest == rest else {
            throw ClipError("\(path): frame \(framesRead) is truncated (\(got + gotRest) of \(frameBytes) bytes)")
        }
        framesRead += 1
        return true
    }
}

/// Writes 8-bit luma frames as a mono YUV4MPEG2 file.
public final class Y4MWriter {
    private let file: UnsafeMutablePointer<FILE>
    public let width: Int
    public let height: Int
    public let path: String

    public init(path: String, width: Int, height: Int, fps: Double) throws(ClipError) {
        guard let f = fopen(path, "wb") else {
            throw ClipError("\(path): cannot create (\(String(cString: strerror(errno))))")
        }
        file = f
        self.width = width
        self.height = height
        self.path = path
        // Frame rate as a fraction with a millihertz resolution.
        var num = Int((fps * 1000).rounded()), den = 1000
        var a = num, b = den
        while b != 0 { (a, b) = (b, a % b) }
        num /= a
        den /= a
        let header = "YUV4MPEG2 W\(width) H\(height) F\(num):\(den) Ip A1:1 Cmono\n"
        guard fputs(header, f) >= 0 else { fclose(f); throw ClipError("\(path): write failed") }
    }

    public func write(_ luma: UnsafeRawBufferPointer) throws(ClipError) {
        precondition(luma.count >= width * height, "frame smaller than the clip size")
        guard fputs("FRAME\n", file) >= 0, fwrite(luma.baseAddress, 1, width * height, file) == width * height else {
            throw ClipError("\(path): write failed (\(String(cString: strerror(errno))))")
        }
    }

    public func close() throws(ClipError) {
        guard fflush(file) == 0 else { throw ClipError("\(path): write failed") }
    }

    deinit { fclose(file) }
}
