// SPDX-License-Identifier: Apache-2.0
// Synthetic NMEA logs through gpsd's own gpsfake into the gate's gpsd client and timer.

import Foundation
import GPSD
import GateCore
import GateSim
import GPSTiming
import Logging
import Synchronization
import Testing

@Suite("gpsfake: NMEA through a real gpsd", .serialized)
struct GPSFakeTests {
    static let realistic = Drive(a0: 8, ramp: 0.25, vmax: 75, seconds: 25)

    @Test("noise-free drives at 1, 10 and 25 Hz through gpsd: every fix arrives, exactly timed; 0-60 and the 1/4 mile within 10 ms of truth at 10 and 25 Hz (and within the stated uncertainty at 1 Hz); trap speed within 0.1 mph",
          arguments: [1.0, 10.0, 25.0])
    func noiseFree(rate: Double) async throws {
        if let why = GPSFake.skipReason { print("SKIP: \(why)"); return }
        let truth = Truth(Self.realistic)
        // The launch falls between fixes, 37 ms after one at 10 Hz.
        let still = 3.037
        let epochs = NMEALog.epochs(truth, rate: rate, still: still)
        let log = NMEALog.write(epochs, header: ["Name: noise-free standing start at \(Int(rate)) Hz", "Notes: synthetic, exact truth"])
        let (reports, bad) = try await GPSFake.play(log, name: "clean\(Int(rate))")
        #expect(bad.isEmpty, "\(bad.prefix(3))")
        let fixes = GPSFake.fixes(reports)
        // gpsd reports every epoch, with its time to the hundredth as the receiver sent it.
        #expect(fixes.count == epochs.count, "\(fixes.count) fixes for \(epochs.count) epochs")
        for (f, e) in zip(fixes, epochs) {
            #expect(f.time == NMEALog.base + e.time)
            #expect(abs(f.speed - e.speed) < 0.001)
        }
        var rateMeter = FixRate()
        for f in fixes { rateMeter.note(f.time) }
        #expect(abs((rateMeter.hertz ?? 0) - rate) < 0.01 * rate)

        var timer = AccelerationRun()
        for f in fixes { _ = timer.ingest(f) }
        let last = timer.last
        let r = try #require(last, "no run")
        #expect(r.voided == nil, "\(r.voided ?? "")")
        let sixty = try #require(r.time(.zeroTo60mph)), quarter = try #require(r.time(.quarterMile))
        let e60 = sixty.seconds - truth.seconds(.zeroTo60mph, rollout: false)!
        let eq = quarter.seconds - truth.seconds(.quarterMile, rollout: false)!
        let trap = quarter.trapSpeed! - truth.trap(.quarterMile, rollout: false)!
        print("gpsfake \(Int(rate)) Hz noise-free: 0-60 off \(Int((e60 * 1000).rounded())) ms (±\(Int((sixty.uncertainty * 1000).rounded()))), 1/4 mile off \(Int((eq * 1000).rounded())) ms, trap off \(trap / Units.mph) mph")
        if rate >= 10 {
            #expect(abs(e60) < 0.010 && abs(eq) < 0.010)
            #expect(abs(trap) < 0.1 * Units.mph)
        } else {
            #expect(abs(e60) <= 2 * sixty.uncertainty && abs(eq) <= 2 * quarter.uncertainty)
        }
        // At 1 Hz the launch is known to about a quarter of the interval.
        #expect(abs(r.launch - (NMEALog.base + still)) < (rate >= 10 ? 0.010 : 0.5))
    }

    @Test("Doppler noise at 10 Hz through gpsd times exactly as the same fixes handed to the timer directly (gpsd changes nothing the timer uses)")
    func noisyThroughGPSD() async throws {
        if let why = GPSFake.skipReason { print("SKIP: \(why)"); return }
        let truth = Truth(Self.realistic)
        let epochs = NMEALog.epochs(truth, rate: 10, still: 3.037, sigma: 0.1, seed: 7)
        let (reports, bad) = try await GPSFake.play(NMEALog.write(epochs, header: ["Name: noisy standing start"]), name: "noisy")
        #expect(bad.isEmpty)
        let viaGPSD = GPSFake.fixes(reports)
        let direct = epochs.map {
            GPSFix(time: NMEALog.base + $0.time, mode: .threeD, speed: ($0.speed / 0.514444 * 1000).rounded() / 1000 * 0.514444,
                   horizontalError: viaGPSD.first?.horizontalError)
        }
        func run(_ fixes: [GPSFix]) -> AccelerationResult? {
            var timer = AccelerationRun()
            for f in fixes { _ = timer.ingest(f) }
            return timer.last
        }
        let a = try #require(run(viaGPSD)), b = try #require(run(direct))
        #expect(a.voided == nil)
        let sixtyA = try #require(a.time(.zeroTo60mph)), sixtyB = try #require(b.time(.zeroTo60mph))
        #expect(abs(sixtyA.seconds - sixtyB.seconds) < 0.001)
        #expect(abs(a.time(.quarterMile)!.seconds - b.time(.quarterMile)!.seconds) < 0.001)
    }

