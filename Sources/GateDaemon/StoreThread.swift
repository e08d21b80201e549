// SPDX-License-Identifier: Apache-2.0
// The daemon's storage thread: results journal first, then runs assembled into the SQLite store.

public import Engine
import Foundation
public import GateConfig
public import GateCore
public import GateSim
import LinuxHardware
public import Logging
import PhotoFinish
public import SQLiteStore
import Synchronization
public import WebUI

/// Maps the loop's events to the store's timing events, on the engine thread.
/// Cheap and non-blocking: the wall clock is read only for starts and false starts.
public enum StoreEvents {
    /// The store event for a loop event, or nil for events that are not timing.
    public static func runEvent(_ event: LoopEvent) -> RunEvent? {
        switch event {
        case let .crossing(c):
            return .crossing(c)
        case let .action(a, _):
            switch a {
            case let .started(at, by): return .started(at: at, startType: by.rawValue, wallMs: wallMs(of: at))
            case let .startCorrected(at): return .startCorrected(at: at)
            case let .lap(n, at, split, lap): return .lap(number: n, at: at, split: split, lap: lap)
            case let .finished(at, time): return .finished(at: at, time: time)
            case let .falseStart(reason, at): return .falseStart(reason: reason.rawValue, at: at, wallMs: wallMs(of: at))
            // Leaving `running` without a finish (reset, disarm) ends solo laps or drops an empty run.
            case let .phase(p):
                switch p {
                case .running, .finished: return nil
                default: return .stopped
                }
            default: return nil
            }
        default:
            return nil
        }
    }

    /// The wall clock (milliseconds since the Unix epoch) at local monotonic instant `t`:
    /// now on the wall clock minus how long ago `t` was. Display and storage only.
    public static func wallMs(of t: MonotonicInstant) -> Int64 {
        let wallNowMs = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        return wallNowMs - Sys.monotonicNow().since(t).nanoseconds / 1_000_000
    }

    /// The journal record of a timing event (the journal format predates the store).
    public static func journalEvent(_ e: RunEvent) -> ReplayJournalEvent? {
        switch e {
        case let .started(at, type, _): return .started(at: at, by: type)
        case let .lap(n, at, split, lap): return .lap(number: n, at: at, split: split, lap: lap)
        case let .finished(at, time): return .finished(at: at, time: time)
        case let .falseStart(reason, at, _): return .falseStart(reason: reason, at: at)
        case let .crossing(c): return .crossing(c)
        case .startCorrected, .stopped, .course: return nil
        }
    }
}

/// Drains the loop's results queue on its own thread: each event goes to the fdatasync'ed
/// journal (the never-lose path), then through the run assembler; each complete run is
/// handed to the SQLite store's writer (its own thread and bounded queue). A database
/// that cannot be opened is logged and the journal carries on alone.
public final class StorageThread: @unchecked Sendable {
    /// Events waiting for the thread. Why 1024: a minute of crossings at 15 Hz with room to
    /// spare while the SD card stalls on fdatasync.
    public static let queueCapacity = 1024
    public let queue = BoundedQueue<RunEvent>(capacity: StorageThread.queueCapacity)
    /// Finished multi-gate races from the race link (host only). Why 64: a race finishes
    /// every few seconds at most; this covers minutes of a stalled disk.
    public let races = BoundedQueue<StoredRun>(capacity: 64)
    /// The results database, for readers (the web page) on other threads; nil when it
    /// could not be opened.
    public let store: RunStore?
    public let writer: StoreWriter?
    private let journalPath: String
    private var assembler: RunAssembler
    public let log: Logger
    private let stopping = BoundedQueue<Bool>(capacity: 1)
    private let stopped = DispatchSemaphore(value: 0)

    /// Opens the database under `stateDirectory`; the journal is opened by the thread.
    public init(stateDirectory: String, context: RunContext, log: Logger, onCommit: @escaping @Sendable (CommittedRun) -> Void = { _ in }) {
        journalPath = stateDirectory + "/results.jsonl"
        assembler = RunAssembler(context: context)
        self.log = log
        let storeLog: Logger = {
            var l = Logger(label: "sprintgate.store")
            l.logLevel = log.logLevel
            return l
        }()
        do {
            let s = try RunStore(directory: stateDirectory, logger: storeLog)
            store = s
            writer = StoreWriter(store: s, logger: storeLog) { c in
                if c.bests.personal || c.bests.season {
                    storeLog.notice("run \(c.run.id ?? 0): \(c.bests.personal ? "personal" : "season") best \(c.run.bestKey ?? "")")
                }
                onCommit(c)
            }
        } catch {
            storeLog.error("\(error.description): runs go to the journal only")
            store = nil
            writer = nil
        }
    }

    /// Queues a loop event for storage; never blocks (a full queue drops and counts).
    public func observe(_ event: LoopEvent) {
        if let e = StoreEvents.runEvent(event) { queue.push(e) }
    }

