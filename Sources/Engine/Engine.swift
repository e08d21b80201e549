// SPDX-License-Identifier: Apache-2.0
// The gate's timing policy as a synchronous state machine: inputs in, actions out.

public import GateCore

/// How a run's clock starts (as in the reference app).
public enum StartType: String, Sendable, Hashable, CaseIterable {
    /// The first crossing of the gate starts the clock.
    case flying
    /// The athlete holds the start button; lifting the finger starts the clock.
    case buttonRelease = "button-release"
    /// "3, 2, 1, BEEP": the clock starts when the beep reaches the speaker.
    case countdown
    /// "On your marks", a random pause, "Set", a random pause, the start sound.
    case voice
    /// The athlete stands in the frame; the clock starts when they leave it.
    case inFrame = "in-frame"
}

/// Settings of the engine, decided at start-up or from the web page.
public struct EngineConfig: Sendable, Hashable {
    public var startType: StartType = .flying
    /// Solo mode: one gate, every crossing is a lap; the run goes on until reset.
    public var solo = false
    /// Shortest lap in solo mode; crossings sooner are ignored.
    public var lapCooldown: Span = .seconds(1)
    /// Pause between "On your marks" and "Set", seconds (allowed 3...20).
    public var marksPause: ClosedRange<Double> = 8...12
    /// Pause between "Set" and the start sound, seconds (allowed 0.5...5).
    public var setPause: ClosedRange<Double> = 1.5...2.3
    /// The start sound for countdown and voice starts: beep, gunshot or whistle.
    public var startSound: GateSound = .beep
    /// How long an athlete must stand in the frame before an in-frame start is set.
    public var inFrameSettle: Span = .milliseconds(500)
    /// Feedback on a crossing.
    public var crossingLED = true
    public var crossingBuzzer = true
    /// Plays the crossing beep through the speaker as well.
    public var crossingSound = false
    public var spokenTime = false
    /// Length of the crossing LED and buzzer pulses.
    public var pulse: Span = .milliseconds(150)
    /// Seed of the random pauses (fixed in tests and replays).
    public var seed: UInt64 = 0x5EED
    /// A lone gate arms itself again `rearmDelay` after each finished run (`AutoRearm`).
    /// Off, the coach arms each run from the page.
    public var autoRearm = true
    public var rearmDelay: Span = .seconds(3)
    /// The longest `rearmDelay` a settings file or the page may set.
    public static let rearmDelays: ClosedRange<Double> = 0.5...60

    public init() {}

    /// Checks the ranges the reference app allows; returns the first problem.
    public func validate() -> String? {
        if marksPause.lowerBound < 3 || marksPause.upperBound > 20 { return "marks pause must lie within 3...20 s" }
        if setPause.lowerBound < 0.5 || setPause.upperBound > 5 { return "set pause must lie within 0.5...5 s" }
        if ![.beep, .gunshot, .whistle].contains(startSound) { return "start sound must be beep, gunshot or whistle" }
        return nil
    }
}

/// What the engine is doing.
public enum EnginePhase: Sendable, Hashable {
    /// Not armed: crossings are shown but not timed.
    case idle
    /// Waiting for the start (a crossing, the button, a command).
    case armed
    /// The athlete holds the button (button-release start).
    case holding
    /// Countdown or voice commands are playing; `step` counts what was said.
    case starting(step: Int)
    /// The athlete stands in the frame (in-frame start).
    case inFrame(since: MonotonicInstant)
    /// The clock runs.
    case running(start: MonotonicInstant)
    /// The run ended.
    case finished
}

