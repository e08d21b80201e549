// SPDX-License-Identifier: Apache-2.0
// When to reopen a camera: what counts as lost, and the retry schedule (0.5 s doubling to 8 s).

public import GateCore

/// The reopen schedule of a device that failed (unplugged, busy, no signal). A value
/// type the engine keeps next to the device: ask `nextAttempt` whether to try now,
/// report the outcome with `failed(at:)` or `succeeded()`. Pure; the caller passes the
/// loop's time (CLOCK_MONOTONIC).
public struct ReopenBackoff: Sendable, Hashable {
    /// Delay after the first failure. Why: a UVC camera re-enumerates about 0.3–1 s after
    /// it is plugged back in, so the first retry half a second later usually finds it.
    public static let initialDelay = Span.milliseconds(500)
    /// Longest delay. Why: a gate left without a camera should still come back within
    /// a few seconds of the cable being fixed, while costing no noticeable CPU.
    public static let maximumDelay = Span.seconds(8)

    /// The earliest instant of the next attempt; nil when there is no failure to retry
    /// (try at once).
    public private(set) var nextAttempt: MonotonicInstant?
    /// The delay the next failure will add.
    public private(set) var delay: Span
    /// Consecutive failures since the last success.
    public private(set) var failures: Int

    public init() {
        nextAttempt = nil
        delay = Self.initialDelay
        failures = 0
    }

    /// True when an attempt is due at `now`.
    public func isDue(now: MonotonicInstant) -> Bool {
        guard let t = nextAttempt else { return true }
        return now >= t
    }

    /// Records a failed attempt (or the loss of the device) at `now` and schedules the
    /// next one; returns the delay until it.
    @discardableResult
    public mutating func failed(at now: MonotonicInstant) -> Span {
        let d = delay
        nextAttempt = now + d
        failures += 1
        delay = Span(nanoseconds: min(d.nanoseconds * 2, Self.maximumDelay.nanoseconds))
        return d
    }

    /// Records a successful open: the next failure starts the schedule again.
    public mutating func succeeded() {
        self = ReopenBackoff()
    }
}

/// Why the run loop should take the camera off the loop and reopen it, or nil while it is
/// fine. Pure; the caller passes the loop's time.
public enum CameraRecovery {
    /// Silence after which an open camera is reopened. Why: a camera in the dark still
    /// delivers frames, so seconds without one mean a wedged device (a UVC camera whose
    /// stream stalled after a brown-out, a driver stuck after a USB error), which a
    /// STREAMOFF/close/open usually revives; 5 s is far beyond any exposure.
    public static let stalledAfter = Span.seconds(5)

    /// - Parameters:
    ///   - state: the camera's state.
    ///   - isOpen: whether it holds a descriptor (a failed open or reopen leaves none,
    ///     whatever the error).
    ///   - lastFrame: when it last delivered a frame (or started waiting for the first).
    public static func reason(state: DeviceState, isOpen: Bool, lastFrame: MonotonicInstant?,
                              now: MonotonicInstant) -> String? {
        switch state {
        case .absent, .busy, .closed: return "\(state)"
        case .noSignal, .streaming:
            guard isOpen else { return "closed after an error" }
            if state == .noSignal, let lastFrame, now.since(lastFrame) >= stalledAfter {
                return "no frames for \(Int(now.since(lastFrame).seconds)) s"
            }
            return nil
        }
    }
}
