// SPDX-License-Identifier: Apache-2.0
// The delay mode on an MJPEG camera in the qemu rig: v4l2loopback as a UVC camera that
// sends only MJPEG, its JPEGs handed by the V4L2 adapter byte for byte to the video
// thread's tap and kept in the ring as they came; the delayed view shows the frame
// captured 1 s earlier, and a mark's clip (encoded to H.264 when cut) holds its window.

import CMJPEG
import FFmpegVideo
import Foundation
import GateCore
import LinuxHardware
import Logging
import Testing
import VideoDelay
import VideoService

extension RigDevices {
    @Suite(.serialized, .enabled(if: Rig.available && Rig.env("RIG_LOOPBACK_VIDEO") != nil,
                                 "needs the qemu rig with v4l2loopback (scripts/sim-tier)"))
    struct MJPEGVideoRigTests {
        @Test("an MJPEG camera's frames: the adapter hands each JPEG over exactly as written, the ring keeps it as it is, the delayed view shows the frame captured 1 s before, and a mark's clip decodes to its window's frames")
        func cameraJPEGsInTheRing() throws {
            let (width, height) = (640, 480)
            let path = try #require(Rig.env("RIG_LOOPBACK_VIDEO"))
            let numbered = NumberedFrames(width: width, height: height)
            let count = 75
            let frames = (0..<count).map { numbered.frame($0) }
            let jpegs = frames.map { CameraMJPEGRigTests.encode($0) }
            var sink = try V4L2FrameSink(path: path, format: .mjpeg, width: width, height: height)
            defer { sink.close() }
            func write(_ jpeg: [UInt8]) throws -> Bool {
                try sink.writePayload { dst in
                    jpeg.withUnsafeBytes { dst.copyMemory(from: $0) }
                    return jpeg.count
                }
            }
            #expect(try write(CameraMJPEGRigTests.encode([UInt8](repeating: 96, count: width * height))))
            var cam = V4L2FrameSource(path: path, request: CameraRequest(formats: [.mjpeg]), logger: Logger(label: "sprintgate.camera"))
            try cam.open()
            defer { cam.close() }
            #expect(cam.mode?.format == .mjpeg)
            let dir = NSTemporaryDirectory() + "sprintgate-mjpeg-rig"
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let clock = FrameClock()
            let delay = try DelaySetting(seconds: 1)
            let video = DelayVideo(config: DelayVideoConfig(width: width, height: height, fps: 60, delay: delay,
                                                            roll: try RollSetting(preRollSeconds: 1, postRollSeconds: 0.5),
                                                            availableMemory: 64 << 20, viewMaxWidth: width, cameraJPEG: true),
                                   library: try ClipLibrary(directory: dir), clock: { clock.now }, log: Logger(label: "sprintgate.video"))
            video.start()
            defer { video.stop() }
            var times: [MonotonicInstant] = []
            var exact = 0, checked = 0
            var mark: Mark?
            // Paced at 30 frames a second, as a camera sends them: the checks below need the
            // frames to span more than the 1 s delay by frame 39, and the mark at frame 55
            // its 0.5 s post-roll before the last. Unpaced, a fast host wrote all 75 in under
            // a second and nothing was checked.
            // What the loopback delivered before the first numbered frame (its warm-up frame)
            // is let go first.
            usleep(100_000)
            while let lease = cam.nextFrame() { cam.release(lease) }
            let paced = Sys.monotonicNow()
            for i in 0..<count {
                let slot = MonotonicInstant(nanoseconds: paced.nanoseconds + Int64(i) * 33_333_333)
                while Sys.monotonicNow() < slot { usleep(1_000) }
                #expect(try write(jpegs[i]))
                let captured = try numbered.capture(i, from: &cam) { view in
                    // The JPEG as the camera sent it, beside the luma decoded for the detector.
                    if let c = view.compressed, Array(c) == jpegs[i] { exact += 1 }
                    clock.set(view.timestamp)
                    times.append(view.timestamp)
                    #expect(video.tap.offer(view), "frame \(i) dropped at the tap")
                }
                try #require(captured, "frame \(i) never came back from the loopback camera")
                let kept = Sys.monotonicNow() + .seconds(30)
                while video.status.framesEncoded < UInt64(i + 1) && Sys.monotonicNow() < kept { usleep(2_000) }
                video.watch()
                if i % 10 == 9, let due = times.lastIndex(where: { $0 <= clock.now - delay.delay }) {
                    var shown = -1
                    let until = Sys.monotonicNow() + .seconds(30)
                    while Sys.monotonicNow() < until {
                        if let p = video.latest, p.time == times[due] {
                            var luma = [UInt8](repeating: 0, count: width * height)
                            let r = p.jpeg.withUnsafeBufferPointer { j in
                                luma.withUnsafeMutableBufferPointer {
                                    sprintgate_mjpeg_to_luma(j.baseAddress, j.count, $0.baseAddress, Int32(width), Int32(height), Int32(width))
                                }
                            }
                            if r == 0 { shown = numbered.number { x, y in luma[y * width + x] } }
                            break
                        }
                        video.watch()
                        usleep(5_000)
                    }
                    #expect(shown == due, "at frame \(i) the delayed view shows \(shown), not \(due)")
                    checked += 1
                }
                if i == 55 { mark = video.mark() }
            }
            #expect(exact == count, "\(exact) of \(count) JPEGs handed over as written")
            #expect(checked >= 3)
            #expect(video.status.encoder == "MJPEG as the camera sends it")
            let m = try #require(mark)
            let first = try #require(times.firstIndex { $0 >= m.time - .seconds(1) })
            let last = try #require(times.lastIndex { $0 <= m.time + .milliseconds(500) })
            let saved = Sys.monotonicNow() + .seconds(120)
            while video.status.clipsSaved < 1 && Sys.monotonicNow() < saved { usleep(20_000) }
            let clip = try #require(video.takeSavedClips().first, "the mark's clip was not saved: \(video.status)")
            var numbers: [Int] = []
            let file = try MediaFile(path: video.library.videoPath(clip))
            #expect(file.info.codec == "h264")
            try file.readAll { p, _ in numbers.append(numbered.number { x, y in p[x, y] }) }
            #expect(numbers == Array(first...last), "clip frames \(numbers), window \(first)...\(last)")
            print("mjpeg video rig: \(count) JPEGs from the loopback camera kept as sent (\(exact) byte-exact), "
                  + "\(checked) delayed pictures checked, clip of frames \(first)...\(last), \(video.status.bufferBytes / 1024) KiB in the ring")
        }
    }
}
