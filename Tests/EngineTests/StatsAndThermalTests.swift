// SPDX-License-Identifier: Apache-2.0
// The 10-second stats line and the thermal frame-rate policy.

import Engine
import GateCore
import Testing

@Suite("Stats line and thermal policy")
struct StatsAndThermalTests {
    @Test("the stats line has fixed columns and percentiles from the window, then restarts")
    func statsLine() throws {
        var w = StatsWindow(interval: .seconds(10))
        let t0 = MonotonicInstant(seconds: 50)
        for i in 0..<1200 {
            // 99 % at about 1 ms, 1 % at about 20 ms
            let lat: Span = i % 100 == 0 ? .milliseconds(20) : .milliseconds(1)
            w.add(latency: lat, dropped: i == 5 ? 2 : 0, detection: i == 600, now: t0 + .seconds(Double(i) / 120))
        }
        #expect(w.line(now: t0 + .seconds(9)) == nil)
        let produced = w.line(now: t0 + .seconds(10), offsetMicroseconds: -12.5, peers: 2)
        let line = try #require(produced)
        #expect(StatsWindow.header.count == line.count)
        let cols = line.split(separator: " ")
        #expect(cols[0] == "120.0" && cols[1] == "2" && cols[2] == "1")
        let p50 = try #require(Double(cols[3])), p99 = try #require(Double(cols[4]))
        #expect(p50 >= 1 && p50 < 1.1)
        #expect(p99 >= 1 && p99 < 1.1)  // the 99th percentile still falls on the 1 ms frames
        #expect(cols[5] == "-12.5" && cols[6] == "2")
        #expect(w.frames == 0)
        #expect(w.percentileMs(0.5) == 0)
    }

    @Test("frame rate steps down when hot and back up after a cool minute")
    func thermal() {
        var g = ThermalGovernor(fps: 120)
        #expect(g.fps == 120)
        #expect(g.update(celsius: 70, at: 0) == nil)
        #expect(g.update(celsius: 76, at: 5) == 90)
        #expect(g.update(celsius: 77, at: 10) == 60)
        #expect(g.update(celsius: 66, at: 15) == nil)  // between cool and hot: hold
        #expect(g.update(celsius: 60, at: 20) == nil)
        #expect(g.update(celsius: 60, at: 79) == nil)
        #expect(g.update(celsius: 60, at: 80) == 90)
        #expect(g.update(celsius: 60, at: 140) == 120)
        #expect(g.update(celsius: 60, at: 300) == nil)  // at the configured ceiling
        var slow = ThermalGovernor(fps: 60)
        #expect(slow.steps == [60, 30])
        #expect(slow.update(celsius: 90, at: 0) == 30)
        #expect(slow.update(celsius: 90, at: 1) == nil)
        // A rate a camera offers outside 30/60/90/120 is the ceiling it comes back to, and
        // still steps down when hot.
        var webcam = ThermalGovernor(fps: 50)
        #expect(webcam.steps == [50, 30] && webcam.fps == 50)
        #expect(webcam.update(celsius: 80, at: 0) == 30)
        #expect(webcam.update(celsius: 60, at: 5) == nil && webcam.update(celsius: 60, at: 65) == 50)
        #expect(ThermalGovernor(fps: 100).steps == [100, 90, 60, 30] && ThermalGovernor(fps: 25).steps == [25])
        #expect(ThermalGovernor.parseThermalZone("54530\n") == 54.53)
        #expect(ThermalGovernor.parseThermalZone("hot") == nil)
    }
}
