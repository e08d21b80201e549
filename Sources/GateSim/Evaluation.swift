// SPDX-License-Identifier: Apache-2.0
// Compares detected crossings with a scene's ground truth.

import GateCore

/// How a run of the detector over a scene compares with the truth.
public struct SceneScore: Sendable {
    /// Signed timing errors (detected − true) in seconds, one per matched crossing.
    public var errors: [Double] = []
    /// True crossings with no detection within the tolerance.
    public var misses = 0
    /// Detections that match no true crossing.
    public var falseTriggers = 0

    public init() {}

    public mutating func add(_ other: SceneScore) {
        errors += other.errors
        misses += other.misses
        falseTriggers += other.falseTriggers
    }
}

/// Matches each true crossing to the nearest unused detection of the same direction
/// within `tolerance` seconds.
public func score(detected: [ClipCrossing], expected: [ExpectedCrossing], tolerance: Double = 0.06) -> SceneScore {
    var s = SceneScore()
    var used = [Bool](repeating: false, count: detected.count)
    for e in expected {
        var best = -1
        var bestErr = tolerance
        for (i, d) in detected.enumerated() where !used[i] && d.direction == e.direction {
            let err = abs(d.time - e.time)
            if err <= bestErr { bestErr = err; best = i }
        }
        if best >= 0 {
            used[best] = true
            s.errors.append(detected[best].time - e.time)
        } else {
            s.misses += 1
        }
    }
    s.falseTriggers = used.filter { !$0 }.count
    return s
}

/// Mean and 95th percentile of absolute values, in the input's unit.
public func absStats(_ values: [Double]) -> (mean: Double, p95: Double, max: Double) {
    guard !values.isEmpty else { return (0, 0, 0) }
    let a = values.map { abs($0) }.sorted()
    let mean = a.reduce(0, +) / Double(a.count)
    let idx = min(a.count - 1, Int((0.95 * Double(a.count - 1)).rounded(.up)))
    return (mean, a[idx], a[a.count - 1])
}
