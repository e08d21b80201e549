// SPDX-License-Identifier: Apache-2.0
// Counts heap allocations on the frame path in an optimised build and checks them
// against Tests/AllocationBudgets.json. Exit status 1 when a budget is exceeded.
//
// Usage: AllocCheck [BUDGETS.json]

import CMallocCounter
import Detector
import Foundation
import GateCore
import GateSim

let budgetPath = CommandLine.arguments.dropFirst().first ?? "Tests/AllocationBudgets.json"
guard let data = FileManager.default.contents(atPath: budgetPath),
      let budgets = (try? JSONSerialization.jsonObject(with: data)) as? [String: Int] else {
    print("error: cannot read allocation budgets from \(budgetPath)")
    exit(2)
}
guard sprintgate_alloc_hooks_active() == 1 else {
    print("error: malloc hooks are not active; the counts would be meaningless")
    exit(2)
}

var measured: [String: Int64] = ["detector.process.per_frame": 0, "detector.process.total": 0]
var frames = 0

/// Allocations while the detector processes one frame.
func allocations(_ detector: inout PhotoFinishDetector, _ view: FrameView, _ result: inout DetectionSet) -> Int64 {
    sprintgate_alloc_count_begin()
    detector.process(view, into: &result)
    return sprintgate_alloc_count_end()
}

/// Adds one run's counts to the measured totals and prints its line.
@MainActor
func record(_ name: String, frames n: Int, total: Int64, worst: Int64) {
    measured["detector.process.total"]! += total
    measured["detector.process.per_frame"] = max(measured["detector.process.per_frame"]!, worst)
    print("\(name): \(n) frames, \(total) allocations, worst frame \(worst)")
}
for name in SceneCatalog.all {
    guard let spec = SceneCatalog.scene(name, fps: 120, variant: 1) else { continue }
    let w = spec.width, h = spec.height
    let renderer = SceneRenderer(spec: spec)
    let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: w * h)
    var detector = PhotoFinishDetector(config: detectorConfig(for: spec), inputWidth: w, inputHeight: h)
    var result = DetectionSet()
    var total: Int64 = 0
    var worst: Int64 = 0
    for i in 0..<spec.frameCount {
        renderer.render(frame: i, into: buffer)
        let view = FrameView(base: UnsafeRawPointer(buffer.baseAddress!), width: w, height: h, bytesPerRow: w,
                             format: .gray8, sequence: UInt64(i),
                             timestamp: MonotonicInstant(seconds: spec.frameTime(i)))
        let n = allocations(&detector, view, &result)
        total += n
        worst = max(worst, n)
        frames += 1
    }
    buffer.deallocate()
    record(name, frames: spec.frameCount, total: total, worst: worst)
}

// Real footage, when the development set is beside the project: real scenes take branches
// synthetic ones do not (many bodies and parts, a leaning trunk, a sun flare).
let realClip = "../shared/footage/sports2d_demo/sports2d_demo_320x180.raw.gz"
if FileManager.default.fileExists(atPath: realClip) {
    for gateX in [40.5, 88.5, 160.5, 240.5] {
        var config = DetectorConfig(gateX: gateX)
        config.minCrossingHeight = 0.08
        var detector = PhotoFinishDetector(config: config, inputWidth: 320, inputHeight: 180)
        var result = DetectionSet()
        var total: Int64 = 0, worst: Int64 = 0, n = 0
        let clip = try ClipReader(path: realClip, size: (320, 180), fps: 30)
        while try clip.next() {
            let view = FrameView(base: UnsafeRawPointer(clip.luma.baseAddress!), width: 320, height: 180, bytesPerRow: 320,
                                 format: .gray8, sequence: UInt64(n), timestamp: MonotonicInstant(seconds: Double(n) / 30))
            let c = allocations(&detector, view, &result)
            total += c
            worst = max(worst, c)
            n += 1
            frames += 1
        }
        record("sports2d_demo (real) gate x \(gateX)", frames: n, total: total, worst: worst)
    }
} else {
    print("real footage: \(realClip) not found; synthetic scenes only")
}

var failed = false
for (key, value) in measured.sorted(by: { $0.key < $1.key }) {
    guard let budget = budgets[key] else {
        print("FAIL \(key): no budget in \(budgetPath)")
        failed = true
        continue
    }
    let ok = value <= Int64(budget)
    failed = failed || !ok
    print("\(ok ? "ok  " : "FAIL") \(key): \(value) (budget \(budget))")
}
print("\(frames) frames checked")
exit(failed ? 1 : 0)
