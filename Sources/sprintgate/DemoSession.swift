// SPDX-License-Identifier: Apache-2.0
// `sprintgate demo --web`: the two-gate session in real time, served on the page. A start
// gate (the host, with the page) and a finish gate 30 m on run in this process as the
// daemon runs them, each with its own loop, storage and clock, over the race link on
// loopback UDP.

import Engine
import Foundation
import GateCore
import GateDaemon
import GateSim
import LinuxHardware
import Race
import Logging
import SQLiteStore
import WebUI

extension DemoCommand {
    /// The athlete's runs, over and over: a flying 30 m (the start gate's camera starts the
    /// clock), then a 30 m from a standing start on the start gate's button.
    static let flyingTime = 3.6, standingTime = 4.5
    /// Why 15 s: a run, the finish image's transfer and a pause before the next start.
    static let cycle = 15.0

    func runSession(port: Int) throws {
        // Why variants 2 and 9: the cameras `demo` without --web uses for the start and for
        // the standing start's finish; two gaits and builds, so the detector's errors at the
        // two gates differ as they would on a track.
        guard let startSpec = SceneCatalog.scene("sprint", fps: fps, variant: 2),
              let finishSpec = SceneCatalog.scene("sprint", fps: fps, variant: 9) else { fail("demo scene missing at \(fps) fps") }
        Sys.lineBufferedStandardOutput()
        var log = Logger(label: "sprintgate.web")
        log.logLevel = .notice
        var startLog = Logger(label: "sprintgate.start-gate"), finishLog = Logger(label: "sprintgate.finish-gate")
        startLog.logLevel = .notice
        finishLog.logLevel = .notice
        let finishDir = stateDir + "/finish-gate"
        makeDirectory(finishDir)
        var epoll = openLoop()
        let preset = Preset.named("flying-30m")
        let config = liveConfig()
        let hostStorage = GateStorage.start(stateDirectory: stateDir, demoPreset: preset, log: log)
        let web = startPage(port: port, config: config, preset: preset, spec: startSpec,
                            mode: "demo: this start gate hosts a finish gate 30 m on (same process, race link over loopback)",
                            book: hostStorage.book, wakeFD: epoll.wakeFD, log: log)
        // Each gate its own pairing, so two demos on one machine never join each other.
        let code = "DEMO-\(UInt32.random(in: 100_000...999_999))"
        // The Wi-Fi between them, as `demo` without --web simulates it: each way 3 ms ± 1 ms, 5 % lost.
        let wifi = SimulatedLink(delay: .milliseconds(3), jitter: .milliseconds(1), loss: 0.05)
        let t0 = Sys.monotonicNow()
        let host: LocalGate, finish: LocalGate
        // Both race links on the page's address (loopback unless --web-host says otherwise).
        var hostPeer = PeerOptions(role: .host, port: 0, pairingCode: code, gateID: 1, impairment: (wifi, 1))
        hostPeer.listenHost = webHost
        do {
            host = try LocalGate(spec: startSpec, engine: config, storage: hostStorage, web: web,
                                 peer: hostPeer,
                                 stateDirectory: stateDir, epoll: epoll, now: t0, log: startLog,
                                 clip: { SceneCatalog.scene("sprint", fps: $0, variant: 2) })
            guard let hostPort = host.link?.localPort, let address = UDPAddress(host: "127.0.0.1", port: hostPort) else {
                fail("the start gate's race link has no port")
            }
            // The finish gate's clock: 2.7 s ahead of the start gate's and 35 ppm fast.
            var skew = ClockSkew()
            skew.offsetNanoseconds = 2_700_000_000
            skew.ppm = 35
            skew.origin = t0
            var finishPeer = PeerOptions(role: .gate, port: 0, pairingCode: code, hostAddress: address, gateID: 2, skew: skew,
                                         impairment: (wifi, 2))
            finishPeer.listenHost = webHost
            finish = try LocalGate(spec: finishSpec, engine: config,
                                   storage: GateStorage.start(stateDirectory: finishDir, demoPreset: preset, log: log), web: nil,
                                   peer: finishPeer,
                                   stateDirectory: finishDir, epoll: epoll, now: t0, log: finishLog)
        } catch { fail("race link not started: \(error)") }
        guard let hostLink = host.link else { fail("demo gates without a race link") }
        print("SprintGate demo: a start gate (this page) and a finish gate 30 m on, each with its own loop, camera clip")
        print("and clock (the finish gate's 2.7 s ahead and 35 ppm fast), over the race link on loopback UDP")
        print("with a simulated Wi-Fi link's delay (3 ms ± 1 ms each way) and loss (5 %).")

        // What the athlete does, in order; each run's true time is printed beside the result.
        final class Runs: @unchecked Sendable { var truths: [(title: String, seconds: Double)] = []; var timed = 0 }
        let runs = Runs()
        let store = hostLink.onRaceFinished
        hostLink.onRaceFinished = { run in
            store?(run)
            runs.timed += 1
            let (title, truth) = runs.truths.isEmpty ? ("run", Double.nan) : runs.truths.removeFirst()
            guard let total = run.totalNs, let last = run.splits.last else { return }
            let seconds = Double(total) / 1e9
            // Why two sigmas: the 95 % bound, the figure a coach reads as "to within".
            let bound = 2 * Double(last.syncUncertaintyNs) / 1e9
            let speed = last.segmentSpeed.map { ", \(ClipCrossing.fixed($0, 2)) m/s" } ?? ""
            let error = seconds - truth
            print("\(title): 30 m in \(ClipCrossing.fixed(seconds, 4)) s ± \(ClipCrossing.fixed(bound * 1000, 2)) ms (95 %)\(speed); "
                + "truth \(ClipCrossing.fixed(truth, 4)) s, error \(error >= 0 ? "+" : "")\(ClipCrossing.fixed(error * 1000, 2)) ms"
                + (abs(error) > bound ? " (outside the stated bound)" : ""))
        }
        var actions: [(at: MonotonicInstant, what: (MonotonicInstant) -> Void)] = []
        func plan(cycleStart c: MonotonicInstant, number n: Int) {
            // Flying: the torso crosses the start line 1 s into the cycle, the finish 3.6 s later.
            let crossStart = c + .seconds(1), crossFinish = crossStart + .seconds(Self.flyingTime)
            actions.append((c, { now in
                hostLink.setStartType(.flying, now: now)
                runs.truths.append(("run \(2 * n + 1), flying start", crossFinish.since(crossStart).seconds))
                host.schedulePass(crossingAt: crossStart)
                finish.schedulePass(crossingAt: crossFinish)
            }))
            // Button release 8 s into the cycle; the finish 4.5 s later.
            let release = c + .seconds(8), crossStanding = release + .seconds(Self.standingTime)
            actions.append((c + .seconds(6), { now in
                hostLink.setStartType(.buttonRelease, now: now)
                runs.truths.append(("run \(2 * n + 2), button-release start", crossStanding.since(release).seconds))
                host.holdButton(from: release - .seconds(1.5), releaseAt: release)
                finish.schedulePass(crossingAt: crossStanding)
            }))
        }
        let end = seconds.map { t0 + .seconds($0) }
        var synced = false
        var cycles = 0
        while true {
            let (now, _) = epoll.wait(until: Sys.monotonicNow() + .milliseconds(2))
            if let end, now >= end { break }
            if let signal = EpollLoop.stopSignal {
                print("stopping on signal \(signal)")
                break
            }
            host.step(now: now)
            finish.step(now: now)
            if !synced, hostLink.racePhase == .ready || hostLink.racePhase == .waitingForCrossing {
                synced = true
                print("clocks synced after \(ClipCrossing.fixed(now.since(t0).seconds, 1)) s; the finish gate is placed at 30 m")
                hostLink.assign(gate: 2, role: "finish", distanceMetres: 30, now: now)
                plan(cycleStart: now + .seconds(1), number: 0)
            }
            while let first = actions.first, first.at <= now {
                actions.removeFirst()
                first.what(now)
                if actions.isEmpty {
                    cycles += 1
                    plan(cycleStart: first.at + .seconds(Self.cycle - 6), number: cycles)
                }
            }
        }
        let hostSummary = host.stop(), finishSummary = finish.stop()
        print("demo summary: \(runs.timed) runs timed; start gate \(host.loop.stats.frames) frames, \(host.loop.stats.crossings) crossings; "
            + "finish gate \(finish.loop.stats.frames) frames, \(finish.loop.stats.crossings) crossings; "
            + "web commands dropped \(web.bridge.commands.dropped)")
        for s in [hostSummary, finishSummary].compactMap({ $0 }) { print(s) }
    }
}
