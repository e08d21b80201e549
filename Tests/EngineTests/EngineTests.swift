// SPDX-License-Identifier: Apache-2.0
// The timing policy in virtual time: every start type, solo laps, false starts, feedback.

import Engine
import GateCore
import Testing

/// Drives an engine through timed inputs with a tick every `tick` in between, the way the
/// event loop does, and collects the actions with the instant they were produced.
struct Harness {
    var engine: Engine
    var actions: [(t: Double, action: EngineAction)] = []
    var now = MonotonicInstant(seconds: 100)

    init(_ config: EngineConfig) { engine = Engine(config: config) }

    mutating func at(_ seconds: Double, _ input: EngineInput) {
        advance(to: seconds)
        var out: [EngineAction] = []
        engine.step(input, now: now, into: &out)
        actions += out.map { (now.seconds - 100, $0) }
    }

    mutating func advance(to seconds: Double, tick: Double = 0.01) {
        let target = MonotonicInstant(seconds: 100 + seconds)
        while now + .seconds(tick) <= target {
            now = now + .seconds(tick)
            var out: [EngineAction] = []
            engine.step(.tick, now: now, into: &out)
            actions += out.map { (now.seconds - 100, $0) }
        }
        now = target
    }

    func t(_ seconds: Double) -> MonotonicInstant { MonotonicInstant(seconds: 100 + seconds) }

    func crossing(at seconds: Double) -> EngineInput {
        var set = DetectionSet()
        set.crossing = Crossing(time: t(seconds), uncertainty: .milliseconds(1), direction: .leftToRight,
                                blobHeight: 0.8, speedWorkPixelsPerSecond: 600, reportedAtSequence: 0)
        return .frame(set, frameTime: t(seconds + 0.02))
    }

    func status(ready: Bool, at seconds: Double, motion: Double = 0.01) -> EngineInput {
        var set = DetectionSet()
        set.status = GateStatus(armed: true, ready: ready, clear: !ready, blobHeight: ready ? 0.8 : 0, motion: motion)
        return .frame(set, frameTime: t(seconds))
    }

    var started: [MonotonicInstant] { actions.compactMap { if case let .started(at, _) = $0.action { return at } else { return nil } } }
    var finished: [Span] { actions.compactMap { if case let .finished(_, time) = $0.action { return time } else { return nil } } }
    var played: [(Double, GateSound)] { actions.compactMap { if case let .play(s) = $0.action { return ($0.t, s) } else { return nil } } }
    var falseStarts: [FalseStartReason] { actions.compactMap { if case let .falseStart(r, _) = $0.action { return r } else { return nil } } }
}

@Suite("Engine")
struct EngineTests {
    @Test("flying start: the first crossing starts the clock, the next finishes it")
    func flying() {
        var h = Harness(EngineConfig())
        h.at(0, .command(.arm))
        h.at(1, h.crossing(at: 0.98))
        h.at(4.5, h.crossing(at: 4.48))
        #expect(h.started == [h.t(0.98)])
        #expect(h.finished == [h.t(4.48).since(h.t(0.98))])
        #expect(h.engine.phase == .finished)
    }

    @Test("a crossing while idle is shown (LED pulse) but not timed")
    func idleNotTimed() {
        var h = Harness(EngineConfig())
        h.at(1, h.crossing(at: 0.99))
        h.advance(to: 2)
        #expect(h.started.isEmpty)
        let led = h.actions.compactMap { if case let .output(.crossingLED, on) = $0.action { return ($0.t, on) } else { return nil } }
        #expect(led.count == 2 && led[0].1 && !led[1].1)
        // The pulse lasts 150 ms from when the crossing was reported.
        #expect(abs(led[1].0 - (1.0 + 0.15)) < 0.011)
    }

    @Test("button release: holding arms, lifting starts at the edge's kernel timestamp")
    func buttonRelease() {
        var config = EngineConfig()
        config.startType = .buttonRelease
        var h = Harness(config)
        h.at(0, .command(.arm))
        h.at(1, .line(LineEvent(role: .startButton, edge: .rising, timestamp: h.t(0.999), lineSequence: 1, globalSequence: 1)))
        #expect(h.engine.phase == .holding)
        h.at(3.2, .line(LineEvent(role: .startButton, edge: .falling, timestamp: h.t(3.1995), lineSequence: 2, globalSequence: 2)))
        h.at(6, h.crossing(at: 5.9))
        #expect(h.started == [h.t(3.1995)])
        #expect(h.finished.first == h.t(5.9).since(h.t(3.1995)))
    }

