// SPDX-License-Identifier: Apache-2.0
// The rowing hub as the daemon runs it: every erg's notifications into the coach's board,
// each piece stored as a session in the results database about once a second, and one
// workout set on every erg from the page.

import Dispatch
import Foundation
public import Logging
public import Rowing
public import SQLiteStore
import Synchronization
public import WebUI

/// Writes frames to one erg's CSAFE control characteristic (0x0021) and gives back the
/// PM's answers (0x0022), one per frame. Throws when the erg cannot be reached.
public protocol ErgControl: Sendable {
    func program(erg: Int, frames: [[UInt8]]) throws -> [[UInt8]]
}

/// Finds PM5s and connects the ones the coach picks (`BluetoothRowing`).
public protocol ErgPicker: Sendable {
    var bluetooth: RowingBluetooth { get }
    /// Changes whenever `bluetooth` does.
    var version: UInt64 { get }
    func scan() throws(ResultsBookError)
    func pick(address: String) throws(ResultsBookError) -> Int
    func letGo(erg: Int) throws(ResultsBookError)
}

/// The hub between the ergs' link (Bluetooth, or the demo's synthetic ergs) and the page.
/// Events come in on the link's thread (`apply`); the page reads and commands from its
/// own threads; the database is written on a queue of the hub's own.
///
/// A piece is what an erg rows between two workouts: it begins at its first stroke and
/// ends with the PM5's summary, a new workout set from the page, or a stroke count that
/// starts again (a workout begun on the erg itself) outside the intervals of a workout of
/// intervals. A piece whose workout ended without a summary (real PM5s have been seen to
/// leave it out) is finished `summaryWait` seconds after the end, with figures the hub
/// makes from its record. Each piece of a rowed erg is one
/// session in the database, its athlete and workout those of the erg when it was stored
/// first.
public final class RowingHub: RowingDesk, Sendable {
    public let store: RunStore?
    public var rowingStore: RunStore? { store }
    private let controlSlot: Mutex<(any ErgControl)?>
    private let pickerSlot = Mutex<(any ErgPicker)?>(nil)
    private let source: String
    private let logger: Logger
    /// Hub seconds (monotonic), the clock the events' times are on.
    private let clock: @Sendable () -> Double
    private let wallClock: @Sendable () -> Double
    /// Unix seconds minus hub seconds.
    private let wallOffset: Double
    private let finishedHandlers = Mutex<[@Sendable (ErgSession) -> Void]>([])
    private let state: Mutex<State>
    private let writer = DispatchQueue(label: "sprintgate.rowing.store")
    private let running = Atomic(false)

    /// Why about a second: a power cut loses at most the last second of strokes, and an
    /// SD card is written once a second rather than at every notification.
    public static let flushSeconds = 1.0
    /// Seconds a piece whose workout ended waits for the PM5's summary before it is
    /// finished without one. Why 10 s: the summary follows the end within a second when
    /// it comes at all.
    public static let summaryWait = 10.0

    /// What the database knows of an erg's piece.
    struct Piece: Sendable {
        var key: Int
        var athlete: String
        var workout: String
        var sessionID: Int64?
        var storedStrokes = 0
        var storedSamples = 0
        var storedSplits = 0
        var finished = false
    }

    struct Closing: Sendable {
        var erg: Int
        var name: String
        var piece: Piece
        var recorder: ErgRecorder
    }

    struct State: Sendable {
        var hub = ErgHub()
        var version: UInt64 = 1
        var pieces: [Int: Piece] = [:]
        var closing: [Closing] = []
        var nextKey = 1
        var workout: String?
        var programmed: [ErgProgramResult] = []
        var sessions: [ErgSession] = []
        var storeError: String?
        var sourceProblem: String?
        var boathouse: [String: (device: String, tile: RowingBoard.Tile, at: Double)] = [:]
        var boathouseSessions: [BoathouseSession] = []
        /// Ergs taken off the hub: what their link still sends is ignored until added again.
        var removed: Set<Int> = []
    }

    /// - Parameters:
    ///   - control: writes workouts to the ergs; nil where the link cannot (the page says so).
    ///   - source: where the ergs come from, as the page shows it.
    public init(store: RunStore?, control: (any ErgControl)?, source: String, logger: Logger,
                clock: @escaping @Sendable () -> Double, wallClock: @escaping @Sendable () -> Double = WebServer.wallSeconds) {
        self.store = store
        controlSlot = Mutex(control)
        self.source = source
        self.logger = logger
        self.clock = clock
        wallOffset = wallClock() - clock()
        self.wallClock = wallClock
        var s = State()
        if let store {
            do throws(StoreError) { s.sessions = try store.ergSessions(limit: RowingLive.recentSessions) } catch {
                s.storeError = error.description
            }
        }
        state = Mutex(s)
    }

