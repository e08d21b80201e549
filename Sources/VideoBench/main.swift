// SPDX-License-Identifier: Apache-2.0
// Delay-mode benchmark: encoder, decoder and JPEG throughput, and the video thread run in
// real time at 720p60 with three viewers (added latency, drops, memory for 20 minutes,
// mark and clip times). Figures go to BENCHMARKS.md.
//
// With --draw, a run's clip of SECONDS drawn over with its times (libavfilter's drawtext,
// then libx264), against the same clip re-encoded with nothing drawn.
//
// With --tv WxH, the delayed view decoded and painted full screen on a TV of that size
// (in memory), against decoding alone.
//
// With --mjpeg-clip SECONDS, an MJPEG camera's frames: what the ring keeps of them a
// second, and a clip of SECONDS cut from them (encoded to H.264) against one copied from an
// H.264 ring.
//
// Usage: VideoBench [--throughput] [--live SECONDS] [--draw SECONDS] [--tv WxH] [--mjpeg-clip SECONDS] [--size WxH] [--fps F] [--footage FILE.raw.gz]

import CMJPEG
import FFmpegVideo
import Foundation
import GateCore
import GateSim
import Logging
import Synchronization
import VideoDelay
import VideoService

let args = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? {
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    return args[i + 1]
}
let doThroughput = args.contains("--throughput")
let liveSeconds = option("--live").flatMap(Double.init)
let drawSeconds = option("--draw").flatMap(Double.init)
let size = (option("--size") ?? "1280x720").split(separator: "x").compactMap { Int($0) }
let (width, height) = (size[0], size[1])
let fps = option("--fps").flatMap(Double.init) ?? 60
let footage = option("--footage") ?? "../shared/footage/sports2d_demo/sports2d_demo_320x180.raw.gz"

func nowNs() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}
func fixed(_ v: Double, _ d: Int) -> String { String(format: "%.\(d)f", v) }
func pct(_ v: [Double], _ q: Double) -> Double { v.isEmpty ? .nan : v.sorted()[min(v.count - 1, Int(Double(v.count) * q))] }

/// Source frames: the real footage scaled (nearest) to the size asked, or, without it, a
/// moving textured scene. Real camera noise and motion are what the encoder is sized for.
func sourceFrames(count: Int) -> [[UInt8]] {
    if let clip = try? ClipReader(path: footage, size: (320, 180), fps: 30) {
        var out: [[UInt8]] = []
        while out.count < count, (try? clip.next()) == true {
            let src = Array(clip.luma)
            var f = [UInt8](repeating: 0, count: width * height)
            for y in 0..<height {
                let sy = y * clip.height / height
                for x in 0..<width { f[y * width + x] = src[sy * clip.width + x * clip.width / width] }
            }
            out.append(f)
        }
        print("source: \(out.count) frames of \(footage) scaled to \(width)x\(height)")
        return out
    }
    print("source: \(footage) not found; a synthetic moving texture at \(width)x\(height)")
    var rng = SplitMix64(seed: 1)
    let noise = (0..<(width * height)).map { _ in UInt8(truncatingIfNeeded: rng.next() % 40) }
    return (0..<count).map { i in (0..<(width * height)).map { p in UInt8(60 + Int(noise[(p + i * 3) % noise.count])) } }
}

