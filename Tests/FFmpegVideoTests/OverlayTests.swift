// SPDX-License-Identifier: Apache-2.0
// Texts drawn on a video with libavfilter: the running clock against the same digits
// drawn as fixed text, texts shown only in their time, and a phone's sideways video
// turned upright.

import FFmpegVideo
import Foundation
import GateCore
import Testing

@Suite("Video overlay", .serialized)
struct OverlayTests {
    /// A 3 s clip of `scene` at `path`, its file timeline starting at 0.
    func writeClip(_ scene: MovingScene, frames: Int, to path: String) throws {
        let encoder = try H264Encoder(VideoEncoderSettings(
            width: scene.width, height: scene.height, fps: scene.fps,
            bitsPerSecond: VideoEncoderSettings.defaultBitsPerSecond(width: scene.width, height: scene.height, fps: scene.fps)))
        let writer = try MP4Writer(path: path, parameters: try encoder.parameters(), origin: scene.time(0), fps: scene.fps)
        for i in 0..<frames {
            try scene.luma(i).withUnsafeBytes { p in
                let raw = FrameView(base: p.baseAddress!, width: scene.width, height: scene.height, bytesPerRow: scene.width,
                                   format: .gray8, sequence: UInt64(i), timestamp: scene.time(i))
                try encoder.encode(raw) { pk in try? writer.write(pk.bytes, time: pk.time, keyframe: pk.keyframe) }
            }
        }
        try encoder.finish { pk in try? writer.write(pk.bytes, time: pk.time, keyframe: pk.keyframe) }
        try writer.finish()
    }

    /// Each decoded picture's luma rows and time.
    func pictures(_ path: String) throws -> [(luma: [UInt8], t: Double)] {
        var out: [(luma: [UInt8], t: Double)] = []
        try MediaFile(path: path).readAll { p, t in
            var rows = [UInt8](repeating: 0, count: p.width * p.height)
            for y in 0..<p.height { for x in 0..<p.width { rows[y * p.width + x] = p[x, y] } }
            out.append((rows, t))
        }
        return out
    }

    /// The clock's digits as the renderer must show them at picture time `t` (its
    /// microsecond timestamp times 1e-6, as drawtext reads it).
    static func clockText(_ t: Double, start: Double, minutes: Bool) -> String {
        let tt = Double(Int64((t * 1e6).rounded())) * 1e-6
        let c = Int(max(tt - start, 0) * 100)
        let hundredths = c % 100 < 10 ? "0\(c % 100)" : "\(c % 100)"
        if minutes {
            let s = (c / 100) % 60
            return "\(c / 6000):\(s < 10 ? "0" : "")\(s).\(hundredths)"
        }
        return "\(c / 100).\(hundredths)"
    }

