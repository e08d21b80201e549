// SPDX-License-Identifier: Apache-2.0
// The steady-state GPIO and sound paths make no heap allocation (malloc counted per thread).

#if canImport(CMallocCounter)
import CMallocCounter
import GateCore
import LinuxHardware
import Testing

// Why extensions: the rig suites are serialized, so these share the simulated lines and
// the loopback card with the other rig tests without racing them.
extension RigDevices.GPIORigTests {
    @Test("readEvents, set and LinePatterns.step allocate nothing")
    func gpio() throws {
        let cfg = { (name: String, low: Bool, bias: GPIOBias, ms: Int) in
            GPIOLineConfig(chip: HardwareRig.chipLabel, line: name, activeLow: low, bias: bias, debounceMilliseconds: ms)
        }
        var lines = try GPIODLines(lines: [
            .startButton: cfg("start-button", true, .pullUp, 20), .readyLED: cfg("ready-led", false, .asIs, 0),
            .armedLED: cfg("armed-led", false, .asIs, 0), .crossingLED: cfg("crossing-led", false, .asIs, 0),
            .buzzer: cfg("buzzer", false, .asIs, 0),
        ])
        var patterns = LinePatterns()
        var count = 0
        let t0 = Sys.monotonicNow()
        patterns.set(.armedLED, .blink(period: .milliseconds(10)), now: t0)
        // Warm up once outside the counted region.
        try lines.readEvents(now: t0) { _ in count += 1 }
        try patterns.step(now: t0, lines: &lines)
        var mallocs: Int64 = 0
        for k in 0..<20 {
            HardwareRig.pull("start-button", k % 2 == 0 ? "pull-down" : "pull-up")
            _ = try Sys.waitReadable(lines.fileDescriptors[0], timeoutMs: 200)
            let now = Sys.monotonicNow() + .milliseconds(Double(30 * k))
            sprintgate_alloc_count_begin()
            try lines.readEvents(now: now) { _ in count += 1 }
            try patterns.step(now: now, lines: &lines)
            try lines.set(.crossingLED, k % 2 == 0)
            try lines.set(.readyLED, true)
            mallocs += sprintgate_alloc_count_end()
        }
        #expect(count > 0)
        #expect(mallocs == 0)
    }

}

extension RigDevices.AudioRigTests {
    @Test("ALSABeeper.play and service allocate nothing")
    func sound() throws {
        var beeper = ALSABeeper(config: AudioConfig(device: HardwareRig.env("RIG_ALSA_PLAYBACK")!), sounds: SoundBank())
        let state = beeper.state
        try #require(state == .streaming)
        _ = try beeper.play(.crossing, now: Sys.monotonicNow())
        try beeper.service()
        var mallocs: Int64 = 0
        for _ in 0..<5 {
            sprintgate_alloc_count_begin()
            _ = try beeper.play(.beep, now: Sys.monotonicNow())
            for _ in 0..<50 {
                try beeper.service()
                HardwareRig.sleepMs(1)
            }
            mallocs += sprintgate_alloc_count_end()
        }
        #expect(mallocs == 0)
    }
}
#endif
