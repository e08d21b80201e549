// SPDX-License-Identifier: Apache-2.0
// When a standing start began, from the first fixes of the move.

import Glibc

/// Finds the instant motion began from the fixes around it. The launch is modelled as a
/// car's is: at rest until `t0`, then an acceleration that builds up linearly over `T`
/// seconds (the clutch biting, the tyres taking the torque) to a steady `a`, so the speed
/// is `a·τ²/(2T)` while it builds and `a·(τ − T/2)` after (τ = t − t0); `T = 0` is a steady
/// pull. `t0` is searched in 1 ms steps from the first fix given (at most a second before
/// the first clearly moving one) to that one, and `T` in 10 ms steps up to 0.6 s, `a`
/// fitted by least squares for each; the fixes at rest before `t0` hold it back through
/// their residuals. Fitted on the fixes up to about 4 m/s, where drag has not yet changed
/// the acceleration. Times are seconds on any common origin.
public enum LaunchFit {
    public struct Estimate: Sendable, Hashable {
        /// The instant motion began.
        public var t0: Double
        /// The fitted acceleration at the first moving fix, m/s².
        public var acceleration: Double
        /// Root-mean-square residual of the fit, m/s.
        public var residual: Double
        /// The build-up's length, seconds.
        public var buildUp: Double
        /// One sigma of `t0`, seconds: half the span of starts whose best fit is within one
        /// σ² of the best (the fit's profile, Δχ² = 1), so it includes how much a longer
        /// build-up from an earlier start explains the same fixes.
        public var uncertainty: Double
    }

    /// The longest build-up considered, seconds.
    static let maxBuildUp = 0.6
    /// How long before the first clearly moving fix a start is searched, seconds.
    static let earliest = 1.0
    /// What a build-up costs in the fit, (m/s)² per s²: a steady pull's fixes after its start
    /// fit a later build-up from an earlier start just as well, and between two such the
    /// shorter build-up is taken. Why this much: a 0.1 s build-up then weighs as a 1 cm/s
    /// residual on one fix, far below a receiver's Doppler noise, so the fixes decide
    /// whenever they can.
    static let buildUpCost = 0.01

    /// The fixes' own noise is taken as at least this, m/s: noise-free fixes (a simulation,
    /// or speeds rounded to a millimetre a second) then leave the best fit alone.
    static let noiseFloor = 0.0001
    /// The moving fixes it takes to average the fits rather than take the best.
    static let averagedFrom = 6

