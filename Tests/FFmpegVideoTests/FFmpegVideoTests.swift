// SPDX-License-Identifier: Apache-2.0
// H.264 through libx264 and back, the delay ring on encoded frames, MP4 clips cut at
// marks, and files that are not videos, cut short, or written to a full disk.

import FFmpegVideo
import Foundation
import GateCore
import GateSim
import Testing
import VideoDelay

@Suite("FFmpeg video", .serialized)
struct FFmpegVideoTests {
    /// Encodes `count` frames of `scene` (grey) into `ring`; returns the encoder.
    func encode(_ scene: MovingScene, count: Int, into ring: PacketRing, keyframeInterval: Int? = nil) throws -> H264Encoder {
        let encoder = try H264Encoder(VideoEncoderSettings(
            width: scene.width, height: scene.height, fps: scene.fps,
            bitsPerSecond: VideoEncoderSettings.defaultBitsPerSecond(width: scene.width, height: scene.height, fps: scene.fps),
            keyframeInterval: keyframeInterval))
        for i in 0..<count {
            let luma = scene.luma(i)
            try luma.withUnsafeBytes { p in
                let raw = FrameView(base: p.baseAddress!, width: scene.width, height: scene.height, bytesPerRow: scene.width,
                                   format: .gray8, sequence: UInt64(i), timestamp: scene.time(i))
                try encoder.encode(raw) { ring.append($0.bytes, time: $0.time, sequence: $0.sequence, keyframe: $0.keyframe) }
            }
        }
        return encoder
    }

    @Test("640×480 at 60 fps through libx264: a packet per frame as it goes in, with its time and sequence, a keyframe every second, decoding to the source at ≥ 32 dB (≥ 38 dB after the first second)")
    func roundTrip() throws {
        let scene = MovingScene(width: 640, height: 480, fps: 60)
        let ring = PacketRing(byteCapacity: 32 << 20, packetCapacity: 1000)
        let encoder = try encode(scene, count: 150, into: ring)
        #expect(ring.count == 150)  // zerolatency: every frame's packet came out of its own call
        for n in ring.first..<ring.end {
            #expect(ring.sequence(n) == n)
            #expect(ring.time(n) == scene.time(Int(n)))
            #expect(ring.isKeyframe(n) == (n % 60 == 0), "packet \(n)")
        }
        let decoder = try VideoDecoder(try encoder.parameters())
        var worst = Double.infinity, settled = Double.infinity, pictures = 0
        for n in ring.first..<ring.end {
            try decoder.decode(ring.bytes(n), pts: Int64(n)) { picture in
                #expect(picture.width == 640 && picture.height == 480)
                #expect(picture.pts == Int64(n))  // the picture of the packet just sent
                let q = psnr(picture, scene.luma(Int(n)), width: 640)
                worst = min(worst, q)
                if n >= 60 { settled = min(settled, q) }
                pictures += 1
            }
        }
        #expect(pictures == 150)
        // x264's rate control starts cautious: the first second is softer.
        #expect(worst >= 32, "worst frame \(worst) dB")
        #expect(settled >= 38, "worst frame after the first second \(settled) dB")
    }

    @Test("YUYV, NV12 and YU12 camera frames encode to the same luma as grey ones")
    func cameraFormats() throws {
        let scene = MovingScene(width: 320, height: 240, fps: 30)
        for format in [PixelFormat.yuyv, .nv12, .yu12] {
            let encoder = try H264Encoder(VideoEncoderSettings(width: 320, height: 240, fps: 30, bitsPerSecond: 2_000_000))
            let decoder = try VideoDecoder(try encoder.parameters())
            var worst = Double.infinity
            for i in 0..<10 {
                let luma = scene.luma(i)
                var bytes: [UInt8]
                var stride = 320
                switch format {
                case .yuyv:
                    stride = 640
                    bytes = [UInt8](repeating: 128, count: 640 * 240)
                    for p in 0..<(320 * 240) { bytes[p * 2] = luma[p] }
                default:
                    bytes = luma + [UInt8](repeating: 128, count: 320 * 240 / 2)
                }
                try bytes.withUnsafeBytes { p in
                    let raw = FrameView(base: p.baseAddress!, width: 320, height: 240, bytesPerRow: stride, format: format,
                                       sequence: UInt64(i), timestamp: scene.time(i))
                    try encoder.encode(raw) { packet in
                        try? decoder.decode(packet.bytes) { worst = min(worst, psnr($0, scene.luma(i), width: 320)) }
                    }
                }
            }
            #expect(worst >= 35, "\(format): worst frame \(worst) dB")
        }
    }

