// SPDX-License-Identifier: Apache-2.0
// When a lone gate arms itself again after a run.

import Engine
import GateCore
import Testing

@Suite struct AutoRearmTests {
    let t0 = MonotonicInstant(nanoseconds: 1_000_000_000)

    /// Steps a fresh `AutoRearm` through `steps` (phase, seconds after t0) and returns
    /// whether each step was due.
    func run(_ config: EngineConfig, _ steps: [(EnginePhase, Double)]) -> [Bool] {
        var rearm = AutoRearm()
        return steps.map { rearm.due(phase: $0.0, config: config, now: t0 + .seconds($0.1)) }
    }

    @Test("due once, the delay after the run finished; not before, not twice")
    func dueOnceAfterTheDelay() {
        let config = EngineConfig()
        #expect(config.autoRearm && config.rearmDelay == .seconds(3))
        let due = run(config, [(.running(start: t0), 0), (.finished, 1), (.finished, 3.99), (.finished, 4),
                               // Had the loop not armed, the next finish is waited for afresh.
                               (.finished, 4.01), (.finished, 6.9), (.finished, 7.01)])
        #expect(due == [false, false, false, true, false, false, true])
    }

    @Test("off, or a phase other than finished (armed by hand, reset, a race host's arm), never due")
    func offOrAnotherPhase() {
        var config = EngineConfig()
        config.autoRearm = false
        #expect(!run(config, (0 ..< 100).map { (.finished, Double($0)) }).contains(true))
        config.autoRearm = true
        config.rearmDelay = .seconds(2)
        // Armed from the page a second after the finish: that finish is forgotten.
        let due = run(config, [(.finished, 0), (.armed, 1), (.finished, 2.5), (.idle, 30), (.finished, 31), (.finished, 33)])
        #expect(due == [false, false, false, false, false, true])
    }
}