    /// The link that writes workouts, when it is made after the hub (it delivers to it).
    public func setControl(_ control: any ErgControl) {
        controlSlot.withLock { $0 = control }
    }

    /// What finds and connects PM5s, where the link does (Bluetooth).
    public func setPicker(_ picker: any ErgPicker) {
        pickerSlot.withLock { $0 = picker }
    }

    private func picker(_ what: String) throws(ResultsBookError) -> any ErgPicker {
        guard let p = pickerSlot.withLock({ $0 }) else {
            throw ResultsBookError(.unavailable, field: what, reason: "this hub's ergs are not on Bluetooth (\(source))")
        }
        return p
    }

    public func scanPM5s() throws(ResultsBookError) { try picker("scan").scan() }
    public func pickPM5(address: String) throws(ResultsBookError) -> Int { try picker("address").pick(address: address) }
    public func letGo(erg: Int) throws(ResultsBookError) { try picker("erg").letGo(erg: erg) }

    /// Calls `handler` with each session once it is stored finished, on the hub's writer
    /// (MQTT publishes it).
    public func whenSessionFinished(_ handler: @escaping @Sendable (ErgSession) -> Void) {
        finishedHandlers.withLock { $0.append(handler) }
    }

    /// An erg of another hub of the boathouse, as it last published it (MQTT).
    public func heard(device: String, tile: RowingBoard.Tile) {
        let now = clock()
        state.withLock { s in
            s.boathouse[device + "/" + String(tile.erg)] = (device, tile, now)
            s.version &+= 1
        }
    }

    /// A session another hub of the boathouse finished (MQTT; each once).
    public func heard(device: String, session: ErgSession) {
        state.withLock { s in
            s.boathouseSessions.insert(BoathouseSession(device: device, session: session), at: 0)
            if s.boathouseSessions.count > RowingLive.recentSessions { s.boathouseSessions.removeLast() }
            s.version &+= 1
        }
    }

    /// Names an erg as the link found it ("PM5 430123456").
    public func add(erg: Int, name: String) {
        state.withLock { s in
            s.hub.add(erg: erg, name: name)
            s.removed.remove(erg)
            s.version &+= 1
        }
    }

    /// Takes erg `erg` off the board (the coach let its PM5 go); the piece it was rowing is
    /// stored as it stands, unfinished unless its summary came.
    public func remove(erg: Int) {
        let now = clock()
        state.withLock { s in
            guard s.hub.ergs[erg] != nil else { return }
            Self.close(erg: erg, at: now, &s)
            s.hub.remove(erg: erg)
            s.pieces[erg] = nil
            s.removed.insert(erg)
            s.version &+= 1
        }
    }

    /// What is wrong with the link (no adapter, Bluetooth off), or nil when nothing is.
    public func setSourceProblem(_ problem: String?) {
        state.withLock { s in
            guard s.sourceProblem != problem else { return }
            s.sourceProblem = problem
            s.version &+= 1
        }
    }

    /// One event from the link, on its thread.
    public func apply(_ event: PM5LogEvent) {
        state.withLock { s in
            let e = event.erg
            guard !s.removed.contains(e) else { return }
            // A stroke after the summary, or a stroke count that starts again outside a
            // workout of intervals under way: a new piece. So is any new stroke once the
            // piece is stored finished (its summary never came, and rowing went on).
            if case .notification(let t, _, let c, let bytes) = event, c == PM5Characteristic.strokeData.rawValue,
               case .strokeData(let stroke)? = try? PM5Data.decode(characteristic: c, bytes), let recorder = s.hub.ergs[e]?.recorder,
               recorder.beginsNewPiece(stroke) || (s.pieces[e]?.finished ?? false) && recorder.isNewStroke(stroke) {
                Self.close(erg: e, at: t, &s)
            }
            s.hub.apply(event)
            if s.pieces[e] == nil { Self.newPiece(erg: e, &s) }
            s.version &+= 1
        }
    }

    private static func newPiece(erg: Int, _ s: inout State) {
        s.pieces[erg] = Piece(key: s.nextKey, athlete: s.hub.ergs[erg]?.athlete ?? "", workout: s.workout ?? "")
        s.nextKey += 1
    }

    /// Hands erg `erg`'s piece so far to the writer (which stores and finishes it) and
    /// starts the next.
    private static func close(erg: Int, at t: Double, _ s: inout State) {
        guard let name = s.hub.ergs[erg]?.name, let old = s.hub.newPiece(erg: erg, at: t) else { return }
        if let p = s.pieces[erg], !old.strokes.isEmpty || p.sessionID != nil {
            s.closing.append(Closing(erg: erg, name: name, piece: p, recorder: old))
        }
        newPiece(erg: erg, &s)
    }

