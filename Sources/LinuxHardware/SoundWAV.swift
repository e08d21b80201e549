// SPDX-License-Identifier: Apache-2.0
// RIFF/WAVE reading and writing for 16-bit PCM, with clear errors and linear resampling.

#if canImport(Glibc)
import Glibc
#endif

/// A sound file that cannot be used, with the file and what is wrong.
public struct SoundError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file (or sound name) concerned.
    public var file: String
    /// What is wrong, in words for the person installing the gate.
    public var message: String

    public init(file: String, message: String) {
        self.file = file
        self.message = message
    }

    public var description: String { "\(file): \(message)" }
}

/// Mono 16-bit PCM samples at a known rate.
public struct PCMSound: Sendable, Hashable {
    /// Signed 16-bit samples, one channel.
    public var samples: [Int16]
    /// Samples per second.
    public var rate: Int

    public init(samples: [Int16], rate: Int) {
        self.samples = samples
        self.rate = rate
    }

    /// Length in seconds.
    public var duration: Double { Double(samples.count) / Double(rate) }

    /// The same sound at `newRate` by linear interpolation (enough for voice prompts and
    /// tones; the start sound's onset stays at sample 0). Returns `self` when the rate matches.
    public func resampled(to newRate: Int) -> PCMSound {
        precondition(newRate > 0)
        if newRate == rate || samples.isEmpty { return self }
        let n = Int((Int64(samples.count) * Int64(newRate) + Int64(rate) - 1) / Int64(rate))
        let step = Double(rate) / Double(newRate)
        var out = [Int16](repeating: 0, count: n)
        let last = samples.count - 1
        for i in 0..<n {
            let x = Double(i) * step
            let j = min(Int(x), last)
            let f = x - Double(j)
            let a = Double(samples[j]), b = Double(samples[min(j + 1, last)])
            out[i] = Int16(clamping: Int((a + (b - a) * f).rounded()))
        }
        return PCMSound(samples: out, rate: newRate)
    }
}

/// RIFF/WAVE files holding 16-bit linear PCM.
public enum WAV {
    /// Sample rates accepted from files. Why: below 8 kHz speech is unintelligible and
    /// nothing above 192 kHz is written by common tools; rates between are resampled.
    public static let rateRange: ClosedRange<Int> = 8000...192_000

    /// Decodes a WAV file's bytes to mono (stereo is averaged). Accepts format 1 (PCM) and
    /// WAVE_FORMAT_EXTENSIBLE with the PCM subformat, 16 bits, one or two channels; a data
    /// chunk of size 0xFFFFFFFF (written to a pipe) runs to the end of the file.
    ///
    /// - Throws: `SoundError` naming `file` for anything else: not RIFF/WAVE, truncated, no
    ///   `fmt ` or `data` chunk, compressed or floating-point data, other sample sizes or
    ///   channel counts, a rate outside `rateRange`.
    public static func decode(_ bytes: [UInt8], file: String) throws(SoundError) -> PCMSound {
        func fail(_ m: String) -> SoundError { SoundError(file: file, message: m) }
        func u16(_ o: Int) -> Int { Int(bytes[o]) | Int(bytes[o + 1]) << 8 }
        func u32(_ o: Int) -> Int { u16(o) | u16(o + 2) << 16 }
        func tag(_ o: Int) -> String { String(decoding: bytes[o..<o + 4], as: UTF8.self) }

        guard bytes.count >= 12 else { throw fail("not a WAV file: only \(bytes.count) bytes") }
        guard tag(0) == "RIFF", tag(8) == "WAVE" else { throw fail("not a WAV file (no RIFF/WAVE header)") }
        var offset = 12
        var format: (code: Int, channels: Int, rate: Int, bits: Int, block: Int)? = nil
        var data: Range<Int>? = nil
        while offset + 8 <= bytes.count, data == nil || format == nil {
            let id = tag(offset)
            let size = u32(offset + 4)
            let body = offset + 8
            if id == "data" {
                if size == 0xFFFF_FFFF {
                    data = body..<bytes.count
                } else {
                    guard body + size <= bytes.count else {
                        throw fail("truncated: the data chunk declares \(size) bytes but the file holds \(bytes.count - body)")
                    }
                    data = body..<body + size
                }
            } else if id == "fmt " {
                guard size >= 16, body + 16 <= bytes.count else { throw fail("truncated or short 'fmt ' chunk") }
                var code = u16(body)
                if code == 0xFFFE {
                    // WAVE_FORMAT_EXTENSIBLE: the real format is the first two bytes of the subformat GUID.
                    guard size >= 40, body + 26 <= bytes.count else { throw fail("truncated extensible 'fmt ' chunk") }
                    code = u16(body + 24)
                }
                format = (code, u16(body + 2), u32(body + 4), u16(body + 14), u16(body + 12))
            }
            guard size < Int(Int32.max) else { break }
            offset = body + size + (size & 1)
        }
        guard let f = format else { throw fail("no 'fmt ' chunk before the end of the file") }
        guard f.code == 1 else {
            throw fail("not linear PCM (format code \(f.code)\(f.code == 3 ? ", floating point" : "")); convert with `sox in.wav -b 16 -e signed out.wav`")
        }
        guard f.bits == 16 else { throw fail("\(f.bits)-bit samples; 16-bit PCM is required") }
        guard f.channels == 1 || f.channels == 2 else { throw fail("\(f.channels) channels; mono or stereo is required") }
        guard rateRange.contains(f.rate) else { throw fail("sample rate \(f.rate) Hz is outside \(rateRange.lowerBound)...\(rateRange.upperBound)") }
        guard let d = data else { throw fail("no 'data' chunk (truncated?)") }
        let frameBytes = 2 * f.channels
        let frames = d.count / frameBytes
        var out = [Int16](repeating: 0, count: frames)
        for i in 0..<frames {
            let o = d.lowerBound + i * frameBytes
            let l = Int16(bitPattern: UInt16(u16(o)))
            if f.channels == 1 {
                out[i] = l
            } else {
                let r = Int16(bitPattern: UInt16(u16(o + 2)))
                out[i] = Int16((Int32(l) + Int32(r)) / 2)
            }
        }
        return PCMSound(samples: out, rate: f.rate)
    }

