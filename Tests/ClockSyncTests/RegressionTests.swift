// SPDX-License-Identifier: Apache-2.0
// The weighted fit on exact data, its weights, its frequency prior and its runs test.

import ClockSync
import GateCore
import Testing

@Suite struct RegressionTests {
    /// Adds `count` points of an exact line: offset = base + frequency × (t − t0).
    func line(_ r: inout Regression, count: Int, base: Int64, frequency: Double, every: Int64 = 1_000_000_000,
              sigma: Double = 1_000, t0: Int64 = 5_000_000_000) {
        for i in 0..<count {
            let t = t0 + Int64(i) * every
            let off = base + Int64((frequency * Double(t - t0)).rounded())
            r.add(at: MonotonicInstant(nanoseconds: t), offsetNanoseconds: off, sigmaNanoseconds: sigma, delayNanoseconds: 100_000)
        }
    }

    @Test func exactLineGivesExactOffsetAndFrequency() throws {
        var r = Regression()
        line(&r, count: 20, base: 3_000_000_000, frequency: 40e-6)
        let fit = try #require(r.fit)
        #expect(fit.samples == 20)
        #expect(abs(fit.frequency - 40e-6) < 1e-9)
        // At t0 + 30 s the offset is 3 s + 1.2 ms.
        let at = try #require(r.offset(at: MonotonicInstant(nanoseconds: 35_000_000_000)))
        #expect(abs(at.nanoseconds - 3_001_200_000) < 2)
        // Residuals are zero, so the errors are those of the stated sigmas (1 µs).
        #expect(fit.offsetError <= 1_000 / 20.0.squareRoot() + 1)
        #expect(fit.minimumDelayNanoseconds == 100_000)
        #expect(fit.newestSample == MonotonicInstant(nanoseconds: 24_000_000_000))
    }

    @Test func singleSampleHasPriorFrequencyError() throws {
        var r = Regression()
        r.add(at: MonotonicInstant(nanoseconds: 0), offsetNanoseconds: -7, sigmaNanoseconds: 50, delayNanoseconds: 10)
        let fit = try #require(r.fit)
        #expect(fit.offsetNanoseconds == -7)
        #expect(fit.frequency == 0)
        #expect(abs(fit.frequencyError - r.configuration.frequencyPrior) < 1e-12)
        // 10 s later the frequency prior (100 ppm) dominates: 1 ms.
        let later = try #require(r.offset(at: MonotonicInstant(nanoseconds: 10_000_000_000)))
        #expect(abs(later.sigma - 1_000_000) < 100)
    }

    @Test func weightsFavourLowNoiseSamples() throws {
        var r = Regression()
        // Two precise samples at offset 0 and one noisy one at +1 ms, same instant.
        r.add(at: MonotonicInstant(nanoseconds: 0), offsetNanoseconds: 0, sigmaNanoseconds: 10_000, delayNanoseconds: 1_000_000)
        r.add(at: MonotonicInstant(nanoseconds: 0), offsetNanoseconds: 0, sigmaNanoseconds: 10_000, delayNanoseconds: 1_000_000)
        r.add(at: MonotonicInstant(nanoseconds: 0), offsetNanoseconds: 1_000_000, sigmaNanoseconds: 1_000_000, delayNanoseconds: 1_000_000)
        let fit = try #require(r.fit)
        // Weighted mean: 1e6 × (1/1e12) / (2/1e8 + 1/1e12) ≈ 50 ns.
        #expect(abs(fit.offsetNanoseconds - 1_000_000 / (2 * 10_000.0 + 1)) < 1)
    }

    @Test func sampleFarAboveTheMinimumDelayLosesWeight() throws {
        var r = Regression()
        r.add(at: MonotonicInstant(nanoseconds: 0), offsetNanoseconds: 1_000_000, sigmaNanoseconds: 1_000, delayNanoseconds: 9_000_000)
        r.add(at: MonotonicInstant(nanoseconds: 0), offsetNanoseconds: 0, sigmaNanoseconds: 1_000, delayNanoseconds: 5_000_000)
        let fit = try #require(r.fit)
        // The first sample's 4 ms of excess delay make it ~1155 µs of sigma against 1 µs.
        #expect(abs(fit.offsetNanoseconds) < 1)
    }

    @Test func frequencyPriorTamesAShortBurst() throws {
        var r = Regression()
        // 1 ms of noise across 100 ms would be 10 000 ppm; the prior keeps it near 100 ppm.
        r.add(at: MonotonicInstant(nanoseconds: 0), offsetNanoseconds: 0, sigmaNanoseconds: 500_000, delayNanoseconds: 5_000_000)
        r.add(at: MonotonicInstant(nanoseconds: 100_000_000), offsetNanoseconds: 1_000_000, sigmaNanoseconds: 500_000, delayNanoseconds: 5_000_000)
        let fit = try #require(r.fit)
        #expect(abs(fit.frequency) < 200e-6)
        #expect(fit.frequencyError <= r.configuration.frequencyPrior)
    }

    @Test func capacityIsFixed() throws {
        var c = Regression.Configuration()
        c.capacity = 10
        var r = Regression(configuration: c)
        line(&r, count: 25, base: 0, frequency: -20e-6)
        #expect(r.count == 10)
        let fit = try #require(r.fit)
        #expect(fit.samples == 10)
        #expect(abs(fit.frequency + 20e-6) < 1e-9)
        r.reset()
        #expect(r.fit == nil)
        #expect(r.count == 0)
    }

    @Test func runsTestStatistic() {
        // 20 residuals in 2 runs (10 +, then 10 −) are far too few: a curve, not noise.
        #expect(!Regression.runsTestPasses(runs: 2, positives: 10, negatives: 10, criticalZ: 2.33))
        // Alternating signs or the expected 11 runs pass.
        #expect(Regression.runsTestPasses(runs: 20, positives: 10, negatives: 10, criticalZ: 2.33))
        #expect(Regression.runsTestPasses(runs: 11, positives: 10, negatives: 10, criticalZ: 2.33))
        // 6 runs: mean 11, sd ≈ 2.18, 11 − 2.33 × 2.18 ≈ 5.9.
        #expect(Regression.runsTestPasses(runs: 6, positives: 10, negatives: 10, criticalZ: 2.33))
        #expect(!Regression.runsTestPasses(runs: 5, positives: 10, negatives: 10, criticalZ: 2.33))
        // All of one sign cannot come from a fit with an intercept.
        #expect(!Regression.runsTestPasses(runs: 1, positives: 8, negatives: 0, criticalZ: 2.33))
    }

    @Test func runsTestShrinksTheWindowAfterAFrequencyChange() throws {
        var r = Regression()
        // 40 s flat, then the peer's frequency jumps to +50 ppm for 40 s; 10 µs noise of
        // alternating sign keeps each straight part random-looking.
        let t0: Int64 = 1_000_000_000_000
        var off = 0.0
        for i in 0..<80 {
            if i >= 40 { off += 50e-6 * 1e9 }
            let noise: Double = i % 2 == 0 ? 10_000 : -10_000
            r.add(at: MonotonicInstant(nanoseconds: t0 + Int64(i) * 1_000_000_000),
                  offsetNanoseconds: Int64(off + noise), sigmaNanoseconds: 10_000, delayNanoseconds: 100_000)
        }
        let fit = try #require(r.fit)
        #expect(r.droppedByRunsTest > 0)
        #expect(fit.samples < 60)
        #expect(abs(fit.frequency - 50e-6) < 3e-6)
    }
}
