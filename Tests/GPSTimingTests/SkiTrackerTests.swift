// SPDX-License-Identifier: Apache-2.0
// The daemon's ski track logger against a real gpsd: a lift and a run played through
// gpsfake while tracking is on, every fix stored, the gate "restarted" mid-track, and the
// day's run found from what was stored.

import Foundation
import GateDaemon
import GPSD
import GPSTiming
import Logging
import SkiRuns
import SQLiteStore
import Testing
import WebUI

@Suite("the daemon's ski track logger through a real gpsd", .serialized)
struct SkiTrackerTests {
    /// 20 s standing, a chairlift north for 200 s (3 m/s, climbing 2 m/s: 400 m up), 20 s
    /// at the top, a run south for 250 s in turns (15 m either side every 20 s, 7 to 11 m/s
    /// down the hill, dropping 1.6 m/s: 400 m down), 20 s at the bottom; 1 Hz. Altitude as a
    /// receiver gives it, to 0.1 m, wobbling ±1.5 m. With the run's distance and top speed.
    static func day() -> (epochs: [NMEAEpoch], runDistance: Double, topSpeed: Double) {
        var out: [NMEAEpoch] = []
        var t = 0.0, north = 0.0, east = 0.0, z = 1500.0, distance = 0.0, top = 0.0
        func stand(_ seconds: Int) {
            for _ in 0 ..< seconds {
                out.append(NMEAEpoch(time: t, speed: 0, east: east, north: north, altitude: z + 1.5 * sin(t * 0.7)))
                t += 1
            }
        }
        stand(20)
        for _ in 0 ..< 200 {
            out.append(NMEAEpoch(time: t, speed: 3, east: east, north: north, altitude: z + 1.5 * sin(t * 0.7)))
            t += 1
            north += 3
            z += 2
        }
        stand(20)
        for k in 0 ..< 250 {
            let s = Double(k)
            let vn = -(9 + 2 * sin(2 * .pi * s / 60)), ve = 15 * (2 * .pi / 20) * cos(2 * .pi * s / 20)
            let speed = (vn * vn + ve * ve).squareRoot()
            out.append(NMEAEpoch(time: t, speed: speed, east: east, north: north, altitude: z + 1.5 * sin(t * 0.7)))
            if k > 0 { distance += speed }
            top = max(top, speed)
            t += 1
            north += vn
            east += ve
            z -= 1.6
        }
        stand(20)
        return (out, distance, top)
    }

    static func log() -> String {
        NMEALog.write(day().epochs, header: [
            "Synthetic, exact truth: written by NMEALog (Tests/GPSTimingTests) for the ski logger's tests and the page's browser test.",
            "Name: a chairlift north (400 m up in 200 s) and a run south in turns (400 m down) at 1 Hz, standing 20 s between",
            "Truth: 1 lift, 1 run, vertical 400 m, run distance \(String(format: "%.1f", day().runDistance)) m, top speed \(String(format: "%.2f", day().topSpeed)) m/s",
        ])
    }

    /// The day `scripts/browser-test` plays to the page's ski section.
    static let pageDay = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("GPSReplays/ski/lift-and-run-1hz.nmea")

    @Test("the browser test's ski day (GPSReplays/ski/lift-and-run-1hz.nmea) is this suite's lift and run (SPRINTGATE_REBUILD_CHK=1 writes it anew)")
    func pageDayLog() throws {
        let log = Self.log()
        if ProcessInfo.processInfo.environment["SPRINTGATE_REBUILD_CHK"] == "1" {
            try FileManager.default.createDirectory(at: Self.pageDay.deletingLastPathComponent(), withIntermediateDirectories: true)
            try log.write(to: Self.pageDay, atomically: true, encoding: .utf8)
        }
        let kept = try #require(try? String(contentsOf: Self.pageDay, encoding: .utf8), "run with SPRINTGATE_REBUILD_CHK=1")
        #expect(kept == log)
    }

