// SPDX-License-Identifier: Apache-2.0
// The GPS acceleration timer as the daemon runs it: gpsd's client feeding the timer, the
// state the page shows, and the log.

public import Engine
import Foundation
public import GPSD
public import GPSTiming
public import Logging
public import SQLiteStore
import Synchronization
public import WebUI

/// gpsd's client and the acceleration timer on its thread. Every fix goes through the
/// timer in order; the page reads `live()` from any thread. gpsd absent, no receiver or no
/// fix show in the state and the log; nothing here stops the gate.
public final class GPSGate: GPSDesk, Sendable {
    public let settings: AccelerationSettings
    private let core: Core
    private let receiver: GPSDReceiver

    /// Runs kept for the page since the gate started.
    public static let keptRuns = 50

    /// `store`: the garage and where every finished run is written (nil: runs are kept in
    /// memory only, and the garage is unavailable). `onEvent` hears each of the timer's
    /// events on the client's thread, in order, after `live()` shows it (and after a
    /// finished run is stored). `onFix` hears every fix first, on the same thread (the ski
    /// track logger).
    public init(config: GPSDConfig, settings: AccelerationSettings, store: RunStore?, logger: Logger,
                wallClock: @escaping @Sendable () -> Double = WebServer.wallSeconds,
                onEvent: @escaping @Sendable (AccelerationEvent) -> Void = { _ in },
                onFix: @escaping @Sendable (GPSFix) -> Void = { _ in }) {
        self.settings = settings
        let core = Core(settings: settings, store: store, logger: logger, wallClock: wallClock, onEvent: onEvent)
        self.core = core
        receiver = GPSDReceiver(config: config, logger: logger) { fix in
            onFix(fix)
            core.ingest(fix)
        }
    }

    /// Starts gpsd's client, with the default vehicle active and the latest stored runs on
    /// show.
    public func start() {
        core.loadGarage()
        receiver.start()
    }
    public func stop() { receiver.stop() }

    public var status: ReceiverStatus { receiver.status }

    /// What the driver hears and sees for an event of the timer (the loop's buzzer, LED and
    /// sounds): armed, launch, each milestone, and the run complete or voided.
    public static func cue(for event: AccelerationEvent) -> FeedbackCue? {
        switch event {
        case .state(.armed, _): .attention
        case .state: nil
        case .launched: .go
        case .milestone: .mark
        case .finished(let r): r.voided == nil ? .done : .fault
        }
    }

    public var garageStore: RunStore? { core.store }
    public var running: Bool { core.running }
    public func garageChanged() { core.loadRuns() }

    public func live() -> GPSLive {
        let status = receiver.status
        var v = core.live(status)
        // Every fix and every change of the timer or the garage counts in the core; the
        // receiver's status (link, lock, rate) is hashed, being small. Why not the whole
        // view's hash: it holds the latest runs, hashed again for every page 50 times a second.
        v.version = v.version &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(truncatingIfNeeded: status.hashValue)
        return v
    }

    private final class Core: Sendable {
        let settings: AccelerationSettings
        let logger: Logger
        let wallClock: @Sendable () -> Double
        let onEvent: @Sendable (AccelerationEvent) -> Void
        let store: RunStore?
        private let state: Mutex<State>

        struct State {
            var run: AccelerationRun
            var detail = "waiting for a fix"
            var runs: [GPSRunRecord] = []
            var activeVehicle: String?
            /// Counts every fix taken and every change of the runs or the active vehicle.
            var version: UInt64 = 1
        }

        init(settings: AccelerationSettings, store: RunStore?, logger: Logger, wallClock: @escaping @Sendable () -> Double,
             onEvent: @escaping @Sendable (AccelerationEvent) -> Void) {
            self.settings = settings
            self.store = store
            self.logger = logger
            self.wallClock = wallClock
            self.onEvent = onEvent
            state = Mutex(State(run: AccelerationRun(settings: settings)))
        }

        func ingest(_ fix: GPSFix) {
            let events = state.withLock { s in
                let events = s.run.ingest(fix)
                s.version &+= 1
                for case .state(_, let why) in events { s.detail = why }
                return events
            }
            for e in events {
                if case .finished(let r) = e { keep(GPSRunRecord(r, settings: settings, wallTime: wallClock())) }
                log(e)
                onEvent(e)
            }
        }

        /// A finished run: written to the garage (durable before it is shown), or kept in
        /// memory when the database is not open or the write fails (said in the log).
        private func keep(_ run: GPSRunRecord) {
            var shown = run
            if let store {
                do throws(StoreError) {
                    shown = try store.addGPSRun(run)
                } catch {
                    logger.error("GPS run not stored: \(error.description); it stays on the page until the gate stops")
                }
            }
            state.withLock { s in
                s.runs.insert(shown, at: 0)
                if s.runs.count > GPSGate.keptRuns { s.runs.removeLast() }
                s.version &+= 1
            }
        }

        var running: Bool { state.withLock { $0.run.state == .running } }

        /// At the gate's start: the default vehicle active, the latest runs on show.
        func loadGarage() {
            guard let store else { return }
            do throws(StoreError) { try store.activateDefaultVehicle() } catch { logger.error("GPS garage: \(error.description)") }
            loadRuns()
        }

        func loadRuns() {
            guard let store else { return }
            do throws(StoreError) {
                let runs = try store.gpsRuns(GPSRunQuery(limit: GPSGate.keptRuns))
                state.withLock {
                    $0.runs = runs
                    $0.version &+= 1
                }
            } catch {
                logger.error("GPS garage: \(error.description)")
            }
            refreshActive()
        }

        func refreshActive() {
            guard let store else { return }
            let name: String?
            do throws(StoreError) {
                name = try store.activeVehicle()?.name
            } catch {
                logger.error("GPS garage: \(error.description)")
                return
            }
            state.withLock {
                $0.activeVehicle = name
                $0.version &+= 1
            }
        }

        private func log(_ e: AccelerationEvent) {
            switch e {
            case .state(let s, let why):
                logger.info("GPS timer \(s.rawValue): \(why)")
            case .launched:
                logger.notice("GPS timer: launch")
            case .milestone(let m):
                logger.notice("GPS timer: \(m.milestone) in \(Self.seconds(m.seconds)) s (±\(Self.seconds(m.uncertainty)))")
            case .finished(let r):
                if let why = r.voided {
                    logger.warning("GPS run voided: \(why)")
                } else {
                    let times = r.times.map { "\($0.milestone) \(Self.seconds($0.seconds)) s" }.joined(separator: ", ")
                    logger.notice("GPS run: \(times); top speed \(Self.mph(r.topSpeed)) mph")
                }
            }
        }

        static func seconds(_ s: Double) -> String { String(format: "%.2f", s) }
        static func mph(_ v: Double) -> String { String(format: "%.1f", v / Units.mph) }

        func live(_ status: ReceiverStatus) -> GPSLive {
            state.withLock { s in
                var v = GPSLive(status: status, settings: settings, state: s.run.state, stateDetail: s.detail)
                if let p = s.run.progress {
                    v.elapsed = p.seconds
                    v.distance = p.distance
                    v.milestones = p.times.map(GPSMilestoneRecord.init)
                }
                v.runs = s.runs
                v.last = s.runs.first
                v.activeVehicle = s.activeVehicle
                v.version = s.version
                return v
            }
        }
    }
}