/// Inputs to the engine, each with the loop's one timestamp per iteration.
public enum EngineInput: Sendable {
    /// The detector's result for one frame (crossing, if any, and status).
    case frame(DetectionSet, frameTime: MonotonicInstant)
    /// An edge on an input line.
    case line(LineEvent)
    /// The start sound or a command reached the speaker at `onset` (from the beeper).
    case soundOnset(GateSound, onset: MonotonicInstant)
    /// A better estimate of when the last sound reached the speaker: a clock started by
    /// that sound moves its start to it.
    case soundOnsetRefined(GateSound, onset: MonotonicInstant)
    /// A user's command (button on the page, CLI).
    case command(EngineCommand)
    /// Time passed: due timers fire.
    case tick
}

public enum EngineCommand: Sendable, Hashable {
    case arm
    /// Starts a countdown or voice start; ignored by the other start types.
    case start
    case reset
    /// Another gate of the race (its start gate) saw a false start: the same whistle and
    /// buzzer as a false start here, and the gate is armed for the next run. No
    /// `.falseStart` action: the start is not this gate's.
    case falseStartElsewhere
}

/// Why a start was false.
public enum FalseStartReason: String, Sendable, Hashable {
    case buttonReleased = "button released before the start sound"
    case movement = "movement after Set before the start sound"
}

/// What the engine asks the loop to do, or tells the rest of the gate.
public enum EngineAction: Sendable, Hashable {
    /// Set an output line's logical level.
    case output(GPIORole, Bool)
    /// Play a sound now; the loop reports its onset back with `.soundOnset`.
    case play(GateSound)
    /// Speak a time in hundredths of a second ("ten point four two").
    case speakTime(centiseconds: Int)
    /// The clock started at `at`.
    case started(at: MonotonicInstant, by: StartType)
    /// The start sound's onset became known more exactly: the clock now starts at `at`.
    case startCorrected(at: MonotonicInstant)
    case falseStart(FalseStartReason, at: MonotonicInstant)
    /// A timed crossing: lap `number` (1-based) with the time since the start and since
    /// the previous lap; in a normal run the first crossing after the start finishes it.
    case lap(number: Int, at: MonotonicInstant, split: Span, lap: Span)
    case finished(at: MonotonicInstant, time: Span)
    /// The phase changed.
    case phase(EnginePhase)
}

/// The timing policy: start types, solo laps, feedback pulses. Deterministic: the same
/// inputs at the same instants give the same actions, which replay tests rely on.
public struct Engine: Sendable {
    public private(set) var config: EngineConfig
    public private(set) var phase: EnginePhase = .idle
    private var rng: SplitMix64
    private var laps = 0
    private var lastLapAt: MonotonicInstant?
    private var lastCrossingAt: MonotonicInstant?
    /// Timers: when the next command sound is due, when pulses end.
    private var nextSoundAt: MonotonicInstant?
    private var ledOffAt: MonotonicInstant?
    private var buzzerOffAt: MonotonicInstant?
    private var lastStatus = GateStatus()
    private var armedLit = false
    private var startedBySound = false

    public init(config: EngineConfig) {
        self.config = config
        rng = SplitMix64(seed: config.seed)
    }

    /// Laps timed in the current run.
    public var lapCount: Int { laps }
    /// Instant of the last lap (or of the start) in the current run.
    public var lastLapInstant: MonotonicInstant? { lastLapAt }

    mutating func restore(phase: EnginePhase, laps: Int, lastLap: MonotonicInstant?) {
        self.phase = phase
        self.laps = laps
        lastLapAt = lastLap
        // The armed LED is driven again by the first phase change; record it as unknown-off.
        armedLit = false
    }

    /// Re-asserts the outputs that follow the phase (after a restart the lines start off).
    public mutating func refreshOutputs(into actions: inout [EngineAction]) {
        let lit = phase != .idle && phase != .finished
        armedLit = lit
        actions.append(.output(.armedLED, lit))
    }

    /// Replaces the settings; an active run is reset.
    public mutating func reconfigure(_ config: EngineConfig, now: MonotonicInstant, into actions: inout [EngineAction]) {
        self.config = config
        rng = SplitMix64(seed: config.seed)
        reset(now: now, into: &actions)
    }

