// SPDX-License-Identifier: Apache-2.0
// Randomised properties (chrony style): the seed is printed; SPRINTGATE_TEST_SEED replays it.

import ClockSync
import GateCore
import Testing

@Suite struct PropertyTests {
    @Test func offsetErrorNeverExceedsHalfTheDelay() throws {
        var rng = SimulationRandom(seed: testSeed("offsetErrorNeverExceedsHalfTheDelay"))
        for _ in 0..<10_000 {
            let local = Int64(rng.next() >> 8)  // up to ~2 years of uptime in ns
            let offset = Int64(bitPattern: rng.next() >> 8) - (1 << 55)
            let out = Int64(rng.next() % 100_000_000), back = Int64(rng.next() % 100_000_000)
            let hold = Int64(rng.next() % 1_000_000)
            let s = try SyncSample(t1: MonotonicInstant(nanoseconds: local),
                                   t2: PeerInstant(nanoseconds: local + out + offset),
                                   t3: PeerInstant(nanoseconds: local + out + hold + offset),
                                   t4: MonotonicInstant(nanoseconds: local + out + hold + back))
            #expect(s.delayNanoseconds == out + back)
            // Exactly (out − back)/2 off, within a nanosecond of rounding.
            #expect(abs(s.offsetNanoseconds - offset - (out - back) / 2) <= 1)
            #expect(abs(s.offsetNanoseconds - offset) <= s.delayNanoseconds / 2 + 1)
        }
    }

    @Test func arbitraryTimestampsNeverTrap() {
        var rng = SimulationRandom(seed: testSeed("arbitraryTimestampsNeverTrap"))
        var clock = PeerClock()
        for _ in 0..<20_000 {
            func any() -> Int64 {
                switch rng.next() % 4 {
                case 0: return Int64(bitPattern: rng.next())
                case 1: return [Int64.min, Int64.max, 0, -1][Int(rng.next() % 4)]
                default: return Int64(rng.next() % 2_000_000_000)
                }
            }
            let t1 = any(), t2 = any(), t3 = any(), t4 = any()
            do {
                let s = try SyncSample(t1: MonotonicInstant(nanoseconds: t1), t2: PeerInstant(nanoseconds: t2),
                                       t3: PeerInstant(nanoseconds: t3), t4: MonotonicInstant(nanoseconds: t4))
                #expect(s.delayNanoseconds >= 0)
                #expect(s.delayNanoseconds <= SyncSample.maximumRoundTrip.nanoseconds)
                clock.add(s)
            } catch {
                // Rejected with a reason; nothing else to check.
            }
            _ = clock.stats(at: MonotonicInstant(nanoseconds: any()))
            _ = ClockModel.host().network(fromPeer: PeerInstant(nanoseconds: any()), clock: clock)
        }
    }

    @Test func filterNeverKeepsASampleFarAboveTheMinimum() {
        var rng = SimulationRandom(seed: testSeed("filterNeverKeepsASampleFarAboveTheMinimum"))
        var f = SampleFilter()
        var window: [Int64] = []
        for i in 0..<5_000 {
            let delay = Int64(rng.next() % 20_000_000)
            window.append(delay)
            if window.count > f.configuration.window { window.removeFirst() }
            let minimum = window.min()!
            let kept = f.admit(exchange(at: Int64(i) * 1_000_000_000, delay: delay))
            let limit = max((Double(minimum) * f.configuration.maximumDelayRatio).rounded(),
                            Double(minimum + f.configuration.minimumExcess.nanoseconds))
            #expect((kept != nil) == (Double(delay) <= limit))
            #expect(f.minimumDelay == Span(nanoseconds: minimum))
        }
    }

