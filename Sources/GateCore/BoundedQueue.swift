// SPDX-License-Identifier: Apache-2.0
// A fixed-capacity queue between the engine thread and a slower consumer (storage, web).

import Synchronization

/// Multi-producer, multi-consumer FIFO of fixed capacity. `push` never blocks and never
/// grows storage: when the queue is full the element is dropped and counted, so the
/// engine loop is never held up by a slow consumer.
public final class BoundedQueue<Element: Sendable>: Sendable {
    private struct State: ~Copyable {
        var slots: [Element?]
        var head = 0
        var count = 0
        var dropped: UInt64 = 0
        var pushed: UInt64 = 0
    }
    private let state: Mutex<State>
    public let capacity: Int

    public init(capacity: Int) {
        precondition(capacity > 0, "a queue needs room for one element")
        self.capacity = capacity
        state = Mutex(State(slots: [Element?](repeating: nil, count: capacity)))
    }

    /// Appends `element`; returns false (and counts a drop) when the queue is full.
    @discardableResult
    public func push(_ element: Element) -> Bool {
        state.withLock { s in
            guard s.count < capacity else {
                s.dropped += 1
                return false
            }
            s.slots[(s.head + s.count) % capacity] = element
            s.count += 1
            s.pushed += 1
            return true
        }
    }

    /// Removes and returns the oldest element, or nil when empty.
    public func pop() -> Element? {
        state.withLock { s in
            guard s.count > 0 else { return nil }
            let e = s.slots[s.head]
            s.slots[s.head] = nil
            s.head = (s.head + 1) % capacity
            s.count -= 1
            return e
        }
    }

    public var count: Int { state.withLock { $0.count } }
    /// Elements refused because the queue was full, since creation.
    public var dropped: UInt64 { state.withLock { $0.dropped } }
    public var pushed: UInt64 { state.withLock { $0.pushed } }
}
