// SPDX-License-Identifier: Apache-2.0
// The ski track logger as the daemon runs it: while tracking is on, every 3D fix from gpsd's
// client is written to the track in the results database, about once a second.

import Dispatch
public import GPSTiming
public import Logging
public import SkiRuns
public import SQLiteStore
import Synchronization
public import WebUI

/// Every fix of a tracking session, stored. Fed on gpsd's client thread (`ingest`); started
/// and stopped from the page (any thread). A track being recorded when the gate stops is
/// taken up again when it starts: a restart mid-day goes on with the same day.
public final class SkiTracker: SkiDesk, Sendable {
    public let store: RunStore?
    private let settings: [SkiTrack.Sport: SkiSettings]
    private let logger: Logger
    private let wallClock: @Sendable () -> Double
    private let receiverStatus = Mutex<(@Sendable () -> ReceiverStatus)?>(nil)
    private let state = Mutex(State())
    public let skiCache = SkiDayCache()
    /// Where the database is written, in order: never gpsd's client thread, which a slow
    /// SD card's sync would hold up (and with it the timer's events and the page's speed).
    private let writer = DispatchQueue(label: "sprintgate.ski.store")

    /// Why about a second: a power cut loses at most the last second of the track, and an
    /// SD card is written once a second rather than at the receiver's rate.
    public static let flushSeconds = 1.0
    /// Fixes kept in memory while the database refuses them (10 minutes at 10 Hz); older
    /// ones are dropped.
    public static let maxPending = 6000
    public static let flushCount = 50

    struct State {
        var track: SkiTrack?
        var pending: [SkiTrackPoint] = []
        /// Fixes handed to the writer and not yet written.
        var writing = 0
        var stored = 0
        var lastFix: GPSFix?
        var storeError: String?
    }

    public init(store: RunStore?, ski: SkiSettings = .ski, snowboard: SkiSettings = .snowboard, logger: Logger,
                wallClock: @escaping @Sendable () -> Double = WebServer.wallSeconds) {
        self.store = store
        settings = [.ski: ski, .snowboard: snowboard]
        self.logger = logger
        self.wallClock = wallClock
    }

    /// Where the page's view reads the receiver's state (the GPS gate that feeds this).
    public func follow(_ status: @escaping @Sendable () -> ReceiverStatus) {
        receiverStatus.withLock { $0 = status }
    }

    /// Writes the fixes taken and not yet written, and returns once they are (when the
    /// gate stops).
    public func flush() {
        writer.sync {
            let batch: (Int64, [SkiTrackPoint])? = state.withLock { s in
                guard let t = s.track, !s.pending.isEmpty else { return nil }
                defer { s.pending.removeAll() }
                s.writing += s.pending.count
                return (t.id, s.pending)
            }
            if let (id, points) = batch { write(id, points) }
        }
    }

    /// Takes up the track that was being recorded when the gate stopped, if any.
    public func resume() {
        guard let store else { return }
        do throws(StoreError) {
            if let t = try store.recordingSkiTrack() {
                state.withLock {
                    $0.track = t
                    $0.stored = t.points
                }
                logger.notice("ski tracking goes on with track \(t.id) (\(t.points) fixes stored before the restart)")
            }
        } catch {
            logger.error("ski tracks: \(error.description)")
        }
    }

    /// A fix from the receiver, on gpsd's client thread. Stored when tracking is on and
    /// the fix is 3D with a position.
    public func ingest(_ fix: GPSFix) {
        let batch: (Int64, [SkiTrackPoint])? = state.withLock { s in
            let previous = s.lastFix
            s.lastFix = fix
            guard let track = s.track, fix.mode == .threeD, let la = fix.latitude, let lo = fix.longitude, let al = fix.altitude else {
                return nil
            }
            // Why: gpsd may report one epoch twice (a cycle's end seen late under load);
            // the instant is stored once.
            if let previous, previous.time == fix.time { return nil }
            s.pending.append(SkiTrackPoint(timeNs: fix.time.nanoseconds, latitude: la, longitude: lo, altitude: al, speed: fix.speed))
            if s.pending.count > Self.maxPending { s.pending.removeFirst(s.pending.count - Self.maxPending) }
            // Also by count: a receiver whose clock steps back must not hold fixes unwritten.
            guard let first = s.pending.first,
                  abs(Double(fix.time.nanoseconds - first.timeNs) / 1e9) >= Self.flushSeconds || s.pending.count >= Self.flushCount else { return nil }
            let out = s.pending
            s.pending.removeAll(keepingCapacity: true)
            s.writing += out.count
            return (track.id, out)
        }
        if let (id, points) = batch { writer.async { self.write(id, points) } }
    }

