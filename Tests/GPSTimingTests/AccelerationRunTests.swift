// SPDX-License-Identifier: Apache-2.0
// The acceleration timer against synthetic standing starts with exact truth.

import Foundation
import GateCore
import GateSim
import GPSTiming
import Testing

@Suite("Acceleration timer")
struct AccelerationRunTests {
    /// Runs the fixes through a timer; the events in order and the last result.
    static func time(_ fixes: [GPSFix], settings: AccelerationSettings = AccelerationSettings()) -> ([AccelerationEvent], AccelerationResult?) {
        var timer = AccelerationRun(settings: settings)
        var events: [AccelerationEvent] = []
        for f in fixes { events += timer.ingest(f) }
        return (events, timer.last)
    }

    static let steady = Drive(a0: 6, ramp: 0, vmax: 1000, seconds: 20)
    static let realistic = Drive(a0: 8, ramp: 0.25, vmax: 75, seconds: 25)

    @Test("noise-free at 10 Hz, any phase of the fixes against the launch: 0-60 mph and the 1/4 mile within 10 ms of truth, trap speed within 0.1 mph; steady pull and a launch that builds up over 0.25 s",
          arguments: [("steady", steady), ("realistic", realistic)])
    func noiseFree(name: String, drive: Drive) throws {
        let truth = Truth(drive)
        var worst = (sixty: 0.0, quarter: 0.0, trap: 0.0)
        for k in 0..<10 {
            let (fixes, launch) = receiver(truth, rate: 10, phase: Double(k) / 10)
            let (events, result) = Self.time(fixes)
            let r = try #require(result, "phase \(k): no run")
            #expect(r.voided == nil, "phase \(k): \(r.voided ?? "")")
            // The launch is announced when found, then fitted again once the car is faster.
            #expect(events.filter { if case .launched = $0 { return true } else { return false } }.count == 1)
            let sixty = try #require(r.time(.zeroTo60mph)), quarter = try #require(r.time(.quarterMile))
            worst.sixty = max(worst.sixty, abs(sixty.seconds - truth.seconds(.zeroTo60mph, rollout: false)!))
            worst.quarter = max(worst.quarter, abs(quarter.seconds - truth.seconds(.quarterMile, rollout: false)!))
            worst.trap = max(worst.trap, abs(quarter.trapSpeed! - truth.trap(.quarterMile, rollout: false)!) / Units.mph)
            #expect(abs(r.launch - launch) < 0.010, "phase \(k): launch off by \(r.launch - launch) s")
        }
        print("\(name), 10 Hz noise-free: worst 0-60 \(Int(worst.sixty * 1000)) ms, 1/4 mile \(Int(worst.quarter * 1000)) ms, trap \(worst.trap) mph")
        #expect(worst.sixty < 0.010 && worst.quarter < 0.010 && worst.trap < 0.1)
    }

    /// A build-up shorter than two fix intervals can leave no fix that tells it from a steady
    /// pull starting half the build-up later: those fixes are the same (or a fix just inside
    /// the build-up differs by a few mm/s), and the timer takes the shorter build-up. So
    /// "within 10 ms noise-free" holds wherever a fix falls inside the build-up, and at the
    /// other phases the launch is off by half of it.
    @Test("noise-free at 10 Hz, a launch that builds up over 0.1 s: within 10 ms of truth at every phase whose fixes tell it from a steady pull 50 ms later; at the others the fixes are that pull's to 5 mm/s (a twentieth of a receiver's speed noise) and it is timed as that pull")
    func shortBuildUp() throws {
        let truth = Truth(Drive(a0: 8, ramp: 0.1, vmax: 75, seconds: 12))
        let pull = Truth(Drive(a0: 8, ramp: 0, vmax: 75, seconds: 12))
        var settings = AccelerationSettings()
        settings.targets = [.zeroTo60mph]
        var exact = 0, ambiguous = 0
        for k in 0..<10 {
            let (fixes, launch) = receiver(truth, rate: 10, phase: Double(k) / 10)
            let (_, result) = Self.time(fixes, settings: settings)
            let sixty = try #require(result?.time(.zeroTo60mph), "phase \(k)")
            let e = sixty.seconds - truth.seconds(.zeroTo60mph, rollout: false)!
            if abs(e) < 0.010 { exact += 1 } else {
                // How far the fixes, to 60 mph, are from a steady pull starting 50 ms later.
                let worst = fixes.filter { $0.time - launch < 4.5 }.map { f in
                    let tau = f.time - launch - 0.05
                    return abs(f.speed - (tau <= 0 ? 0 : pull.speed(at: tau)))
                }.max() ?? 0
                #expect(worst < 0.005, "phase \(k): off by \(e) s, and its fixes are not a later steady pull's (\(worst) m/s)")
                #expect(abs(e + 0.05) < 0.005, "phase \(k): off by \(e) s")
                ambiguous += 1
            }
        }
        print("10 Hz noise-free, 0.1 s build-up: \(exact) of 10 phases within 10 ms, \(ambiguous) timed as the steady pull 50 ms later")
        #expect(exact >= 5)
    }

