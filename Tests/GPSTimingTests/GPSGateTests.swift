// SPDX-License-Identifier: Apache-2.0
// The daemon's GPS timer against a real gpsd: a standing start played through gpsfake, the
// page's live view followed as the timer arms, runs and completes.

import Foundation
import Engine
import GateDaemon
import GPSD
import GPSTiming
import Logging
import SQLiteStore
import Synchronization
import Testing
import WebUI

@Suite("the daemon's GPS timer through a real gpsd", .serialized)
struct GPSGateTests {
    @Test("a 10 Hz standing start through gpsd: the timer's states in order (ready, armed, running, complete); the live view as each milestone is passed shows the clock, distance and speed growing and the milestones filling in; the finished run's 0-60 and 1/4 mile within 10 ms of truth")
    func standingStart() async throws {
        if let why = GPSFake.skipReason { print("SKIP: \(why)"); return }
        let truth = Truth(GPSFakeTests.realistic)
        let epochs = NMEALog.epochs(truth, rate: 10, still: 3.037)
        let log = NMEALog.write(epochs, header: ["Name: noise-free standing start at 10 Hz", "Notes: synthetic, exact truth"])
        let port = GPSFake.freePort()
        let session = try await onOwnThread { try GPSFake.Session(log: log, name: "gate", cycle: 0.01, port: port) }
        // What the page would show at each event, taken on the client's thread as it happens
        // (a test polling from outside would depend on the machine's load).
        struct Seen { var states: [String] = []; var atMilestone: [GPSLive] = []; var atFinish: GPSLive? }
        let seen = Mutex(Seen())
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sprintgate-gps-\(getpid())-\(port)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try RunStore(directory: directory, logger: Logger(label: "test"))
        let golf = try store.addVehicle(Vehicle(name: "Blue Golf", year: 2019, make: "VW", model: "Golf", trim: "GTI"))
        let box = Mutex<GPSGate?>(nil)
        let gate = GPSGate(config: GPSDConfig(port: port, wantedRate: 10), settings: AccelerationSettings(), store: store,
                           logger: Logger(label: "test"), wallClock: { 1_800_000_000 }) { event in
            guard let live = box.withLock({ $0 })?.live() else { return }
            seen.withLock { s in
                switch event {
                case .state(let state, _): s.states.append(state.rawValue)
                case .milestone: s.atMilestone.append(live)
                case .finished: s.atFinish = live
                case .launched: break
                }
            }
        }
        box.withLock { $0 = gate }
        gate.start()
        defer { gate.stop() }
        let end = Date().addingTimeInterval(60)
        while gate.status.link == .noDaemon, Date() < end { try await Task.sleep(for: .milliseconds(20)) }
        session.go()
        _ = try await onOwnThread { session.finish() }
        while seen.withLock({ $0.atFinish == nil }), Date() < end { try await Task.sleep(for: .milliseconds(20)) }
        let s = seen.withLock { $0 }
        #expect(s.states == ["ready", "armed", "running", "complete"], "\(s.states)")
        // As each milestone is passed: the clock, distance and milestones grow, with the speed.
        // The last one (1/2 mile) completes the run with the same fix.
        let m = s.atMilestone
        #expect(m.count == 9, "\(m.count) milestones")
        let r = Array(m.prefix(8))
        #expect(r.map(\.milestones.count) == Array(1 ... 8))
        #expect(r.allSatisfy { $0.state == "running" && $0.link == "fix" && $0.mode == 3 })
        let elapsed = r.compactMap(\.elapsed), distance = r.compactMap(\.distance), speed = r.compactMap(\.speed)
        #expect(elapsed.count == 8 && elapsed == elapsed.sorted() && distance == distance.sorted() && speed == speed.sorted())
        #expect(r.first?.milestones.first?.name == "60 ft" && r.last?.milestones.last?.name == "1/4 mile")
        #expect(m.last?.state == "complete")
        #expect(Set(m.map(\.version)).count == m.count)
        let last = try #require(s.atFinish)
        #expect(last.state == "complete" && abs((last.rate ?? 0) - 10) < 1 && last.accuracyGate == 10)
        let run = try #require(last.last)
        #expect(run.milestones.last?.name == "1/2 mile")
        #expect(run.voided == nil && run.wallTime == 1_800_000_000 && last.runs.count == 1)
        let sixty = try #require(run.milestones.first { $0.name == "0-60 mph" })
        let quarter = try #require(run.milestones.first { $0.name == "1/4 mile" })
        #expect(abs(sixty.seconds - truth.seconds(.zeroTo60mph, rollout: false)!) < 0.010)
        #expect(abs(quarter.seconds - truth.seconds(.quarterMile, rollout: false)!) < 0.010)
        #expect(quarter.trapSpeed != nil && run.topSpeed > 60)
        // The page's JSON carries it.
        let json = String(decoding: try JSONEncoder().encode(last), as: UTF8.self)
        #expect(json.contains("\"state\":\"complete\"") && json.contains("\"name\":\"1\\/4 mile\""))
        // The finished run stays on show after the feed ends.
        #expect(gate.live().state == "complete")
        // Stored, under the active vehicle, before it was shown; and on show again after a restart.
        #expect(run.id != nil && run.vehicleID == golf.id && run.vehicleName == "Blue Golf" && last.activeVehicle == "Blue Golf")
        #expect(try store.gpsRuns(GPSRunQuery()) == [run])
        gate.stop()
        let again = GPSGate(config: GPSDConfig(port: GPSFake.freePort()), settings: AccelerationSettings(), store: store, logger: Logger(label: "test"))
        again.start()
        defer { again.stop() }
        #expect(again.live().runs == [run] && again.live().activeVehicle == "Blue Golf")
        #expect(try store.garage().vehicles.first?.runs == 1 && store.garage().vehicles.first?.bests["0-60 mph"] == sixty.seconds)
    }

