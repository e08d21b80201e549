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

    /// The regression's asymmetry bound is the exact worst case of its linear estimator:
    /// every sample off by up to half its round trip, in the worst directions, moves the
    /// prediction at most that far, before, inside and after the window. Half the smallest
    /// round trip (the bound used before) is often beaten by the same samples.
    @Test func asymmetryBoundCoversAnySplitOfTheRoundTrips() throws {
        var rng = SimulationRandom(seed: testSeed("asymmetryBoundCoversAnySplitOfTheRoundTrips"))
        var beatHalfMinimum = 0
        for _ in 0..<2_000 {
            var truthRegression = Regression(), skewed = Regression()
            let n = 6 + Int(rng.next() % 60)
            let offset = Int64(rng.next() % 1_000_000_000) - 500_000_000
            let frequency = (rng.unit() - 0.5) * 100e-6
            let base = Int64(rng.next() % 1_000_000) + 20_000
            var t: Int64 = 1_000_000_000
            var minimumDelay = Int64.max
            for _ in 0..<n {
                t += 50_000_000 + Int64(rng.next() % 1_000_000_000)
                let delay = base + Int64(Double(base) * 3 * rng.unit() * rng.unit())
                minimumDelay = min(minimumDelay, delay)
                let truth = offset + Int64((Double(t) * frequency).rounded())
                // The split: anywhere in ±half the round trip, often at an end.
                let half = Double(delay) / 2
                let split = rng.next() % 3 == 0 ? (rng.unit() * 2 - 1) * half : (rng.next() % 2 == 0 ? half : -half)
                let sigma = 1_000 + Double(delay - base) / 3
                truthRegression.add(at: MonotonicInstant(nanoseconds: t), offsetNanoseconds: truth, sigmaNanoseconds: sigma,
                                    delayNanoseconds: delay)
                // Truncated toward zero, so whole nanoseconds never exceed half the round trip
                // (rounding could add half a nanosecond per sample, multiplied by the fit's
                // weights far outside the window: 8 ns over 8 ms once).
                skewed.add(at: MonotonicInstant(nanoseconds: t), offsetNanoseconds: truth + Int64(split),
                           sigmaNanoseconds: sigma, delayNanoseconds: delay)
            }
            // Same times, delays and weights: the runs test may cut the windows differently,
            // and the bound is of the window the fit uses.
            guard truthRegression.count == skewed.count else { continue }
            for k in 0..<8 {
                let at = MonotonicInstant(nanoseconds: t - 20_000_000_000 + Int64(k) * 5_000_000_000)
                let predicted = try #require(skewed.offset(at: at)?.nanoseconds)
                let exact = try #require(truthRegression.offset(at: at)?.nanoseconds)
                let bound = try #require(skewed.asymmetryBound(at: at))
                // 2 ns for floating-point error in the two fits.
                #expect(Double(abs(predicted - exact)) <= bound + 2, "at \(at.nanoseconds): \(predicted - exact) ns off, bound \(bound)")
                if Double(abs(predicted - exact)) > Double(minimumDelay) / 2 { beatHalfMinimum += 1 }
            }
        }
        #expect(beatHalfMinimum > 0)
    }

    /// A peer clock fed exchanges whose split between the two ways changes from one to the
    /// next (a relay busy at times), on a clock with a constant frequency: the reported
    /// `maxError` holds at every instant between exchanges.
    @Test func maxErrorHoldsWhenTheSplitChanges() throws {
        var rng = SimulationRandom(seed: testSeed("maxErrorHoldsWhenTheSplitChanges"))
        var evaluations = 0, beyond = 0
        var worstRatio = 0.0
        for _ in 0..<40 {
            var clock = PeerClock()
            let offset = Int64(rng.next() % 2_000_000_000) - 1_000_000_000
            let frequency = (rng.unit() - 0.5) * 100e-6
            let base = Int64(rng.next() % 300_000) + 30_000
            var t: Int64 = 5_000_000_000
            var spellOneWay = rng.next() % 2 == 0
            for _ in 0..<600 {
                if rng.next() % 20 == 0 { spellOneWay.toggle() }
                let out = base / 2 + (spellOneWay ? Int64(Double(base) * 2 * rng.unit()) : 0)
                let back = base / 2 + Int64(Double(base) * 0.1 * rng.unit())
                let hold = Int64(rng.next() % 100_000)
                func peer(_ at: Int64) -> Int64 { at + offset + Int64((Double(at) * frequency).rounded()) }
                clock.pollSent(at: MonotonicInstant(nanoseconds: t))
                if rng.unit() > 0.1 {
                    _ = try? clock.add(t1: MonotonicInstant(nanoseconds: t), t2: PeerInstant(nanoseconds: peer(t + out)),
                                       t3: PeerInstant(nanoseconds: peer(t + out + hold)),
                                       t4: MonotonicInstant(nanoseconds: t + out + hold + back))
                }
                let next = clock.nextPoll(now: MonotonicInstant(nanoseconds: t + out + hold + back)).nanoseconds
                for k in 1...4 {
                    let at = t + (next - t) * Int64(k) / 4
                    let now = MonotonicInstant(nanoseconds: at)
                    guard clock.state(at: now) == .synced, let e = clock.offset(at: now) else { continue }
                    let truth = Double(offset) + Double(at) * frequency
                    let error = abs(Double(e.value.nanoseconds) - truth)
                    evaluations += 1
                    worstRatio = max(worstRatio, error / Double(max(1, e.maxError.nanoseconds)))
                    if error > Double(e.maxError.nanoseconds) + 2 { beyond += 1 }
                }
                t = max(next, t + out + hold + back + 1)
            }
        }
        print("maxErrorHoldsWhenTheSplitChanges: \(evaluations) evaluations, worst error/maxError \(fixedPoint(worstRatio, digits: 2))")
        #expect(evaluations > 50_000)
        #expect(beyond == 0)
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
            var sumAbsDx = 0.0, sumDx2 = 0.0
            let meanX = Double(n - 1) * Double(every) * 1e-9 / 2
            for i in 0..<n {
                let dx = Double(Int64(i) * every) * 1e-9 - meanX
                sxx += dx * dx / (10_000.0 * 10_000.0)
                sumAbsDx += abs(dx)
                sumDx2 += dx * dx
            }
            let prior = r.configuration.frequencyPrior * 1e9
            let expected = frequency * sxx / (sxx + 1 / (prior * prior))
            // The offsets are whole nanoseconds: rounding moves each by at most 0.5 ns, which
            // moves a least-squares slope by at most 0.5 ns × Σ|dx| / Σdx² (the worst case
            // for a short, sparse line is about 1e-10, so a fixed 1e-10 fails by chance).
            let rounding = 0.5e-9 * sumAbsDx / sumDx2
            #expect(abs(fit.frequency - expected) <= rounding * 1.001 + 1e-13)
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