    @Test("the running clock shows, frame by frame, the digits a fixed text of the expected time draws, in seconds and in minutes; it stays at 0.00 before its start")
    func clockMatchesFixedDigits() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let scene = MovingScene(width: 320, height: 240, fps: 30)
        let source = dir + "/source.mp4"
        try writeClip(scene, frames: 90, to: source)
        let times = try pictures(source).map(\.t)
        #expect(times.count == 90)
        // Why 1.005 and -58.005: no frame falls within a hundredth's rounding of a digit change.
        for (start, minutes) in [(1.005, false), (-58.005, true)] {
            let clock = OverlayText(.clock(start: start, minutes: minutes), x: 10, y: 180, size: 40)
            let drawn = dir + "/clock.mp4", reference = dir + "/reference.mp4"
            let r = try OverlayRenderer(source: source).render([clock], into: drawn)
            #expect(r.frames == 90)
            // The same place and size, the expected digits as fixed text in each frame's time.
            var fixed: [OverlayText] = []
            for (i, t) in times.enumerated() {
                fixed.append(OverlayText(.fixed(Self.clockText(t, start: start, minutes: minutes)), x: 10, y: 180, size: 40,
                                         from: i == 0 ? nil : (times[i - 1] + t) / 2, until: i == times.count - 1 ? nil : (t + times[i + 1]) / 2))
            }
            _ = try OverlayRenderer(source: source).render(fixed, into: reference)
            let a = try pictures(drawn), b = try pictures(reference)
            #expect(a.count == 90 && b.count == 90)
            for i in 0..<min(a.count, b.count) {
                #expect(a[i].luma == b[i].luma, "frame \(i) at \(times[i]) s: the clock is not \(Self.clockText(times[i], start: start, minutes: minutes))")
            }
        }
        #expect(Self.clockText(0.5, start: 1.005, minutes: false) == "0.00")
        #expect(Self.clockText(2.1, start: 1.005, minutes: false) == "1.09")
        #expect(Self.clockText(2.1, start: -58.005, minutes: true) == "1:00.10")
    }

    @Test("a text is drawn only from its start to its end, in white on a dark box, and leaves the rest of the picture as it was")
    func textsInTheirTime() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let scene = MovingScene(width: 320, height: 240, fps: 30)
        let source = dir + "/source.mp4"
        try writeClip(scene, frames: 90, to: source)
        let plain = dir + "/plain.mp4", split = dir + "/split.mp4"
        _ = try OverlayRenderer(source: source).render([], into: plain)
        _ = try OverlayRenderer(source: source).render([OverlayText(.fixed("10 m  1.234"), x: 20, y: 20, size: 30, from: 1.5, until: 2.5)], into: split)
        let a = try pictures(plain), b = try pictures(split)
        #expect(a.count == 90 && b.count == 90)
        // Pixels of the text's place: how many are bright, and the mean of the others.
        func box(_ p: [UInt8], _ plain: [UInt8]) -> (bright: Int, mean: Double, plainMean: Double) {
            var bright = 0, sum = 0, plainSum = 0, n = 0
            for y in 20..<50 {
                for x in 20..<180 {
                    if p[y * 320 + x] > 200 { bright += 1; continue }
                    sum += Int(p[y * 320 + x]); plainSum += Int(plain[y * 320 + x]); n += 1
                }
            }
            return (bright, Double(sum) / Double(max(1, n)), Double(plainSum) / Double(max(1, n)))
        }
        for i in 0..<min(a.count, b.count) {
            let t = a[i].t
            let shown = t >= 1.5 && t < 2.5
            let drawn = box(b[i].luma, a[i].luma), plainBox = box(a[i].luma, a[i].luma)
            if shown {
                // White letters on a box that darkens what is behind it.
                #expect(drawn.bright > plainBox.bright + 300 && drawn.mean < 0.8 * drawn.plainMean,
                        "frame \(i) at \(t) s: text expected (\(drawn))")
            } else {
                #expect(abs(drawn.bright - plainBox.bright) < 20 && abs(drawn.mean - drawn.plainMean) < 3,
                        "frame \(i) at \(t) s: nothing should be drawn (\(drawn))")
            }
            // Below the box the picture is untouched.
            let below = (120..<240).map { b[i].luma[$0 * 320 + 160] }, plainBelow = (120..<240).map { a[i].luma[$0 * 320 + 160] }
            // (The encoder's choices differ a little after the text goes: a mean, not each pixel.)
            let meanDifference = Double(zip(below, plainBelow).map { abs(Int($0) - Int($1)) }.reduce(0, +)) / Double(below.count)
            #expect(meanDifference < 5, "frame \(i): \(meanDifference)")
        }
        // A part of the source only, and a refusal when the part has no pictures.
        let part = try OverlayRenderer(source: source).render([], from: 1, to: 2, into: dir + "/part.mp4")
        #expect(part.frames == 31 && abs(part.first - 1) < 0.02 && abs(part.last - 2) < 0.02)
        let e = #expect(throws: FFmpegError.self) { try OverlayRenderer(source: source).render([], from: 5, to: 6, into: dir + "/none.mp4") }
        #expect(e?.message.contains("no pictures") == true)
    }

    @Test("a phone's video stored sideways with a 90° display matrix comes out upright, its long side scaled to the limit")
    func phoneVideoTurnedUpright() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let scene = MovingScene(width: 320, height: 240, fps: 30)
        let source = dir + "/source.mp4", turned = dir + "/turned.mp4"
        try writeClip(scene, frames: 30, to: source)
        guard run("/usr/bin/ffmpeg", ["-v", "error", "-i", source, "-c", "copy", "-metadata:s:v:0", "rotate=90", turned]) != nil else {
            Issue.record("ffmpeg could not write the rotated file")
            return
        }
        let renderer = try OverlayRenderer(source: turned, maxSide: 160)
        #expect(renderer.source.info.rotation == 270 || renderer.source.info.rotation == 90)
        #expect(renderer.width == 120 && renderer.height == 160)
        let out = dir + "/upright.mp4"
        _ = try renderer.render([], into: out)
        let probe = try #require(run("/usr/bin/ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                                          "stream=codec_name,width,height,nb_read_frames", "-of", "csv=p=0", out]))
        #expect(probe.trimmingCharacters(in: .whitespacesAndNewlines) == "h264,120,160,30")
        // FFmpeg's own command turns it the same way (it rotates by the display matrix too).
        let reference = dir + "/reference.gray"
        guard run("/usr/bin/ffmpeg", ["-v", "error", "-i", turned, "-vf", "scale=120:160", "-frames:v", "1", "-f", "rawvideo",
                                      "-pix_fmt", "yuv420p", reference]) != nil else {
            Issue.record("ffmpeg could not decode the rotated file")
            return
        }
        let expected = [UInt8](try Data(contentsOf: URL(fileURLWithPath: reference)).prefix(120 * 160))  // the luma plane
        let first = try pictures(out)[0].luma
        #expect(expected.count == first.count)
        let difference = Double(zip(first, expected).map { abs(Int($0) - Int($1)) }.reduce(0, +)) / Double(max(1, first.count))
        // (Re-encoding costs a few levels; turned the other way round, the gradient and noise
        // would differ by tens.)
        let unturned = [UInt8](first.reversed())
        let wrongWay = Double(zip(unturned, expected).map { abs(Int($0) - Int($1)) }.reduce(0, +)) / Double(max(1, first.count))
        #expect(difference < 8 && wrongWay > 20, "mean difference \(difference), turned the wrong way \(wrongWay)")
    }
}
