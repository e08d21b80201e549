// SPDX-License-Identifier: Apache-2.0
// Weighted least-squares fit of offset against local time, with a runs test on residuals.

public import GateCore

/// Offset and frequency of a peer's clock from the recent filtered samples, as chrony's
/// `sourcestats`: a weighted straight-line fit of offset (`peer − local`) against local
/// time, whose window shrinks (oldest samples dropped) when the residuals' signs come in
/// too few runs for a straight line to be the right model (the frequency wandered).
///
/// The slope (frequency) has a Gaussian prior centred on zero with standard deviation
/// `Configuration.frequencyPrior`, so that a burst of samples a fraction of a second apart
/// does not produce a wild frequency that extrapolates into milliseconds of error.
///
/// Storage is a fixed ring allocated in `init`; `add` and the queries allocate nothing.
public struct Regression: Sendable {
    /// Tuning of the fit.
    public struct Configuration: Sendable, Hashable {
        /// Samples kept at most. Why 128: at one admitted sample every few seconds it spans
        /// a few minutes, over which a Pi's crystal is linear (the runs test shortens it
        /// when not); twice chrony's 64 because our samples are noisier than a wired NTP
        /// server's, and in simulation it cut the 95th-percentile error by a fifth.
        public var capacity: Int = 128
        /// Samples never dropped by the runs test. Why 6: fewer leave the frequency to the
        /// prior and the residual scale to chance.
        public var minimumSamples: Int = 6
        /// Samples before the runs test is applied at all. Why 8: below it the test cannot
        /// reject anything at the chosen level.
        public var runsTestMinimum: Int = 8
        /// One standard deviation of the prior on the frequency, dimensionless. Why 100 ppm:
        /// two crystals of ±50 ppm tolerance, the usual rating, differ by at most that.
        public var frequencyPrior: Double = 100e-6
        /// How many standard deviations below the expected number of runs fail the test.
        /// Why 2.33: a 1 % one-sided level, so a linear clock loses its window rarely.
        public var runsCriticalZ: Double = 2.33

        public init() {}
    }

    /// The current fit.
    public struct Fit: Sendable, Hashable {
        /// Local instant the fit is centred on (the weighted mean time of its samples).
        public var referenceTime: MonotonicInstant
        /// Offset `peer − local` at `referenceTime`, nanoseconds (a Double: use
        /// `Regression.offset(at:)` for nanosecond resolution on large offsets).
        public var offsetNanoseconds: Double
        /// Rate of change of the offset, dimensionless (1e-6 = 1 ppm; positive: the peer's
        /// clock runs fast against ours).
        public var frequency: Double
        /// One-sigma error of `offsetNanoseconds`, nanoseconds.
        public var offsetError: Double
        /// One-sigma error of `frequency`, dimensionless.
        public var frequencyError: Double
        /// Samples in the fit.
        public var samples: Int
        /// Local instant of the newest sample.
        public var newestSample: MonotonicInstant
        /// Smallest round-trip delay among the samples, nanoseconds.
        public var minimumDelayNanoseconds: Double
    }

    public let configuration: Configuration
    // Ring storage; index `(start + i) % capacity` is the i-th oldest sample.
    private var xs: [Double]  // seconds since `origin`
    private var ys: [Double]  // nanoseconds of offset minus `baseOffset`
    private var ss: [Double]  // sigma given with the sample, ns
    private var ds: [Double]  // round-trip delay, ns
    private var start = 0
    public private(set) var count = 0
    private var origin: Int64 = 0
    private var baseOffset: Int64 = 0
    // The fit's centre in the relative units: seconds since `origin`, ns above `baseOffset`.
    private var centreX = 0.0
    private var centreOffset = 0.0
    // Of the chosen fit, for `asymmetryBound(at:)`: total weight, slope denominator
    // (weighted spread of times plus the prior's precision), smallest delay.
    private var fitWeight = 1.0
    private var fitSlopeDenominator = 1.0
    private var fitMinDelay = 0.0
    /// The fit of the samples currently held, or nil with none.
    public private(set) var fit: Fit?
    /// Samples dropped because the runs test found the model no longer linear.
    public private(set) var droppedByRunsTest: UInt64 = 0

    /// Creates an empty regression; capacity and minimums are raised to workable values.
    public init(configuration: Configuration = Configuration()) {
        var c = configuration
        c.capacity = max(3, c.capacity)
        c.minimumSamples = min(max(3, c.minimumSamples), c.capacity)
        c.runsTestMinimum = max(c.runsTestMinimum, c.minimumSamples + 1)
        if !(c.frequencyPrior > 0 && c.frequencyPrior.isFinite) { c.frequencyPrior = 100e-6 }
        if !c.runsCriticalZ.isFinite { c.runsCriticalZ = 2.33 }
        self.configuration = c
        xs = Array(repeating: 0, count: c.capacity)
        ys = xs
        ss = xs
        ds = xs
    }

