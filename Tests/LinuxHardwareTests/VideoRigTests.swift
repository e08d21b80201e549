// SPDX-License-Identifier: Apache-2.0
// The delay mode on vivid in the qemu rig: frames written to vivid's output, captured by the
// V4L2 adapter, handed to the video thread's tap, compressed with libx264 into the ring;
// the delayed view shows the frame captured the delay earlier, and a mark's clip holds
// exactly the frames of its window, decoding to what went in.

import CMJPEG
import FFmpegVideo
import Foundation
import GateCore
import LinuxHardware
import Logging
import Synchronization
import Testing
import VideoDelay
import VideoService

/// A clock the test sets to each captured frame's time.
final class FrameClock: Sendable {
    private let ns = Atomic<Int64>(0)
    func set(_ t: MonotonicInstant) { ns.store(t.nanoseconds, ordering: .relaxed) }
    var now: MonotonicInstant { MonotonicInstant(nanoseconds: ns.load(ordering: .relaxed)) }
}

/// Frames that carry their own number: eight blocks along the top, white for a 1 bit,
/// black for a 0, over a moving textured scene; read back from any decoded picture.
struct NumberedFrames {
    let width: Int, height: Int
    static let bits = 8
    var block: Int { width / 16 }

    func frame(_ i: Int) -> [UInt8] {
        var f = [UInt8](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                // A gradient, a grid of texture drifting right and a bright bar crossing.
                let texture = ((x + i * 4) / 8 + y / 8) % 2 == 0 ? 24 : 0
                let bar = abs(x - (i * 9) % width) < width / 40 ? 120 : 0
                f[y * width + x] = UInt8(min(235, 40 + (x + y) * 100 / (width + height) + texture + bar))
            }
        }
        for bit in 0..<Self.bits {
            let v: UInt8 = (i >> bit) & 1 == 1 ? 235 : 16
            for y in 0..<block { for x in (bit * 2 * block)..<(bit * 2 * block + block) { f[y * width + x] = v } }
        }
        return f
    }

    /// The number in a luma picture (rows `stride` bytes apart).
    func number(_ luma: (Int, Int) -> UInt8) -> Int {
        var n = 0
        for bit in 0..<Self.bits {
            var sum = 0
            for y in (block / 4)..<(3 * block / 4) { for x in (bit * 2 * block + block / 4)..<(bit * 2 * block + 3 * block / 4) { sum += Int(luma(x, y)) } }
            if sum / ((block / 2) * (block / 2)) > 128 { n |= 1 << bit }
        }
        return n
    }
}

extension NumberedFrames {
    /// Waits up to 5 s for frame `i` to come back from `cam` and passes it to `body` before
    /// releasing it; repeats of earlier frames (vivid repeats the last frame written until
    /// the next) are skipped. False when it never came.
    func capture(_ i: Int, from cam: inout V4L2FrameSource, _ body: (FrameView) throws -> Void) throws -> Bool {
        let deadline = Sys.monotonicNow() + .seconds(5)
        while Sys.monotonicNow() < deadline {
            guard let lease = cam.nextFrame() else {
                _ = try? Sys.waitReadable(cam.fileDescriptor, timeoutMs: 50)
                continue
            }
            let view = lease.view
            defer { cam.release(lease) }
            if number({ x, y in view.base.load(fromByteOffset: y * view.bytesPerRow + x, as: UInt8.self) }) == i {
                try body(view)
                return true
            }
        }
        return false
    }
}

extension RigDevices {
    @Suite(.serialized, .enabled(if: Rig.available, "needs the qemu rig (scripts/sim-tier)"))
    struct VideoRigTests {
        func eventually(_ seconds: Double, _ condition: () -> Bool) -> Bool {
            let deadline = Sys.monotonicNow() + .seconds(seconds)
            while Sys.monotonicNow() < deadline {
                if condition() { return true }
                usleep(2_000)
            }
            return condition()
        }