if doThroughput {
    let frames = sourceFrames(count: 120)
    for (w, h) in [(640, 480), (1280, 720)] {
        // The same frames at this size (nearest), so both sizes see the same scene.
        let scaled = frames.map { f in (0..<(w * h)).map { p in f[(p / w) * height / h * width + (p % w) * width / w] } }
        let enc = try H264Encoder(VideoEncoderSettings(width: w, height: h, fps: fps, bitsPerSecond: VideoEncoderSettings.defaultBitsPerSecond(width: w, height: h, fps: fps)))
        var packets: [([UInt8], Bool)] = []
        let t0 = nowNs()
        for (i, f) in scaled.enumerated() {
            try f.withUnsafeBytes { p in
                try enc.encode(FrameView(base: p.baseAddress!, width: w, height: h, bytesPerRow: w, format: .gray8,
                                        sequence: UInt64(i), timestamp: MonotonicInstant(nanoseconds: Int64(i) * 16_666_667))) { packets.append((Array($0.bytes), $0.keyframe)) }
            }
        }
        let encodeS = Double(nowNs() - t0) / 1e9
        let dec = try VideoDecoder(try enc.parameters())
        let jpeg = try JPEGPictureEncoder(maxWidth: 1280)
        var decoded = 0, jpegNs: Int64 = 0
        let t1 = nowNs()
        for (bytes, key) in packets {
            try bytes.withUnsafeBytes { b in
                try dec.decode(b, keyframe: key) { p in
                    decoded += 1
                    if decoded % 4 == 0 {
                        let j0 = nowNs()
                        _ = try jpeg.encode(p)
                        jpegNs += nowNs() - j0
                    }
                }
            }
        }
        let decodeS = Double(nowNs() - t1 - jpegNs) / 1e9
        let bytes = packets.reduce(0) { $0 + $1.0.count }
        print("\(w)x\(h) libx264 (veryfast, zerolatency): encode \(fixed(Double(scaled.count) / encodeS, 1)) fps, "
            + "decode \(fixed(Double(decoded) / decodeS, 1)) fps, JPEG of a decoded picture \(fixed(Double(jpegNs) / Double(decoded / 4) / 1e6, 2)) ms; "
            + "\(fixed(Double(bytes) * 8 / (Double(scaled.count) / fps) / 1e6, 2)) Mbit/s at \(Int(fps)) fps")
    }
}

if let seconds = liveSeconds {
    // The video thread on frames offered in real time, three viewers each asking for the
    // newest delayed picture as soon as they have one (as the page does).
    let frames = sourceFrames(count: 230)
    let dir = NSTemporaryDirectory() + "sprintgate-videobench-\(getpid())"
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let library = try ClipLibrary(directory: dir)
    var log = Logger(label: "bench")
    log.logLevel = .warning
    let delay = try DelaySetting(seconds: 2)
    let rate = VideoEncoderSettings.defaultBitsPerSecond(width: width, height: height, fps: fps)
    let config = DelayVideoConfig(width: width, height: height, fps: fps, bitsPerSecond: rate, delay: delay,
                                  roll: try RollSetting(preRollSeconds: 1, postRollSeconds: 0.5), availableMemory: 1 << 30)
    let video = DelayVideo(config: config, library: library, clock: { MonotonicInstant(nanoseconds: nowNs()) }, log: log)
    video.start()
    let stop = Atomic<Bool>(false)
    let latencies = Mutex<[Double]>([])
    let viewers = (0..<3).map { _ in
        Thread {
            var last: Int64 = .min
            while !stop.load(ordering: .relaxed) {
                video.watch()
                if let p = video.latest, p.time.nanoseconds > last {
                    last = p.time.nanoseconds
                    // Added latency: when the picture was ready to send, past its due time.
                    let added = Double(p.publishedAt.nanoseconds - p.time.nanoseconds - delay.delay.nanoseconds) / 1e6
                    latencies.withLock { $0.append(added) }
                } else {
                    usleep(1_000)
                }
            }
        }
    }
    for v in viewers { v.start() }
    // When each mark is confirmed (the count the gate loop reads to beep and flash), seen
    // within half a millisecond.
    let confirmedAt = Mutex<[Int64]>([])
    let watcher = Thread {
        var seen: UInt64 = 0
        while !stop.load(ordering: .relaxed) {
            let c = video.marks.confirmed
            while seen < c {
                seen += 1
                confirmedAt.withLock { $0.append(nowNs()) }
            }
            usleep(500)
        }
    }
    watcher.start()
    let start = nowNs()
    let total = Int(seconds * fps)
    var markNs: [Double] = []
    /// Button marks: the mark's number (from 0) and when it was asked for.
    var pressed: [(n: Int, at: Int64)] = []
    var marksMade = 0
    for i in 0..<total {
        let due = start + Int64((Double(i) * 1e9 / fps).rounded())
        while nowNs() < due { usleep(200) }
        let f = frames[i % frames.count]
        f.withUnsafeBytes { p in
            _ = video.tap.offer(FrameView(base: p.baseAddress!, width: width, height: height, bytesPerRow: width, format: .gray8,
                                          sequence: UInt64(i), timestamp: MonotonicInstant(nanoseconds: due)))
        }
        // 20 marks, spread over the run after the delay has passed, each 1 s + 0.5 s: every
        // other one from the page (`mark()`), the rest as a button or clicker asks
        // (`marks.request`, taken by the video thread).
        if i > Int(3 * fps) && marksMade < 20 && i % max(1, (total - Int(3 * fps)) / 21) == 0 {
            let m0 = nowNs()
            if marksMade % 2 == 0 {
                video.mark()
                markNs.append(Double(nowNs() - m0) / 1e6)
            } else {
                video.marks.request(at: MonotonicInstant(nanoseconds: m0))
                pressed.append((marksMade, m0))
            }
            marksMade += 1
        }
    }
    let fed = nowNs()
    while confirmedAt.withLock({ $0.count }) < marksMade && nowNs() - fed < 5_000_000_000 { usleep(1_000) }
    stop.store(true, ordering: .relaxed)
    let confirmations = confirmedAt.withLock { $0 }
    let feedback = pressed.compactMap { p in p.n < confirmations.count ? Double(confirmations[p.n] - p.at) / 1e6 : nil }
    video.endSession()
    while video.status.marksPending > 0 && nowNs() - fed < 30_000_000_000 { usleep(1_000) }
    let s = video.status
    video.stop()
    let l = latencies.withLock { $0 }
    let bytesPerSecond = Double(s.bufferBytes) / max(s.bufferSeconds, 1e-9)
    print("live: \(width)x\(height) at \(Int(fps)) fps for \(Int(seconds)) s, delay 2 s, 3 viewers, \(rate / 1000) kbit/s target")
    print("  frames offered \(total), encoded \(s.framesEncoded), dropped at the tap \(s.framesDropped) (\(fixed(100 * Double(s.framesDropped) / Double(total), 2)) %)")
    print("  added latency (picture ready − due), \(l.count) pictures: p50 \(fixed(pct(l, 0.5), 1)) ms, p99 \(fixed(pct(l, 0.99), 1)) ms, max \(fixed(l.max() ?? .nan, 1)) ms")
    print("  ring: \(fixed(bytesPerSecond * 8 / 1e6, 2)) Mbit/s stored; 20 min take \(fixed(bytesPerSecond * 1200 / 1e9, 2)) GB")
    print("  marks: \(marksMade) (\(markNs.count) from the page, mark() p99 \(fixed(pct(markNs, 0.99) * 1000, 1)) µs; "
        + "\(feedback.count) as a button asks, confirmed p50 \(fixed(pct(feedback, 0.5), 1)) ms, max \(fixed(feedback.max() ?? .nan, 1)) ms after the request); "
        + "clips saved \(s.clipsSaved), lost \(s.clipsLost); cutting them took \(fixed(s.clipSeconds, 2)) s in all (1.5 s each, MP4 and thumbnail)")
}

