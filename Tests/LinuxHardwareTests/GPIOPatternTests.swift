// SPDX-License-Identifier: Apache-2.0
// LinePatterns against a recording fake: steady levels, blink, pulses, phase keeping, retries.

import GateCore
import LinuxHardware
import Testing

/// Records every write that reaches it; can be told to fail.
struct RecordingOutputs: LineOutputs {
    var writes: [(role: GPIORole, on: Bool, atNs: Int64)] = []
    var nowNs: Int64 = 0
    var failNext = false

    mutating func set(_ role: GPIORole, _ on: Bool) throws(DeviceError) {
        if failNext {
            failNext = false
            throw DeviceError(operation: "set", errno: 5, path: "fake")
        }
        writes.append((role, on, nowNs))
    }

    func levels(_ role: GPIORole) -> [Bool] { writes.filter { $0.role == role }.map(\.on) }
}

private func ms(_ v: Int64) -> MonotonicInstant { MonotonicInstant(nanoseconds: v * 1_000_000) }

/// Steps `patterns` every millisecond from `from` to `to` (inclusive) against `lines`.
private func run(_ patterns: inout LinePatterns, _ lines: inout RecordingOutputs, from: Int64, to: Int64) throws {
    var t = from
    while t <= to {
        lines.nowNs = t * 1_000_000
        try patterns.step(now: ms(t), lines: &lines)
        t += 1
    }
}

@Suite("Line patterns")
struct GPIOPatternTests {
    @Test("the first step writes off once to every output role, then nothing")
    func initialOff() throws {
        var p = LinePatterns()
        var lines = RecordingOutputs()
        try run(&p, &lines, from: 0, to: 50)
        #expect(lines.writes.count == 4)
        #expect(lines.writes.allSatisfy { !$0.on && $0.role != .startButton })
        #expect(p.nextChange == nil)
    }

    @Test("steady on and off write only on change")
    func steady() throws {
        var p = LinePatterns()
        var lines = RecordingOutputs()
        try run(&p, &lines, from: 0, to: 0)
        p.set(.readyLED, .on, now: ms(10))
        try run(&p, &lines, from: 10, to: 40)
        p.set(.readyLED, .off, now: ms(41))
        try run(&p, &lines, from: 41, to: 60)
        #expect(lines.levels(.readyLED) == [false, true, false])
        #expect(lines.writes.filter { $0.role == .readyLED }.map(\.atNs) == [0, 10_000_000, 41_000_000])
    }

    @Test("blink toggles every half period and keeps its phase when set again")
    func blink() throws {
        var p = LinePatterns()
        var lines = RecordingOutputs()
        p.set(.armedLED, .blink(period: .milliseconds(100)), now: ms(0))
        try run(&p, &lines, from: 0, to: 120)
        p.set(.armedLED, .blink(period: .milliseconds(100)), now: ms(121))  // same pattern: no restart
        try run(&p, &lines, from: 121, to: 249)
        let w = lines.writes.filter { $0.role == .armedLED }
        #expect(w.map(\.on) == [true, false, true, false, true])
        #expect(w.map { $0.atNs / 1_000_000 } == [0, 50, 100, 150, 200])
        #expect(p.nextChange == ms(250))
    }

    @Test("a pulse turns on for its length, then off, and the pattern reads off")
    func pulse() throws {
        var p = LinePatterns()
        var lines = RecordingOutputs()
        try run(&p, &lines, from: 0, to: 0)
        p.set(.crossingLED, .pulse(.milliseconds(30)), now: ms(5))
        #expect(p.pattern(.crossingLED) == .pulse(.milliseconds(30)))
        try run(&p, &lines, from: 5, to: 100)
        let w = lines.writes.filter { $0.role == .crossingLED }
        #expect(w.map(\.on) == [false, true, false])
        #expect(w.map { $0.atNs / 1_000_000 } == [0, 5, 35])
        #expect(p.pattern(.crossingLED) == .off)
        #expect(p.nextChange == nil)
    }

    @Test("N pulses: on, gap, on, gap, on, then off; setting pulses again restarts them")
    func pulses() throws {
        var p = LinePatterns()
        var lines = RecordingOutputs()
        p.set(.buzzer, .pulses(count: 3, on: .milliseconds(20), off: .milliseconds(30)), now: ms(0))
        try run(&p, &lines, from: 0, to: 200)
        var w = lines.writes.filter { $0.role == .buzzer }
        #expect(w.map { $0.atNs / 1_000_000 } == [0, 20, 50, 70, 100, 120])
        #expect(w.map(\.on) == [true, false, true, false, true, false])
        p.set(.buzzer, .pulses(count: 1, on: .milliseconds(10), off: .milliseconds(10)), now: ms(201))
        p.set(.buzzer, .pulses(count: 1, on: .milliseconds(10), off: .milliseconds(10)), now: ms(205))
        try run(&p, &lines, from: 205, to: 260)
        w = lines.writes.filter { $0.role == .buzzer }
        #expect(w.suffix(2).map { $0.atNs / 1_000_000 } == [205, 215])
    }

    @Test("the pure schedule: levels and next changes")
    func schedule() {
        let b = LinePattern.blink(period: .milliseconds(200))
        #expect(b.level(after: .milliseconds(0)) == (true, .milliseconds(100), false))
        #expect(b.level(after: .milliseconds(150)) == (false, .milliseconds(200), false))
        let q = LinePattern.pulses(count: 2, on: .milliseconds(10), off: .milliseconds(5))
        #expect(q.level(after: .milliseconds(12)) == (false, .milliseconds(15), false))
        #expect(q.level(after: .milliseconds(24)) == (true, .milliseconds(25), false))
        #expect(q.level(after: .milliseconds(25)).finished)
        #expect(LinePattern.pulses(count: 0, on: .milliseconds(10), off: .zero).level(after: .zero).finished)
    }

    @Test("a failed write is retried at the next step and the error is thrown")
    func retry() throws {
        var p = LinePatterns()
        var lines = RecordingOutputs()
        try run(&p, &lines, from: 0, to: 0)
        p.set(.readyLED, .on, now: ms(1))
        lines.failNext = true
        #expect(throws: DeviceError.self) { try p.step(now: ms(1), lines: &lines) }
        #expect(p.nextChange == ms(1))
        try p.step(now: ms(2), lines: &lines)
        #expect(lines.levels(.readyLED) == [false, true])
    }
}