    /// Adds a filtered sample at its local midpoint and refits.
    public mutating func add(_ s: FilteredSample) {
        add(at: s.sample.localMidpoint, offsetNanoseconds: s.sample.offsetNanoseconds,
            sigmaNanoseconds: s.sigmaNanoseconds, delayNanoseconds: s.sample.delayNanoseconds)
    }

    /// Adds one point: offset `peer − local` (ns) measured at local instant `t`, with a
    /// one-sigma error (ns, values below 1 ns are taken as 1 ns) and the round trip it came
    /// from, and refits. A point older than the newest held is accepted (the fit does not
    /// depend on order, but the runs test then judges it by its position in arrival order).
    public mutating func add(at t: MonotonicInstant, offsetNanoseconds: Int64, sigmaNanoseconds: Double,
                             delayNanoseconds: Int64) {
        if count == 0 {
            origin = t.nanoseconds
            baseOffset = offsetNanoseconds
        }
        let capacity = xs.count
        if count == capacity {
            start = (start + 1) % capacity
            count -= 1
        }
        let i = (start + count) % capacity
        xs[i] = Double(t.nanoseconds &- origin) * 1e-9
        ys[i] = Double(offsetNanoseconds &- baseOffset)
        ss[i] = sigmaNanoseconds.isFinite ? max(1, sigmaNanoseconds) : 1e9
        ds[i] = Double(max(0, delayNanoseconds))
        count += 1
        refit()
    }

    /// Forgets every sample (after a peer restart or a step of either clock).
    public mutating func reset() {
        start = 0
        count = 0
        fit = nil
    }

    /// The offset `peer − local` predicted at local instant `t`, nanoseconds, with its
    /// one-sigma error (regression error at `t`, including the frequency error times the
    /// distance from the fit's centre). Nil before the first sample.
    public func offset(at t: MonotonicInstant) -> (nanoseconds: Int64, sigma: Double)? {
        guard let f = fit else { return nil }
        // Relative to the integer base offset, so that offsets of months of uptime keep
        // nanosecond resolution.
        let dx = Double(t.nanoseconds &- origin) * 1e-9 - centreX
        let relative = centreOffset + f.frequency * 1e9 * dx
        let fe = f.frequencyError * 1e9 * dx
        return (baseOffset &+ Int64(saturating: relative), (f.offsetError * f.offsetError + fe * fe).squareRoot())
    }

    /// A bound on the error at local instant `t` that path asymmetry can cause, nanoseconds;
    /// nil before the first sample.
    ///
    /// Each sample's offset is off the truth by at most half its own round trip (the
    /// packet's time on the wire split unevenly between the two ways), whatever the split.
    /// The prediction at `t` is a weighted sum of the samples' offsets, so its error from
    /// asymmetry is at most the sum of |weight| × half-delay: that holds when the split
    /// changes from one exchange to the next (a relay or a loaded host delaying one way
    /// more at times), which half the smallest delay alone does not cover. It assumes the
    /// clocks are linear over the window; wander is for the one-sigma error.
    public func asymmetryBound(at t: MonotonicInstant) -> Double? {
        guard fit != nil else { return nil }
        let dx = Double(t.nanoseconds &- origin) * 1e-9 - centreX
        let capacity = xs.count
        var bound = 0.0
        for j in 0..<count {
            let i = (start + j) % capacity
            let w = weight(i, minDelay: fitMinDelay)
            let influence = w / fitWeight + dx * w * (xs[i] - centreX) / fitSlopeDenominator
            bound += abs(influence) * ds[i] / 2
        }
        return bound
    }

    /// The runs test on residual signs (Wald–Wolfowitz): true when `runs` is not
    /// significantly below what `positives` and `negatives` signs in random order give.
    public static func runsTestPasses(runs: Int, positives: Int, negatives: Int, criticalZ: Double) -> Bool {
        let n = Double(positives + negatives)
        guard positives > 0, negatives > 0, n > 1 else { return positives + negatives > 0 ? false : true }
        let np = Double(positives), nn = Double(negatives)
        let mean = 2 * np * nn / n + 1
        let variance = (mean - 1) * (mean - 2) / (n - 1)
        guard variance > 0 else { return Double(runs) >= mean }
        return Double(runs) >= mean - criticalZ * variance.squareRoot()
    }

    // MARK: - Fitting

    private struct Solution {
        var xMean: Double, a: Double, b: Double, varA: Double, varB: Double
        var runs: Int, positives: Int, negatives: Int, exact: Bool
        var minDelay: Double, newestX: Double
        var sw: Double, slopeDenominator: Double
    }