    /// The drive `scripts/browser-test` plays to the page's in-car view.
    static let pageDrive = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("GPSReplays/drives/standing-start-10hz.nmea")

    @Test("the browser test's drive (GPSReplays/drives/standing-start-10hz.nmea) is NMEALog's noise-free standing start at 10 Hz (SPRINTGATE_REBUILD_CHK=1 writes it anew)")
    func pageDriveLog() throws {
        let truth = Truth(GPSFakeTests.realistic)
        let log = NMEALog.write(NMEALog.epochs(truth, rate: 10, still: 3.037), header: [
            "Synthetic, exact truth: written by NMEALog (Tests/GPSTimingTests) for the page's browser test.",
            "Name: noise-free standing start at 10 Hz, 3 s at rest, then a pull from 8 m/s2 towards 75 m/s",
            "0-60 mph \(String(format: "%.3f", truth.seconds(.zeroTo60mph, rollout: false)!)) s, "
                + "1/4 mile \(String(format: "%.3f", truth.seconds(.quarterMile, rollout: false)!)) s",
        ])
        if ProcessInfo.processInfo.environment["SPRINTGATE_REBUILD_CHK"] == "1" {
            try FileManager.default.createDirectory(at: Self.pageDrive.deletingLastPathComponent(), withIntermediateDirectories: true)
            try log.write(to: Self.pageDrive, atomically: true, encoding: .utf8)
        }
        let kept = try #require(try? String(contentsOf: Self.pageDrive, encoding: .utf8), "run with SPRINTGATE_REBUILD_CHK=1")
        #expect(kept == log)
    }

    @Test("the driver's feedback: armed, launch, each milestone, and complete or voided each have a cue; other states none")
    func cues() {
        let timed = AccelerationResult(launch: GPSTime(seconds: 1), start: GPSTime(seconds: 1), times: [], topSpeed: 30, topSpeedSeconds: 5,
                                       distance: 100, voided: nil, fixRate: 10)
        var voided = timed
        voided.voided = "no fix for 2.0 s"
        let m = MilestoneTime(milestone: .feet60, seconds: 2.3, uncertainty: 0.02, speed: 15)
        #expect(GPSGate.cue(for: .state(.armed, "standing still")) == .attention)
        #expect(GPSGate.cue(for: .launched(GPSTime(seconds: 1))) == .go)
        #expect(GPSGate.cue(for: .milestone(m)) == .mark)
        #expect(GPSGate.cue(for: .finished(timed)) == .done)
        #expect(GPSGate.cue(for: .finished(voided)) == .fault)
        for s in [AccelerationState.acquiring, .ready, .running, .complete, .voided] {
            #expect(GPSGate.cue(for: .state(s, "")) == nil)
        }
    }

    @Test("no gpsd: the live view says so and how to fix it, the timer acquiring; nothing stops")
    func noGPSD() async throws {
        let gate = GPSGate(config: GPSDConfig(port: GPSFake.freePort(), wantedRate: 10), settings: AccelerationSettings(accuracy: 5),
                           store: nil, logger: Logger(label: "test"))
        gate.start()
        defer { gate.stop() }
        let end = Date().addingTimeInterval(10)
        while gate.live().linkDetail == "not started", Date() < end { try await Task.sleep(for: .milliseconds(20)) }
        let v = gate.live()
        #expect(v.link == "no-gpsd" && v.linkDetail.contains("does not answer") && v.linkDetail.contains("systemctl status gpsd.socket"))
        #expect(v.state == "acquiring" && v.speed == nil && v.last == nil && v.accuracyGate == 5)
    }
}
