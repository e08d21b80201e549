// SPDX-License-Identifier: Apache-2.0
// A lone gate arms itself again a set time after each run, so a coach timing reps alone
// never walks to the phone between them.

public import GateCore

/// Decides when a lone gate arms again: once the engine has been `finished` for the
/// config's `rearmDelay`, when `autoRearm` is on. A value type, stepped once per loop
/// iteration with the iteration's timestamp; it reads no clock.
///
/// Why a delay and not at once: the athlete who just finished is still at the line, and
/// a flying start would take their walking back as the next start; the reference app's
/// photo-finish mode waits a few seconds for the same reason.
public struct AutoRearm: Sendable {
    /// When the current finished phase began, as first seen by `due`.
    private var finishedSince: MonotonicInstant?

    public init() {}

    /// Whether to arm now, given the engine's phase and settings at `now`. True once per
    /// finished run; any other phase, or the setting off, forgets the finish.
    public mutating func due(phase: EnginePhase, config: EngineConfig, now: MonotonicInstant) -> Bool {
        guard config.autoRearm, phase == .finished else {
            finishedSince = nil
            return false
        }
        guard let since = finishedSince else {
            finishedSince = now
            return false
        }
        guard now >= since + config.rearmDelay else { return false }
        finishedSince = nil
        return true
    }
}