    /// Consumes one input at `now` and appends the resulting actions. With capacity
    /// reserved in `actions`, this allocates nothing.
    public mutating func step(_ input: EngineInput, now: MonotonicInstant, into actions: inout [EngineAction]) {
        switch input {
        case .tick:
            break
        case let .command(c):
            command(c, now: now, into: &actions)
        case let .line(e):
            line(e, into: &actions)
        case let .soundOnset(sound, onset):
            if sound == config.startSound, case .starting = phase {
                begin(at: onset, into: &actions)
                startedBySound = true
            }
        case let .soundOnsetRefined(sound, onset):
            if sound == config.startSound, startedBySound, laps == 0, case .running(let start) = phase, start != onset {
                lastLapAt = onset
                phase = .running(start: onset)
                actions.append(.startCorrected(at: onset))
                actions.append(.phase(phase))
            }
        case let .frame(set, frameTime):
            frame(set, frameTime: frameTime, now: now, into: &actions)
        }
        timers(now: now, into: &actions)
    }

    private mutating func setPhase(_ p: EnginePhase, into actions: inout [EngineAction]) {
        guard p != phase else { return }
        phase = p
        actions.append(.phase(p))
        let lit = p != .idle && p != .finished
        if lit != armedLit {
            armedLit = lit
            actions.append(.output(.armedLED, lit))
        }
    }

    private mutating func reset(now: MonotonicInstant, into actions: inout [EngineAction]) {
        laps = 0
        lastLapAt = nil
        nextSoundAt = nil
        setPhase(.idle, into: &actions)
    }

    private mutating func command(_ c: EngineCommand, now: MonotonicInstant, into actions: inout [EngineAction]) {
        switch c {
        case .reset:
            reset(now: now, into: &actions)
        case .arm:
            laps = 0
            lastLapAt = nil
            setPhase(.armed, into: &actions)
        case .start:
            guard phase == .armed else { return }
            switch config.startType {
            case .countdown:
                setPhase(.starting(step: 0), into: &actions)
                nextSoundAt = now
            case .voice:
                setPhase(.starting(step: 0), into: &actions)
                nextSoundAt = now
            default:
                break
            }
        case .falseStartElsewhere:
            falseStartFeedback(at: now, into: &actions)
        }
    }

    private mutating func line(_ e: LineEvent, into actions: inout [EngineAction]) {
        guard e.role == .startButton else { return }
        switch (phase, e.edge) {
        case (.armed, .rising) where config.startType == .buttonRelease:
            setPhase(.holding, into: &actions)
        case (.holding, .falling):
            begin(at: e.timestamp, into: &actions)
        case (.armed, .rising) where config.startType == .countdown || config.startType == .voice:
            // The start button starts a countdown or voice start like the page's button.
            command(.start, now: e.timestamp, into: &actions)
        case (.starting(let step), .falling) where config.startType == .voice && step >= 2:
            falseStart(.buttonReleased, at: e.timestamp, into: &actions)
        default:
            break
        }
    }

    private mutating func frame(_ set: DetectionSet, frameTime: MonotonicInstant, now: MonotonicInstant,
                                into actions: inout [EngineAction]) {
        let status = set.status
        defer { lastStatus = status }
        switch phase {
        case .armed where config.startType == .inFrame:
            if status.ready && !status.shaking { setPhase(.inFrame(since: frameTime), into: &actions) }
        case .inFrame(let since):
            if !status.ready {
                if frameTime.since(since) >= config.inFrameSettle {
                    // The athlete left the frame: the clock starts at the last frame they were seen.
                    begin(at: frameTime, into: &actions)
                } else {
                    setPhase(.armed, into: &actions)
                }
            }
        case .starting(let step) where config.startType == .voice && step >= 2:
            // Why: after "Set" the athlete must hold still; a new body edge or a jump in
            // moving pixels means they went early.
            if status.motion > lastStatus.motion + 0.02 || set.crossing != nil {
                falseStart(.movement, at: frameTime, into: &actions)
                return
            }
        default:
            break
        }
        if let c = set.crossing { crossing(c, now: now, into: &actions) }
    }

