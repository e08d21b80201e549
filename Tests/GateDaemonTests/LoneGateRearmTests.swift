// SPDX-License-Identifier: Apache-2.0
// A lone gate times rep after rep with nobody touching the page: it arms itself again a
// few seconds after each run, as `run` and the demo both wire it through `GateServices`.

import Engine
import Foundation
import GateCore
import GateDaemon
import GateSim
import LinuxHardware
import SQLiteStore
import Testing
import WebUI

@Suite(.serialized) struct LoneGateRearmTests {
    /// Five reps of a button-release sprint, one every 9 s, in the loop's own time: the
    /// athlete lets go of the button, runs through the gate, walks back and goes again.
    /// Returns the finished times and how often the gate armed.
    func reps(_ config: EngineConfig, count: Int = 5) throws -> (finished: [Double], arms: Int, stored: Int) {
        let dir = StateDir()
        let spec = try #require(SceneCatalog.scene("sprint", fps: 60, variant: 2))
        let epoll = try EpollLoop()
        let now = Sys.monotonicNow()
        let storage = GateStorage.start(stateDirectory: dir.path, context: RunContext(preset: nil, startType: config.startType), log: LocalRaceTests.log)
        var finished: [Double] = []
        var arms = 0
        let gate = try LocalGate(spec: spec, engine: config, storage: storage, web: nil, peer: nil,
                                 stateDirectory: dir.path, epoll: epoll, now: now, log: LocalRaceTests.log, console: { event in
            guard case let .action(a, _) = event else { return }
            switch a {
            case let .finished(_, time): finished.append(time.seconds)
            case .phase(.armed): arms += 1
            default: break
            }
        })
        // Armed once, as `run` arms at start; every later arm is the gate's own.
        gate.loop.command(.arm, now: now)
        for i in 0 ..< count {
            let press = now + .seconds(1 + 9 * Double(i))
            gate.holdButton(from: press, releaseAt: press + .milliseconds(300))
            gate.schedulePass(crossingAt: press + .seconds(3))
        }
        var t = now
        let end = now + .seconds(9 * Double(count) + 2)
        while t < end {
            gate.step(now: t)
            t = t + .milliseconds(5)
        }
        _ = gate.stop()
        let stored = try storage.book.history(HistoryQuery()).count
        return (finished, arms, stored)
    }

    @Test("a lone gate times five reps with no tap on the page, each about 2.7 s, and stores all five")
    func fiveRepsWithNoTap() throws {
        var config = EngineConfig()
        config.startType = .buttonRelease
        let r = try reps(config)
        #expect(r.finished.count == 5, "\(r.finished)")
        for time in r.finished { #expect(abs(time - 2.7) < 0.05, "\(r.finished)") }
        // Armed at start, then again after each of the five runs.
        #expect(r.arms == 6, "armed \(r.arms) times")
        #expect(r.stored == 5)
    }

    @Test("with re-arming turned off the gate times one rep and waits, as before")
    func offWaitsForTheCoach() throws {
        var config = EngineConfig()
        config.startType = .buttonRelease
        config.autoRearm = false
        let r = try reps(config)
        #expect(r.finished.count == 1, "\(r.finished)")
        #expect(r.arms == 1)
    }
}
