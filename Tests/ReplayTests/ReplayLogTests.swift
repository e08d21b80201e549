// SPDX-License-Identifier: Apache-2.0
// The recording event log: written and read back, malformed lines named.

import GateCore
import GateSim
import Testing

@Suite("Replay log")
struct ReplayLogTests {
    @Test("events survive a write and read round trip in order, header included")
    func roundTrip() throws {
        let dir = ScratchDirectory()
        let path = dir.file("case.log")
        let events: [ReplayEvent] = [
            .frame(sequence: 41, time: MonotonicInstant(nanoseconds: 1_000_000), kernelTime: 990_000, offset: 0, dropped: 0),
            .line(LineEvent(role: .startButton, edge: .rising, timestamp: MonotonicInstant(nanoseconds: 1_500_000),
                            lineSequence: 17, globalSequence: 90)),
            .frame(sequence: 43, time: MonotonicInstant(nanoseconds: 9_333_333), kernelTime: 9_300_000, offset: 1, dropped: 1),
            .state(device: "camera", time: MonotonicInstant(nanoseconds: 10_000_000), state: "no signal"),
        ]
        let writer = try ReplayLogWriter(path: path, header: [("Name", "button then drop"), ("Board", "boards/generic-usb.toml")])
        for e in events { writer.append(e) }
        try writer.close()
        let log = try ReplayLog(path: path)
        #expect(log.header.map(\.key) == ["Name", "Board", "Clock"])
        #expect(log.header.last?.value == "CLOCK_MONOTONIC")
        #expect(log.events.count == 4)
        #expect(Array(log.events.prefix(3)) == Array(events.prefix(3)))
        #expect(log.events[3] == .state(device: "camera", time: MonotonicInstant(nanoseconds: 10_000_000), state: "no_signal"))
    }

    @Test("a malformed line is an error naming file and line", arguments: [
        ("F seq=1 t_ns=5", "kts_ns"),
        ("G t_ns=5 line=door edge=rising lseq=1 gseq=1", "unknown line"),
        ("G t_ns=5 line=start-button edge=up lseq=1 gseq=1", "edge="),
        ("X t_ns=5", "unknown event kind"),
        ("F seq=1 t_ns=abc kts_ns=1 off=0 dropped=0", "t_ns"),
        ("F seq=1 t_ns", "key=value"),
    ])
    func malformed(line: String, expected: String) {
        do {
            _ = try ReplayLog(text: "# Name: x\n\(line)\n", name: "case.log")
            Issue.record("accepted '\(line)'")
        } catch {
            #expect(error.description.hasPrefix("case.log: line 2"), "\(error.description)")
            #expect(error.description.contains(expected), "\(error.description)")
        }
    }

    @Test("events out of time order are refused")
    func order() {
        let text = "F seq=2 t_ns=20 kts_ns=0 off=1 dropped=0\nF seq=1 t_ns=10 kts_ns=0 off=0 dropped=0\n"
        #expect(throws: ClipError.self) { try ReplayLog(text: text, name: "x") }
    }
}