    @Test("real footage through the delay ring at the default bit rate: the frame due 2 s behind decodes from its keyframe to the frame captured 2 s earlier, not a neighbour",
          .enabled(if: sharedClip != nil, "../shared/footage is not beside the project"))
    func realFootageDelay() throws {
        let clip = try ClipReader(path: sharedClip!, size: (320, 180), fps: 30)
        let ring = PacketRing(byteCapacity: 8 << 20, packetCapacity: 400)
        let encoder = try H264Encoder(VideoEncoderSettings(width: 320, height: 180, fps: 30, bitsPerSecond: VideoEncoderSettings.defaultBitsPerSecond(width: 320, height: 180, fps: 30)))
        var frames: [[UInt8]] = []
        let delay = try DelaySetting(seconds: 2)
        var checked = 0, worst = Double.infinity, settled = Double.infinity, margin = Double.infinity
        let decoderParameters = try encoder.parameters()
        while try clip.next() {
            let i = frames.count
            frames.append(Array(clip.luma))
            let t = MonotonicInstant(nanoseconds: 100_000_000_000 + Int64(i) * 33_333_333)
            try frames[i].withUnsafeBytes { p in
                let raw = FrameView(base: p.baseAddress!, width: 320, height: 180, bytesPerRow: 320, format: .gray8,
                                   sequence: UInt64(i), timestamp: t)
                try encoder.encode(raw) { ring.append($0.bytes, time: $0.time, sequence: $0.sequence, keyframe: $0.keyframe) }
            }
            // Every 7th frame, show the delayed view as a fresh viewer would: decode from the
            // keyframe before the due packet.
            guard i % 7 == 0, let due = ring.newest(atOrBefore: t - delay.delay) else { continue }
            // The newest frame at least 2 s old: between 2 s and 2 s plus a frame back.
            let behind = t.since(ring.time(due))
            #expect(behind >= delay.delay && behind.nanoseconds < delay.delay.nanoseconds + 33_400_000)
            let decoder = try VideoDecoder(decoderParameters)
            var last: DecodedPicture?
            var shown = 0
            for n in ring.keyframe(atOrBefore: due)...due {
                try decoder.decode(ring.bytes(n)) { _ in shown += 1 }
            }
            try decoder.finish { _ in shown += 1 }
            #expect(shown == Int(due - ring.keyframe(atOrBefore: due)) + 1)
            // The due packet alone, decoded after its predecessors: the picture shown.
            let d2 = try VideoDecoder(decoderParameters)
            for n in ring.keyframe(atOrBefore: due)...due {
                try d2.decode(ring.bytes(n)) { p in
                    guard n == due else { return }
                    last = p
                    // The picture is its own frame's, not a neighbour's: closer to the
                    // source frame than to the frames either side.
                    let own = psnr(p, frames[Int(due)], width: 320)
                    let neighbour = max(psnr(p, frames[Int(due) - 1], width: 320), psnr(p, frames[Int(due) + 1], width: 320))
                    if ring.time(due).since(ring.time(0)) >= .seconds(1) {
                        settled = min(settled, own)
                        margin = min(margin, own - neighbour)
                    }
                    worst = min(worst, own)
                }
            }
            #expect(last != nil)
            checked += 1
        }
        #expect(frames.count == 230)
        #expect(checked >= 20)
        #expect(worst >= 30, "worst delayed frame \(worst) dB")
        #expect(settled >= 35, "worst delayed frame after the first second \(settled) dB")
        #expect(margin >= 2, "closest neighbour \(margin) dB behind")
    }

