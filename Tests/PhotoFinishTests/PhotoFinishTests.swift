// SPDX-License-Identifier: Apache-2.0
// Ring, capture and composite on synthetic frames with a known crossing instant.

import CMallocCounter
import GateCore
import PhotoFinish
import Testing

@Suite("Photo finish")
struct PhotoFinishTests {
    @Test("the crossing marker and the time axis land where the known crossing is, within a column")
    func geometry() throws {
        var scene = BarScene()
        scene.crossingSeconds = 1.0037  // between frames, so the marker is not on a frame time
        let recorder = try PhotoFinishRecorder(config: scene.config)
        let captures = feed(scene, times: frameTimes(from: 0.5, to: 1.6, fps: 100), to: recorder)
        let capture = try #require(captures.first)
        #expect(captures.count == 1)
        defer { capture.release() }
        // Columns from crossing − 0.3 s up to the frame that reached crossing + 0.3 s.
        #expect(capture.columnTime(0) >= MonotonicInstant(seconds: 0.7037))
        #expect(capture.columnTime(0).seconds < 0.7037 + 0.0101)
        #expect(capture.columnTime(capture.columnCount - 1).seconds >= 1.3037)
        let picture = try PhotoFinishRenderer.render(capture)
        let l = picture.layout
        #expect(l.nanosecondsPerColumn == 1e6)
        let expected = (scene.crossingSeconds - capture.columnTime(0).seconds) * 1000
        #expect(abs(Double(l.crossingX - l.compositeX) - expected) <= 1)
        #expect(abs(l.time(ofColumn: l.crossingX - l.compositeX).seconds - scene.crossingSeconds) <= 0.001)
        #expect(l.compositeWidth == Int(((capture.columnTime(capture.columnCount - 1).seconds - capture.columnTime(0).seconds) * 1000).rounded(.down)) + 1)
        // The bar turns the gate column dark at the first frame after the crossing; with
        // nearest-frame resampling that shows within half a frame (5 ms) of the marker.
        let midY = l.compositeY + l.compositeHeight / 2 + 1
        let row = (0..<l.compositeWidth).map { picture.image[l.compositeX + $0, midY] }
        let firstDark = try #require(row.firstIndex { $0 < 100 })
        #expect(abs(Double(firstDark) - expected) <= 5 + 1)
        // The marker is drawn: a dashed line of black and white through the composite.
        let markerColumn = (0..<l.compositeHeight).map { picture.image[l.crossingX, l.compositeY + $0] }
        #expect(Set(markerColumn) == [0, 255])
        // Triangles sit just above and below the composite at the marker.
        #expect(picture.image[l.crossingX, l.compositeY - 2] == 0)
        #expect(picture.image[l.crossingX, l.compositeY + l.compositeHeight + 1] == 0)
    }

    @Test("dropped frames widen a band but keep the axis uniform and the marker in place")
    func drops() throws {
        var scene = BarScene()
        scene.crossingSeconds = 1.0052
        let recorder = try PhotoFinishRecorder(config: scene.config)
        let drop: Set<Int> = [45, 46, 47, 48, 52, 60, 61]  // around the crossing (frame 50)
        let captures = feed(scene, times: frameTimes(from: 0.55, to: 1.6, fps: 100, drop: drop), to: recorder)
        let capture = try #require(captures.first)
        defer { capture.release() }
        var gaps = 0
        for i in 1..<capture.columnCount where capture.columnSequence(i) != capture.columnSequence(i - 1) + 1 { gaps += 1 }
        #expect(gaps == 3)
        let picture = try PhotoFinishRenderer.render(capture)
        let l = picture.layout
        let expected = (scene.crossingSeconds - capture.columnTime(0).seconds) * 1000
        #expect(abs(Double(l.crossingX - l.compositeX) - expected) <= 1)
        // Every composite column shows the frame nearest its time, drops or not.
        for c in stride(from: 0, to: l.compositeWidth, by: 7) {
            let t = l.time(ofColumn: c).seconds
            var best = 0
            for i in 0..<capture.columnCount where abs(capture.columnTime(i).seconds - t) < abs(capture.columnTime(best).seconds - t) { best = i }
            let y = capture.columnHeight / 2
            #expect(picture.image[l.compositeX + c, l.compositeY + y] == capture.column(best)[y] || l.compositeX + c == l.crossingX)
        }
    }