    public func start() {
        writer?.start()
        let t = Thread { [self] in
            var journal: ResultJournal?
            do { journal = try ResultJournal(path: journalPath) } catch {
                log.error("\(error): results are only logged (check the state directory's permissions)")
            }
            while true {
                if let race = races.pop() {
                    // Journal first (one JSON line with every split), then the database.
                    do { try journal?.append(RaceResults.journalLine(race)) } catch { log.error("\(error)") }
                    if let writer, !writer.submit(race) {
                        log.error("results database queue full: race run at mono \(race.startMonoNs) ns is in the journal only")
                    }
                    continue
                }
                if let e = queue.pop() {
                    if let j = StoreEvents.journalEvent(e) {
                        do { try journal?.append(ResultJournal.record(for: j)) } catch { log.error("\(error)") }
                    }
                    if let run = assembler.consume(e), let writer, !writer.submit(run, preset: assembler.context.preset) {
                        log.error("results database queue full: run at mono \(run.startMonoNs) ns is in the journal only")
                    }
                    continue
                }
                if stopping.count > 0 { break }
                usleep(20_000)
            }
            // A solo run still in progress at shutdown keeps its laps.
            if let run = assembler.consume(.stopped) { writer?.submit(run, preset: assembler.context.preset) }
            stopped.signal()
        }
        t.name = "sprintgate.results"
        t.start()
    }

    /// Writes what is queued (journal and database), then ends both threads.
    public func stop() {
        stopping.push(true)
        stopped.wait()
        writer?.stop()
        if queue.dropped > 0 { log.error("\(queue.dropped) results were dropped: the storage thread fell behind") }
        if races.dropped > 0 { log.error("\(races.dropped) race results were dropped: the storage thread fell behind") }
        if let w = writer, w.dropped > 0 || w.failed > 0 {
            log.error("results database: \(w.dropped) runs dropped (queue full), \(w.failed) refused")
        }
    }
}

/// Fans the store writer's `onCommit` out to receivers added after the storage thread
/// exists (the web page's book, the photo-finish link). Called on the writer thread.
public final class CommitRelay: Sendable {
    private let receivers = Mutex<[@Sendable (CommittedRun) -> Void]>([])

    public init() {}

    public func add(_ receiver: @escaping @Sendable (CommittedRun) -> Void) {
        receivers.withLock { $0.append(receiver) }
    }

    public func deliver(_ run: CommittedRun) {
        for r in receivers.withLock({ $0 }) { r(run) }
    }
}

/// Results storage as `run` and `demo --web` wire it: the storage thread (journal, then
/// SQLite), the page's book over the same database, and the photo-finish link that stores
/// each run's finish image. Without a database the page falls back to a memory book.
public struct GateStorage {
    public let thread: StorageThread
    public let book: any ResultsBook
    public let photos: PhotoFinishLink?
    /// Each run as the database stores it (for more receivers: the run videos).
    public let commits: CommitRelay

    /// Opens the database under `stateDirectory` and starts the storage thread.
    public static func start(stateDirectory: String, context: RunContext, log: Logger) -> GateStorage {
        let commits = CommitRelay()
        let thread = StorageThread(stateDirectory: stateDirectory, context: context, log: log, onCommit: { commits.deliver($0) })
        thread.start()
        let sqlBook = thread.store.map { SQLiteResultsBook(store: $0) }
        if let sqlBook { commits.add { sqlBook.committed($0) } }
        let photos = thread.store.map { PhotoFinishLink(store: $0, book: sqlBook, log: log) }
        if let photos { commits.add { photos.committed($0) } }
        return GateStorage(thread: thread, book: sqlBook ?? MemoryResultsBook(), photos: photos, commits: commits)
    }

    /// The demo's storage: its preset on a lone gate.
    public static func start(stateDirectory: String, demoPreset preset: Preset?, log: Logger) -> GateStorage {
        start(stateDirectory: stateDirectory, context: RunContext(demoPreset: preset), log: log)
    }

    /// Installs the photo-finish recorder for a `width`×`height` camera at `fps` with the
    /// gate line at `gateX` (input pixels) and starts the link's thread.
    public func installPhotoFinish<C: FrameSource & ~Copyable, L: LineInputs & LineOutputs & ~Copyable, S: Beeper & ~Copyable>(
        on loop: inout GateLoop<C, L, S>, width: Int, height: Int, gateX: Double, fps: Double, log: Logger) {
        guard let photos, let recorder = PhotoFinishLink.recorder(width: width, height: height, gateX: gateX, fps: fps, log: log) else { return }
        loop.photoFinish = recorder
        loop.photoFinishObserver = { photos.capture($0) }
        photos.start()
    }

    /// Queues a loop event for storage (loop thread; never blocks).
    public func observe(_ event: LoopEvent) { thread.observe(event) }

    /// Queues a change of course (preset, distance, start type) for the runs after it,
    /// in order with the loop's events (loop thread; never blocks).
    public func changeCourse(_ context: RunContext) {
        if !thread.queue.push(.course(context)) {
            thread.log.error("course change not stored: the storage queue is full; runs keep the previous preset")
        }
    }

    /// Queues a finished multi-gate race for the journal and the database (loop thread;
    /// never blocks: a full queue drops, counts and is logged at exit).
    public func recordRace(_ run: StoredRun) {
        if !thread.races.push(run) { thread.log.error("race result dropped: the storage queue is full") }
    }

    /// Writes what is queued, stores the photos still to match, then ends the threads.
    public func stop() {
        thread.stop()
        photos?.stop()
    }
}

extension RunContext {
    /// A lone gate's course: the preset (if any) and the engine's start type.
    public init(preset: Preset?, startType: StartType) {
        self.init(preset: preset.map { StoredPreset(id: $0.id, title: $0.title, distance: $0.distance, startType: $0.startType.rawValue) },
                  distance: preset?.distance, gateCount: 1, startType: startType.rawValue)
    }

    /// The course as the settings describe it.
    public init(settings: GateSettings) {
        self.init(preset: settings.preset, startType: settings.engine.startType)
    }

    /// The demo's course: its preset, flying without one.
    public init(demoPreset preset: Preset?) {
        self.init(preset: preset, startType: preset?.startType ?? .flying)
    }
}