    @Test("a mark cuts an MP4 of the 5 s before it: the file holds exactly the window's frames, starting at the window's first frame")
    func clipAtMark() throws {
        let scene = MovingScene(width: 320, height: 240, fps: 30)
        let ring = PacketRing(byteCapacity: 16 << 20, packetCapacity: 1000)
        let encoder = try encode(scene, count: 300, into: ring)  // 10 s
        // Marked at frame 250; pre-roll 5 s, post-roll 0.5 s: frames 100…265. The window's
        // first frame is mid-group (keyframes every 30), so the file decodes from 90.
        let window = ClipWindow(mark: Mark(time: scene.time(250), sequence: 250), roll: try RollSetting(preRollSeconds: 5, postRollSeconds: 0.5))
        let packets = try #require(ClipPackets(window, in: ring))
        #expect(packets.decodeFrom == 90 && packets.showFrom == 100 && packets.through == 265)
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/clip.mp4"
        let writer = try MP4Writer(path: path, parameters: try encoder.parameters(), origin: ring.time(packets.showFrom), fps: 30)
        for n in packets.decodeFrom...packets.through {
            try writer.write(ring.bytes(n), time: ring.time(n), keyframe: ring.isKeyframe(n))
        }
        try writer.finish()
        #expect(writer.packets == 176)

        let file = try MediaFile(path: path)
        #expect(file.info.codec == "h264")
        #expect(file.info.width == 320 && file.info.height == 240)
        #expect(abs((file.info.duration ?? 0) - 166.0 / 30) < 0.05)
        var times: [Double] = []
        var firstPSNR = 0.0, lastPSNR = 0.0
        let count = try file.readAll { picture, t in
            if times.isEmpty { firstPSNR = psnr(picture, scene.luma(100), width: 320) }
            lastPSNR = psnr(picture, scene.luma(265), width: 320)
            times.append(t)
        }
        // The edit list hides the ten frames before the window.
        #expect(count == 166)
        #expect(abs(times[0]) < 0.001)
        #expect(firstPSNR >= 35 && lastPSNR >= 35, "first \(firstPSNR) dB, last \(lastPSNR) dB")
        // ffprobe, FFmpeg's own tool, agrees.
        let out = try #require(run("/usr/bin/ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                                        "stream=codec_name,nb_read_frames,width,height", "-of", "csv=p=0", path]))
        #expect(out.trimmingCharacters(in: .whitespacesAndNewlines) == "h264,320,240,166")
    }

    @Test("a file that is not a video, an MP4 cut short, and one with no index are refused with what went wrong")
    func badFiles() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let text = dir + "/notes.mp4"
        try Data("Lane 4, 10.93, wind +1.2\n".utf8).write(to: URL(fileURLWithPath: text))
        let e1 = #expect(throws: FFmpegError.self) { try MediaFile(path: text) }
        #expect(e1?.description.hasPrefix("opening \(text): not a video file that can be read") == true)
        #expect(throws: FFmpegError.self) { try MediaFile(path: dir + "/missing.mp4") }

