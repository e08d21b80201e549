// SPDX-License-Identifier: Apache-2.0
// GPIODLines against the kernel's gpio-sim in the rig: edges, timestamps, debounce, outputs, bias, errors.

import GateCore
import LinuxHardware
import Testing

private func line(_ name: String, activeLow: Bool = false, bias: GPIOBias = .asIs, debounce: Int = 0) -> GPIOLineConfig {
    GPIOLineConfig(chip: HardwareRig.chipLabel, line: name, activeLow: activeLow, bias: bias, debounceMilliseconds: debounce)
}

/// The rig's button as the Pi boards wire it: to ground, pull-up, active low, 20 ms debounce.
private let button = line("start-button", activeLow: true, bias: .pullUp, debounce: 20)

private let outputs: [GPIORole: GPIOLineConfig] = [
    .readyLED: line("ready-led"), .armedLED: line("armed-led"),
    .crossingLED: line("crossing-led", activeLow: true), .buzzer: line("buzzer"),
]

/// Waits up to `ms` for the button's descriptor, then reads events at `now`.
private func collect(_ lines: inout GPIODLines, waitMs: Int32 = 200, now: MonotonicInstant? = nil) throws -> [LineEvent] {
    _ = try Sys.waitReadable(lines.fileDescriptors[0], timeoutMs: waitMs)
    var got: [LineEvent] = []
    try lines.readEvents(now: now ?? Sys.monotonicNow()) { got.append($0) }
    return got
}

extension RigDevices {
    @Suite("GPIO on gpio-sim", .serialized, .enabled(if: HardwareRig.gpioAvailable))
    struct GPIORigTests {
        @Test("pressing the button gives one rising edge stamped on CLOCK_MONOTONIC")
        func press() throws {
            var lines = try GPIODLines(lines: [.startButton: button], boardFile: "rig")
            let fdCount = lines.fileDescriptors.count
            let idle = try lines.level(.startButton)
            #expect(fdCount == 1)
            #expect(idle == false, "pull-up bias reads released (active low)")
            #expect(HardwareRig.value("start-button") == 1, "the requested pull-up drives the sim line high")
            var lags: [Double] = []
            for i in 0..<10 {
                let before = Sys.monotonicNow()
                HardwareRig.pull("start-button", "pull-down")  // pressed: shorted to ground
                let events = try collect(&lines)
                let after = Sys.monotonicNow()
                try #require(events.count == 1, "press \(i): \(events)")
                let e = events[0]
                #expect(e.role == .startButton && e.edge == .rising)
                #expect(e.timestamp >= before && e.timestamp <= after, "kernel stamp is on CLOCK_MONOTONIC")
                lags.append(after.since(e.timestamp).milliseconds)
                // Why 50 ms: a wrong clock domain is off by seconds; the margin absorbs the
                // single emulated CPU being busy with other suites.
                #expect(after.since(e.timestamp) < .milliseconds(50))
                HardwareRig.sleepMs(25)
                HardwareRig.pull("start-button", "pull-up")
                let rel = try collect(&lines)
                #expect(rel.map(\.edge) == [.falling])
                HardwareRig.sleepMs(25)
            }
            print("GPIO press: event to read latency ms: mean \(lags.reduce(0, +) / Double(lags.count)) max \(lags.max()!)")
        }

        @Test("a bounce burst within the debounce window gives one edge; the settled level is right")
        func bounce() throws {
            // Why 100 ms: the burst of sysfs writes must fit in the window even when the emulated
            // CPU is shared with other suites; the rule does not depend on the length.
            var lines = try GPIODLines(lines: [.startButton: line("start-button", activeLow: true, bias: .pullUp, debounce: 100)])
            var seen: [LineEvent] = []
            let t0 = Sys.monotonicNow()
            for k in 0..<7 { HardwareRig.pull("start-button", k % 2 == 0 ? "pull-down" : "pull-up") }  // ends pressed
            let burst = Sys.monotonicNow().since(t0)
            seen += try collect(&lines, waitMs: 50)
            HardwareRig.sleepMs(110)
            seen += try collect(&lines, waitMs: 0)
            print("GPIO bounce: 7 edges in \(burst.milliseconds) ms gave \(seen.map(\.edge)) seq \(seen.map(\.lineSequence))")
            try #require(burst < .milliseconds(90), "the burst must fit in the 100 ms window for this test")
            #expect(seen.map(\.edge) == [.rising])
            #expect(seen.first?.lineSequence == 1)
            let pending = lines.nextSettleCheck
            let pressed = try lines.level(.startButton)
            #expect(pending == nil)
            #expect(pressed)

            // A tap shorter than the window: press reported at once, release at the settle check,
            // stamped with the release edge's kernel time.
            HardwareRig.pull("start-button", "pull-up")
            HardwareRig.sleepMs(110)
            _ = try collect(&lines, waitMs: 0)
            let tapStart = Sys.monotonicNow()
            HardwareRig.pull("start-button", "pull-down")
            HardwareRig.pull("start-button", "pull-up")
            let tapEnd = Sys.monotonicNow()
            let first = try collect(&lines, waitMs: 50)
            #expect(first.map(\.edge) == [.rising])
            let check = lines.nextSettleCheck
            let due = try #require(check)
            #expect(try collect(&lines, waitMs: 0, now: due - .milliseconds(1)).isEmpty)
            let settled = try collect(&lines, waitMs: 0, now: due)
            #expect(settled.map(\.edge) == [.falling])
            if let r = settled.first, let p = first.first {
                #expect(r.timestamp > p.timestamp && r.timestamp <= tapEnd && p.timestamp >= tapStart)
                #expect(r.lineSequence == p.lineSequence + 1 && r.globalSequence > p.globalSequence)
            }
        }