    @Test("a minute standing still under a poor fix through gpsd (speed noise 0.4 m/s with spikes, HDOP wandering to 4): never launches; the timer says the fix is too poor while it is")
    func standstillPoorFix() async throws {
        if let why = GPSFake.skipReason { print("SKIP: \(why)"); return }
        var noise = SplitMix64(seed: 99)
        var epochs: [NMEAEpoch] = []
        for i in 0 ..< 600 {
            var e = NMEAEpoch(time: Double(i) / 10, speed: abs(0.4 * noise.normal()) + (i % 97 == 0 ? 1.5 : 0), east: 0)
            // DGPS lost now and then: gpsd's error estimate jumps from 2-4 m to 40-80 m.
            e.quality = (i / 50) % 3 == 2 ? 1 : 2
            e.hdop = 0.5 + 3.5 * noise.unit()
            epochs.append(e)
        }
        let (reports, bad) = try await GPSFake.play(NMEALog.write(epochs, header: ["Name: standstill, poor fix"]), name: "still")
        #expect(bad.isEmpty)
        let fixes = GPSFake.fixes(reports)
        #expect(fixes.count == epochs.count)
        var timer = AccelerationRun()
        var events: [AccelerationEvent] = []
        for f in fixes { events += timer.ingest(f) }
        #expect(!events.contains { if case .launched = $0 { return true } else { return false } })
        #expect(events.contains { if case .state(.acquiring, let why) = $0 { return why.hasPrefix("fix worse than 10 m") } else { return false } })
    }

    @Test("multipath through gpsd: one epoch mid-run with its position thrown 40 m and its Doppler speed 4 m/s high (a reflection), and a second one 2 s later 3 m/s low; the run is timed, the 1/4 mile within 15 ms of truth")
    func multipath() async throws {
        if let why = GPSFake.skipReason { print("SKIP: \(why)"); return }
        let truth = Truth(Self.realistic)
        var epochs = NMEALog.epochs(truth, rate: 10, still: 3.0)
        let a = try #require(epochs.firstIndex { $0.time >= 8 }), b = try #require(epochs.firstIndex { $0.time >= 10 })
        epochs[a].speed += 4
        epochs[a].east += 40
        epochs[b].speed -= 3
        let (reports, bad) = try await GPSFake.play(NMEALog.write(epochs, header: ["Name: multipath mid-run"]), name: "multipath")
        #expect(bad.isEmpty)
        let fixes = GPSFake.fixes(reports)
        // gpsd passes the reflection on as the receiver reported it.
        #expect(fixes.contains { abs($0.speed - epochs[a].speed) < 0.001 })
        var timer = AccelerationRun()
        for f in fixes { _ = timer.ingest(f) }
        let r = try #require(timer.last)
        #expect(r.voided == nil, "\(r.voided ?? "")")
        let quarter = try #require(r.time(.quarterMile))
        let error = quarter.seconds - truth.seconds(.quarterMile, rollout: false)!
        print("gpsfake multipath at 10 Hz: 1/4 mile off \(Int((error * 1000).rounded())) ms")
        #expect(abs(error) < 0.015)
    }

    @Test("a dropout of 2 s mid-run (the receiver reports no fix) voids the run and says why")
    func dropout() async throws {
        if let why = GPSFake.skipReason { print("SKIP: \(why)"); return }
        let truth = Truth(Self.realistic)
        var epochs = NMEALog.epochs(truth, rate: 10, still: 3.0)
        for i in epochs.indices where epochs[i].time >= 8 && epochs[i].time < 10 { epochs[i].quality = 0 }
        let (reports, _) = try await GPSFake.play(NMEALog.write(epochs, header: ["Name: dropout mid-run"]), name: "dropout")
        var timer = AccelerationRun()
        var finished: [AccelerationResult] = []
        for f in GPSFake.fixes(reports) {
            for e in timer.ingest(f) { if case .finished(let r) = e { finished.append(r) } }
        }
        let r = try #require(finished.first)
        #expect(r.voided?.hasPrefix("no fix") == true, "\(r.voided ?? "not voided")")
        #expect(r.time(.quarterMile) == nil)
    }
}

