// SPDX-License-Identifier: Apache-2.0
// The camera adapter against vivid in the qemu rig: modes, a looped synthetic sprint, drops, unplug and reopen.

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
    /// Shared by the rig tests: one vivid instance, so they run one after another.
    @Suite(.serialized, .enabled(if: Rig.available, "needs the qemu rig (scripts/sim-tier)"))
    struct CameraRigTests {
        static let width = 640, height = 480
        let logger = Logger(label: "sprintgate.camera")

        func source(_ request: CameraRequest = CameraRequest(formats: [.gray8])) -> V4L2FrameSource {
            V4L2FrameSource(path: Rig.videoCapture, request: request, logger: logger)
        }

        /// Waits up to `ms` for a frame; also asks the source when the descriptor reports an
        /// error (an unplugged device polls as POLLERR|POLLHUP, not readable).
        func waitFrame(_ s: inout V4L2FrameSource, ms: Int = 1000) -> FrameLease? {
            let deadline = Sys.monotonicNow() + .milliseconds(Double(ms))
            while Sys.monotonicNow() < deadline {
                if let lease = s.nextFrame() { return lease }
                if s.state != .streaming && s.state != .noSignal { return nil }
                _ = try? Sys.waitReadable(s.fileDescriptor, timeoutMs: 20)
            }
            return nil
        }

        @Test func vividCaptureModesListGreyAndYUYV() throws {
            let modes = try V4L2FrameSource.modes(path: Rig.videoCapture)
            print("vivid capture modes: \(modes.count), e.g. " + modes.prefix(6).map(\.description).joined(separator: "; "))
            for f in [PixelFormat.gray8, .yuyv] {
                let m = modes.first { $0.format == f && $0.width == Self.width && $0.height == Self.height }
                #expect(m != nil, "\(f) 640x480 missing")
                #expect(m?.fpsList.contains { abs($0 - 60) < 0.1 } == true, "\(f) 640x480 without 60 fps")
            }
            let chosen = try #require(V4L2FrameSource.choose(modes: modes, request: CameraRequest()))
            #expect(chosen.format == .gray8 && chosen.width == Self.width && chosen.height == Self.height)
        }

        /// The "sprint" scene rendered at 60 fps, centred in 640x480 GREY, written to vivid's
        /// output frame by frame; each frame is awaited on the capture side before the next
        /// is written (vivid's output and capture threads are not phase-locked).
        @Test func loopedSprintIsCapturedExactlyAndTimedOnce() throws {
            let spec = try #require(SceneCatalog.scene("sprint", fps: 60, variant: 0))
            let renderer = SceneRenderer(spec: spec)
            let padX = (Self.width - spec.width) / 2, padY = (Self.height - spec.height) / 2
            var scene = [UInt8](repeating: 0, count: spec.width * spec.height)
            var frames: [[UInt8]] = []
            for i in 0..<spec.frameCount {
                scene.withUnsafeMutableBufferPointer { renderer.render(frame: i, into: $0) }
                var padded = [UInt8](repeating: 96, count: Self.width * Self.height)
                for y in 0..<spec.height {
                    padded.replaceSubrange(((y + padY) * Self.width + padX)..<((y + padY) * Self.width + padX + spec.width),
                                           with: scene[(y * spec.width)..<((y + 1) * spec.width)])
                }
                frames.append(padded)
            }
            func centreEquals(_ view: FrameView, _ frame: [UInt8]) -> Bool {
                frame.withUnsafeBytes { f in
                    for y in padY..<(padY + spec.height) {
                        if memcmp(view.base + y * view.bytesPerRow + padX, f.baseAddress! + y * Self.width + padX, spec.width) != 0 { return false }
                    }
                    return true
                }
            }

            var sink = try V4L2FrameSink(path: Rig.videoOutput, format: .gray8, width: Self.width, height: Self.height)
            defer { sink.close() }
            var cam = source(CameraRequest(formats: [.gray8], exposureMicroseconds: 2000))
            try cam.open()
            defer { cam.close() }
            #expect(cam.state == .streaming)
            #expect(cam.mode?.format == .gray8 && cam.mode?.width == Self.width && cam.mode?.height == Self.height)
            // The page's frame-rate menu: the rates vivid offers in GREY, the opened one among them.
            print("vivid offers in GREY: \(cam.offeredRates) fps")
            #expect(cam.offeredRates.contains(Int((cam.mode?.intervals.first?.fps ?? 0).rounded())) && cam.offeredRates == cam.offeredRates.sorted(),
                    "\(cam.offeredRates)")
            // vivid has no exposure controls: a warning, not a failure.
            #expect(cam.warnings.contains { $0.contains("no manual exposure control") }, "\(cam.warnings)")

            var detector = PhotoFinishDetector(config: DetectorConfig(gateX: spec.gateX + Double(padX)),
                                               inputWidth: Self.width, inputHeight: Self.height)
            var result = DetectionSet()
            var crossings: [Crossing] = []
            var stamps: [MonotonicInstant] = []
            var kernelStamps: [MonotonicInstant] = []
            var matched = 0, stale = 0, foreign = 0
            let t0 = Sys.monotonicNow()
            for i in 0..<frames.count {
                #expect(try frames[i].withUnsafeBytes { try sink.write(frame: $0) })
                var seen = false
                let deadline = Sys.monotonicNow() + .seconds(3)
                while !seen && Sys.monotonicNow() < deadline {
                    guard let lease = waitFrame(&cam, ms: 200) else { continue }
                    let view = lease.view
                    if centreEquals(view, frames[i]) {
                        seen = true
                        matched += 1
                        stamps.append(view.timestamp)
                        kernelStamps.append(cam.lastKernelTimestamp)
                        detector.process(view, into: &result)
                        if let c = result.crossing { crossings.append(c) }
                    } else if i > 0 && centreEquals(view, frames[i - 1]) {
                        stale += 1
                    } else {
                        foreign += 1  // before the first output frame arrives: vivid's no-signal picture
                    }
                    cam.release(lease)
                }
                if !seen { break }
            }
            let elapsed = Sys.monotonicNow().since(t0)
            print("looped sprint: \(matched)/\(frames.count) frames matched byte-exactly, \(stale) repeats, \(foreign) others, "
                  + "\(crossings.count) crossing(s), \(Int(elapsed.milliseconds)) ms; stats \(cam.stats)")
            #expect(matched == frames.count)
            #expect(foreign <= 8, "frames that matched neither the current nor the previous scene frame")
            #expect(zip(stamps, stamps.dropFirst()).allSatisfy { $0 < $1 }, "timestamps not strictly increasing")
            #expect(cam.stats.nonMonotonic == 0)
            #expect(cam.timestampSource != nil)
            let now = Sys.monotonicNow()
            #expect(kernelStamps.allSatisfy { abs(now.since($0).seconds) < 60 }, "kernel stamps not on CLOCK_MONOTONIC")
            #expect(crossings.count == 1, "\(crossings)")
        }

        /// A second opener (the service while `sprintgate record` runs, say) is told the
        /// camera is taken, and gets it once the first lets go.
        @Test func aCameraInUseIsReportedAsBusy() throws {
            var first = source()
            try first.open()
            var second = source()
            do {
                try second.open()
                Issue.record("opened a camera another descriptor is streaming from")
                second.close()
            } catch {
                print("camera in use: \(error)")
                #expect(error.errno == EBUSY)
                #expect(error.impliedState == .busy)
                #expect(second.state == .busy)
                #expect(error.description.contains("in use by another program"))
            }
            first.close()
            try second.open()
            #expect(second.state == .streaming)
            let got = waitFrame(&second)
            let lease = try #require(got, "no frame once the camera was free")
            second.release(lease)
            second.close()
        }

        /// Buffers held back: the driver keeps numbering frames it has nowhere to put.
        @Test func droppedFramesMatchSequenceGaps() throws {
            var cam = source()
            try cam.open()
            defer { cam.close() }
            var seqs: [UInt64] = [], drops: [UInt64] = []
            func read(for ms: Double) {
                let end = Sys.monotonicNow() + .milliseconds(ms)
                while Sys.monotonicNow() < end {
                    if let lease = waitFrame(&cam, ms: 100) {
                        seqs.append(lease.view.sequence)
                        drops.append(lease.droppedBefore)
                        cam.release(lease)
                    }
                }
            }
            read(for: 300)
            // Hold two frames and stop reading: two buffers stay with the driver, then none.
            let first = waitFrame(&cam), second = waitFrame(&cam)
            let held1 = try #require(first), held2 = try #require(second)
            seqs += [held1.view.sequence, held2.view.sequence]
            drops += [held1.droppedBefore, held2.droppedBefore]
            usleep(400_000)
            // Nothing dequeued for 400 ms: the watchdog calls that no signal until a frame comes.
            cam.checkSignal(now: Sys.monotonicNow())
            #expect(cam.state == .noSignal)
            cam.release(held1)
            cam.release(held2)
            read(for: 300)
            #expect(cam.state == .streaming)
            try #require(seqs.count > 4)
            // The driver numbers from 0 at STREAMON. vivid derives a frame's number from the
            // time since then, rounded, so a thread that wakes early repeats the last number
            // (seen just after a restart: 0, 0, 1, 2, ...); a repeat is no gap.
            var gaps: UInt64 = seqs[0]
            var perFrame = true
            for ((a, b), dropped) in zip(zip(seqs, seqs.dropFirst()), drops.dropFirst()) {
                try #require(b >= a, "sequence numbers went back: \(seqs)")
                let gap = b == a ? 0 : b - a - 1
                gaps += gap
                if dropped != gap { perFrame = false }
            }
            print("drops: \(seqs.count) frames, sequence gaps \(gaps), droppedBefore sum \(drops.reduce(0, +)), stats \(cam.stats)")
            #expect(perFrame)
            #expect(drops.reduce(0, +) == gaps)
            #expect(gaps > 0, "holding the buffers for 400 ms should have made the driver drop")
            #expect(cam.stats.dropped + cam.stats.corrupt == gaps)
            #expect(cam.stats.frames == UInt64(seqs.count))
        }

        /// Kernel timestamp to dequeue, free-running (no output attached).
        @Test func captureLatency() throws {
            var cam = source()
            try cam.open()
            defer { cam.close() }
            var latencies: [Double] = []
            let end = Sys.monotonicNow() + .seconds(2)
            while Sys.monotonicNow() < end {
                _ = try Sys.waitReadable(cam.fileDescriptor, timeoutMs: 100)
                if let lease = cam.nextFrame() {
                    latencies.append(Sys.monotonicNow().since(cam.lastKernelTimestamp).milliseconds)
                    cam.release(lease)
                }
            }
            latencies.sort()
            try #require(latencies.count > 10)
            let p50 = latencies[latencies.count / 2], p99 = latencies[min(latencies.count - 1, latencies.count * 99 / 100)]
            // vivid stamps "end of frame" as the instant it fills the buffer plus 0.9 of the
            // frame period, so the raw figure is negative; adding that back gives the time
            // from the buffer being filled to its dequeue.
            let eof = 0.9 * 1000 / (cam.mode?.intervals.first?.fps ?? 60)
            func r(_ x: Double) -> Double { (x * 100).rounded() / 100 }
            print("capture latency (kernel stamp to dequeue), \(latencies.count) frames: p50 \(r(p50)) ms, p99 \(r(p99)) ms "
                  + "(min \(r(latencies[0])), max \(r(latencies.last!))); from vivid's fill: p50 \(r(p50 + eof)) ms, "
                  + "p99 \(r(p99 + eof)) ms; timestamp source \(String(describing: cam.timestampSource))")
            #expect(cam.stats.nonMonotonic == 0)
        }

        #if canImport(CMallocCounter)
        /// Steady state: dequeuing and releasing frames allocates nothing.
        @Test func streamingAllocatesNothing() throws {
            var cam = source()
            try cam.open()
            defer { cam.close() }
            for _ in 0..<5 {
                if let lease = waitFrame(&cam) { cam.release(lease) }
            }
            try #require(sprintgate_alloc_hooks_active() == 1)
            var frames = 0, calls = 0
            let end = Sys.monotonicNow() + .milliseconds(500)
            sprintgate_alloc_count_begin()
            while Sys.monotonicNow() < end {
                _ = try? Sys.waitReadable(cam.fileDescriptor, timeoutMs: 50)
                calls += 1
                if let lease = cam.nextFrame() {
                    frames += 1
                    cam.release(lease)
                }
            }
            let allocations = sprintgate_alloc_count_end()
            print("steady state: \(allocations) allocations over \(frames) frames, \(calls) calls")
            #expect(frames > 5)
            #expect(allocations == 0)
        }
        #endif

        /// vivid's "Disconnect" control acts like pulling a USB cable: the nodes unregister,
        /// and come back once every descriptor and mapping is gone.
        @Test func unplugMovesToAbsentAndReopenWorks() throws {
            var cam = source()
            try cam.open()
            var frames: UInt64 = 0
            for _ in 0..<5 {
                let next = waitFrame(&cam)
                let lease = try #require(next)
                frames += 1
                cam.release(lease)
            }
            // Keep one frame out across the unplug: its memory must stay readable.
            let kept = waitFrame(&cam)
            let held = try #require(kept)
            frames += 1
            let lastSequence = held.view.sequence

            let control = try #require(try VividControl.set("Disconnect", path: Rig.videoCapture), "vivid has no Disconnect control (no_error_inj=1?)")
            print("pressed vivid control \(control)")
            var sawAbsent = false
            let deadline = Sys.monotonicNow() + .seconds(3)
            while Sys.monotonicNow() < deadline {
                if let lease = cam.nextFrame() {
                    frames += 1
                    cam.release(lease)
                }
                if cam.state == .absent { sawAbsent = true; break }
                usleep(10_000)
            }
            #expect(sawAbsent, "state \(cam.state)")
            #expect(cam.nextFrame() == nil)
            #expect(held.view.base.load(as: UInt8.self) == held.view.base.load(as: UInt8.self))
            cam.release(held)
            #expect(cam.fileDescriptor == -1)
            #expect(cam.stats.disconnects == 1)
            #expect(cam.stats.frames == frames)
            #expect(cam.lastError.map { $0.errno == ENODEV } == true, "\(String(describing: cam.lastError))")

            // Everything is closed, so vivid re-registers its nodes: a reopen streams again.
            var reopened = false
            for _ in 0..<20 {
                do {
                    try cam.open()
                    reopened = true
                    break
                } catch {
                    usleep(100_000)
                }
            }
            #expect(reopened, "reopen failed: \(String(describing: cam.lastError))")
            if reopened {
                let next = waitFrame(&cam)
                let lease = try #require(next)
                #expect(lease.view.sequence > lastSequence, "sequence numbers keep rising across reopen")
                cam.release(lease)
                #expect(cam.state == .streaming)
                #expect(cam.stats.opens == 2)
                #expect(cam.stats.frames == frames + 1)
            }
            cam.close()
            #expect(cam.state == .closed)
        }
    }
}
