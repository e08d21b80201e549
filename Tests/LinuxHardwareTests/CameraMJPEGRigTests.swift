// SPDX-License-Identifier: Apache-2.0
// The camera adapter's MJPEG path against a kernel driver: v4l2loopback as a UVC camera that offers only MJPEG.

import CMJPEG
import CV4L2
import Detector
import GateCore
import GateSim
import LinuxHardware
import Logging
import Testing
#if canImport(CMallocCounter)
import CMallocCounter
#endif
#if canImport(Glibc)
import Glibc
#endif

extension RigDevices {
    /// v4l2loopback in the rig (`RIG_LOOPBACK_VIDEO`, loaded with exclusive_caps=1 and its
    /// keep_format control on): a writer sets MJPEG 640x480 at 60 fps on the node's output
    /// side, after which the node is a capture device offering that one mode, as a UVC
    /// camera that only streams MJPEG at its high rates. The frames are JPEGs with 4:2:2
    /// chroma, as such cameras send them, each with its exact payload size as `bytesused`.
    @Suite(.serialized, .enabled(if: Rig.available && Rig.env("RIG_LOOPBACK_VIDEO") != nil,
                                 "needs the qemu rig with v4l2loopback (scripts/sim-tier)"))
    struct CameraMJPEGRigTests {
        static let width = 640, height = 480, fps: UInt32 = 60
        static var node: String { Rig.env("RIG_LOOPBACK_VIDEO") ?? "" }
        let logger = Logger(label: "sprintgate.camera")

