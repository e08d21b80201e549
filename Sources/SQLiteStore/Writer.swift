// SPDX-License-Identifier: Apache-2.0
// The store's writer thread: drains a bounded queue of runs into the database.

import Foundation
import GateCore
public import Logging
import Synchronization

/// What the writer thread stores.
public enum StoreJob: Sendable {
    case run(StoredRun, preset: StoredPreset?)
    case photo(StoredPhoto)
}

/// Writes runs on its own thread behind a `BoundedQueue`. `submit` never blocks: when the
/// queue is full the job is dropped and counted (`dropped`), so the engine loop never
/// waits for the disk. Failures to write are logged once per distinct message and counted.
public final class StoreWriter: Sendable {
    /// Default queue length. Why: a run a second for four minutes; far more than a
    /// coach's session produces while the SD card stalls.
    public static let defaultCapacity = 256
    /// How long the thread sleeps when idle before looking again, microseconds.
    /// Why: `submit` also wakes it, so this only bounds the delay after a missed wake.
    static let idlePollMicroseconds: UInt32 = 50_000

    public let store: RunStore
    private let queue: BoundedQueue<StoreJob>
    private let log: Logger
    private let onCommit: @Sendable (CommittedRun) -> Void
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private struct State {
        var started = false
        var stopping = false
        var committed: UInt64 = 0
        var failed: UInt64 = 0
        var lastError: String?
    }
    private let state = Mutex(State())

    /// - Parameter onCommit: called on the writer thread after each run is committed
    ///   (e.g. to push the result and its PR flags to the web page, or to attach a photo).
    public init(store: RunStore, capacity: Int = StoreWriter.defaultCapacity, logger: Logger,
                onCommit: @escaping @Sendable (CommittedRun) -> Void = { _ in }) {
        self.store = store
        self.queue = BoundedQueue(capacity: capacity)
        self.log = logger
        self.onCommit = onCommit
    }

    /// Starts the thread (once).
    public func start() {
        let first = state.withLock { s in
            defer { s.started = true }
            return !s.started
        }
        guard first else { return }
        let t = Thread { [self] in self.drain() }
        t.name = "sprintgate.store"
        t.start()
    }

    /// Queues a run; false (and counted in `dropped`) when the queue is full. Never blocks.
    @discardableResult
    public func submit(_ run: StoredRun, preset: StoredPreset? = nil) -> Bool {
        let ok = queue.push(.run(run, preset: preset))
        if ok { wake.signal() }
        return ok
    }

    /// Queues a photo for a stored run; false when the queue is full. Never blocks.
    @discardableResult
    public func submitPhoto(_ photo: StoredPhoto) -> Bool {
        let ok = queue.push(.photo(photo))
        if ok { wake.signal() }
        return ok
    }

    /// Jobs refused because the queue was full.
    public var dropped: UInt64 { queue.dropped }
    /// Runs committed to the database.
    public var committed: UInt64 { state.withLock { $0.committed } }
    /// Jobs the database refused (logged).
    public var failed: UInt64 { state.withLock { $0.failed } }
    /// Jobs waiting.
    public var pending: Int { queue.count }

    /// Writes what is queued, then ends the thread. Safe to call more than once.
    public func stop() {
        let running = state.withLock { s in
            defer { s.stopping = true }
            return s.started && !s.stopping
        }
        guard running else { return }
        wake.signal()
        done.wait()
    }

    private func drain() {
        while true {
            while let job = queue.pop() { perform(job) }
            if state.withLock({ $0.stopping }) {
                while let job = queue.pop() { perform(job) }
                break
            }
            _ = wake.wait(timeout: .now() + .microseconds(Int(Self.idlePollMicroseconds)))
        }
        done.signal()
    }

    private func perform(_ job: StoreJob) {
        do {
            switch job {
            case let .run(run, preset):
                let c = try store.write(run, preset: preset)
                state.withLock { $0.committed += 1; $0.lastError = nil }
                onCommit(c)
            case let .photo(p):
                try store.savePhoto(runID: p.runID, jpeg: p.jpeg, thumbnails: p.thumbnails)
            }
        } catch {
            let message = error.description
            let fresh = state.withLock { s in
                s.failed += 1
                defer { s.lastError = message }
                return s.lastError != message
            }
            if fresh { log.error("results database: \(message)") }
        }
    }
}