@Suite("gpsd's client thread against a real gpsd")
struct GPSDReceiverTests {
    @Test("selftest's probe: gpsd absent fails at once with what to do; a 10 Hz receiver through gpsd passes, its rate measured")
    func probe() async throws {
        if let why = GPSFake.skipReason { print("SKIP: \(why)"); return }
        let port = GPSFake.freePort()
        let config = GPSDConfig(port: port, wantedRate: 10)
        let absent = try await onOwnThread { GPSDReceiver.probe(config, seconds: 2, logger: Logger(label: "test")) }
        #expect(absent.verdict.ok == false && absent.verdict.detail.contains("does not answer on 127.0.0.1:\(port)"))
        let epochs = (0 ..< 80).map { NMEAEpoch(time: Double($0) / 10, speed: 0, east: 0) }
        let log = NMEALog.write(epochs, header: ["Name: 10 Hz at rest"])
        let session = try await onOwnThread { try GPSFake.Session(log: log, name: "probe", cycle: 0.1 / 3, port: port) }
        // Why 30 s: the probe answers as soon as the rate is measured (about 2 s into the
        // feed); the bound only covers a loaded machine, where gpsd takes the fake
        // receiver's pty late and 8 s once ran out before it had.
        async let seen = onOwnThread { GPSDReceiver.probe(config, seconds: 30, logger: Logger(label: "test")) }
        try await Task.sleep(for: .milliseconds(500))
        session.go()
        let s = try await seen
        #expect(s.verdict.ok == true, "\(s.verdict.detail)")
        #expect(s.verdict.detail.hasPrefix("3D fix, 12 of 12 satellites, ±3 m, 10 fixes/s, /dev/pts/"))
    }

    @Test("no gpsd: says so and how to fix it; gpsd with a receiver at 10 Hz: a 3D fix, satellites, accuracy and the measured rate, a warning when the board asks 25 Hz; every fix handed on in order; gpsd gone: says so again")
    func receiver() async throws {
        if let why = GPSFake.skipReason { print("SKIP: \(why)"); return }
        let port = GPSFake.freePort()
        let fixes = Mutex<[GPSFix]>([])
        // Why: the status is read on the client's thread as each fix is handed on (it is
        // updated before), not by polling, which a loaded machine can starve for longer
        // than the five seconds of the feed.
        let receiver = Mutex<GPSDReceiver?>(nil)
        let atLastFix = Mutex<ReceiverStatus?>(nil)
        let rx = GPSDReceiver(config: GPSDConfig(port: port, wantedRate: 25), logger: Logger(label: "test")) { f in
            fixes.withLock { $0.append(f) }
            if let s = receiver.withLock({ $0 })?.status { atLastFix.withLock { $0 = s } }
        }
        receiver.withLock { $0 = rx }
        rx.start()
        defer { rx.stop(); receiver.withLock { $0 = nil } }
        func waitFor(_ what: String, _ ok: (ReceiverStatus) -> Bool) async throws {
            let end = Date().addingTimeInterval(20)
            while !ok(rx.status) {
                if Date() > end { Issue.record("\(what): status \(rx.status)"); throw CancellationError() }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        try await waitFor("no gpsd") { $0.link == .noDaemon && $0.detail.contains("does not answer") }
        // Five seconds at 10 Hz, fed at the receiver's pace (three sentences an epoch).
        let epochs = (0 ..< 50).map { NMEAEpoch(time: Double($0) / 10, speed: 0, east: 0) }
        let log = NMEALog.write(epochs, header: ["Name: 10 Hz at rest"])
        let session = try await onOwnThread { try GPSFake.Session(log: log, name: "rx", cycle: 0.1 / 3, port: port) }
        try await waitFor("gpsd's receiver list") { $0.link != .noDaemon }
        session.go()
        try await waitFor("gpsd gone") { $0.link == .noDaemon && atLastFix.withLock({ $0 }) != nil }
        let s = try #require(atLastFix.withLock { $0 })
        #expect(s.link == .fix)
        #expect(s.mode == .threeD && s.satellitesUsed == 12 && s.device?.hasPrefix("/dev/pts/") == true)
        #expect(abs(s.horizontalError! - 2.85) < 0.1)
        #expect(abs(s.rate! - 10) < 0.5)
        #expect(s.rateWarning?.contains("not 25") == true)
        #expect(s.gpsdRelease != nil)
        let got = fixes.withLock { $0 }
        #expect(got.count == 50)
        #expect(zip(got, got.dropFirst()).allSatisfy { $0.time < $1.time })
    }
}
