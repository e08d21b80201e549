// SPDX-License-Identifier: Apache-2.0
// Accuracy and cost benchmark of the photo-finish detector on synthetic scenes.
//
// Usage: swift run -c release DetectorBench [--variants N] [--fps 30,60,120,240] [--scene NAME] [--verbose]

import GateCore
import Detector
import GateSim
#if canImport(Glibc)
import Glibc
#endif

var variants = 8
var fpsList: [Double] = [30, 60, 120, 240]
var only: String?
var verbose = false
var costOnly = false
var args = CommandLine.arguments.dropFirst()
while let a = args.popFirst() {
    switch a {
    case "--variants": variants = Int(args.popFirst() ?? "") ?? variants
    case "--fps": fpsList = (args.popFirst() ?? "").split(separator: ",").compactMap { Double($0) }
    case "--scene": only = args.popFirst()
    case "--verbose": verbose = true
    case "--cost-only": costOnly = true
    default:
        print("usage: DetectorBench [--variants N] [--fps LIST] [--scene NAME] [--verbose] [--cost-only]")
        exit(2)
    }
}

func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : String(repeating: " ", count: n - s.count) + s }
func ms(_ s: Double) -> String { ClipCrossing.fixed(s * 1000, 2) }

if !costOnly {
    print("Accuracy: \(variants) variants per scene; timed scenes: \(SceneCatalog.timed.joined(separator: ", "))")
    print("quiet scenes (must not trigger): \(SceneCatalog.quiet.joined(separator: ", "))")
    print("")
    print("  fps | crossings | mean_ms |  p95_ms |  max_ms | misses | false | quiet_false | shake_mean_ms")
    for fps in fpsList {
        var timed = SceneScore()
        var quietFalse = 0
        var shake = SceneScore()
        for name in SceneCatalog.all where only == nil || only == name {
            for v in 0..<variants {
                guard let spec = SceneCatalog.scene(name, fps: fps, variant: v) else { continue }
                let found = replayScene(spec)
                let s = score(detected: found, expected: spec.expectedCrossings)
                if SceneCatalog.quiet.contains(name) {
                    quietFalse += s.falseTriggers
                } else if SceneCatalog.extra.contains(name) {
                    shake.add(s)
                } else {
                    timed.add(s)
                }
                if verbose {
                    let errs = s.errors.map { ms($0) }.joined(separator: " ")
                    print("    \(name) v\(v) @\(Int(fps)): errors_ms [\(errs)] misses \(s.misses) false \(s.falseTriggers)")
                }
            }
        }
        let st = absStats(timed.errors)
        print("\(pad(String(Int(fps)), 5)) | \(pad(String(timed.errors.count), 9)) | \(pad(ms(st.mean), 7)) | \(pad(ms(st.p95), 7)) | \(pad(ms(st.max), 7)) | \(pad(String(timed.misses), 6)) | \(pad(String(timed.falseTriggers), 5)) | \(pad(String(quietFalse), 11)) | \(pad(ms(absStats(shake.errors).mean), 13))")
        fflush(nil)
    }
    print("")
}

// Cost: detector per frame against one plain read pass over the same input frame.
let spec = SceneCatalog.scene("sprint", fps: 120)!
let renderer = SceneRenderer(spec: spec)
let frameCount = 96
let frameBytes = spec.width * spec.height
let frames = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: frameBytes * frameCount)
for i in 0..<frameCount {
    renderer.render(frame: i + 40, into: UnsafeMutableBufferPointer(rebasing: frames[(i * frameBytes)..<((i + 1) * frameBytes)]))
}

func now() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

@inline(never)
func readPass(_ p: UnsafePointer<UInt8>, _ n: Int) -> UInt64 {
    var s: UInt64 = 0
    for i in 0..<n { s &+= UInt64(p[i]) }
    return s
}

var detector = PhotoFinishDetector(config: detectorConfig(for: spec), inputWidth: spec.width, inputHeight: spec.height)
var result = DetectionSet()
var seq: UInt64 = 0
var sink: UInt64 = 0
var readTimes: [Double] = []
var detTimes: [Double] = []
let rounds = 15
for _ in 0..<rounds {
    // One round: every frame once through each, interleaved so both see the same load.
    let a = now()
    for i in 0..<frameCount { sink &+= readPass(frames.baseAddress! + i * frameBytes, frameBytes) }
    let b = now()
    for i in 0..<frameCount {
        let view = FrameView(base: UnsafeRawPointer(frames.baseAddress! + i * frameBytes), width: spec.width,
                             height: spec.height, bytesPerRow: spec.width, format: .gray8, sequence: seq,
                             timestamp: MonotonicInstant(nanoseconds: Int64(seq) * 8_333_333))
        detector.process(view, into: &result)
        seq += 1
    }
    let c = now()
    readTimes.append(Double(b - a) / Double(frameCount))
    detTimes.append(Double(c - b) / Double(frameCount))
}
readTimes.sort()
detTimes.sort()
let readMed = readTimes[rounds / 2], detMed = detTimes[rounds / 2]
print("Cost per \(spec.width)x\(spec.height) gray frame (work image \(detector.geometry.width)x\(detector.geometry.height)), median of \(rounds) rounds of \(frameCount) frames:")
print("  read pass  \(ClipCrossing.fixed(readMed / 1000, 1)) us")
print("  detector   \(ClipCrossing.fixed(detMed / 1000, 1)) us")
print("  ratio      \(ClipCrossing.fixed(detMed / readMed, 2)) x one read pass   (sink \(sink % 10))")
