// SPDX-License-Identifier: Apache-2.0
// The frame path allocates nothing: malloc calls counted on the processing thread.

import CMallocCounter
import Detector
import GateCore
import GateSim
import Testing

@Suite("Allocation discipline")
struct AllocationTests {
    @Test("the malloc counter sees allocations")
    func counterWorks() {
        #expect(sprintgate_alloc_hooks_active() == 1)
        sprintgate_alloc_count_begin()
        let p = UnsafeMutablePointer<Int>.allocate(capacity: 100)
        p.deallocate()
        let array = [Int](repeating: 1, count: Int.random(in: 10...20))
        #expect(sprintgate_alloc_count_end() >= 2)
        #expect(array.count >= 10)
    }

    @Test("processing frames makes no heap allocation",
          arguments: ["sprint", "two-runners", "light-runner", "shake-runner", "car-behind-fence"])
    func zeroPerFrame(scene: String) throws {
        let spec = try #require(SceneCatalog.scene(scene, fps: 60, variant: 1))
        let w = spec.width, h = spec.height
        let renderer = SceneRenderer(spec: spec)
        let frames = spec.frameCount
        let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: w * h * frames)
        defer { buffer.deallocate() }
        for i in 0..<frames {
            renderer.render(frame: i, into: UnsafeMutableBufferPointer(rebasing: buffer[(i * w * h)..<((i + 1) * w * h)]))
        }
        // The car is timed with the vehicle subject (the foremost point of the whole body).
        let vehicle = !spec.vehicles.isEmpty
        var config = detectorConfig(for: spec)
        if vehicle { config.subject = .vehicle }
        var detector = PhotoFinishDetector(config: config, inputWidth: w, inputHeight: h)
        var result = DetectionSet()
        var crossings = 0
        sprintgate_alloc_count_begin()
        for i in 0..<frames {
            let view = FrameView(base: UnsafeRawPointer(buffer.baseAddress! + i * w * h), width: w, height: h,
                                 bytesPerRow: w, format: .gray8, sequence: UInt64(i),
                                 timestamp: MonotonicInstant(nanoseconds: Int64(i) * 16_666_667))
            detector.process(view, into: &result)
            if result.crossing != nil { crossings += 1 }
        }
        let allocations = sprintgate_alloc_count_end()
        #expect(allocations == 0, "\(allocations) allocations over \(frames) frames")
        #expect(crossings == (vehicle ? spec.expectedVehicleCrossings : spec.expectedCrossings).count)
    }
}