if let seconds = drawSeconds {
    // A run's clip as the gate keeps it: the source frames at the size and rate asked.
    let count = Int(seconds * fps)
    let frames = sourceFrames(count: count)
    let dir = NSTemporaryDirectory() + "sprintgate-videobench-\(getpid())"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let clip = dir + "/clip.mp4"
    let enc = try H264Encoder(VideoEncoderSettings(width: width, height: height, fps: fps,
                                                   bitsPerSecond: VideoEncoderSettings.defaultBitsPerSecond(width: width, height: height, fps: fps)))
    let writer = try MP4Writer(path: clip, parameters: try enc.parameters(), origin: MonotonicInstant(nanoseconds: 0), fps: fps)
    for i in 0..<count {
        try frames[i % frames.count].withUnsafeBytes { p in
            try enc.encode(FrameView(base: p.baseAddress!, width: width, height: height, bytesPerRow: width, format: .gray8, sequence: UInt64(i),
                                     timestamp: MonotonicInstant(nanoseconds: Int64((Double(i) / fps * 1e9).rounded())))) { pk in
                try? writer.write(pk.bytes, time: pk.time, keyframe: pk.keyframe)
            }
        }
    }
    try enc.finish { pk in try? writer.write(pk.bytes, time: pk.time, keyframe: pk.keyframe) }
    try writer.finish()
    // A 100 m with three splits, starting 2 s in.
    let facts = RunOverlayFacts(title: "100 m", athlete: "Ada Lovelace", total: seconds - 4,
                                splits: [.init(label: "30 m", seconds: 4.1, speed: "7.32 m/s"), .init(label: "60 m", seconds: 7.0, speed: "10.34 m/s"),
                                         .init(label: "80 m", seconds: 8.9, speed: "10.53 m/s")].filter { $0.seconds < seconds - 4 },
                                speed: "8.92 m/s")
    // Alternating runs, three each, so the machine's load falls on both alike.
    var plain: [Double] = [], drawn: [Double] = []
    for round in 0..<6 {
        let r = try OverlayRenderer(source: clip)
        let texts = round % 2 == 0 ? [] : facts.texts(width: r.width, height: r.height, start: 2, parts: Set(OverlayPart.allCases))
        let t0 = nowNs()
        let out = try r.render(texts, into: dir + "/out-\(round).mp4")
        let s = Double(nowNs() - t0) / 1e9
        if round % 2 == 0 { plain.append(s) } else { drawn.append(s) }
        precondition(out.frames == count, "rendered \(out.frames) of \(count) frames")
    }
    let (p, d) = (plain.sorted()[1], drawn.sorted()[1])
    print("draw: \(count) frames, \(width)x\(height) at \(fixed(fps, 0)) fps (\(fixed(seconds, 1)) s), medians of three:")
    print("  re-encoded, nothing drawn: \(fixed(p, 2)) s (\(fixed(Double(count) / p, 0)) fps)")
    print("  drawn with the run's times (\(facts.texts(width: width, height: height, start: 2, parts: Set(OverlayPart.allCases)).count) texts): "
        + "\(fixed(d, 2)) s (\(fixed(Double(count) / d, 0)) fps); drawn/plain \(fixed(d / p, 2)); drawing takes \(fixed(d / seconds, 2))× the clip's length")
}