    @Test("the start button (with [ski] button): a press starts tracking, the next stops it, each answered off the caller's thread; without a database a press fails and says so")
    func button() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sprintgate-ski-button-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try RunStore(directory: directory, logger: Logger(label: "test"))
        let tracker = SkiTracker(store: store, logger: Logger(label: "test"))
        func press(_ t: SkiTracker) async -> Bool? {
            await withCheckedContinuation { (k: CheckedContinuation<Bool?, Never>) in t.buttonPressed(sport: .snowboard) { k.resume(returning: $0) } }
        }
        #expect(await press(tracker) == true)
        let live = tracker.skiLive()
        #expect(live.recording && live.track?.sport == .snowboard)
        #expect(await press(tracker) == false)
        #expect(!tracker.skiLive().recording)
        #expect(try store.skiTracks().count == 1 && store.skiTracks()[0].endedWall != nil)
        #expect(await press(SkiTracker(store: nil, logger: Logger(label: "test"))) == nil)
    }

    @Test("a fix gpsd reports twice (one epoch, two reports) is taken and counted once; fixes without a 3D position are not taken; the count shown is the fixes stored; once stopped, no fix is taken")
    func sameInstantOnce() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sprintgate-ski-twice-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try RunStore(directory: directory, logger: Logger(label: "test"))
        let tracker = SkiTracker(store: store, logger: Logger(label: "test"))
        let track = try tracker.startTracking(sport: .ski, name: "")
        func fix(_ s: Double, mode: FixMode = .threeD) -> GPSFix {
            GPSFix(time: GPSTime(seconds: 1_800_000_000 + s), mode: mode, speed: 3, latitude: 46, longitude: 7, altitude: mode == .threeD ? 2000 : nil)
        }
        for s in 0 ..< 30 {
            tracker.ingest(fix(Double(s)))
            tracker.ingest(fix(Double(s)))
            tracker.ingest(fix(Double(s) + 0.5, mode: .twoD))
        }
        let live = tracker.skiLive()
        #expect((live.track?.points ?? 0) + live.pending == 30)
        tracker.flush()
        #expect(tracker.skiLive().track?.points == 30 && tracker.skiLive().pending == 0)
        #expect(try store.skiTrack(id: track.id).points == 30)
        // Stopped: the fixes that keep coming are taken for no track.
        #expect(try tracker.stopTracking()?.points == 30)
        tracker.ingest(fix(100))
        #expect(!tracker.skiLive().recording && tracker.skiLive().pending == 0)
        #expect(try store.skiTrack(id: track.id).points == 30)
    }

    @Test("tracking on, a lift and a run through gpsd at 1 Hz: every fix stored (at most the last second unwritten when the gate stops without warning, and that second written on a clean stop); the gate started again goes on with the same track; the day has one lift and one run, vertical within 2 % of 400 m; GPX of the track reads back")
    func liftAndRun() async throws {
        if let why = GPSFake.skipReason { print("SKIP: \(why)"); return }
        let (epochs, runDistance, topSpeed) = Self.day()
        let log = Self.log()
        let port = GPSFake.freePort()
        let session = try await onOwnThread { try GPSFake.Session(log: log, name: "ski", cycle: 0.002, port: port) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sprintgate-ski-\(getpid())-\(port)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try RunStore(directory: directory, logger: Logger(label: "test"))
        let tracker = SkiTracker(store: store, logger: Logger(label: "test"), wallClock: { 1_800_000_000 })
        let gate = GPSGate(config: GPSDConfig(port: port, wantedRate: 1), settings: AccelerationSettings(), store: store,
                           logger: Logger(label: "test"), onFix: { tracker.ingest($0) })
        tracker.follow { gate.status }
        let track = try tracker.startTracking(sport: .ski, name: "Test hill")
        gate.start()
        defer { gate.stop() }
        let end = Date().addingTimeInterval(90)
        while gate.status.link == .noDaemon, Date() < end { try await Task.sleep(for: .milliseconds(20)) }
        session.go()
        _ = try await onOwnThread { session.finish() }
        func taken() -> Int {
            let l = tracker.skiLive()
            return (l.track?.points ?? 0) + l.pending
        }
        while taken() < epochs.count, Date() < end { try await Task.sleep(for: .milliseconds(20)) }
        let live = tracker.skiLive()
        #expect(taken() == epochs.count, "\(taken()) fixes taken of \(epochs.count)")
        #expect(live.recording && live.storeError == nil)
        gate.stop()
        // The gate stops without warning: what was written is there, and a new gate goes on
        // with the same track. (Its writer writes each batch as it comes; the feed above is
        // faster than real time, so it is given a moment to catch up.)
        var stored = try store.skiTrack(id: track.id).points
        while stored < epochs.count - 2, Date() < end {
            try await Task.sleep(for: .milliseconds(20))
            stored = try store.skiTrack(id: track.id).points
        }
        #expect(stored >= epochs.count - 2 && stored <= epochs.count, "\(stored) stored")
        let again = SkiTracker(store: store, logger: Logger(label: "test"))
        again.resume()
        #expect(again.skiLive().recording && again.skiLive().track?.id == track.id && again.skiLive().track?.points == stored)
        // The first gate's last second, written on a clean stop, joins the same track.
        tracker.flush()
        let stopped = try #require(try again.stopTracking())
        #expect(stopped.points == epochs.count && !stopped.recording)
        // The day from what gpsd gave and the store kept.
        let day = try again.day(track.id)
        #expect(day.runs.count == 1 && day.lifts.count == 1, "\(day.runs.count) runs, \(day.lifts.count) lifts")
        if let run = day.runs.first {
            print("ski logger through gpsd: \(stopped.points) of \(epochs.count) fixes stored; run vertical "
                + "\(String(format: "%.1f", run.vertical)) m (truth 400.0), distance \(String(format: "%.1f", run.distance)) m "
                + "(truth \(String(format: "%.1f", runDistance))), top speed \(String(format: "%.2f", run.topSpeed)) m/s "
                + "(truth \(String(format: "%.2f", topSpeed))); lift \(String(format: "%.1f", day.lifts.first?.vertical ?? 0)) m up (truth 400.0)")
            #expect(abs(run.vertical - 400) <= 8, "vertical \(run.vertical)")
            #expect(abs(run.topSpeed - topSpeed) < 0.05, "top speed \(run.topSpeed), truth \(topSpeed)")
            #expect(abs(run.distance - runDistance) <= 0.03 * runDistance, "distance \(run.distance), truth \(runDistance)")
        }
        let (_, gpx) = try again.gpx(track.id, run: nil)
        #expect(try GPX.read(Array(gpx.utf8)).points.count == epochs.count)
    }
}