    @Test("with a 1 ft rollout the clock starts once the car has covered 1 ft: every time shorter by that much, within 10 ms of truth")
    func rollout() throws {
        let truth = Truth(Self.realistic)
        let (fixes, _) = receiver(truth, rate: 10, phase: 0.37)
        let (_, plain) = Self.time(fixes)
        let (_, rolled) = Self.time(fixes, settings: AccelerationSettings(rollout: true))
        let p = try #require(plain), r = try #require(rolled)
        for m in [Milestone.zeroTo60mph, .feet60, .quarterMile] {
            let a = try #require(p.time(m)), b = try #require(r.time(m))
            #expect(b.seconds < a.seconds)
            #expect(abs(b.seconds - truth.seconds(m, rollout: true)!) < 0.010, "\(m): \(b.seconds) against \(truth.seconds(m, rollout: true)!)")
        }
        #expect(r.start > r.launch)
    }

    /// The issue's targets are 50 ms at 10 Hz and 25 ms at 25 Hz; the launch fit reaches
    /// about 74 and 63 ms today (BENCHMARKS.md). These limits keep it from getting worse.
    @Test("realistic Doppler noise (0.1 m/s) over 100 runs each: every run timed, p95 error of 0-60 within 95 ms at 10 Hz and 80 ms at 25 Hz; the stated uncertainty's 2σ covers at least 70 % of the errors",
          arguments: [(10.0, 0.095), (25.0, 0.080)])
    func noisy(rate: Double, p95Limit: Double) throws {
        let truth = Truth(Self.realistic)
        var errors: [Double] = [], covered = 0
        for k in 0..<100 {
            let (fixes, _) = receiver(truth, rate: rate, phase: Double(k % 10) / 10, sigma: 0.1, seed: UInt64(k + 1))
            let (_, result) = Self.time(fixes)
            let r = try #require(result, "run \(k): none")
            let sixty = try #require(r.time(.zeroTo60mph), "run \(k): \(r.voided ?? "no 0-60")")
            let e = abs(sixty.seconds - truth.seconds(.zeroTo60mph, rollout: false)!)
            errors.append(e)
            if e <= 2 * sixty.uncertainty { covered += 1 }
        }
        errors.sort()
        let p95 = errors[94]
        print("\(Int(rate)) Hz, σ 0.1 m/s: 0-60 p50 \(Int(errors[49] * 1000)) ms, p95 \(Int(p95 * 1000)) ms, within 2σ \(covered)/100")
        #expect(p95 <= p95Limit)
        #expect(covered >= 70)
    }

    /// The same noise over launches that build up faster and slower than the realistic
    /// one: the timer is not told which, so its figures are for every shape (BENCHMARKS.md).
    @Test("realistic Doppler noise over launches whose acceleration builds up in 0.1 to 0.55 s, 100 runs each at 10 and 25 Hz: every run timed, p95 error of 0-60 within 150 ms",
          arguments: [10.0, 25.0], [0.1, 0.25, 0.4, 0.55])
    func noisyShapes(rate: Double, buildUp: Double) throws {
        let truth = Truth(Drive(a0: 8, ramp: buildUp, vmax: 75, seconds: 12))
        var errors: [Double] = [], bias = 0.0
        var settings = AccelerationSettings()
        settings.targets = [.zeroTo60mph]
        for k in 0..<100 {
            let (fixes, _) = receiver(truth, rate: rate, phase: Double(k % 10) / 10, sigma: 0.1, seed: UInt64(k + 1))
            let (_, result) = Self.time(fixes, settings: settings)
            let r = try #require(result, "run \(k): none")
            let sixty = try #require(r.time(.zeroTo60mph), "run \(k): \(r.voided ?? "no 0-60")")
            let e = sixty.seconds - truth.seconds(.zeroTo60mph, rollout: false)!
            errors.append(abs(e))
            bias += e / 100
        }
        errors.sort()
        print("\(Int(rate)) Hz, build-up \(buildUp) s, σ 0.1 m/s: 0-60 p50 \(Int(errors[49] * 1000)) ms, p95 \(Int(errors[94] * 1000)) ms, mean error \(Int((bias * 1000).rounded())) ms")
        #expect(errors[94] <= 0.150)
    }

