// SPDX-License-Identifier: Apache-2.0
// The GPS area: gpsd's acceleration timer and the ski logger it feeds, on the page.

public import Engine
public import GateConfig
public import GateCore
public import GateDaemon
public import GPSD
public import GPSTiming
public import Logging
public import SkiRuns
public import SQLiteStore
public import VideoDelay
public import WebUI

/// `[gps]` and `[ski]`: gpsd's client on its own thread times acceleration runs, and every
/// fix goes to the ski logger too. Their events come out as cues (LED, buzzer, sound).
/// With `[ski] button` the start button starts and stops tracking: a press is confirmed at
/// once by the loop's beep and flash, then by the cue of what it did.
public final class GPSFeature: Feature {
    public let name = "gps"
    public let gate: GPSGate
    public let ski: SkiTracker
    public let startButton: MarkRequests?
    private let buttonSport: SkiTrack.Sport
    private let cues: FeedbackCues
    private let web: WebGate?
    private let log: Logger
    private let summary: String

    /// The area as a board's settings describe it (nil without `[gps]`), its runs and
    /// tracks in `store`.
    public static func fromSettings(_ settings: GateSettings, store: RunStore?, web: WebGate?, cues: FeedbackCues) -> GPSFeature? {
        guard let g = settings.gps else { return nil }
        let s = settings.ski
        return GPSFeature(gpsd: GPSDConfig(host: g.host, port: UInt16(g.port), wantedRate: Double(g.rateHz), setRate: g.setRate),
                          acceleration: AccelerationSettings(accuracy: Double(g.accuracyMetres), rollout: g.rollout),
                          ski: SkiSettings(minimumRunSeconds: Double(s.minRunSeconds), minimumRunVertical: Double(s.minVerticalMetres),
                                           longestPause: Double(s.longestPauseSeconds)),
                          snowboard: SkiSettings(minimumRunSeconds: Double(s.snowboardMinRunSeconds),
                                                 minimumRunVertical: Double(s.snowboardMinVerticalMetres),
                                                 longestPause: Double(s.snowboardLongestPauseSeconds)),
                          skiButton: s.button ? SkiTrack.Sport(rawValue: s.sport) ?? .ski : nil,
                          store: store, web: web, cues: cues)
    }

    public init(gpsd: GPSDConfig, acceleration: AccelerationSettings = AccelerationSettings(), ski: SkiSettings = .ski,
                snowboard: SkiSettings = .snowboard, skiButton: SkiTrack.Sport? = nil, store: RunStore?, web: WebGate?,
                cues: FeedbackCues) {
        let tracker = SkiTracker(store: store, ski: ski, snowboard: snowboard, logger: Logger(label: "sprintgate.ski"))
        self.ski = tracker
        self.cues = cues
        self.web = web
        log = Logger(label: "sprintgate.gps")
        summary = "gpsd at \(gpsd.host):\(gpsd.port), \(gpsd.wantedRate.map { "\($0)" } ?? "the receiver's") fixes/s asked, \(acceleration.accuracy) m accuracy gate"
        gate = GPSGate(config: gpsd, settings: acceleration, store: store, logger: log, onEvent: { event in
            if let cue = GPSGate.cue(for: event) { cues.push(cue) }
        }, onFix: { fix in tracker.ingest(fix) })
        startButton = skiButton == nil ? nil : MarkRequests()
        buttonSport = skiButton ?? .ski
    }

    public func start() {
        let gate = gate
        ski.follow { gate.status }
        ski.resume()
        web?.bridge.ski.connect(ski)
        gate.start()
        web?.bridge.gps.connect(gate)
        log.notice("GPS timer on: \(summary)")
    }

    public func service(now: MonotonicInstant) {
        guard let startButton else { return }
        let cues = cues, ski = ski, sport = buttonSport
        startButton.take { _ in
            ski.buttonPressed(sport: sport) { started in
                cues.push(started == nil ? .fault : started! ? .go : .done)
            }
        }
    }

    /// Stops gpsd's client and writes the fixes the ski logger still holds.
    public func stop() {
        gate.stop()
        ski.flush()
    }
}
