// SPDX-License-Identifier: Apache-2.0
// Feedback asked by another thread (the GPS timer's client) of the gate loop's thread: a
// sound, a flash of the crossing LED and a pulse of the buzzer, played after its next pass.

public import GateCore

/// What a timer away from the camera wants the athlete or driver to hear and see.
public enum FeedbackCue: UInt8, Sendable, Hashable, CaseIterable {
    /// Ready for the next run (the GPS timer armed): a beep and a short flash.
    case attention
    /// The run began (a launch): a beep and a short buzz.
    case go
    /// A target passed (a milestone): a beep and a flash.
    case mark
    /// The run is complete: the crossing sound, a long flash and a buzz.
    case done
    /// The run was voided: the whistle and a long buzz.
    case fault

    /// The sound, and how long the crossing LED and the buzzer stay on.
    public var feedback: (sound: GateSound, flash: Span, buzz: Span) {
        switch self {
        case .attention: (.beep, .milliseconds(150), .zero)
        case .go: (.beep, .zero, .milliseconds(100))
        case .mark: (.beep, .milliseconds(150), .zero)
        case .done: (.crossing, .milliseconds(600), .milliseconds(200))
        case .fault: (.whistle, .zero, .milliseconds(600))
        }
    }
}

/// The cues waiting for the gate loop's thread: asked from any thread, taken after each
/// pass. Why 16: a timer asks a few times a second at most; more waiting means the loop
/// has stopped, and those cues are counted as dropped.
public typealias FeedbackCues = BoundedQueue<FeedbackCue>

extension BoundedQueue where Element == FeedbackCue {
    public static func cues() -> FeedbackCues { FeedbackCues(capacity: 16) }
}

/// Plays the cues on the gate loop's thread, after each pass, through the loop's own lines
/// and sound; turns the LED and the buzzer off when their time is up. Allocates nothing.
public struct CuePlayer: Sendable {
    private var flashUntil: MonotonicInstant?
    private var buzzUntil: MonotonicInstant?
    /// The last error of a line or the sound (the cue is skipped; the gate runs on).
    public private(set) var lastError: DeviceError?

    public init() {}

    /// `quiet` (`CuePlayer.quiet(engine.phase)`): a run is being started or timed, so the
    /// cue's sound is left out; the light and the buzz still come.
    public mutating func serve<L: LineOutputs & ~Copyable, S: Beeper & ~Copyable>(
        _ cues: FeedbackCues, lines: inout L, sound: inout S, quiet: Bool, now: MonotonicInstant
    ) {
        while let cue = cues.pop() {
            let f = cue.feedback
            if f.flash > .zero {
                flashUntil = now + f.flash
                set(.crossingLED, true, &lines)
            }
            if f.buzz > .zero {
                buzzUntil = now + f.buzz
                set(.buzzer, true, &lines)
            }
            if !quiet {
                do { _ = try sound.play(f.sound, now: now) } catch { lastError = error }
            }
        }
        if let until = flashUntil, now >= until {
            flashUntil = nil
            set(.crossingLED, false, &lines)
        }
        if let until = buzzUntil, now >= until {
            buzzUntil = nil
            set(.buzzer, false, &lines)
        }
    }

    private mutating func set<L: LineOutputs & ~Copyable>(_ role: GPIORole, _ on: Bool, _ lines: inout L) {
        do { try lines.set(role, on) } catch { lastError = error }
    }

    /// Whether the engine is starting or timing a run: no cue's sound then. Why: the loop
    /// hands the sound device's refined onset to the engine as its start sound's, which
    /// moves the start of a run begun by a sound; a cue's sound must never be taken for it.
    public static func quiet(_ phase: EnginePhase) -> Bool {
        switch phase {
        case .starting, .running: true
        default: false
        }
    }
}