    @Test("countdown: 3, 2, 1 a second apart, then the start sound; the clock starts at its onset")
    func countdown() {
        var config = EngineConfig()
        config.startType = .countdown
        var h = Harness(config)
        h.at(0, .command(.arm))
        h.at(1, .command(.start))
        h.advance(to: 4.5)
        let sounds = h.played
        #expect(sounds.map(\.1) == [.countdownTick, .countdownTick, .countdownTick, .beep])
        #expect(abs(sounds[3].0 - 4.0) < 0.011)
        #expect(h.started.isEmpty)  // not before the beep is heard
        h.at(4.5, .soundOnset(.beep, onset: h.t(4.023)))
        #expect(h.started == [h.t(4.023)])
        // The device's position moved: the onset is known better, and the clock follows.
        h.at(4.52, .soundOnsetRefined(.beep, onset: h.t(4.0215)))
        #expect(h.actions.contains { $0.action == .startCorrected(at: h.t(4.0215)) })
        #expect(h.engine.phase == .running(start: h.t(4.0215)))
        h.at(6, h.crossing(at: 5.9))
        #expect(h.finished == [h.t(5.9).since(h.t(4.0215))])
    }

    @Test("voice start: marks and set pauses within their ranges, start at the sound's onset")
    func voice() {
        var config = EngineConfig()
        config.startType = .voice
        config.startSound = .gunshot
        for seed in 1...5 as ClosedRange<UInt64> {
            config.seed = seed
            var h = Harness(config)
            h.at(0, .command(.arm))
            h.at(1, .command(.start))
            h.advance(to: 20)
            let s = h.played
            #expect(s.map(\.1) == [.onYourMarks, .set, .gunshot])
            #expect((8.0...12.01).contains(s[1].0 - s[0].0), "marks pause \(s[1].0 - s[0].0)")
            #expect((1.5...2.31).contains(s[2].0 - s[1].0), "set pause \(s[2].0 - s[1].0)")
            h.at(20, .soundOnset(.gunshot, onset: h.t(s[2].0 + 0.02)))
            #expect(h.started.count == 1)
        }
    }

    @Test("voice start: a button release or movement after Set is a false start")
    func falseStart() {
        var config = EngineConfig()
        config.startType = .voice
        config.setPause = 5...5
        var h = Harness(config)
        h.at(0, .command(.arm))
        h.at(0.5, .line(LineEvent(role: .startButton, edge: .rising, timestamp: h.t(0.5), lineSequence: 1, globalSequence: 1)))
        h.advance(to: 13.2)  // "Set" was said by 12.5 s; the start sound is not due before 13.5 s
        #expect(h.played.map(\.1) == [.onYourMarks, .set])
        h.at(13.2, .line(LineEvent(role: .startButton, edge: .falling, timestamp: h.t(13.2), lineSequence: 2, globalSequence: 2)))
        #expect(h.falseStarts == [.buttonReleased])
        #expect(h.engine.phase == .armed)
        h.advance(to: 25)
        #expect(!h.played.contains { $0.1 == .beep })  // no start sound after a false start

        var m = Harness(config)
        m.at(0, .command(.arm))
        m.at(0.1, .command(.start))
        m.advance(to: 13)
        m.at(13, m.status(ready: true, at: 13, motion: 0.01))
        m.at(13.1, m.status(ready: true, at: 13.1, motion: 0.09))
        #expect(m.falseStarts == [.movement])
    }

    @Test("in-frame start: the clock starts at the last frame the athlete was seen after standing")
    func inFrame() {
        var config = EngineConfig()
        config.startType = .inFrame
        var h = Harness(config)
        h.at(0, .command(.arm))
        h.at(1, h.status(ready: true, at: 1))
        h.at(1.2, h.status(ready: false, at: 1.2))  // stepped through too soon: not set
        #expect(h.started.isEmpty && h.engine.phase == .armed)
        h.at(2, h.status(ready: true, at: 2))
        h.at(3, h.status(ready: true, at: 3))
        h.at(3.4, h.status(ready: false, at: 3.4))
        #expect(h.started == [h.t(3.4)])
    }

    @Test("solo mode: every crossing is a lap with split and lap time; 1 s cooldown")
    func solo() {
        var config = EngineConfig()
        config.solo = true
        config.spokenTime = true
        var h = Harness(config)
        h.at(0, .command(.arm))
        h.at(1, h.crossing(at: 1.0))
        h.at(13, h.crossing(at: 12.5))
        h.at(13.5, h.crossing(at: 13.2))  // within the cooldown: ignored
        h.at(25, h.crossing(at: 24.75))
        let laps = h.actions.compactMap { a -> (Int, Span, Span)? in
            if case let .lap(n, _, split, lap) = a.action { return (n, split, lap) } else { return nil }
        }
        #expect(laps.count == 2)
        #expect(laps[0].0 == 1 && laps[0].1 == .seconds(11.5) && laps[0].2 == .seconds(11.5))
        #expect(laps[1].0 == 2 && laps[1].1 == .seconds(23.75) && laps[1].2 == .seconds(12.25))
        let spoken = h.actions.compactMap { if case let .speakTime(cs) = $0.action { return cs } else { return nil } }
        #expect(spoken == [1150, 2375])
        #expect(h.engine.phase == .running(start: h.t(1.0)))
    }

