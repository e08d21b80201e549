// SPDX-License-Identifier: Apache-2.0
// Output patterns by role (steady, blink, pulses) as a pure schedule applied to any LineOutputs.

public import GateCore

/// What an output line does over time. Levels are logical (true = on).
public enum LinePattern: Sendable, Hashable {
    /// Steadily off.
    case off
    /// Steadily on.
    case on
    /// On for half of `period`, off for the other half, starting on, until replaced.
    case blink(period: Span)
    /// `count` pulses, each on for `on` and followed by `off` of dark, then steadily off.
    case pulses(count: Int, on: Span, off: Span)

    /// One pulse of `on`, then off (a crossing flash, a buzzer chirp).
    public static func pulse(_ on: Span) -> LinePattern { .pulses(count: 1, on: on, off: .zero) }

    /// The level at `elapsed` since the pattern started and when it next changes (relative,
    /// `nil` when never); `finished` when a pulse train is over.
    ///
    /// Pure; `elapsed` below zero is treated as zero.
    public func level(after elapsed: Span) -> (on: Bool, nextChange: Span?, finished: Bool) {
        let e = max(elapsed.nanoseconds, 0)
        switch self {
        case .off:
            return (false, nil, false)
        case .on:
            return (true, nil, false)
        case .blink(let period):
            let half = max(period.nanoseconds / 2, 1)
            let k = e / half
            return (k % 2 == 0, Span(nanoseconds: (k + 1) * half), false)
        case .pulses(let count, let on, let off):
            let onNs = max(on.nanoseconds, 0), offNs = max(off.nanoseconds, 0)
            let cycle = max(onNs + offNs, 1)
            let k = e / cycle
            if count <= 0 || k >= Int64(count) { return (false, nil, true) }
            let within = e - k * cycle
            if within < onNs { return (true, Span(nanoseconds: k * cycle + onNs), false) }
            if k == Int64(count) - 1 { return (false, nil, true) }
            return (false, Span(nanoseconds: (k + 1) * cycle), false)
        }
    }
}

/// The patterns of all output roles and the schedule that applies them.
///
/// `set(_:_:now:)` chooses a role's pattern; `step(now:lines:)`, called by the engine loop
/// with its one timestamp per iteration, computes every role's level at `now` and writes
/// only the levels that changed since the last step. Levels follow the schedule from the
/// pattern's start, so a step that comes later than a whole phase skips that phase; the
/// loop should wake by `nextChange`. Pure value type with no clock of its own; instants
/// are CLOCK_MONOTONIC. Allocates nothing after `init`.
public struct LinePatterns: Sendable {
    struct Slot: Sendable {
        var pattern: LinePattern = .off
        var startNs: Int64 = 0
        /// The level last written, `nil` before the first write.
        var applied: Bool? = nil
    }

    private var slots: [Slot]
    /// When the next level change is due after the last `step` (CLOCK_MONOTONIC), or `nil`
    /// when every role is steady.
    public private(set) var nextChange: MonotonicInstant?

    /// All roles off; the first `step` writes off to each role once.
    public init() {
        slots = Array(repeating: Slot(), count: GPIORole.slotCount)
        nextChange = nil
    }

    /// The pattern a role is following now (a finished pulse train reads `.off`).
    public func pattern(_ role: GPIORole) -> LinePattern { slots[role.slot].pattern }

    /// Gives `role` a new pattern starting at `now`. Setting the pattern a role already
    /// follows keeps its phase (so a loop may set it every iteration), except `pulses`, which
    /// always start again.
    public mutating func set(_ role: GPIORole, _ pattern: LinePattern, now: MonotonicInstant) {
        let s = role.slot
        if slots[s].pattern == pattern {
            if case .pulses = pattern {} else { return }
        }
        slots[s].pattern = pattern
        slots[s].startNs = now.nanoseconds
        // Why: the next step must not wait for a change that the previous schedule planned.
        nextChange = now
    }

    /// Applies the levels due at `now` to `lines`: one `set` per role whose level changed.
    /// On a write error the role is retried at the next step and the error is thrown after
    /// the other roles were written.
    public mutating func step<Lines: LineOutputs & ~Copyable>(now: MonotonicInstant, lines: inout Lines) throws(DeviceError) {
        var next: Int64? = nil
        var failure: DeviceError? = nil
        for role in GPIORole.allCases where role.direction == .output {
            let s = role.slot
            let state = slots[s].pattern.level(after: Span(nanoseconds: now.nanoseconds &- slots[s].startNs))
            if state.finished { slots[s].pattern = .off }
            if let d = state.nextChange {
                let t = slots[s].startNs &+ d.nanoseconds
                if next == nil || t < next! { next = t }
            }
            if slots[s].applied != state.on {
                do {
                    try lines.set(role, state.on)
                    slots[s].applied = state.on
                } catch {
                    failure = error
                    next = now.nanoseconds
                }
            }
        }
        nextChange = next.map { MonotonicInstant(nanoseconds: $0) }
        if let failure { throw failure }
    }
}

extension GPIORole {
    /// Number of roles, for tables indexed by `slot`.
    static let slotCount = 5

    /// A dense index for tables by role. Why: a switch is cheaper than hashing on the hot path.
    var slot: Int {
        switch self {
        case .startButton: return 0
        case .readyLED: return 1
        case .armedLED: return 2
        case .crossingLED: return 3
        case .buzzer: return 4
        }
    }
}