        static func encode(_ luma: [UInt8], quality: Int32 = 90) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: width * height * 2)
            var length = 0
            let r = luma.withUnsafeBufferPointer { src in
                out.withUnsafeMutableBufferPointer { dst in
                    sprintgate_luma_to_jpeg(src.baseAddress, Int32(width), Int32(height), Int32(width), quality, 1,
                                            dst.baseAddress, dst.count, &length)
                }
            }
            precondition(r == 0, "encoder failed with \(r)")
            return Array(out[0..<length])
        }

        /// Mean absolute difference between a decoded view and the luma it was encoded from.
        static func meanError(_ view: FrameView, _ luma: [UInt8]) -> Double {
            var sum = 0
            luma.withUnsafeBufferPointer { l in
                for y in 0..<height {
                    let row = view.base + y * view.bytesPerRow
                    for x in 0..<width {
                        sum += abs(Int(row.load(fromByteOffset: x, as: UInt8.self)) - Int(l[y * width + x]))
                    }
                }
            }
            return Double(sum) / Double(width * height)
        }

        /// Sets the node's frame interval through a second descriptor, as a camera's
        /// firmware fixes its rate; v4l2loopback then lists it as the capture interval.
        static func setRate(_ path: String, fps: UInt32) throws {
            let fd = try Sys.openVideo(path)
            defer { Sys.closeVideo(fd) }
            var p = v4l2_streamparm()
            p.type = V4L2_BUF_TYPE_VIDEO_OUTPUT.rawValue
            p.parm.output.timeperframe = v4l2_fract(numerator: 1, denominator: fps)
            _ = try Sys.ioctl(fd, CV4L2_VIDIOC_S_PARM(), &p, op: "VIDIOC_S_PARM", path: path)
        }

        /// The "sprint" scene at 60 fps, centred in 640x480, written as MJPEG one frame at a
        /// time and awaited on the capture side before the next, with one truncated JPEG
        /// (a frame cut short, as a lost USB packet leaves it) between two scene frames.
        /// Times are taken from the written frame index, not from the wall clock: the
        /// emulated guest writes slower than 60 fps and v4l2loopback stamps buffers with the
        /// time they were queued, without a clock flag.
        @Test func mjpegSprintIsDecodedSkipsCorruptFrameAndTimedOnce() throws {
            let w = Self.width, h = Self.height, path = Self.node
            let spec = try #require(SceneCatalog.scene("sprint", fps: 60, variant: 0))
            let truth = try #require(spec.expectedCrossings.first)
            let renderer = SceneRenderer(spec: spec)
            let padX = (w - spec.width) / 2, padY = (h - spec.height) / 2
            var scene = [UInt8](repeating: 0, count: spec.width * spec.height)
            var frames: [[UInt8]] = []
            var jpegs: [[UInt8]] = []
            for i in 0..<spec.frameCount {
                scene.withUnsafeMutableBufferPointer { renderer.render(frame: i, into: $0) }
                var padded = [UInt8](repeating: 96, count: w * h)
                for y in 0..<spec.height {
                    padded.replaceSubrange(((y + padY) * w + padX)..<((y + padY) * w + padX + spec.width),
                                           with: scene[(y * spec.width)..<((y + 1) * spec.width)])
                }
                frames.append(padded)
                jpegs.append(Self.encode(padded))
            }
            let blank = [UInt8](repeating: 96, count: w * h)
            let corruptAfter = frames.count / 2
            let truncated = Array(jpegs[corruptAfter].prefix(jpegs[corruptAfter].count / 2))

            // The writer: MJPEG 640x480, payload-sized buffers. Its first frame (plain grey)
            // starts the stream, which turns the node into a capture device.
            var sink = try V4L2FrameSink(path: path, format: .mjpeg, width: w, height: h)
            defer { sink.close() }
            try Self.setRate(path, fps: Self.fps)
            func write(_ jpeg: [UInt8]) throws -> Bool {
                try sink.writePayload { dst in
                    jpeg.withUnsafeBytes { dst.copyMemory(from: $0) }
                    return jpeg.count
                }
            }
            #expect(try write(Self.encode(blank)))

            let modes = try V4L2FrameSource.modes(path: path)
            print("loopback capture modes: " + modes.map(\.description).joined(separator: "; "))
            #expect(!modes.isEmpty && modes.allSatisfy { $0.format == .mjpeg }, "\(modes)")
            #expect(modes.contains { $0.width == w && $0.height == h && $0.fpsList.contains { abs($0 - 60) < 0.1 } })

            var cam = V4L2FrameSource(path: path, request: CameraRequest(formats: [.mjpeg]), logger: logger)
            try cam.open()
            defer { cam.close() }
            #expect(cam.state == .streaming)
            #expect(cam.mode?.format == .mjpeg && cam.mode?.width == w && cam.mode?.height == h, "\(String(describing: cam.mode))")
            #expect(cam.mode.map { abs($0.intervals[0].fps - 60) < 0.1 } == true)

            #if canImport(CMallocCounter)
            let counting = sprintgate_alloc_hooks_active() == 1
            #else
            let counting = false
            #endif
            var allocations: Int64 = 0, countedCalls = 0, countedFrames = 0
            /// One dequeue (decode included); counted once the decoder has seen a frame.
            func next(counted: Bool) -> FrameLease? {
                #if canImport(CMallocCounter)
                if counted && counting {
                    sprintgate_alloc_count_begin()
                    let lease = cam.nextFrame()
                    allocations += sprintgate_alloc_count_end()
                    countedCalls += 1
                    return lease
                }
                #endif
                return cam.nextFrame()
            }
            func giveBack(_ lease: FrameLease, counted: Bool) {
                #if canImport(CMallocCounter)
                if counted && counting {
                    sprintgate_alloc_count_begin()
                    cam.release(lease)
                    allocations += sprintgate_alloc_count_end()
                    countedFrames += 1
                    return
                }
                #endif
                cam.release(lease)
            }
            func awaitFrame(ms: Int = 3000, counted: Bool = false) -> FrameLease? {
                let deadline = Sys.monotonicNow() + .milliseconds(Double(ms))
                while Sys.monotonicNow() < deadline {
                    if let lease = next(counted: counted) { return lease }
                    if cam.state != .streaming && cam.state != .noSignal { return nil }
                    _ = try? Sys.waitReadable(cam.fileDescriptor, timeoutMs: 20)
                }
                return nil
            }

            // The grey frame that started the stream.
            let firstLease = awaitFrame()
            let first = try #require(firstLease, "no frame from the loopback node")
            let greyError = Self.meanError(first.view, blank)
            cam.release(first)
            #expect(greyError < 3)

            var detector = PhotoFinishDetector(config: DetectorConfig(gateX: spec.gateX + Double(padX)),
                                               inputWidth: w, inputHeight: h)
            var result = DetectionSet()
            var crossings: [(Crossing, Int)] = []
            var errors: [Double] = []
            var dropped: [UInt64] = []
            var corruptSeen = false
            let origin = 100.0  // seconds; frame i is stamped origin + i / fps
            let t0 = Sys.monotonicNow()
            for i in 0..<frames.count {
                if i == corruptAfter + 1 {
                    #expect(try write(truncated))
                    // The truncated frame is dequeued, fails to decode and goes straight back.
                    let deadline = Sys.monotonicNow() + .seconds(3)
                    while cam.stats.corrupt == 0 && Sys.monotonicNow() < deadline {
                        if let lease = next(counted: false) {
                            Issue.record("a frame came out of the truncated JPEG")
                            cam.release(lease)
                        }
                        _ = try? Sys.waitReadable(cam.fileDescriptor, timeoutMs: 20)
                    }
                    corruptSeen = cam.stats.corrupt == 1
                }
                #expect(try write(jpegs[i]))
                let counted = i >= 3
                guard let lease = awaitFrame(counted: counted) else {
                    Issue.record("frame \(i) not captured")
                    break
                }
                let v = lease.view
                #expect(v.format == .gray8 && v.width == w && v.height == h)
                errors.append(Self.meanError(v, frames[i]))
                dropped.append(lease.droppedBefore)
                let stamped = FrameView(base: v.base, width: v.width, height: v.height, bytesPerRow: v.bytesPerRow,
                                        format: v.format, sequence: UInt64(i),
                                        timestamp: MonotonicInstant(seconds: origin + spec.frameTime(i)))
                detector.process(stamped, into: &result)
                if let c = result.crossing { crossings.append((c, i)) }
                giveBack(lease, counted: counted)
            }
            let elapsed = Sys.monotonicNow().since(t0)

            func r(_ x: Double) -> Double { (x * 1000).rounded() / 1000 }
            let worst = errors.max() ?? .infinity, mean = errors.reduce(0, +) / Double(max(1, errors.count))
            let sizes = jpegs.map(\.count)
            print("mjpeg sprint: \(errors.count)/\(frames.count) frames decoded, JPEG \(sizes.min() ?? 0)...\(sizes.max() ?? 0) bytes, "
                  + "mean abs error \(r(mean)) (worst frame \(r(worst))), droppedBefore \(dropped.reduce(0, +)), "
                  + "\(Int(elapsed.milliseconds)) ms; stats \(cam.stats)")
            #expect(errors.count == frames.count)
            #expect(worst < 3, "decoded luma differs from the source by more than JPEG error")

            // The truncated frame: counted as corrupt and as one frame missing before the next.
            #expect(corruptSeen, "truncated JPEG not counted as corrupt")
            #expect(cam.stats.corrupt == 1)
            #expect(dropped.count > corruptAfter + 1 && dropped[corruptAfter + 1] == 1, "droppedBefore after the corrupt frame")
            #expect(dropped.reduce(0, +) == 1)
            #expect(cam.stats.dropped == 0)
            #expect(cam.stats.frames == UInt64(errors.count) + 1)

            // One crossing, on the written frames' timeline.
            for (c, i) in crossings {
                print("crossing at \(r(c.time.seconds - origin)) s (reported at frame \(i)), truth \(r(truth.time)) s, "
                      + "error \(r((c.time.seconds - origin - truth.time) * 1000)) ms, ± \(r(c.uncertainty.seconds * 1000)) ms")
            }
            #expect(crossings.count == 1, "\(crossings.map(\.0))")
            if let c = crossings.first?.0 {
                #expect(abs(c.time.seconds - origin - truth.time) < 0.004)
                #expect(c.direction == truth.direction)
            }

            if counting {
                print("steady state: \(allocations) allocations over \(countedFrames) frames, \(countedCalls) dequeue calls")
                #expect(countedFrames > frames.count / 2)
                #expect(allocations == 0)
            }

            // keep_format: with every descriptor closed the node stays an MJPEG-only camera.
            cam.close()
            sink.close()
            let kept = try V4L2FrameSource.modes(path: path)
            print("after the writer closed: " + kept.map(\.description).joined(separator: "; "))
            #expect(kept.count == 1 && kept.first?.format == .mjpeg && kept.first?.width == w && kept.first?.height == h, "\(kept)")
        }
    }
}
