// SPDX-License-Identifier: Apache-2.0
// The GPS acceleration timer as the daemon runs it: gpsd's client feeding the timer, the
// state the page shows, and the log.

import Foundation
public import GPSD
public import GPSTiming
public import Logging
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

    /// `onEvent` hears each of the timer's events on the client's thread, in order, after
    /// `live()` shows it.
    public init(config: GPSDConfig, settings: AccelerationSettings, logger: Logger,
                wallClock: @escaping @Sendable () -> Double = WebServer.wallSeconds,
                onEvent: @escaping @Sendable (AccelerationEvent) -> Void = { _ in }) {
        self.settings = settings
        let core = Core(settings: settings, logger: logger, wallClock: wallClock, onEvent: onEvent)
        self.core = core
        receiver = GPSDReceiver(config: config, logger: logger) { fix in core.ingest(fix) }
    }

    public func start() { receiver.start() }
    public func stop() { receiver.stop() }

    public var status: ReceiverStatus { receiver.status }

    public func live() -> GPSLive {
        var v = core.live(receiver.status)
        v.version = 0
        // The content's hash: every fix, state or receiver change gives a new version.
        v.version = UInt64(truncatingIfNeeded: v.hashValue)
        return v
    }

    private final class Core: Sendable {
        let settings: AccelerationSettings
        let logger: Logger
        let wallClock: @Sendable () -> Double
        let onEvent: @Sendable (AccelerationEvent) -> Void
        private let state: Mutex<State>

        struct State {
            var run: AccelerationRun
            var detail = "waiting for a fix"
            var runs: [GPSRunView] = []
        }

        init(settings: AccelerationSettings, logger: Logger, wallClock: @escaping @Sendable () -> Double,
             onEvent: @escaping @Sendable (AccelerationEvent) -> Void) {
            self.settings = settings
            self.logger = logger
            self.wallClock = wallClock
            self.onEvent = onEvent
            state = Mutex(State(run: AccelerationRun(settings: settings)))
        }

        func ingest(_ fix: GPSFix) {
            let events = state.withLock { s in
                let events = s.run.ingest(fix)
                for e in events {
                    switch e {
                    case .state(_, let why): s.detail = why
                    case .finished(let r):
                        s.runs.insert(GPSRunView(r, rollout: settings.rollout, wallTime: wallClock()), at: 0)
                        if s.runs.count > GPSGate.keptRuns { s.runs.removeLast() }
                    case .launched, .milestone: break
                    }
                }
                return events
            }
            for e in events {
                log(e)
                onEvent(e)
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
                    v.milestones = p.times.map(GPSMilestoneView.init)
                }
                v.runs = s.runs
                v.last = s.runs.first
                return v
            }
        }
    }
}