        @Test("vivid at 640×480 (frames copied into the tap) and 1280×720 (the camera's buffers lent to the video thread, which copies them out of the mapping) into the ring: the delayed view shows the frame captured 1 s earlier, a mark's clip holds its window's frames, decoding to what went in",
              arguments: [(640, 480, 90, false), (1280, 720, 60, true)])
        func delayedVideo(width: Int, height: Int, count: Int, lend: Bool) throws {
            let numbered = NumberedFrames(width: width, height: height)
            let frames = (0..<count).map { numbered.frame($0) }
            let dir = NSTemporaryDirectory() + "sprintgate-video-rig-\(width)"
            defer { try? FileManager.default.removeItem(atPath: dir) }
            // vivid's HDMI loop runs at 640×480 until told otherwise; the other rig tests
            // expect that back.
            try #require(try VividTimings.set(width: width, height: height), "vivid offers no \(width)x\(height) timings")
            defer { _ = try? VividTimings.set(width: 640, height: 480) }
            var sink = try V4L2FrameSink(path: Rig.videoOutput, format: .gray8, width: width, height: height)
            defer { sink.close() }
            var cam = V4L2FrameSource(path: Rig.videoCapture, request: CameraRequest(width: width, height: height, formats: [.gray8]),
                                      logger: Logger(label: "sprintgate.camera"))
            try cam.open()
            defer { cam.close() }
            #expect(cam.mode?.width == width && cam.mode?.height == height)
            // Four buffers: one processed, two queued, one to spare for the video thread.
            #expect(cam.spareBuffers == 1)
            let clock = FrameClock()
            let delay = try DelaySetting(seconds: 1)
            let video = DelayVideo(config: DelayVideoConfig(width: width, height: height, fps: 60, delay: delay,
                                                            roll: try RollSetting(preRollSeconds: 1.5, postRollSeconds: 0.5),
                                                            availableMemory: 64 << 20, viewMaxWidth: width),
                                   library: try ClipLibrary(directory: dir), clock: { clock.now }, log: Logger(label: "sprintgate.video"))
            video.start()
            defer { video.stop() }
            var times: [MonotonicInstant] = []
            var delayedChecked = 0, markFrame: Int?
            var mark: Mark?
            /// The newest frame captured at or before `t`.
            func due(_ t: MonotonicInstant) -> Int? { times.lastIndex { $0 <= t } }
            for i in 0..<count {
                #expect(try frames[i].withUnsafeBytes { try sink.write(frame: $0) })
                let captured = try numbered.capture(i, from: &cam) { view in
                    clock.set(view.timestamp)
                    times.append(view.timestamp)
                    if lend {
                        // The driver's buffer stays out until the video thread has copied it.
                        let ticket = try #require(video.tap.lend(view), "frame \(i) dropped at the tap")
                        #expect(eventually(30) { video.tap.collect(ticket) }, "frame \(i) never copied out of its buffer")
                    } else {
                        #expect(video.tap.offer(view), "frame \(i) dropped at the tap")
                    }
                }
                try #require(captured, "frame \(i) never came back from vivid")
                // The encoder keeps pace (under emulation, slowly): wait for it before the next.
                #expect(eventually(30) { video.status.framesEncoded == UInt64(i + 1) }, "frame \(i) not encoded")
                video.watch()
                if let expected = due(clock.now - delay.delay), i % 5 == 0 {
                    // The delayed picture is the frame captured 1 s before now: its number, read
                    // from the JPEG the page gets, says so.
                    var shown = -1
                    let ok = eventually(30) {
                        guard let p = video.latest, p.time == times[expected] else { return false }
                        var luma = [UInt8](repeating: 0, count: width * height)
                        let r = p.jpeg.withUnsafeBufferPointer { j in
                            luma.withUnsafeMutableBufferPointer { sprintgate_mjpeg_to_luma(j.baseAddress, j.count, $0.baseAddress, Int32(width), Int32(height), Int32(width)) }
                        }
                        guard r == 0 else { return false }
                        shown = numbered.number { x, y in luma[y * width + x] }
                        return true
                    }
                    #expect(ok && shown == expected, "at frame \(i) the delayed view shows \(shown), not \(expected)")
                    delayedChecked += 1
                }
                if i == count * 2 / 3 {
                    mark = video.mark()
                    markFrame = due(mark!.time)
                }
            }
            #expect(delayedChecked >= 3)
            let m = try #require(mark)
            let first = try #require(times.firstIndex { $0 >= m.time - .milliseconds(1500) })
            let last = try #require(due(m.time + .milliseconds(500)))
            #expect(eventually(60) { video.status.clipsSaved == 1 }, "the mark's clip was not saved")
            let clip = try #require(video.takeSavedClips().first)
            // The clip's marked frame is the one the delayed view showed when the mark was made.
            #expect(clip.markNs == times[try #require(markFrame)].nanoseconds)
            #expect(clip.startNs == times[first].nanoseconds && clip.endNs == times[last].nanoseconds)
            // The clip decodes to exactly the window's frames, each within codec tolerance.
            var numbers: [Int] = []
            var worst = Double.infinity
            try MediaFile(path: video.library.videoPath(clip)).readAll { p, _ in
                let n = numbered.number { x, y in p[x, y] }
                numbers.append(n)
                guard frames.indices.contains(n) else { return }
                var sum = 0.0
                for y in stride(from: 0, to: height, by: 2) {
                    for x in stride(from: 0, to: width, by: 2) {
                        let d = Double(p[x, y]) - Double(frames[n][y * width + x])
                        sum += d * d
                    }
                }
                worst = min(worst, 10 * log10(255 * 255 / max(sum / Double(width * height / 4), 1e-9)))
            }
            #expect(numbers == Array(first...last), "clip frames \(numbers), window \(first)...\(last)")
            #expect(worst >= 30, "worst clip frame \(worst) dB")
            let s = video.status
            print("video rig \(width)x\(height): \(count) frames captured from vivid and encoded, \(s.framesDropped) dropped, "
                  + "\(delayedChecked) delayed pictures checked, clip of frames \(first)...\(last) (mark at frame \(markFrame ?? -1)), worst \(Int(worst)) dB")
        }
    }
}