    private mutating func refit() {
        guard count > 0 else { fit = nil; return }
        var skip = 0
        var chosen = solve(skipping: 0)
        if count >= configuration.runsTestMinimum && !passes(chosen) {
            // Drop the oldest samples in eighths until the rest look linear (chrony's
            // find_best_start), keeping at least `minimumSamples`.
            let step = max(1, count / 8)
            var k = step
            var found = false
            while count - k >= configuration.minimumSamples {
                let s = solve(skipping: k)
                if passes(s) {
                    skip = k
                    chosen = s
                    found = true
                    break
                }
                k += step
            }
            if !found {
                skip = count - configuration.minimumSamples
                chosen = solve(skipping: skip)
            }
        }
        if skip > 0 {
            start = (start + skip) % xs.count
            count -= skip
            droppedByRunsTest += UInt64(skip)
        }
        centreX = chosen.xMean
        centreOffset = chosen.a
        fitWeight = chosen.sw
        fitSlopeDenominator = chosen.slopeDenominator
        fitMinDelay = chosen.minDelay
        fit = Fit(
            referenceTime: MonotonicInstant(nanoseconds: origin &+ Int64(saturating: chosen.xMean * 1e9)),
            offsetNanoseconds: Double(baseOffset) + chosen.a,
            frequency: chosen.b * 1e-9,
            offsetError: chosen.varA.squareRoot(),
            frequencyError: chosen.varB.squareRoot() * 1e-9,
            samples: count,
            newestSample: MonotonicInstant(nanoseconds: origin &+ Int64(saturating: chosen.newestX * 1e9)),
            minimumDelayNanoseconds: chosen.minDelay)
    }

    private func passes(_ s: Solution) -> Bool {
        s.exact || Self.runsTestPasses(runs: s.runs, positives: s.positives, negatives: s.negatives,
                                       criticalZ: configuration.runsCriticalZ)
    }

    /// The weight of sample `i` in a fit whose smallest delay is `minDelay`: its given sigma,
    /// raised to what its delay above `minDelay` allows (a sample admitted early, against a
    /// window minimum that later fell, loses weight as better samples arrive).
    @inline(__always)
    private func weight(_ i: Int, minDelay: Double) -> Double {
        let byDelay = (ds[i] - minDelay) * SampleFilter.excessToSigma
        let sigma = max(ss[i], byDelay)
        return 1 / (sigma * sigma)
    }

    /// Weighted fit of the samples after the `skip` oldest.
    private func solve(skipping skip: Int) -> Solution {
        let capacity = xs.count
        let n = count - skip
        var minDelay = Double.infinity, newestX = -Double.infinity
        for j in skip..<count {
            let i = (start + j) % capacity
            minDelay = min(minDelay, ds[i])
            newestX = max(newestX, xs[i])
        }
        var sw = 0.0, swx = 0.0, swy = 0.0
        for j in skip..<count {
            let i = (start + j) % capacity
            let w = weight(i, minDelay: minDelay)
            sw += w
            swx += w * xs[i]
            swy += w * ys[i]
        }
        let xMean = swx / sw, yMean = swy / sw
        var sxx = 0.0, sxy = 0.0
        for j in skip..<count {
            let i = (start + j) % capacity
            let dx = xs[i] - xMean
            let w = weight(i, minDelay: minDelay)
            sxx += w * dx * dx
            sxy += w * dx * (ys[i] - yMean)
        }
        let priorSigma = configuration.frequencyPrior * 1e9  // ns per s
        let lambda = 1 / (priorSigma * priorSigma)
        let b = sxy / (sxx + lambda)
        let a = yMean
        // The runs test judges the residuals of the plain least-squares line: the prior's
        // pull on the slope leaves residuals that trend with time, which are not a sign of
        // a non-linear clock.
        let bPlain = sxx > 0 ? sxy / sxx : b
        var chi2 = 0.0, rms = 0.0
        var runs = 0, positives = 0, negatives = 0
        var lastSign = 0
        for j in skip..<count {
            let i = (start + j) % capacity
            let r = ys[i] - a - b * (xs[i] - xMean)
            chi2 += weight(i, minDelay: minDelay) * r * r
            let plain = ys[i] - a - bPlain * (xs[i] - xMean)
            rms += plain * plain
            let sign = plain >= 0 ? 1 : -1
            if sign > 0 { positives += 1 } else { negatives += 1 }
            if sign != lastSign { runs += 1 }
            lastSign = sign
        }
        // Residuals below a nanosecond are rounding: the data are exactly linear and the
        // runs test has nothing to judge.
        let exact = (rms / Double(n)).squareRoot() < 1
        let scale = n > 2 ? max(1, chi2 / Double(n - 2)) : 1
        return Solution(xMean: xMean, a: a, b: b, varA: scale / sw, varB: scale / (sxx + lambda),
                        runs: runs, positives: positives, negatives: negatives, exact: exact,
                        minDelay: minDelay, newestX: newestX, sw: sw, slopeDenominator: sxx + lambda)
    }
}