    private mutating func crossing(_ c: Crossing, now: MonotonicInstant, into actions: inout [EngineAction]) {
        // The pulse runs from when the crossing is known, so it is seen and heard in full.
        feedback(at: now, into: &actions)
        switch phase {
        case .armed where config.startType == .flying:
            begin(at: c.time, into: &actions)
            lastLapAt = c.time
        case .running(let start):
            if let last = lastLapAt, c.time.since(last) < (config.solo ? config.lapCooldown : .zero) { return }
            laps += 1
            let split = c.time.since(start)
            let lap = c.time.since(lastLapAt ?? start)
            lastLapAt = c.time
            actions.append(.lap(number: laps, at: c.time, split: split, lap: lap))
            if config.spokenTime { actions.append(.speakTime(centiseconds: Int((split.seconds * 100).rounded()))) }
            if !config.solo {
                actions.append(.finished(at: c.time, time: split))
                setPhase(.finished, into: &actions)
            }
        default:
            break
        }
    }

    private mutating func feedback(at t: MonotonicInstant, into actions: inout [EngineAction]) {
        if config.crossingLED {
            actions.append(.output(.crossingLED, true))
            ledOffAt = t + config.pulse
        }
        if config.crossingBuzzer {
            actions.append(.output(.buzzer, true))
            buzzerOffAt = t + config.pulse
        }
        if config.crossingSound { actions.append(.play(.crossing)) }
    }

    private mutating func begin(at t: MonotonicInstant, into actions: inout [EngineAction]) {
        startedBySound = false
        nextSoundAt = nil
        laps = 0
        lastLapAt = t
        actions.append(.started(at: t, by: config.startType))
        setPhase(.running(start: t), into: &actions)
    }

    private mutating func falseStart(_ reason: FalseStartReason, at t: MonotonicInstant, into actions: inout [EngineAction]) {
        actions.append(.falseStart(reason, at: t))
        falseStartFeedback(at: t, into: &actions)
    }

    /// Whistle, one second of buzzer, armed again.
    private mutating func falseStartFeedback(at t: MonotonicInstant, into actions: inout [EngineAction]) {
        nextSoundAt = nil
        actions.append(.play(.whistle))
        actions.append(.output(.buzzer, true))
        buzzerOffAt = t + .seconds(1)
        setPhase(.armed, into: &actions)
    }

    private mutating func timers(now: MonotonicInstant, into actions: inout [EngineAction]) {
        if let off = ledOffAt, now >= off {
            actions.append(.output(.crossingLED, false))
            ledOffAt = nil
        }
        if let off = buzzerOffAt, now >= off {
            actions.append(.output(.buzzer, false))
            buzzerOffAt = nil
        }
        guard let due = nextSoundAt, now >= due, case .starting(let step) = phase else { return }
        switch config.startType {
        case .countdown:
            // "3", "2", "1" one second apart, then the start sound.
            if step < 3 {
                actions.append(.play(.countdownTick))
                nextSoundAt = due + .seconds(1)
            } else {
                actions.append(.play(config.startSound))
                nextSoundAt = nil
            }
        case .voice:
            switch step {
            case 0:
                actions.append(.play(.onYourMarks))
                nextSoundAt = due + .seconds(rng.uniform(config.marksPause))
            case 1:
                actions.append(.play(.set))
                nextSoundAt = due + .seconds(rng.uniform(config.setPause))
            default:
                actions.append(.play(config.startSound))
                nextSoundAt = nil
            }
        default:
            nextSoundAt = nil
            return
        }
        phase = .starting(step: step + 1)
        actions.append(.phase(phase))
    }
}