if let screenSize = option("--tv")?.split(separator: "x").compactMap({ Int($0) }), screenSize.count == 2 {
    // The TV's share of the view thread: each delayed picture decoded (as for the page), then
    // painted full screen (turned, scaled to fit, captioned, XRGB) into a screen in memory
    // of the size asked. Rounds alternate decoding alone and decoding with painting.
    let count = Int(2 * fps)
    let frames = sourceFrames(count: count)
    let enc = try H264Encoder(VideoEncoderSettings(width: width, height: height, fps: fps,
                                                   bitsPerSecond: VideoEncoderSettings.defaultBitsPerSecond(width: width, height: height, fps: fps)))
    var packets: [[UInt8]] = []
    for i in 0..<count {
        try frames[i % frames.count].withUnsafeBytes { p in
            try enc.encode(FrameView(base: p.baseAddress!, width: width, height: height, bytesPerRow: width, format: .gray8, sequence: UInt64(i),
                                     timestamp: MonotonicInstant(nanoseconds: Int64((Double(i) / fps * 1e9).rounded())))) { pk in
                packets.append(Array(pk.bytes))
            }
        }
    }
    try enc.finish { pk in packets.append(Array(pk.bytes)) }
    let parameters = try enc.parameters()
    let screen = MemoryScreen(width: screenSize[0], height: screenSize[1])
    var decodeOnly: [Double] = [], withPaint: [Double] = []
    for round in 0..<6 {
        let decoder = try VideoDecoder(parameters)
        let painter = ScreenPainter(width: screen.width, height: screen.height, caption: "Delayed 5 s")
        let paint = round % 2 == 1
        var pictures = 0
        let t0 = nowNs()
        for p in packets {
            try p.withUnsafeBytes { b in
                try decoder.decode(b) { d in
                    pictures += 1
                    if paint { try screen.present { px, pitch in try painter.paint(d, into: px, pitch: pitch) } }
                }
            }
        }
        let s = Double(nowNs() - t0) / 1e9
        if paint { withPaint.append(s) } else { decodeOnly.append(s) }
        precondition(pictures >= count - 8, "decoded \(pictures) of \(count)")
    }
    let (d, p) = (decodeOnly.sorted()[1], withPaint.sorted()[1])
    let paintMs = (p - d) / Double(count) * 1000
    print("tv: \(count) pictures \(width)x\(height) painted on a \(screen.width)x\(screen.height) screen, medians of three:")
    print("  decoded only: \(fixed(d, 2)) s (\(fixed(Double(count) / d, 0)) pictures/s)")
    print("  decoded and painted: \(fixed(p, 2)) s (\(fixed(Double(count) / p, 0)) pictures/s, \(fixed(Double(count) / p / fps, 2))× the camera's \(fixed(fps, 0)) fps); "
        + "painting \(fixed(paintMs, 2)) ms a picture, \(fixed((p - d) / d, 2))× the decoding")
}

