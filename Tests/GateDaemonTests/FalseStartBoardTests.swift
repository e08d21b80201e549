// SPDX-License-Identifier: Apache-2.0
// A false start on the live board: the engine's own actions, in the order it emits them (the
// false start, then armed again in the same step), fed to the page's side of the gate. The
// reason stays until the next run begins, on a lone gate and when another gate of a race
// false-started.

import Engine
import GateConfig
import Foundation
import GateCore
import GateDaemon
import LinuxHardware
import SQLiteStore
import Testing
import WebUI

@Suite struct FalseStartBoardTests {
    /// A voice start on a real engine: "On your marks", "Set", then movement before the gun.
    /// Every action goes to the board as the loop passes them on.
    @Test func aFalseStartStaysOnTheBoardUntilTheNextRunBegins() throws {
        let dir = StateDir()
        let epoll = try EpollLoop()
        let storage = GateStorage.start(stateDirectory: dir.path, context: RunContext(preset: nil, startType: .voice), log: LocalRaceTests.log)
        defer { _ = storage.stop() }
        var config = EngineConfig()
        config.startType = .voice
        config.setPause = 5...5
        let web = try WebGate(gateName: "test", stateDirectory: dir.path, config: config, preset: nil, speedUnit: .metresPerSecond,
                              details: [:], book: storage.book, wakeFD: epoll.wakeFD, log: LocalRaceTests.log, fps: 30)
        var engine = Engine(config: config)
        var now = MonotonicInstant(seconds: 100)
        var seen: [String] = []
        func step(_ input: EngineInput) {
            var out: [EngineAction] = []
            engine.step(input, now: now, into: &out)
            for a in out {
                web.observe(.action(a, now))
                if case let .phase(p) = a { seen.append(WebGate.describe(p).0) }
                if case .falseStart = a { seen.append("false start") }
            }
        }
        func status(motion: Double) -> EngineInput {
            var set = DetectionSet()
            set.status = GateStatus(armed: true, ready: true, clear: false, blobHeight: 0.8, motion: motion)
            return .frame(set, frameTime: now)
        }
        func board() -> String? { web.bridge.snapshot.read().snapshot.falseStart }

        step(.command(.arm))
        step(.command(.start))
        while now < MonotonicInstant(seconds: 113) { now = now + .seconds(0.01); step(.tick) }
        #expect(board() == nil)
        step(status(motion: 0.01))
        now = now + .seconds(0.1)
        step(status(motion: 0.09))
        #expect(seen.suffix(2) == ["false start", "armed"], "the engine arms again in the same step")
        #expect(board() == FalseStartReason.movement.rawValue)
        // Polled as the page polls it, the reason stays through the wait for the next run.
        for _ in 0..<100 { now = now + .seconds(0.01); step(.tick) }
        #expect(board() == FalseStartReason.movement.rawValue && web.bridge.snapshot.read().snapshot.phase == "armed")
        // The next run begins: the board is clear for it.
        step(.command(.start))
        #expect(web.bridge.snapshot.read().snapshot.phase == "starting")
        #expect(board() == nil)

        // A race: another gate false-started; this gate's engine re-arms, the board says
        // which gate and why, until the next run begins.
        web.showFalseStartElsewhere(gate: "1", reason: FalseStartReason.buttonReleased.rawValue)
        step(.command(.falseStartElsewhere))
        #expect(board() == "button released before the start sound (at gate 1)")
        step(.command(.reset))
        #expect(board() == nil)
    }
}