    @Test("all four pixel formats with padded rows give the same capture", arguments: [PixelFormat.gray8, .yuyv, .nv12, .yu12])
    func formats(format: PixelFormat) throws {
        var reference = BarScene()
        reference.crossingSeconds = 1.0021
        var scene = reference
        scene.format = format
        scene.padding = 24
        let a = try PhotoFinishRecorder(config: reference.config)
        let b = try PhotoFinishRecorder(config: scene.config)
        let times = frameTimes(from: 0.6, to: 1.5, fps: 100)
        let ca = try #require(feed(reference, times: times, to: a).first)
        let cb = try #require(feed(scene, times: times, to: b).first)
        defer { ca.release(); cb.release() }
        #expect(ca.columnCount == cb.columnCount && ca.thumbnailCount == cb.thumbnailCount)
        for i in 0..<ca.columnCount { #expect(Array(ca.column(i)) == Array(cb.column(i))) }
        for i in 0..<ca.thumbnailCount { #expect(Array(ca.thumbnail(i)) == Array(cb.thumbnail(i))) }
        // Luma only: the bar is 40 and the background 200, never a chroma byte (128).
        let values = Set((0..<ca.columnCount).flatMap { Array(cb.column($0)) })
        #expect(values == [40, 200])
    }

    @Test("the ring wraps many times and the capture still holds the right frames in order")
    func wrapAround() throws {
        var scene = BarScene()
        scene.crossingSeconds = 20.0013
        let config = scene.config
        let recorder = try PhotoFinishRecorder(config: config)
        // 20 s at 100 fps is about 2000 frames through a ring of about 100.
        #expect(config.ringCapacity < 150)
        let captures = feed(scene, times: frameTimes(from: 0, to: 20.5, fps: 100), to: recorder)
        let capture = try #require(captures.first)
        defer { capture.release() }
        #expect(capture.columnCount == 61)
        for i in 1..<capture.columnCount {
            #expect(capture.columnSequence(i) == capture.columnSequence(i - 1) + 1)
            #expect(capture.columnTime(i) > capture.columnTime(i - 1))
        }
        #expect(abs(capture.columnTime(0).seconds - 19.71) < 1e-6)
    }

    @Test("thumbnails: before and after the crossing, the gate line drawn over them")
    func thumbnails() throws {
        var scene = BarScene()
        scene.crossingSeconds = 1.0043
        let recorder = try PhotoFinishRecorder(config: scene.config)
        let capture = try #require(feed(scene, times: frameTimes(from: 0.5, to: 1.5, fps: 100), to: recorder).first)
        defer { capture.release() }
        #expect(capture.thumbnailCount == 4)
        #expect(capture.thumbnailWidth == 160 && capture.thumbnailHeight == 120)
        let picture = try PhotoFinishRenderer.render(capture)
        let offsets = picture.thumbnailOffsetsNs.map { Double($0) / 1e6 }
        #expect(offsets.count == 4)
        #expect(abs(offsets[0] + 100) < 5.1 && offsets[1] < 0 && offsets[1] > -10 && offsets[2] >= 0 && offsets[2] < 10 && abs(offsets[3] - 100) < 5.1)
        #expect(picture.thumbnails.count == 4)
        // The bar's leading edge is left of the gate before and right of it after.
        let mid = capture.thumbnailHeight / 2 * capture.thumbnailWidth
        let gx = Int(capture.thumbnailGateX.rounded())
        #expect(capture.thumbnail(1)[mid + gx + 1] == 200 && capture.thumbnail(2)[mid + gx - 1] == 40)
        // The gate line is dashed over the first thumbnail in the picture.
        let column = (0..<capture.thumbnailHeight).map { picture.image[6 + gx, 6 + $0] }
        #expect(Set(column) == [0, 255])
    }

    @Test("two runners 50 ms apart get a capture each; busy slots drop and count")
    func slots() throws {
        var scene = BarScene()
        var config = scene.config
        config.slots = 2
        scene.crossingSeconds = 1.0
        let recorder = try PhotoFinishRecorder(config: config)
        let two = feed(scene, times: frameTimes(from: 0.5, to: 1.5, fps: 100), to: recorder, crossings: [1.0, 1.05])
        #expect(two.count == 2)
        #expect(two.map(\.crossing.time) == [MonotonicInstant(seconds: 1.0), MonotonicInstant(seconds: 1.05)])
        // Neither released: the next crossing finds no slot.
        let more = feed(scene, times: frameTimes(from: 1.51, to: 2.5, fps: 100), to: recorder, crossings: [2.0])
        #expect(more.isEmpty && recorder.capturesDropped == 1)
        two.forEach { $0.release() }
        let again = feed(scene, times: frameTimes(from: 2.51, to: 3.5, fps: 100), to: recorder, crossings: [3.0])
        #expect(again.count == 1)
        again.forEach { $0.release() }
    }

    @Test("recording frames and capturing crossings allocates nothing")
    func noAllocations() throws {
        var scene = BarScene()
        scene.format = .yuyv
        let times = frameTimes(from: 0, to: 4, fps: 100)
        let crossings = [1.0, 1.03, 2.5]
        let buffers = (0..<times.count).map { _ in UnsafeMutablePointer<UInt8>.allocate(capacity: scene.bufferSize) }
        defer { buffers.forEach { $0.deallocate() } }
        for (i, t) in times.enumerated() {
            var s = scene
            s.crossingSeconds = crossings.first { abs($0 - t) < 0.5 } ?? -10
            s.render(at: t, into: buffers[i])
        }
        /// Runs every frame through `recorder` with the loop's calls, counting allocations.
        func pass(_ recorder: PhotoFinishRecorder) -> (allocations: Int64, finished: Int) {
            var next = 0
            var finished = 0
            sprintgate_alloc_count_begin()
            for i in 0..<times.count {
                let t = times[i]
                let view = FrameView(base: UnsafeRawPointer(buffers[i]), width: scene.width, height: scene.height,
                                     bytesPerRow: scene.bytesPerRow, format: scene.format, sequence: UInt64(i),
                                     timestamp: MonotonicInstant(seconds: t))
                recorder.record(view)
                if next < crossings.count, t >= crossings[next] + 0.03 {
                    recorder.crossingReported(scene.crossing(at: crossings[next]))
                    next += 1
                }
                while let c = recorder.nextFinished() {
                    finished += 1
                    c.release()
                }
            }
            return (sprintgate_alloc_count_end(), finished)
        }
        #expect(sprintgate_alloc_hooks_active() == 1)
        // A first recorder pays the one-time costs (type metadata, lazy globals), as the
        // first frames after start do.
        _ = pass(try PhotoFinishRecorder(config: scene.config))
        let recorder = try PhotoFinishRecorder(config: scene.config)
        let r = pass(recorder)
        #expect(r.allocations == 0, "\(r.allocations) allocations")
        #expect(r.finished == 3 && recorder.capturesDropped == 0)
    }

    @Test("bad configurations and frames of the wrong size are refused, not crashed on")
    func badInput() throws {
        var config = BarScene().config
        config.gateX = 400
        #expect(throws: PhotoFinishError.self) { try PhotoFinishRecorder(config: config) }
        config = BarScene().config
        config.fps = 0
        #expect(throws: PhotoFinishError.self) { try PhotoFinishRecorder(config: config) }
        var scene = BarScene()
        let recorder = try PhotoFinishRecorder(config: scene.config)
        scene.width = 200
        scene.gateX = 100
        _ = feed(scene, times: frameTimes(from: 0, to: 0.1, fps: 100), to: recorder)
        #expect(recorder.framesSkipped == 11)
    }
}

@Suite("Frame strip around a crossing")
struct FrameStripCaptureTests {
    @Test("six consecutive frames either side of the crossing, in order; a dropped frame is a gap in the sequence")
    func strip() throws {
        var scene = BarScene()
        scene.crossingSeconds = 1.0043
        let recorder = try PhotoFinishRecorder(config: scene.config)
        // Frame 52 of the run (0.5 s + 52 × 10 ms = 1.02 s) is dropped.
        let capture = try #require(feed(scene, times: frameTimes(from: 0.5, to: 1.5, fps: 100, drop: [52]), to: recorder).first)
        defer { capture.release() }
        #expect(capture.stripCount == 12)
        let offsets = (0..<capture.stripCount).map { capture.stripTime($0).since(capture.crossing.time).seconds * 1000 }
        // 0.95 … 1.00 before the crossing at 1.0043; 1.01, 1.03 … 1.07 after (1.02 dropped).
        let expected = [-54.3, -44.3, -34.3, -24.3, -14.3, -4.3, 5.7, 25.7, 35.7, 45.7, 55.7, 65.7]
        for (o, e) in zip(offsets, expected) { #expect(abs(o - e) < 1e-3, "offset \(o) ms, expected \(e)") }
        for i in 1..<capture.stripCount { #expect(capture.stripSequence(i) > capture.stripSequence(i - 1)) }
        #expect(capture.stripSequence(7) == capture.stripSequence(6) + 2)
        // The bar's leading edge: left of the gate in the last frame before, right of it in the first after.
        let mid = capture.thumbnailHeight / 2 * capture.thumbnailWidth
        let gx = Int(capture.thumbnailGateX.rounded())
        #expect(capture.stripFrame(5)[mid + gx + 1] == 200 && capture.stripFrame(6)[mid + gx - 1] == 40)
        #expect(Array(capture.stripFrame(5)) == Array(capture.thumbnail(1)))
    }

    @Test("a strip is as long as configured, and shorter only where the ring holds fewer frames")
    func lengths() throws {
        var scene = BarScene()
        scene.crossingSeconds = 1.0043
        var config = scene.config
        config.stripFramesBefore = 3
        config.stripFramesAfter = 9
        let recorder = try PhotoFinishRecorder(config: config)
        let c1 = try #require(feed(scene, times: frameTimes(from: 0.5, to: 1.5, fps: 100), to: recorder).first)
        #expect(c1.stripCount == 12)
        #expect(c1.stripTime(2) < c1.crossing.time && c1.stripTime(3) >= c1.crossing.time)
        c1.release()
        // Recording starts 20 ms before the crossing: two frames before it exist.
        let late = try PhotoFinishRecorder(config: config)
        let c2 = try #require(feed(scene, times: frameTimes(from: 0.985, to: 1.5, fps: 100), to: late).first)
        #expect(c2.stripCount == 11)
        c2.release()
        config.stripFramesBefore = 0
        config.stripFramesAfter = 0
        let none = try PhotoFinishRecorder(config: config)
        let c3 = try #require(feed(scene, times: frameTimes(from: 0.5, to: 1.5, fps: 100), to: none).first)
        #expect(c3.stripCount == 0 && c3.thumbnailCount == 4)
        c3.release()
        config.stripFramesBefore = 20
        config.stripFramesAfter = 13
        #expect(throws: PhotoFinishError.self) { try PhotoFinishRecorder(config: config) }
        config.stripFramesBefore = -1
        #expect(throws: PhotoFinishError.self) { try PhotoFinishRecorder(config: config) }
    }
}

@Suite("Camera view tap")
struct FramePreviewTests {
    /// Runs `body` with frame `i` of a still picture of `scene` (its bars at 1 s),
    /// stamped `i` × 10 ms.
    static func withStillFrames(_ scene: BarScene, _ body: ((Int) -> FrameView) -> Void) {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: scene.bufferSize)
        defer { buffer.deallocate() }
        scene.render(at: 1, into: buffer)
        body { i in
            FrameView(base: UnsafeRawPointer(buffer), width: scene.width, height: scene.height, bytesPerRow: scene.bytesPerRow,
                      format: scene.format, sequence: UInt64(i), timestamp: MonotonicInstant(nanoseconds: Int64(i) * 10_000_000))
        }
    }

    /// Offers frames of `scene` at 100 fps from `from` to `to` seconds.
    static func offer(_ scene: BarScene, _ preview: FramePreview, from: Double, to: Double, take: Bool = true) -> [FramePreview.Picture] {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: scene.bufferSize)
        defer { buffer.deallocate() }
        var out: [FramePreview.Picture] = []
        for (i, t) in frameTimes(from: from, to: to, fps: 100).enumerated() {
            scene.render(at: t, into: buffer)
            preview.offer(FrameView(base: UnsafeRawPointer(buffer), width: scene.width, height: scene.height, bytesPerRow: scene.bytesPerRow,
                                    format: scene.format, sequence: UInt64(i), timestamp: MonotonicInstant(seconds: t)))
            if take, let p = preview.take() { out.append(p) }
        }
        return out
    }

    @Test("copies a reduced frame every 200 ms, in eight bands, only while watched, and skips while the last waits")
    func watchedOnly() {
        var scene = BarScene()
        scene.format = .yuyv
        let preview = FramePreview(frameWidth: scene.width, frameHeight: scene.height, maxWidth: 160)
        #expect(preview.width == 160 && preview.height == 120 && preview.scale == 2)
        #expect(Self.offer(scene, preview, from: 0, to: 1).isEmpty, "nobody watching: no copies")
        preview.watch(now: MonotonicInstant(seconds: 1))
        let pictures = Self.offer(scene, preview, from: 1, to: 4)
        // Watched until 3 s: copies at 1.0, 1.2 … 3.0.
        #expect(pictures.count == 11, "\(pictures.map(\.time.seconds))")
        for (a, b) in zip(pictures, pictures.dropFirst()) { #expect(abs(b.time.since(a.time).seconds - 0.2) < 1e-6) }
        // The bar's leading edge is at the gate (x 160, picture x 80) at 1.0 s: dark left of
        // it, light right, in the first band (rows 0–14, from the frame at 1.0 s); the band
        // of row 60 comes from 40 ms later, the edge 16 px on (picture x 88).
        let p = pictures.last { abs($0.time.seconds - scene.crossingSeconds) < 1e-6 }
        if let p {
            #expect(preview.bands == 8)
            #expect(p.pixels[5 * p.width + 78] == 40 && p.pixels[5 * p.width + 82] == 200)
            #expect(p.pixels[60 * p.width + 86] == 40 && p.pixels[60 * p.width + 90] == 200)
        } else {
            Issue.record("no picture at the crossing")
        }
        // Nobody takes the picture: the next ones are skipped and counted, never waited for.
        preview.watch(now: MonotonicInstant(seconds: 4))
        _ = Self.offer(scene, preview, from: 4, to: 5, take: false)
        #expect(preview.copied == 12 && preview.skipped == 5)
        #expect(preview.take() != nil && preview.take() == nil)
    }

    @Test("the bodies added with a picture's first frame travel with it; beyond eight are left out")
    func bodies() {
        let scene = BarScene()
        let preview = FramePreview(frameWidth: scene.width, frameHeight: scene.height, bands: 2)
        Self.withStillFrames(scene) { frame in
            preview.watch(now: MonotonicInstant(nanoseconds: 0))
            #expect(preview.offer(frame(0)), "the first frame starts a picture")
            for k in 0..<10 { preview.addBody(left: k, top: 1, right: k + 10, bottom: 100, small: k == 1, vehicle: k == 2) }
            #expect(!preview.offer(frame(1)), "the second band starts nothing")
            let p = preview.take()
            #expect(p?.bodies.count == FramePreview.maxBodies)
            #expect(p?.bodies.first == FramePreview.Body(left: 0, top: 1, right: 10, bottom: 100, small: false, vehicle: false))
            #expect(p?.bodies[1].small == true && p?.bodies[2].vehicle == true)
            // The next picture starts with no bodies of its own.
            #expect(preview.offer(frame(20)))
            _ = preview.offer(frame(21))
            #expect(preview.take()?.bodies.isEmpty == true)
        }
    }

    @Test("a new band count (the camera's rate changed) starts with the next picture, not within one")
    func bandsChangeBetweenPictures() {
        let scene = BarScene()
        let preview = FramePreview(frameWidth: scene.width, frameHeight: scene.height, bands: 3)
        Self.withStillFrames(scene) { frame in
            preview.watch(now: MonotonicInstant(nanoseconds: 0))
            #expect(preview.offer(frame(0)))
            preview.setBands(2)
            // The picture begun in three bands ends after its third frame.
            _ = preview.offer(frame(1))
            #expect(preview.take() == nil && preview.bands == 3)
            _ = preview.offer(frame(2))
            #expect(preview.take() != nil)
            // The next one takes two.
            #expect(preview.offer(frame(20)) && preview.bands == 2)
            _ = preview.offer(frame(21))
            #expect(preview.take() != nil && preview.copied == 2)
        }
    }

    @Test("bands: as many as frames come in 200 ms, 1 to 16")
    func bandCounts() {
        #expect(FramePreview.bands(fps: 120) == 16 && FramePreview.bands(fps: 60) == 12 && FramePreview.bands(fps: 30) == 6)
        #expect(FramePreview.bands(fps: 2) == 1 && FramePreview.bands(fps: 0) == 1 && FramePreview.bands(fps: .nan) == 1)
    }

    @Test("offering frames allocates nothing, watched or not")
    func noAllocations() {
        let scene = BarScene()
        let preview = FramePreview(frameWidth: scene.width, frameHeight: scene.height)
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: scene.bufferSize)
        defer { buffer.deallocate() }
        scene.render(at: 1, into: buffer)
        func pass(from: Int, count: Int) -> Int64 {
            sprintgate_alloc_count_begin()
            for i in from..<(from + count) {
                preview.offer(FrameView(base: UnsafeRawPointer(buffer), width: scene.width, height: scene.height, bytesPerRow: scene.bytesPerRow,
                                        format: scene.format, sequence: UInt64(i), timestamp: MonotonicInstant(nanoseconds: Int64(i) * 10_000_000)))
            }
            return sprintgate_alloc_count_end()
        }
        _ = pass(from: 0, count: 10)
        #expect(pass(from: 10, count: 100) == 0)
        preview.watch(now: MonotonicInstant(nanoseconds: 110 * 10_000_000))
        #expect(pass(from: 110, count: 100) == 0)
        #expect(preview.copied == 1 && preview.skipped > 0)
    }
}
