// SPDX-License-Identifier: Apache-2.0
// Synthetic standing starts with exact truth, and a receiver sampling them.

import Foundation
import GateCore
import GateSim
import GPSTiming

/// A standing start: acceleration builds up over `ramp` seconds to `a0` (the clutch
/// biting, the tyres taking the torque), then falls with speed towards `vmax` (drag).
/// Truth is integrated in 0.1 ms steps.
struct Drive {
    var a0: Double
    var ramp: Double
    var vmax: Double
    var seconds: Double = 25

    /// (time since motion began, speed, distance) every millisecond.
    func truth() -> [(t: Double, v: Double, d: Double)] {
        var out: [(t: Double, v: Double, d: Double)] = [(0, 0, 0)]
        var v = 0.0, d = 0.0
        let step = 0.0001
        var n = 0
        while Double(n) * step < seconds {
            let tau = Double(n) * step
            let a = a0 * (ramp > 0 ? min(1, tau / ramp) : 1) * max(0, 1 - v / vmax)
            // Midpoint step.
            let vm = v + a * step / 2
            let am = a0 * (ramp > 0 ? min(1, (tau + step / 2) / ramp) : 1) * max(0, 1 - vm / vmax)
            d += vm * step
            v += am * step
            n += 1
            if n % 10 == 0 { out.append((Double(n) * step, v, d)) }
        }
        return out
    }
}

/// Exact truth of a drive's milestones.
struct Truth {
    let samples: [(t: Double, v: Double, d: Double)]
    init(_ drive: Drive) { samples = drive.truth() }

    private func at(_ key: (Double, Double, Double) -> Double, _ value: Double) -> Double? {
        guard let i = samples.firstIndex(where: { key($0.t, $0.v, $0.d) >= value }), i > 0 else { return nil }
        let a = samples[i - 1], b = samples[i]
        let ka = key(a.t, a.v, a.d), kb = key(b.t, b.v, b.d)
        return a.t + (value - ka) / (kb - ka) * (b.t - a.t)
    }
    func time(speed: Double) -> Double? { at({ _, v, _ in v }, speed) }
    func time(distance: Double) -> Double? { at({ _, _, d in d }, distance) }
    func speed(at t: Double) -> Double {
        let i = min(samples.count - 2, max(0, Int(t * 1000)))
        let a = samples[i], b = samples[i + 1]
        return a.v + (b.v - a.v) * (t - a.t) / (b.t - a.t)
    }
    func distance(at t: Double) -> Double {
        let i = min(samples.count - 2, max(0, Int(t * 1000)))
        let a = samples[i], b = samples[i + 1]
        return a.d + (b.d - a.d) * (t - a.t) / (b.t - a.t)
    }
    /// Milestone time from the start: the first movement, or with rollout the moment 1 ft is covered.
    func seconds(_ m: Milestone, rollout: Bool) -> Double? {
        let origin = rollout ? time(distance: Units.rollout)! : 0
        if let s = m.speed { return time(speed: s).map { $0 - origin } }
        return time(distance: m.distance! + (rollout ? Units.rollout : 0)).map { $0 - origin }
    }
    func trap(_ m: Milestone, rollout: Bool) -> Double? {
        let end = m.distance! + (rollout ? Units.rollout : 0)
        guard let b = time(distance: end), let a = time(distance: end - Units.trap) else { return nil }
        return Units.trap / (b - a)
    }
}

/// A receiver sampling a drive at `rate` Hz: `still` seconds at rest first, the first fix
/// `phase` of an interval after the start of that; speeds with Gaussian noise of `sigma`
/// (reported as eps = 1.96 σ), never below zero.
func receiver(_ truth: Truth, rate: Double, phase: Double, still: Double = 3, sigma: Double = 0, eph: Double = 3,
              seed: UInt64 = 1) -> (fixes: [GPSFix], launch: GPSTime) {
    var noise = SplitMix64(seed: seed)
    let launch = GPSTime(seconds: 1_800_000_000 + still)
    var fixes: [GPSFix] = []
    var t = phase / rate
    let end = still + truth.samples.last!.t
    while t < end {
        let tau = t - still
        let v = tau <= 0 ? 0 : truth.speed(at: tau)
        let measured = sigma > 0 ? abs(v + sigma * noise.normal()) : v
        fixes.append(GPSFix(time: GPSTime(seconds: 1_800_000_000 + t), mode: .threeD, speed: measured,
                            speedError: sigma > 0 ? 1.96 * sigma : nil, horizontalError: eph))
        t += 1 / rate
    }
    return (fixes, launch)
}