if let seconds = option("--mjpeg-clip").flatMap(Double.init) {
    // An MJPEG camera's clip: the frames as a UVC camera sends them (baseline JPEG, 4:2:2,
    // quality 85), what the ring keeps of them a second, and one clip of SECONDS cut from
    // them (decoded and encoded to H.264) against the same clip cut from an H.264 ring
    // (packets copied). Three cuts each, alternated, medians.
    let count = Int(seconds * fps)
    let frames = sourceFrames(count: count)
    var jpegs: [[UInt8]] = []
    var out = [UInt8](repeating: 0, count: width * height * 2)
    for i in 0..<count {
        let f = frames[i % frames.count]
        var length = 0
        let r = f.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { sprintgate_luma_to_jpeg(src.baseAddress, Int32(width), Int32(height), Int32(width), 85, 1, $0.baseAddress, $0.count, &length) }
        }
        precondition(r == 0, "JPEG encoding failed")
        jpegs.append(Array(out.prefix(length)))
    }
    let enc = try H264Encoder(VideoEncoderSettings(width: width, height: height, fps: fps,
                                                   bitsPerSecond: VideoEncoderSettings.defaultBitsPerSecond(width: width, height: height, fps: fps)))
    var packets: [(bytes: [UInt8], time: MonotonicInstant, keyframe: Bool)] = []
    func time(_ i: Int) -> MonotonicInstant { MonotonicInstant(nanoseconds: Int64((Double(i) / fps * 1e9).rounded())) }
    for i in 0..<count {
        try frames[i % frames.count].withUnsafeBytes { p in
            try enc.encode(FrameView(base: p.baseAddress!, width: width, height: height, bytesPerRow: width, format: .gray8,
                                     sequence: UInt64(i), timestamp: time(i))) { pk in packets.append((Array(pk.bytes), pk.time, pk.keyframe)) }
        }
    }
    try enc.finish { pk in packets.append((Array(pk.bytes), pk.time, pk.keyframe)) }
    let h264 = try enc.parameters(), mjpeg = try CodecParameters.mjpeg(width: width, height: height)
    let dir = NSTemporaryDirectory() + "sprintgate-videobench-\(getpid())"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var copied: [Double] = [], encoded: [Double] = []
    for round in 0..<6 {
        let t0 = nowNs()
        if round % 2 == 0 {
            let w = try MP4Writer(path: dir + "/copy.mp4", parameters: h264, origin: time(0), fps: fps)
            for p in packets { try p.bytes.withUnsafeBytes { try w.write($0, time: p.time, keyframe: p.keyframe) } }
            try w.finish()
            copied.append(Double(nowNs() - t0) / 1e9)
        } else {
            let w = try TranscodingMP4Writer(path: dir + "/mjpeg.mp4", source: mjpeg, origin: time(0), fps: fps)
            for (i, j) in jpegs.enumerated() { try j.withUnsafeBytes { try w.write($0, time: time(i), keyframe: true) } }
            try w.finish()
            precondition(w.pictures == count, "encoded \(w.pictures) of \(count)")
            encoded.append(Double(nowNs() - t0) / 1e9)
        }
    }
    let (c, e) = (copied.sorted()[1], encoded.sorted()[1])
    let jpegRate = Double(jpegs.reduce(0) { $0 + $1.count }) / seconds, h264Rate = Double(packets.reduce(0) { $0 + $1.bytes.count }) / seconds
    print("mjpeg: \(count) frames \(width)x\(height) at \(fixed(fps, 0)) fps (\(fixed(seconds, 1)) s), medians of three:")
    print("  ring: JPEGs \(fixed(jpegRate * 8 / 1e6, 1)) Mbit/s against H.264's \(fixed(h264Rate * 8 / 1e6, 1)) Mbit/s (\(fixed(jpegRate / h264Rate, 1))×); "
        + "2 GB hold \(fixed(2e9 / jpegRate / 60, 1)) min of JPEGs, \(fixed(2e9 / h264Rate / 60, 1)) min of H.264")
    print("  a clip cut from an H.264 ring (packets copied): \(fixed(c * 1000, 0)) ms; from an MJPEG ring (decoded, encoded to H.264): "
        + "\(fixed(e, 2)) s, \(fixed(e / seconds, 2))× the clip's length")
}
