// SPDX-License-Identifier: Apache-2.0
// Marks asked for away from the page (the gate's button, a clicker) and marks taken,
// between the threads that ask, the video thread that takes them and the gate loop that
// confirms each with a beep and a flash.

public import GateCore
import Synchronization

/// A bounded queue of mark requests, each stamped with the instant the button or key went
/// down, and a count of marks taken from any source.
///
/// Thread affinity: `request` from any thread (the gate loop, a clicker's reader) without
/// allocating; `take` and `confirm` on the video thread; `confirmed` from any thread.
public final class MarkRequests: Sendable {
    /// Requests not yet taken. Why 16: a coach presses a few times a minute; more than 16
    /// waiting means the video thread has stopped, and those presses are counted lost.
    public static let capacity = 16

    private struct Pending {
        var times = InlineArray<16, Int64>(repeating: 0)
        var count = 0
    }
    private let pending = Mutex(Pending())
    private let taken = Atomic<UInt64>(0)
    private let lostCount = Atomic<UInt64>(0)

    public init() {}

    /// Asks for a mark of what the delayed view showed at `instant` (CLOCK_MONOTONIC, the
    /// press). False, and counted, when the queue is full.
    @discardableResult
    public func request(at instant: MonotonicInstant) -> Bool {
        let queued = pending.withLock { p in
            guard p.count < Self.capacity else { return false }
            p.times[p.count] = instant.nanoseconds
            p.count += 1
            return true
        }
        if !queued { lostCount.add(1, ordering: .relaxed) }
        return queued
    }

    /// Video thread: the requests waiting, oldest first; the queue is emptied.
    public func take(_ body: (MonotonicInstant) -> Void) {
        var copy = Pending()
        pending.withLock { p in
            copy = p
            p.count = 0
        }
        for i in 0..<copy.count { body(MonotonicInstant(nanoseconds: copy.times[i])) }
    }

    /// Video thread: one mark was taken (from the page, the button or a clicker).
    public func confirm() { taken.add(1, ordering: .releasing) }

    /// Marks taken so far; the gate loop confirms each new one with a beep and a flash.
    public var confirmed: UInt64 { taken.load(ordering: .acquiring) }

    /// Requests refused because the queue was full.
    public var lost: UInt64 { lostCount.load(ordering: .relaxed) }
}