    /// Why the noisy targets are out of reach for a launch whose build-up is not known: two
    /// launches, one building up over `short` seconds and one over `long` seconds starting
    /// (long − short)/2 earlier, reach the same speeds from the end of the build-ups on, and
    /// their fixes differ only by a few tenths of a metre a second in between. Whatever a
    /// timer makes of the fixes, on one of the two its launch instant is off by at least
    /// half that shift with probability at least Φ(−d/2), d the distance between the two
    /// launches' fixes in units of the noise (Le Cam's two-point bound; the noise taken as
    /// Gaussian, which a receiver's folded speeds near rest only make worse). Averaged over
    /// the phase of the fixes against the launch.
    @Test("the two-point bound: at 10 Hz a 0.1 s and a 0.3 s build-up, at 25 Hz a 0.15 s and a 0.25 s, cannot both be timed to the targets (50 and 25 ms) in 95 % of runs",
          arguments: [(10.0, 0.1, 0.3, 0.050), (25.0, 0.15, 0.25, 0.025)])
    func twoPointBound(rate: Double, short: Double, long: Double, target: Double) {
        let a = Truth(Drive(a0: 8, ramp: long, vmax: 75, seconds: 8))
        let b = Truth(Drive(a0: 8, ramp: short, vmax: 75, seconds: 8))
        let shift = (long - short) / 2, sigma = 0.1
        var p = 0.0
        let phases = 50
        for k in 0..<phases {
            var d2 = 0.0
            var t = (Double(k) / Double(phases) - 10) / rate
            // To 60 mph, which both pass within 6 s.
            while t < 6 {
                let va = t <= 0 ? 0 : a.speed(at: t), vb = t <= shift ? 0 : b.speed(at: t - shift)
                d2 += (va - vb) * (va - vb) / (sigma * sigma)
                t += 1 / rate
            }
            p += 0.5 * erfc(d2.squareRoot() / 2 / 2.0.squareRoot()) / Double(phases)
        }
        print("\(Int(rate)) Hz, build-ups \(short) s and \(long) s, starts \(Int((shift * 1000).rounded())) ms apart: on one of them the launch is off by \(Int((shift * 500).rounded())) ms or more in at least \(Int((p * 100).rounded())) % of runs")
        #expect(shift / 2 >= target - 1e-9)
        #expect(p > 0.05)
    }

    @Test("an hour standing still under a degraded fix (speed noise 0.4 m/s, eps 0.8 m/s, within the accuracy gate): armed, never launched")
    func standstill() {
        var timer = AccelerationRun()
        var noise = SplitMix64(seed: 99)
        var launches = 0, armed = false
        for i in 0..<36_000 {
            let f = GPSFix(time: GPSTime(seconds: 1_800_000_000 + Double(i) / 10), mode: .threeD,
                           speed: abs(0.4 * noise.normal()), speedError: 0.8, horizontalError: 8)
            for e in timer.ingest(f) {
                if case .launched = e { launches += 1 }
                if case .state(.armed, _) = e { armed = true }
            }
        }
        #expect(armed)
        #expect(launches == 0)
    }

    @Test("a fix worse than the gate during a run voids it and says why; so does a gap of more than a second; a single multipath jump is left out and the run timed")
    func voids() throws {
        let truth = Truth(Self.realistic)
        let (fixes, _) = receiver(truth, rate: 10, phase: 0.5)
        // A poor fix 5 s after the launch (3 s at rest first).
        var poor = fixes
        let i = poor.firstIndex { $0.time.seconds >= 1_800_000_000 + 8 }!
        poor[i].horizontalError = 35
        let (_, a) = Self.time(poor)
        #expect(a?.voided?.hasPrefix("fix worse than 10 m (35 m)") == true, "\(String(describing: a?.voided))")
        #expect(a?.times.isEmpty == true)
        var gap = fixes
        gap.removeSubrange(i..<(i + 15))
        let (_, b) = Self.time(gap)
        #expect(b?.voided?.hasPrefix("no fix for 1.") == true, "\(String(describing: b?.voided))")
        var jump = fixes
        jump[i].speed += 4
        let (_, c) = Self.time(jump)
        let r = try #require(c)
        #expect(r.voided == nil)
        #expect(abs(r.time(.quarterMile)!.seconds - truth.seconds(.quarterMile, rollout: false)!) < 0.015)
    }

    @Test("the states: acquiring without a fix, ready with one, armed after a second at rest, running, complete at the last target and shown while the vehicle drives on, then armed for the next once it stands")
    func states() {
        let truth = Truth(Drive(a0: 8, ramp: 0.2, vmax: 75, seconds: 16))
        let (fixes, _) = receiver(truth, rate: 10, phase: 0.2)
        var timer = AccelerationRun(settings: AccelerationSettings(targets: [.zeroTo60mph, .eighthMile]))
        var states: [AccelerationState] = []
        let noFix = GPSFix(time: GPSTime(seconds: 1_799_999_999), mode: .none, speed: 0)
        for e in timer.ingest(noFix) { if case let .state(s, _) = e { states.append(s) } }
        for f in fixes { for e in timer.ingest(f) { if case let .state(s, _) = e { states.append(s) } } }
        #expect(states == [.ready, .armed, .running, .complete], "\(states)")
        // Braking to a stand, then two seconds at rest.
        var t = fixes.last!.time, v = fixes.last!.speed
        while v > 0 || t - fixes.last!.time < 12 {
            t = t + 0.1
            v = max(0, v - 0.8)
            for e in timer.ingest(GPSFix(time: t, mode: .threeD, speed: v, speedError: 0.2, horizontalError: 3)) {
                if case let .state(s, _) = e { states.append(s) }
            }
        }
        #expect(states == [.ready, .armed, .running, .complete, .armed], "\(states)")
        #expect(timer.last?.times.map(\.milestone) == [.zeroTo60mph, .eighthMile])
    }
}
