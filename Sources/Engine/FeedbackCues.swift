// SPDX-License-Identifier: Apache-2.0
// Feedback asked of the gate loop by another thread (the GPS timer's client): a sound, a
// flash of the crossing LED and a pulse of the buzzer, played on the loop's next pass.

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

    /// Gate loop: the cues waiting, oldest first; the queue is emptied.
    public func take(_ body: (FeedbackCue) -> Void) {
        var copy = Pending()
        pending.withLock { p in
            copy = p
            p.count = 0
        }
        for i in 0..<copy.count {
            if let cue = FeedbackCue(rawValue: copy.cues[i]) { body(cue) }
        }
    }

    /// Cues dropped because the queue was full.
    public var lost: UInt64 { lostCount.load(ordering: .relaxed) }
}