    /// Encodes mono 16-bit PCM as a canonical 44-byte-header WAV file.
    public static func encode(_ sound: PCMSound) -> [UInt8] {
        var b: [UInt8] = []
        b.reserveCapacity(44 + sound.samples.count * 2)
        func u16(_ v: Int) { b.append(UInt8(v & 255)); b.append(UInt8((v >> 8) & 255)) }
        func u32(_ v: Int) { u16(v & 0xFFFF); u16((v >> 16) & 0xFFFF) }
        let bytes = sound.samples.count * 2
        b += Array("RIFF".utf8); u32(36 + bytes); b += Array("WAVEfmt ".utf8); u32(16)
        u16(1); u16(1); u32(sound.rate); u32(sound.rate * 2); u16(2); u16(16)
        b += Array("data".utf8); u32(bytes)
        for s in sound.samples { u16(Int(UInt16(bitPattern: s))) }
        return b
    }

    /// Reads and decodes a file. Throws `SoundError` when it cannot be read or decoded.
    public static func read(path: String) throws(SoundError) -> PCMSound {
        try decode(try FileBytes.read(path), file: path)
    }
}

/// Whole-file reads and directory listings with plain system calls (no Foundation).
enum FileBytes {
    /// Files larger than this are refused. Why: a prompt of a few seconds at 48 kHz stereo is
    /// well under 1 MB; a larger file is a mistake and would waste a Zero 2 W's memory.
    static let maxBytes = 16 << 20

    static func read(_ path: String) throws(SoundError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw SoundError(file: path, message: "cannot open: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw SoundError(file: path, message: "cannot stat") }
        let size = Int(st.st_size)
        guard size <= maxBytes else { throw SoundError(file: path, message: "\(size) bytes is too large for a sound (limit \(maxBytes))") }
        var out = [UInt8](repeating: 0, count: size)
        var got = 0
        while got < size {
            let r = out.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + got, size - got) }
            if r < 0 && errno == EINTR { continue }
            guard r > 0 else { break }
            got += r
        }
        return Array(out[0..<got])
    }

    /// Names of the regular entries in `directory`, or `nil` when it cannot be opened.
    static func list(_ directory: String) -> [String]? {
        guard let d = opendir(directory) else { return nil }
        defer { closedir(d) }
        var names: [String] = []
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}