        @Test("outputs reach the sim's value, active-low inverted, initially inactive; unchanged levels cost no syscall")
        func outputsAndCache() throws {
            var lines = try GPIODLines(lines: outputs)
            let noInputs = lines.fileDescriptors.isEmpty
            #expect(noInputs)
            #expect(HardwareRig.value("ready-led") == 0 && HardwareRig.value("crossing-led") == 1, "inactive at request")
            for (role, name) in [(GPIORole.readyLED, "ready-led"), (.armedLED, "armed-led"), (.buzzer, "buzzer")] {
                try lines.set(role, true)
                #expect(HardwareRig.value(name) == 1, "\(name) on")
                try lines.set(role, false)
                #expect(HardwareRig.value(name) == 0, "\(name) off")
            }
            try lines.set(.crossingLED, true)
            #expect(HardwareRig.value("crossing-led") == 0, "active-low on drives low")
            let writes = lines.outputWrites
            for _ in 0..<100 { try lines.set(.crossingLED, true) }
            try lines.set(.startButton, true)  // not wired here: ignored
            let afterRepeats = lines.outputWrites
            let cached = try lines.level(.crossingLED)
            #expect(afterRepeats == writes, "cached level: no ioctl")
            #expect(cached)
            try lines.set(.crossingLED, false)
            let afterChange = lines.outputWrites
            #expect(afterChange == writes + 1)
            #expect(HardwareRig.value("crossing-led") == 1)
            try lines.set(.readyLED, true)
            _ = consume lines
            #expect(HardwareRig.value("ready-led") == 0, "outputs are switched off when the adapter goes")
        }

        @Test("patterns drive the real lines through the cache")
        func patterns() throws {
            var lines = try GPIODLines(lines: outputs)
            var p = LinePatterns()
            let t0 = Sys.monotonicNow()
            p.set(.buzzer, .pulses(count: 2, on: .milliseconds(10), off: .milliseconds(10)), now: t0)
            var seen: [Int] = []
            for ms in 0..<40 {
                try p.step(now: t0 + .milliseconds(Double(ms)), lines: &lines)
                seen.append(HardwareRig.value("buzzer"))
            }
            #expect(seen == Array(repeating: 1, count: 10) + Array(repeating: 0, count: 10) + Array(repeating: 1, count: 10) + Array(repeating: 0, count: 10))
            let writes = lines.outputWrites
            #expect(writes == 4, "only the buzzer's four changes reach the kernel")
        }

        @Test("bias from the config sets the line's pull; active-low inverts the level read", arguments: [
            (GPIOBias.pullUp, false, 1, true), (.pullDown, false, 0, false), (.pullUp, true, 1, false), (.pullDown, true, 0, true),
        ])
        func bias(bias: GPIOBias, activeLow: Bool, electrical: Int, logical: Bool) throws {
            let lines = try GPIODLines(lines: [.startButton: line("start-button", activeLow: activeLow, bias: bias)])
            #expect(HardwareRig.value("start-button") == electrical)
            let level = try lines.level(.startButton)
            #expect(level == logical)
        }

        @Test("a missing line and a busy line give errors naming chip and line")
        func errors() throws {
            do {
                _ = try GPIODLines(lines: [.buzzer: line("no-such-line")], boardFile: "boards/rig.toml")
                Issue.record("found a missing line")
            } catch {
                #expect(error.path == "\(HardwareRig.chipLabel)/no-such-line")
                #expect(error.detail.contains("`gpioinfo \(HardwareRig.chipLabel)`"))
                #expect(error.detail.contains("gpio.buzzer.line"))
            }
            let held = try GPIODLines(lines: [.buzzer: line("buzzer")])
            do {
                _ = try GPIODLines(lines: [.readyLED: line("ready-led"), .buzzer: line("buzzer")])
                Issue.record("requested a busy line")
            } catch {
                #expect(error.impliedState == .busy)
                #expect(error.detail.contains("in use"))
            }
            _ = consume held
            // The failed request released what it had: ready-led can be requested again.
            _ = try GPIODLines(lines: [.readyLED: line("ready-led")])
        }
    }
}
