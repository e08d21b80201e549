// SPDX-License-Identifier: Apache-2.0
// Two whole gates in this process, wired as the daemon wires them (race link on real UDP
// sockets over loopback, 10 % of datagrams lost, SQLite storage threads, photo-finish
// links), timing a flying run and a button-release run; the results are read back from
// the host's database.

import Engine
import Foundation
import GateCore
import GateDaemon
import GateSim
import LinuxHardware
import Logging
import Race
import SQLiteStore
import Testing
import WebUI

/// This process's resident memory, MB (`/proc/self/statm`).
func residentMB() -> Double {
    let fields = ((try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? "").split(separator: " ")
    return fields.count > 1 ? (Double(fields[1]) ?? 0) * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576 : 0
}

/// A fresh state directory, removed when the value is released.
final class StateDir {
    let path = NSTemporaryDirectory() + "sprintgate-daemon-\(UUID().uuidString)"
    init() { try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

@Suite(.serialized) struct LocalRaceTests {
    static let log: Logger = {
        var l = Logger(label: "sprintgate.test")
        l.logLevel = .critical
        return l
    }()

    /// A start gate that hosts and a finish gate 30 m on, the finish gate's peer clock 2.7 s
    /// ahead and 35 ppm fast; both replay the same sprint scene, so the true time of a run is
    /// exactly the gap between the passes (the detector's error is the same at both gates).
    struct Pair {
        let hostDir = StateDir(), gateDir = StateDir()
        let host: LocalGate
        let gate: LocalGate

        init() throws {
            let spec = try #require(SceneCatalog.scene("sprint", fps: 120, variant: 2))
            // Both ways: 2 ms ± 1 ms, 10 % of datagrams lost, 5 % doubled.
            let lossy = SimulatedLink(delay: .milliseconds(2), jitter: .milliseconds(1), loss: 0.1, duplicate: 0.05)
            let epoll = try EpollLoop()
            let now = Sys.monotonicNow()
            let hostStorage = GateStorage.start(stateDirectory: hostDir.path, context: RunContext(preset: nil, startType: .flying), log: LocalRaceTests.log)
            host = try LocalGate(spec: spec, engine: EngineConfig(), storage: hostStorage, web: nil,
                                 peer: PeerOptions(role: .host, port: 0, pairingCode: "TRACK-2024", gateID: 1, impairment: (lossy, 1)),
                                 stateDirectory: hostDir.path, epoll: epoll, now: now, log: LocalRaceTests.log)
            let hostPort = try #require(host.link?.localPort)
            var skew = ClockSkew()
            skew.offsetNanoseconds = 2_700_000_000
            skew.ppm = 35
            skew.origin = now
            let gateStorage = GateStorage.start(stateDirectory: gateDir.path, context: RunContext(preset: nil, startType: .flying), log: LocalRaceTests.log)
            gate = try LocalGate(spec: spec, engine: EngineConfig(), storage: gateStorage, web: nil,
                                 peer: PeerOptions(role: .gate, port: 0, pairingCode: "TRACK-2024",
                                                   hostAddress: UDPAddress(host: "127.0.0.1", port: hostPort), gateID: 2, skew: skew,
                                                   impairment: (lossy, 2)),
                                 stateDirectory: gateDir.path, epoll: epoll, now: now, log: LocalRaceTests.log)
        }

        /// Steps both gates every millisecond until `done` holds or `limit` passes; whether it held.
        func run(for limit: Span, until done: () -> Bool = { false }) -> Bool {
            let end = Sys.monotonicNow() + limit
            while true {
                let now = Sys.monotonicNow()
                host.step(now: now)
                gate.step(now: now)
                if done() { return true }
                if now >= end { return false }
                usleep(1000)
            }
        }

        func hostRuns() -> [RunRecord] {
            (try? host.services.storage.book.history(HistoryQuery())) ?? []
        }
    }

    @Test func flyingAndButtonReleaseRunsAreStoredByTheHost() throws {
        let p = try Pair()
        let hostLink = try #require(p.host.link)
        // Why 30 s: syncing takes a few seconds of pings; a loaded machine may need more.
        // Every gate synced: the host is ready, or has armed the first run already.
        let synced: Set<RacePhase> = [.ready, .waitingForCrossing]
        #expect(p.run(for: .seconds(30)) { synced.contains(hostLink.racePhase) }, "the gates never synced: \(hostLink.racePhase)")
        hostLink.assign(gate: 2, role: "finish", distanceMetres: 30, now: Sys.monotonicNow())
        _ = p.run(for: .milliseconds(500))

        // Run 1, flying: the athlete passes the start gate, then the finish gate 3.6 s later.
        let pass = Sys.monotonicNow() + .seconds(1)
        p.host.schedulePass(crossingAt: pass)
        p.gate.schedulePass(crossingAt: pass + .seconds(3.6))
        #expect(p.run(for: .seconds(20)) { p.hostRuns().count >= 1 }, "the flying run was not stored")

        // Run 2, button release at the start gate: the finish 4.5 s after the release.
        hostLink.setStartType(.buttonRelease, now: Sys.monotonicNow())
        _ = p.run(for: .milliseconds(500))
        let release = Sys.monotonicNow() + .seconds(1.5)
        p.host.holdButton(from: release - .seconds(1), releaseAt: release)
        p.gate.schedulePass(crossingAt: release + .seconds(4.5))
        #expect(p.run(for: .seconds(20)) { p.hostRuns().count >= 2 }, "the button-release run was not stored")
        // The finish gate's photo-finish image of each run reaches the host's database.
        #expect(p.run(for: .seconds(15)) { p.hostRuns().count == 2 && p.hostRuns().allSatisfy { $0.photoGates.contains(1) } },
                "the finish gate's images did not reach the host")
        // So do its frames around each crossing (`calibrationFrames`).
        #expect(p.run(for: .seconds(15)) { p.hostRuns().count == 2 && p.hostRuns().allSatisfy { $0.frameGates.contains(1) } },
                "the finish gate's frames did not reach the host")
        _ = p.host.stop()
        _ = p.gate.stop()

        let runs = p.hostRuns().sorted { $0.id < $1.id }
        try #require(runs.count == 2)
        #expect(runs[0].startType == "flying")
        #expect(runs[0].distanceMetres == 30)
        #expect(abs(runs[0].seconds - 3.6) < 0.002, "flying 30 m: \(runs[0].seconds) s, truth 3.600 s")
        #expect(runs[1].startType == "button-release")
        // The button edge is exact; the finish crossing carries the detector's error (a few ms at 120 fps).
        #expect(abs(runs[1].seconds - 4.5) < 0.005, "button-release 30 m: \(runs[1].seconds) s, truth 4.500 s")
        #expect(runs.allSatisfy { $0.hasPhoto }, "the finish image is each run's photo finish")
        // The flying run's start is the host's own crossing: its frames are stored too.
        #expect(runs[0].frameGates == [0, 1] && runs[1].frameGates == [1], "frame strips: \(runs.map(\.frameGates))")
        let book = p.host.services.storage.book
        for run in runs {
            let strip = try #require(try book.gateFrames(id: run.id, gateIndex: 1))
            // Six frames either side of the finish crossing, 1/120 s apart.
            #expect(strip.frames.count == 12, "run \(run.id): \(strip.frames.count) frames")
            #expect(strip.frames[5].offsetMs < 0 && strip.frames[6].offsetMs >= 0, "offsets \(strip.frames.map(\.offsetMs))")
            for (a, b) in zip(strip.frames, strip.frames.dropFirst()) {
                #expect(abs(b.offsetMs - a.offsetMs - 1000 / 120.0) < 0.5, "offsets \(strip.frames.map(\.offsetMs))")
            }
            #expect(strip.gateX > 0 && strip.gateX < 160)
            for f in strip.frames {
                let jpeg = try #require(try book.gateFrame(id: run.id, gateIndex: 1, position: f.position))
                #expect(jpeg.starts(with: [0xFF, 0xD8]))
            }
        }
        // The finish gate's photo came with its time scale: the coach places the finish by
        // hand on it, and the run is re-timed (and put back).
        let detail = try book.run(id: runs[1].id)
        let scale = try #require(detail.photoScale, "the finish gate's photo reached the host without its scale")
        #expect(scale.millisecondsPerColumn > 0 && scale.millisecondsPerColumn < 1000 / 120.0 + 0.5, "\(scale)")
        let columns = 10.0
        let corrected = try book.correctFinish(id: runs[1].id, offsetMs: columns * scale.millisecondsPerColumn)
        #expect(abs(corrected.seconds - (runs[1].seconds + columns * scale.millisecondsPerColumn / 1000)) < 1e-6)
        #expect(corrected.measuredSeconds.map { abs($0 - runs[1].seconds) < 1e-9 } == true)
        #expect(try book.correctFinish(id: runs[1].id, offsetMs: nil).seconds == runs[1].seconds)
        // In a session the finish gate's own engine stores nothing (a lone gate's run would
        // be the next athlete through it).
        #expect(((try? p.gate.services.storage.book.history(HistoryQuery())) ?? []).isEmpty)
    }
}

@Suite struct WebRunTests {
    /// The settings view says where the gate line is: the settings file's column, or the
    /// frame's middle, never "from the board" (the board file does not place it).
    @Test func theGateLineIsShownWhereItIs() {
        #expect(WebGate.gateLineText(412.5, frameWidth: 1280) == "412.5 px of 1280 (gate_x in the settings file)")
        #expect(WebGate.gateLineText(nil, frameWidth: 640).hasPrefix("320.0 px of 640 (the middle of the frame"))
    }
}
