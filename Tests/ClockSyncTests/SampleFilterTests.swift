// SPDX-License-Identifier: Apache-2.0
// The delay filter: window minimum, discard ratio, weights.

import ClockSync
import GateCore
import Testing

/// An exchange at local time `at` (ns) with round-trip delay `delay` (ns), symmetric, peer
/// 1 s ahead.
func exchange(at t: Int64, delay: Int64, offset: Int64 = 1_000_000_000, turnaround: Int64 = 0) -> SyncSample {
    try! SyncSample(t1: MonotonicInstant(nanoseconds: t), t2: PeerInstant(nanoseconds: t + delay / 2 + offset),
                    t3: PeerInstant(nanoseconds: t + delay / 2 + offset + turnaround),
                    t4: MonotonicInstant(nanoseconds: t + delay + turnaround))
}

@Suite struct SampleFilterTests {
    @Test func keepsSamplesNearTheWindowMinimumAndDiscardsQueuedOnes() {
        var f = SampleFilter()
        #expect(f.minimumDelay == nil)
        #expect(f.admit(exchange(at: 0, delay: 10_000_000)) != nil)  // alone: it is the minimum
        #expect(f.admit(exchange(at: 1, delay: 5_000_000)) != nil)
        #expect(f.minimumDelay == .milliseconds(5))
        #expect(f.admit(exchange(at: 2, delay: 6_000_000)) != nil)  // 1.2 × 5 ms
        #expect(f.admit(exchange(at: 3, delay: 6_000_001)) == nil)
        #expect(f.admit(exchange(at: 4, delay: 12_000_000)) == nil)
        #expect(f.admitted == 3)
        #expect(f.discarded == 2)
    }

    @Test func oldMinimumLeavesTheWindow() {
        var c = SampleFilter.Configuration()
        c.window = 4
        var f = SampleFilter(configuration: c)
        _ = f.admit(exchange(at: 0, delay: 1_000_000))
        for i in 1...3 { #expect(f.admit(exchange(at: Int64(i), delay: 3_000_000)) == nil) }
        // The 1 ms exchange falls out of the window: 3 ms is now the minimum.
        #expect(f.admit(exchange(at: 4, delay: 3_000_000)) != nil)
        #expect(f.minimumDelay == .milliseconds(3))
    }

    @Test func minimumExcessAppliesOnFastLinks() {
        var f = SampleFilter()
        _ = f.admit(exchange(at: 0, delay: 10_000))
        #expect(f.admit(exchange(at: 1, delay: 15_000)) != nil)  // 5 µs above, ratio alone allows 2 µs
        #expect(f.admit(exchange(at: 2, delay: 15_002)) == nil)
    }

    @Test func sigmaGrowsWithExcessDelay() throws {
        var f = SampleFilter()
        let admittedBest = f.admit(exchange(at: 0, delay: 5_000_000))
        let admittedWorse = f.admit(exchange(at: 1, delay: 5_800_000))
        let best = try #require(admittedBest)
        let worse = try #require(admittedWorse)
        // Floor: 2 % of 5 ms = 100 µs; excess 800 µs adds 800/(2√3) ≈ 230.9 µs.
        #expect(abs(best.sigmaNanoseconds - 100_000) < 1)
        #expect(abs(worse.sigmaNanoseconds - (100_000 + 800_000 / (2 * 3.0.squareRoot()))) < 1)
        #expect(worse.minimumDelayNanoseconds == 5_000_000)
    }

    @Test func resetForgetsTheMinimum() {
        var f = SampleFilter()
        _ = f.admit(exchange(at: 0, delay: 1_000_000))
        f.reset()
        #expect(f.minimumDelay == nil)
        #expect(f.admit(exchange(at: 1, delay: 9_000_000)) != nil)
    }

    @Test func invalidConfigurationIsCorrected() {
        var c = SampleFilter.Configuration()
        c.window = 0
        c.maximumDelayRatio = .nan
        let f = SampleFilter(configuration: c)
        #expect(f.configuration.window == 1)
        #expect(f.configuration.maximumDelayRatio == 1)
    }
}
