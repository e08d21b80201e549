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
        sprintgate_alloc_count_begin()
        detector.process(view, into: &result)
        let n = sprintgate_alloc_count_end()
        total += n
        worst = max(worst, n)
        frames += 1
    }
    buffer.deallocate()
    measured["detector.process.total"]! += total
    measured["detector.process.per_frame"] = max(measured["detector.process.per_frame"]!, worst)
    print("\(name): \(spec.frameCount) frames, \(total) allocations, worst frame \(worst)")
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