    public func rowingLive() -> RowingLive {
        let now = clock(), wall = wallClock()
        let picker = pickerSlot.withLock { $0 }
        let bluetooth = picker.map { ($0.version, $0.bluetooth) }
        var live = state.withLock { s in
            let pending = s.hub.ergs.reduce(0) { n, e in n + max(0, e.value.recorder.strokes.count - (s.pieces[e.key]?.storedStrokes ?? 0)) }
                + s.closing.reduce(0) { $0 + $1.recorder.strokes.count - $1.piece.storedStrokes }
            var live = RowingLive(version: s.version, source: source, sourceProblem: s.sourceProblem, board: s.hub.board(now: now),
                                  workout: s.workout, programmed: s.programmed, sessions: s.sessions, storeError: s.storeError,
                                  pending: pending, wall: wall)
            // Another hub's erg not heard for as long as a silent erg of this one is stale too.
            live.boathouse = s.boathouse.values.sorted { ($0.device, $0.tile.erg) < ($1.device, $1.tile.erg) }.map { r in
                var t = r.tile
                if now - r.at > s.hub.staleAfter { t.stale = true }
                return BoathouseErg(device: r.device, tile: t)
            }
            live.boathouseSessions = s.boathouseSessions
            return live
        }
        if let (v, b) = bluetooth {
            live.version &+= v
            live.bluetooth = b
        }
        return live
    }

    public func assign(erg: Int, athlete: String) throws(ResultsBookError) {
        let name = athlete.trimmingCharacters(in: .whitespacesAndNewlines)
        guard name.count <= RunStore.maxNameLength else {
            throw ResultsBookError(.invalid, field: "athlete", reason: "at most \(RunStore.maxNameLength) characters")
        }
        try state.withLock { s throws(ResultsBookError) in
            guard s.hub.ergs[erg] != nil else {
                throw ResultsBookError(.notFound, field: "erg", reason: "there is no erg \(erg) on this hub")
            }
            s.hub.assign(erg: erg, athlete: name)
            // The piece under way is theirs too, unless it is already stored under a name.
            if let p = s.pieces[erg], p.sessionID == nil { s.pieces[erg]?.athlete = name }
            s.version &+= 1
        }
    }

    public func program(_ workout: PM5Workout) throws(ResultsBookError) -> [ErgProgramResult] {
        guard let control = controlSlot.withLock({ $0 }) else {
            throw ResultsBookError(.unavailable, field: "workout", reason: "this hub's link to the ergs cannot set workouts")
        }
        let frames: [[UInt8]]
        do { frames = try workout.frames() } catch { throw ResultsBookError(.invalid, field: "workout", reason: error.description) }
        let ergs = state.withLock { s in s.hub.ergs.values.filter { $0.recorder.live.connected }.sorted { $0.id < $1.id }.map { ($0.id, $0.name) } }
        guard !ergs.isEmpty else {
            throw ResultsBookError(.conflict, field: "workout", reason: "no erg is connected: wake the PM5s and wait for their tiles")
        }
        // Every erg at once: over Bluetooth each answers on its own link, so the page waits
        // for the slowest erg, not for all of them in turn.
        let answered = Mutex([ErgProgramResult?](repeating: nil, count: ergs.count))
        // A thread each, not concurrentPerform: the waits are sleeps, and a pool as wide as
        // the cores would take them two at a time.
        let done = DispatchGroup()
        for i in ergs.indices {
            done.enter()
            Thread {
                let r = Self.program(control, erg: ergs[i].0, name: ergs[i].1, frames: frames)
                answered.withLock { $0[i] = r }
                done.leave()
            }.start()
        }
        done.wait()
        let results = answered.withLock { $0.compactMap { $0 } }
        let now = clock()
        state.withLock { s in
            s.workout = workout.description
            s.programmed = results
            for r in results where r.accepted {
                Self.close(erg: r.erg, at: now, &s)
            }
            s.version &+= 1
        }
        let taken = results.filter(\.accepted).count
        logger.notice("workout \(workout.description) set on \(taken) of \(results.count) ergs")
        return results
    }

    private static func program(_ control: any ErgControl, erg id: Int, name: String, frames: [[UInt8]]) -> ErgProgramResult {
        do {
            let answers = try control.program(erg: id, frames: frames)
            guard answers.count == frames.count else {
                return ErgProgramResult(erg: id, name: name, accepted: false, problem: "the PM answered \(answers.count) of \(frames.count) frames")
            }
            for a in answers {
                let answer = try PM5ConfigAnswer(frame: a)
                if let p = answer.problem { return ErgProgramResult(erg: id, name: name, accepted: false, problem: p) }
            }
            return ErgProgramResult(erg: id, name: name, accepted: true, problem: nil)
        } catch {
            return ErgProgramResult(erg: id, name: name, accepted: false, problem: "\(error)")
        }
    }

    /// Writes what the ergs sent about once a second until `stop`.
    public func start() {
        running.store(true, ordering: .relaxed)
        writeLater()
    }

