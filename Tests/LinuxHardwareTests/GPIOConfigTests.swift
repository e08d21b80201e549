// SPDX-License-Identifier: Apache-2.0
// GPIODLines configuration errors that need no GPIO chip: a missing chip names label, board key and gpioinfo.

import GateCore
import LinuxHardware
import Testing

@Suite("GPIO configuration errors")
struct GPIOConfigTests {
    @Test("a missing GPIO chip names the label and the board key and suggests gpioinfo")
    func missingChip() {
        let cfg = GPIOLineConfig(chip: "no-such-gate-chip", line: "GPIO17", activeLow: true, bias: .pullUp, debounceMilliseconds: 20)
        do {
            _ = try GPIODLines(lines: [.startButton: cfg], boardFile: "boards/test.toml")
            Issue.record("opened a missing chip")
        } catch {
            #expect(error.path == "no-such-gate-chip")
            #expect(error.detail.contains("gpioinfo"))
            #expect(error.detail.contains("boards/test.toml, key gpio.start-button.chip"))
            #expect(error.impliedState == .absent)
        }
    }
}