    /// `points`: fixes from a few at rest to the first moving ones, in order, at least three.
    /// `moving`: a speed no fix at rest reaches (m/s): `t0` is before the first fix above it.
    /// `noise`: the speeds' one-sigma noise, m/s (for the uncertainty).
    ///
    /// The start is not the best fit's but the average of every fit's start weighted by how
    /// likely its fixes are under the noise the best fit leaves (its residual per degree of
    /// freedom, at most `noise`): under Doppler noise the best fit jumps along the ridge of
    /// starts and build-ups that explain the fixes almost equally, and the average does
    /// not. With noise-free fixes, or fewer than `averagedFrom` moving ones, the best fit
    /// alone is taken, so a steady pull is still timed from its start (BENCHMARKS.md has
    /// both).
    public static func estimate(_ points: [(t: Double, v: Double)], moving: Double, noise: Double) -> Estimate? {
        guard points.count >= 3, let first = points.first,
              let firstMoving = points.first(where: { $0.v >= moving }) else { return nil }
        var best: Estimate?
        var bestCost = Double.infinity
        var profile: [(t0: Double, sse: Double)] = []
        // With only a few fixes after the start (the first found on a 10 Hz receiver, or a
        // 1 Hz one's) nearly every start searched fits, and the average would be the
        // middle of the search rather than anything the fixes say: the fits are kept to
        // be averaged only with more.
        let averaging = points.filter { $0.v >= moving }.count >= averagedFrom
        var fits: [(t0: Double, buildUp: Double, cost: Double)] = []
        // A start more than a second before the first moving fix would be a launch softer
        // than any car's (1 m/s² after the longest build-up): not searched.
        var t0 = max(first.t, firstMoving.t - earliest)
        if averaging { fits.reserveCapacity(Int((firstMoving.t - t0) / 0.001 + 2) * Int(maxBuildUp / 0.01 + 2)) }
        while t0 < firstMoving.t {
            var buildUp = 0.0, here = Double.infinity
            while buildUp <= maxBuildUp + 1e-9 {
                if let (a, sse) = fit(points, t0: t0, buildUp: buildUp) {
                    here = min(here, sse)
                    let cost = sse + buildUpCost * buildUp * buildUp
                    if averaging { fits.append((t0, buildUp, cost)) }
                    if cost < bestCost {
                        bestCost = cost
                        let tau = firstMoving.t - t0
                        best = Estimate(t0: t0, acceleration: buildUp > 0 ? a * min(1, tau / buildUp) : a,
                                        residual: (sse / Double(points.count)).squareRoot(), buildUp: buildUp, uncertainty: 0)
                    }
                }
                buildUp += 0.01
            }
            if here.isFinite { profile.append((t0, here)) }
            t0 += 0.001
        }
        guard var e = best, let leastSSE = profile.map(\.sse).min() else { return nil }
        // Four parameters: the start, the build-up, the acceleration and its fade.
        let variance = max(min(leastSSE / Double(max(points.count - 4, 1)), noise * noise), noiseFloor * noiseFloor)
        var weight = 0.0, start = 0.0, buildUp = 0.0
        for f in fits {
            let w = exp(-(f.cost - bestCost) / (2 * variance))
            weight += w
            start += w * f.t0
            buildUp += w * f.buildUp
        }
        if weight > 0 {
            e.t0 = start / weight
            e.buildUp = buildUp / weight
        }
        let within = profile.filter { $0.sse <= leastSSE + noise * noise }
        if let lo = within.first?.t0, let hi = within.last?.t0 { e.uncertainty = max(0.0005, (hi - lo) / 2) }
        return e
    }

    /// The speed shape for a unit acceleration, τ seconds after the start.
    @inline(__always) static func shape(_ tau: Double, buildUp: Double) -> Double {
        if tau <= 0 { return 0 }
        if tau < buildUp { return tau * tau / (2 * buildUp) }
        return tau - buildUp / 2
    }

    /// The second shape: the speed lost to an acceleration that falls in proportion to the
    /// time since the start (drag and gearing as the car gathers speed).
    @inline(__always) static func fade(_ tau: Double, buildUp: Double) -> Double {
        if tau <= 0 { return 0 }
        if tau < buildUp { return tau * tau * tau / (3 * buildUp) }
        return buildUp * buildUp / 3 + (tau * tau - buildUp * buildUp) / 2
    }

    /// Least squares of v = a·shape − f·fade for `t0` and `buildUp`: the acceleration at
    /// full build-up, and the squared residuals.
    static func fit(_ points: [(t: Double, v: Double)], t0: Double, buildUp: Double) -> (Double, Double)? {
        var s11 = 0.0, s12 = 0.0, s22 = 0.0, r1 = 0.0, r2 = 0.0, after = 0
        for p in points {
            let g = shape(p.t - t0, buildUp: buildUp), h = fade(p.t - t0, buildUp: buildUp)
            if g > 0 { after += 1 }
            s11 += g * g
            s12 += g * h
            s22 += h * h
            r1 += p.v * g
            r2 += p.v * h
        }
        guard after >= 3, s11 > 0 else { return nil }
        var a = max(0, r1 / s11), f = 0.0
        let det = s11 * s22 - s12 * s12
        if det > 1e-12 * s11 * s22 {
            let a2 = (r1 * s22 - r2 * s12) / det, f2 = -(s11 * r2 - s12 * r1) / det
            if a2 > 0 && f2 >= 0 { (a, f) = (a2, f2) }
        }
        var sse = 0.0
        for p in points {
            let e = p.v - (a * shape(p.t - t0, buildUp: buildUp) - f * fade(p.t - t0, buildUp: buildUp))
            sse += e * e
        }
        return (a, sse)
    }
}