    @Test func regressionRecoversRandomLines() throws {
        var rng = SimulationRandom(seed: testSeed("regressionRecoversRandomLines"))
        for _ in 0..<100 {
            var r = Regression()
            let base = Int64(bitPattern: rng.next() >> 4) - (1 << 59)
            let frequency = (rng.unit() * 2 - 1) * 200e-6
            let t0 = Int64(rng.next() % 1_000_000_000_000_000)
            let n = 10 + Int(rng.next() % 50)
            let every = 500_000_000 + Int64(rng.next() % 2_000_000_000)
            for i in 0..<n {
                let dt = Int64(i) * every
                r.add(at: MonotonicInstant(nanoseconds: t0 + dt), offsetNanoseconds: base + Int64((frequency * Double(dt)).rounded()),
                      sigmaNanoseconds: 10_000, delayNanoseconds: 1_000_000)
            }
            let fit = try #require(r.fit)
            // The prior pulls the slope towards zero by the factor Sxx / (Sxx + λ).
            var sxx = 0.0
            let meanX = Double(n - 1) * Double(every) * 1e-9 / 2
            for i in 0..<n {
                let dx = Double(Int64(i) * every) * 1e-9 - meanX
                sxx += dx * dx / (10_000.0 * 10_000.0)
            }
            let prior = r.configuration.frequencyPrior * 1e9
            let expected = frequency * sxx / (sxx + 1 / (prior * prior))
            #expect(abs(fit.frequency - expected) < 1e-10)
            let end = MonotonicInstant(nanoseconds: t0 + Int64(n - 1) * every)
            let predicted = try #require(r.offset(at: end))
            let truth = base + Int64((frequency * Double(Int64(n - 1) * every)).rounded())
            let pull = abs(frequency - expected) * Double(Int64(n - 1) * every) / 2
            #expect(Double(abs(predicted.nanoseconds - truth)) < pull + 10)
        }
    }

    @Test func regressionErrorsAreCalibrated() throws {
        // With Gaussian noise of the stated sigma, the true offset lies within 3 reported
        // sigmas of the estimate in nearly all trials.
        var rng = SimulationRandom(seed: testSeed("regressionErrorsAreCalibrated"))
        var within = 0
        let trials = 400
        for _ in 0..<trials {
            var r = Regression()
            let frequency = (rng.unit() * 2 - 1) * 50e-6
            let sigma = 1_000 + rng.unit() * 100_000
            for i in 0..<40 {
                let dt = Int64(i) * 1_000_000_000
                let noisy = frequency * Double(dt) + sigma * rng.gaussian()
                r.add(at: MonotonicInstant(nanoseconds: dt), offsetNanoseconds: Int64(noisy.rounded()),
                      sigmaNanoseconds: sigma, delayNanoseconds: 1_000_000)
            }
            let at = MonotonicInstant(nanoseconds: 45_000_000_000)
            let p = try #require(r.offset(at: at))
            if abs(Double(p.nanoseconds) - frequency * 45e9) <= 3 * p.sigma { within += 1 }
        }
        #expect(within >= trials * 95 / 100)
    }

    @Test func localNetworkRoundTripIsTheIdentity() throws {
        var rng = SimulationRandom(seed: testSeed("localNetworkRoundTripIsTheIdentity"))
        for _ in 0..<100 {
            var m = ClockModel.follower()
            let offset = Int64(bitPattern: rng.next() >> 20) - (1 << 43)
            let frequency = (rng.unit() * 2 - 1) * 300e-6
            let start = Int64(rng.next() % 1_000_000_000_000_000)
            feed(&m.hostClock, count: 20, start: start, every: 1_000_000_000, delay: Int64(rng.next() % 10_000_000),
                 offset: offset, frequency: frequency)
            for _ in 0..<20 {
                let t = MonotonicInstant(nanoseconds: start + Int64(rng.next() % 100_000_000_000))
                let n = try #require(m.network(fromLocal: t))
                let back = try #require(m.local(fromNetwork: n.value))
                #expect(abs(back.value.nanoseconds - t.nanoseconds) <= 1)
                #expect(n.uncertainty <= n.maxError)
            }
        }
    }
}