    /// Writes fixes handed to the writer (on its queue); on failure they go back to be
    /// written with the next batch.
    private func write(_ id: Int64, _ points: [SkiTrackPoint]) {
        guard let store else { return }
        do throws(StoreError) {
            let added = try store.appendSkiPoints(trackID: id, points)
            let cleared = state.withLock { s in
                s.writing -= points.count
                s.stored += added
                defer { s.storeError = nil }
                return s.storeError != nil
            }
            if cleared { logger.notice("ski track fixes are stored again") }
        } catch {
            let first = state.withLock { s in
                s.writing -= points.count
                if s.track?.id == id { s.pending.insert(contentsOf: points, at: 0) }
                defer { s.storeError = error.description }
                return s.storeError == nil
            }
            // Once per failure until it clears.
            if first { logger.error("ski track fixes not stored: \(error.description); kept in memory and tried again") }
        }
    }

    public var skiStore: RunStore? { store }
    public func skiSettings(_ sport: SkiTrack.Sport) -> SkiSettings { settings[sport] ?? .ski }

    public func skiLive() -> SkiLive {
        let status = receiverStatus.withLock { $0 }?() ?? ReceiverStatus()
        return state.withLock { s in
            var track = s.track
            track?.points = s.stored
            let fix = s.lastFix.flatMap { $0.mode == .threeD ? $0 : nil }
            return SkiLive(recording: s.track != nil, track: track, pending: s.pending.count + s.writing, link: status.link.rawValue,
                           linkDetail: status.detail, speed: status.link == .fix ? fix?.speed : nil,
                           altitude: status.link == .fix ? fix?.altitude : nil, storeError: s.storeError)
        }
    }

    public func startTracking(sport: SkiTrack.Sport, name: String) throws(ResultsBookError) -> SkiTrack {
        guard let store else {
            throw ResultsBookError(.unavailable, field: "tracks", reason: "the results database is not open: check the state directory (see the log)")
        }
        if let open = state.withLock({ $0.track }) {
            throw ResultsBookError(.conflict, field: "tracking", reason: "track \(open.id) is being recorded: stop it first")
        }
        let t: SkiTrack
        do throws(StoreError) { t = try store.startSkiTrack(name: name, sport: sport, wallTime: wallClock()) } catch {
            throw SQLiteResultsBook.bookError(error)
        }
        state.withLock { s in
            s.track = t
            s.pending.removeAll()
            s.stored = 0
        }
        logger.notice("ski tracking on: track \(t.id) (\(sport.rawValue))")
        return t
    }

    /// The start button (with `[ski] button`): starts tracking when off, stops it when on.
    /// The database is written on a thread of its own, never the gate loop's; `done` hears
    /// true when tracking started, false when it stopped, nil when that failed (said in the
    /// log).
    public func buttonPressed(sport: SkiTrack.Sport, done: @escaping @Sendable (Bool?) -> Void) {
        DispatchQueue.global().async { [self] in
            let on = state.withLock { $0.track == nil }
            do throws(ResultsBookError) {
                if on { _ = try startTracking(sport: sport, name: "") } else { _ = try stopTracking() }
                done(on)
            } catch {
                logger.error("ski tracking from the button: \(error.reason)")
                done(nil)
            }
        }
    }

    public func stopTracking() throws(ResultsBookError) -> SkiTrack? {
        guard let store else { return nil }
        // On the writer's queue, after the batches handed to it before.
        let result: Result<SkiTrack?, StoreError> = writer.sync {
            let taken: (SkiTrack, [SkiTrackPoint])? = state.withLock { s in
                // No fix is taken for it from here on (the receiver goes on sending).
                guard let t = s.track else { return nil }
                let p = s.pending
                s.pending.removeAll()
                s.track = nil
                s.stored = 0
                return (t, p)
            }
            guard let (track, points) = taken else { return .success(nil) }
            do throws(StoreError) {
                try store.appendSkiPoints(trackID: track.id, points)
                try store.stopSkiTrack(id: track.id, wallTime: wallClock())
                return .success(track)
            } catch {
                // Still recording, as before the stop was asked for.
                let stored = (try? store.skiTrack(id: track.id).points) ?? 0
                state.withLock { s in
                    s.track = track
                    s.stored = stored
                    s.pending.insert(contentsOf: points, at: 0)
                }
                return .failure(error)
            }
        }
        let track: SkiTrack
        switch result {
        case .success(let t?): track = t
        case .success(nil): return nil
        case .failure(let error): throw SQLiteResultsBook.bookError(error)
        }
        let stopped: SkiTrack
        do throws(StoreError) { stopped = try store.skiTrack(id: track.id) } catch { throw SQLiteResultsBook.bookError(error) }
        logger.notice("ski tracking off: track \(track.id), \(stopped.points) fixes")
        return stopped
    }
}