        // A real clip, then the same clip cut in half: the index (written last) is gone.
        let scene = MovingScene(width: 320, height: 240, fps: 30)
        let ring = PacketRing(byteCapacity: 16 << 20, packetCapacity: 1000)
        let encoder = try encode(scene, count: 90, into: ring)
        let whole = dir + "/whole.mp4"
        let writer = try MP4Writer(path: whole, parameters: try encoder.parameters(), origin: ring.time(0), fps: 30)
        for n in ring.first..<ring.end { try writer.write(ring.bytes(n), time: ring.time(n), keyframe: ring.isKeyframe(n)) }
        try writer.finish()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        let half = dir + "/half.mp4"
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: half))
        let e2 = #expect(throws: FFmpegError.self) { try MediaFile(path: half) }
        #expect(e2?.description.contains("not a video file that can be read") == true)

        // With the index first (as phones and `-movflags +faststart` write it), a cut file
        // opens, its frames up to the cut decode, and reading says how much is missing.
        let faststart = dir + "/faststart.mp4"
        guard run("/usr/bin/ffmpeg", ["-v", "error", "-i", whole, "-c", "copy", "-movflags", "+faststart", faststart]) != nil else {
            Issue.record("ffmpeg could not remux the clip")
            return
        }
        let fs = try Data(contentsOf: URL(fileURLWithPath: faststart))
        let cut = dir + "/cut.mp4"
        try fs.prefix(fs.count * 6 / 10).write(to: URL(fileURLWithPath: cut))
        let file = try MediaFile(path: cut)
        #expect(file.info.frames == 90)
        var decoded = 0
        let e3 = #expect(throws: FFmpegError.self) { try file.readAll { _, _ in decoded += 1 } }
        #expect(e3?.description.contains("the file is cut short") == true, "\(String(describing: e3))")
        #expect(decoded > 20 && decoded < 90)
    }

    @Test("writing to a full disk fails with the disk named full, and nothing crashes")
    func diskFull() throws {
        let scene = MovingScene(width: 320, height: 240, fps: 30)
        let ring = PacketRing(byteCapacity: 16 << 20, packetCapacity: 1000)
        let encoder = try encode(scene, count: 60, into: ring)
        var failure: FFmpegError?
        do {
            // /dev/full accepts opening and fails every write with ENOSPC.
            let writer = try MP4Writer(path: "/dev/full", parameters: try encoder.parameters(), origin: ring.time(0), fps: 30)
            for n in ring.first..<ring.end { try writer.write(ring.bytes(n), time: ring.time(n), keyframe: ring.isKeyframe(n)) }
            try writer.finish()
        } catch {
            failure = error
        }
        let f = try #require(failure)
        #expect(f.isDiskFull, "\(f)")
        #expect(f.message == "No space left on device")
    }

    @Test("the encoders this FFmpeg has; a hardware encoder with no device behind it fails by name; bad sizes and formats are refused")
    func encoderChoice() throws {
        #expect(H264EncoderKind.x264.isBuiltIn)
        let hasM2M = (try? FileManager.default.contentsOfDirectory(atPath: "/dev"))?.contains { $0.hasPrefix("video") } ?? false
        if H264EncoderKind.v4l2m2m.isBuiltIn && !hasM2M {
            let e = #expect(throws: FFmpegError.self) {
                try H264Encoder(VideoEncoderSettings(width: 640, height: 480, fps: 60, bitsPerSecond: 4_000_000, encoder: .v4l2m2m))
            }
            #expect(e?.operation == "opening the H.264 encoder h264_v4l2m2m")
        }
        let odd = #expect(throws: FFmpegError.self) { try H264Encoder(VideoEncoderSettings(width: 641, height: 480, fps: 60, bitsPerSecond: 1)) }
        #expect(odd?.message == "641×480 is not an even size")
        let encoder = try H264Encoder(VideoEncoderSettings(width: 64, height: 48, fps: 30, bitsPerSecond: 200_000))
        let bytes = [UInt8](repeating: 0, count: 64 * 48 * 3)
        let e = #expect(throws: FFmpegError.self) {
            try bytes.withUnsafeBytes { p in
                try encoder.encode(FrameView(base: p.baseAddress!, width: 64, height: 48, bytesPerRow: 192, format: PixelFormat(fourcc: "RGB3"),
                                            sequence: 0, timestamp: .init(nanoseconds: 0))) { _ in }
            }
        }
        #expect(e?.message == "pixel format RGB3 is not supported")
    }

    @Test("garbage handed to the decoder gives no picture or an error, and the next keyframe decodes")
    func corruptPacket() throws {
        let scene = MovingScene(width: 320, height: 240, fps: 30)
        let ring = PacketRing(byteCapacity: 16 << 20, packetCapacity: 1000)
        let encoder = try encode(scene, count: 31, into: ring)
        let decoder = try VideoDecoder(try encoder.parameters())
        var rng = SplitMix64(seed: 3)
        let garbage = (0..<4000).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        var pictures = 0
        _ = try? garbage.withUnsafeBytes { try decoder.decode($0) { _ in pictures += 1 } }
        // Half of a real keyframe, as a dropped Wi-Fi chunk would leave it.
        let halfKey = Array(ring.bytes(0).prefix(ring.bytes(0).count / 2))
        _ = try? halfKey.withUnsafeBytes { try decoder.decode($0) { _ in } }
        var quality = 0.0
        try decoder.decode(ring.bytes(30)) { p in
            pictures += 1
            quality = psnr(p, scene.luma(30), width: 320)
        }
        #expect(pictures == 1)
        #expect(quality >= 35)
    }
}

@Suite("JPEG pictures")
struct JPEGPictureTests {
    @Test("decoded pictures encode to colour JPEG scaled to the width asked, picture after picture")
    func jpeg() throws {
        let scene = MovingScene(width: 320, height: 240, fps: 30)
        let ring = PacketRing(byteCapacity: 16 << 20, packetCapacity: 1000)
        let encoder = try FFmpegVideoTests().encode(scene, count: 5, into: ring)
        let decoder = try VideoDecoder(try encoder.parameters())
        let jpeg = try JPEGPictureEncoder(maxWidth: 160)
        var files: [[UInt8]] = []
        for n in ring.first..<ring.end {
            try decoder.decode(ring.bytes(n)) { files.append(try jpeg.encode($0)) }
        }
        #expect(files.count == 5)
        #expect(jpeg.width == 160 && jpeg.height == 120)
        for f in files { #expect(Array(f.prefix(2)) == [0xFF, 0xD8] && Array(f.suffix(2)) == [0xFF, 0xD9]) }
    }
}