    @Test("the crossing beep plays through the speaker when asked")
    func crossingSound() {
        var config = EngineConfig()
        config.crossingSound = true
        var h = Harness(config)
        h.at(1, h.crossing(at: 0.99))
        #expect(h.played.map(\.1) == [.crossing])
    }

    @Test("the armed LED follows the phase; feedback can be switched off")
    func leds() {
        var config = EngineConfig()
        config.crossingBuzzer = false
        config.crossingLED = false
        var h = Harness(config)
        h.at(0, .command(.arm))
        h.at(1, h.crossing(at: 1))
        h.at(2, h.crossing(at: 2))
        h.at(3, .command(.reset))
        let armed = h.actions.compactMap { if case let .output(.armedLED, on) = $0.action { return on } else { return nil } }
        #expect(armed == [true, false])
        #expect(!h.actions.contains { if case .output(.buzzer, _) = $0.action { return true } else { return false } })
        #expect(!h.actions.contains { if case .output(.crossingLED, _) = $0.action { return true } else { return false } })
    }

    @Test("configuration ranges are checked")
    func validate() {
        var c = EngineConfig()
        #expect(c.validate() == nil)
        c.marksPause = 2...10
        #expect(c.validate() != nil)
        c = EngineConfig()
        c.setPause = 0.5...6
        #expect(c.validate() != nil)
        c = EngineConfig()
        c.startSound = .set
        #expect(c.validate() != nil)
    }
}

@Suite("Presets and speed")
struct PresetTests {
    @Test("the reference app's presets are all there with their start types")
    func presets() {
        #expect(Preset.all.count == 14)
        #expect(Set(Preset.all.map(\.id)).count == 14)
        #expect(Preset.named("flying-30m")?.startType == .flying)
        #expect(Preset.named("40yd")?.distance == 36.576)
        #expect(Preset.named("solo")?.solo == true)
        #expect(Preset.named("nope") == nil)
    }

    @Test("the flying sprint's distance is chosen among 10, 20 and 30 m; a fixed preset offers none")
    func selectableDistances() throws {
        let flying = try #require(Preset.named("flying"))
        #expect(flying.startType == .flying && flying.distances == [10, 20, 30] && flying.distance == 10)
        #expect(flying.choosing(distance: 20)?.distance == 20)
        #expect(flying.choosing(distance: 20)?.id == "flying")
        #expect(flying.choosing(distance: 25) == nil)
        #expect(Preset.named("60m")?.choosing(distance: 60) == nil)
        #expect(Preset.all.allSatisfy { $0.distances.isEmpty || $0.distance.map($0.distances.contains) == true })
    }

    @Test("speed converts between m/s, km/h and mph")
    func speed() throws {
        let t = Span.seconds(3.0)
        #expect(try #require(SpeedUnit.metresPerSecond.speed(distance: 30, time: t)) == 10)
        #expect(abs(try #require(SpeedUnit.kilometresPerHour.speed(distance: 30, time: t)) - 36) < 1e-9)
        #expect(abs(try #require(SpeedUnit.milesPerHour.speed(distance: 30, time: t)) - 22.369363) < 1e-5)
        #expect(SpeedUnit.metresPerSecond.speed(distance: 30, time: .zero) == nil)
    }
}

@Suite("Engine state across restarts")
struct EngineStateTests {
    @Test("a running run survives a restart through its state line")
    func runningSurvives() throws {
        var h = Harness(EngineConfig())
        h.at(0, .command(.arm))
        h.at(1, h.crossing(at: 1.0))
        let text = h.engine.persistentState
        #expect(text == "v1 phase=running start_ns=101000000000 laps=0 last_lap_ns=101000000000")
        var restored = try #require(Engine(config: EngineConfig(), restoring: text))
        var out: [EngineAction] = []
        var set = DetectionSet()
        set.crossing = Crossing(time: h.t(5.25), uncertainty: .milliseconds(1), direction: .leftToRight,
                                blobHeight: 0.8, speedWorkPixelsPerSecond: 600, reportedAtSequence: 0)
        restored.step(.frame(set, frameTime: h.t(5.3)), now: h.t(5.3), into: &out)
        #expect(out.contains(.finished(at: h.t(5.25), time: .seconds(4.25))))
    }

    @Test("state lines that are not ours are refused", arguments: ["", "v2 phase=idle laps=0", "v1 phase=running laps=0",
                                                                   "v1 phase=flying laps=0", "v1 phase=idle laps=-1", "v1 phase"])
    func refused(text: String) {
        #expect(Engine(config: EngineConfig(), restoring: text) == nil)
    }
}
