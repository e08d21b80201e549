// SPDX-License-Identifier: Apache-2.0
// Feedback asked by another thread (the GPS timer's client) of the gate loop's thread: a
// sound, a flash of the crossing LED and a pulse of the buzzer, played after its next pass.

public import GateCore
import Synchronization

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

/// A bounded queue of cues between the thread that asks and the gate loop, which takes
/// them each pass without allocating.
///
/// Thread affinity: `request` from any thread; `take` from the gate loop only.
public final class FeedbackCues: Sendable {
    /// Why 16: a timer asks a few times a second at most; more waiting means the loop has
    /// stopped, and those cues are counted lost.
    public static let capacity = 16

    private struct Pending {
        var cues = InlineArray<16, UInt8>(repeating: 0)
        var count = 0
    }
    private let pending = Mutex(Pending())
    private let lostCount = Atomic<UInt64>(0)

    public init() {}

    /// Asks for `cue` on the loop's next pass. False, and counted, when the queue is full.
    @discardableResult
    public func request(_ cue: FeedbackCue) -> Bool {
        let queued = pending.withLock { p in
            guard p.count < Self.capacity else { return false }
            p.cues[p.count] = cue.rawValue
            p.count += 1
            return true
        }
        if !queued { lostCount.add(1, ordering: .relaxed) }
        return queued
    }

    /// Cues taken at once: `count` of them, oldest first.
    public struct Batch: Sendable {
        fileprivate var cues = InlineArray<16, UInt8>(repeating: 0)
        public fileprivate(set) var count = 0
        public subscript(i: Int) -> FeedbackCue { FeedbackCue(rawValue: cues[i]) ?? .mark }
    }

    /// Gate loop: the cues waiting, oldest first; the queue is emptied. A value, not a
    /// callback, so the loop's pass captures nothing.
    public func take() -> Batch {
        pending.withLock { p in
            let batch = Batch(cues: p.cues, count: p.count)
            p.count = 0
            return batch
        }
    }

    /// Cues dropped because the queue was full.
    public var lost: UInt64 { lostCount.load(ordering: .relaxed) }
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
        let batch = cues.take()
        var i = 0
        while i < batch.count {
            let f = batch[i].feedback
            i += 1
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