    private func writeLater() {
        writer.asyncAfter(deadline: .now() + Self.flushSeconds) { [self] in
            guard running.load(ordering: .relaxed) else { return }
            write()
            writeLater()
        }
    }

    /// Stops the writes, writing what is left first.
    public func stop() {
        running.store(false, ordering: .relaxed)
        flush()
        // Why: the ergs' link and the picker deliver to this hub, and it holds them; a
        // stopped hub lets go of them, so the area's objects are freed once it is off.
        controlSlot.withLock { $0 = nil }
        pickerSlot.withLock { $0 = nil }
    }

    /// Writes everything received so far, and returns once it is written.
    public func flush() {
        writer.sync { write() }
    }

    /// One round of writes, on the writer's queue.
    private func write() {
        guard let store else { return }
        let (live, closing) = state.withLock { s in
            let live = s.hub.ergs.values.compactMap { e -> (Int, String, Piece, ErgRecorder)? in
                guard let p = s.pieces[e.id], !p.finished, !e.recorder.strokes.isEmpty else { return nil }
                return (e.id, e.name, p, e.recorder)
            }
            return (live, s.closing)
        }
        var failure: String?
        var finished: [ErgSession] = []
        for (erg, name, piece, recorder) in live {
            do throws(StoreError) {
                let (p, done) = try write(store, name: name, piece: piece, recorder: recorder, closing: false)
                state.withLock { s in
                    if s.pieces[erg]?.key == p.key { s.pieces[erg] = p }
                }
                if let done { finished.append(done) }
            } catch { failure = error.description }
        }
        for c in closing {
            do throws(StoreError) {
                let (_, done) = try write(store, name: c.name, piece: c.piece, recorder: c.recorder, closing: true)
                state.withLock { s in s.closing.removeAll { $0.piece.key == c.piece.key } }
                if let done { finished.append(done) }
            } catch { failure = error.description }
        }
        let (firstFailure, cleared) = state.withLock { s in
            defer {
                s.storeError = failure
                if !finished.isEmpty {
                    s.sessions = Array((finished.reversed() + s.sessions).prefix(RowingLive.recentSessions))
                    s.version &+= 1
                }
            }
            return (failure != nil && s.storeError == nil, failure == nil && s.storeError != nil)
        }
        // Once per failure until it clears; what was not written stays and is tried again.
        if firstFailure, let failure { logger.error("erg sessions not stored: \(failure); kept in memory and tried again") }
        if cleared { logger.notice("erg sessions are stored again") }
        for f in finished {
            logger.info("erg session \(f.id) stored: \(f.athlete.isEmpty ? f.erg : f.athlete), \(f.strokes) strokes, \(Int(f.distance)) m")
            for h in finishedHandlers.withLock({ $0 }) { h(f) }
        }
    }

    /// Stores what is new in one piece; finishes its session when the PM5 summed it up or
    /// the piece was closed. Keyed writes: a piece written again doubles nothing.
    private func write(_ store: RunStore, name: String, piece: Piece, recorder r: ErgRecorder,
                       closing: Bool) throws(StoreError) -> (Piece, ErgSession?) {
        var p = piece
        if p.sessionID == nil {
            guard let first = r.strokes.first else { return (p, nil) }
            p.sessionID = try store.startErgSession(erg: name, athlete: p.athlete, workout: p.workout,
                                                    wallTime: first.receivedAt + wallOffset).id
        }
        guard let id = p.sessionID, !p.finished else { return (p, nil) }
        // The last stroke stored goes again: its power comes in a second notification.
        try store.recordErg(sessionID: id, strokes: Array(r.strokes[max(0, p.storedStrokes - 1)...]),
                            samples: Array(r.samples[min(p.storedSamples, r.samples.count)...]),
                            splits: Array(r.splits[min(p.storedSplits, r.splits.count)...]), gaps: r.gaps, wallOffset: wallOffset)
        p.storedStrokes = r.strokes.count
        p.storedSamples = r.samples.count
        p.storedSplits = r.splits.count
        let endedLongAgo = r.endedAt.map { clock() - $0 >= Self.summaryWait } ?? false
        guard r.summary != nil || closing || endedLongAgo else { return (p, nil) }
        let end = (r.strokes.last?.receivedAt ?? clock()) + wallOffset
        // A workout that ended without the PM5's summary gets the hub's, from its record.
        let recorded = r.summary == nil && r.endedAt != nil ? r.recordedSummary() : nil
        try store.finishErgSession(id: id, summary: r.summary ?? recorded, more: r.summaryMore,
                                   wallTime: max(end, r.live.lastHeard.map { $0 + wallOffset } ?? end), fromRecord: recorded != nil)
        p.finished = true
        return (p, try store.ergSession(id: id))
    }
}
