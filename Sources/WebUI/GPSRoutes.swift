// SPDX-License-Identifier: Apache-2.0
// The acceleration timer on the page: the receiver's state and the timer's, live over a
// WebSocket at the receiver's rate, for the in-car view.

import Foundation
public import GPSTiming
import Hummingbird
import HummingbirdWebSocket
import NIOCore
import Synchronization

/// One milestone as the page shows it. Seconds from the start; speeds in m/s.
public struct GPSMilestoneView: Sendable, Hashable, Codable {
    public var name: String
    public var seconds: Double
    /// One-sigma uncertainty, seconds.
    public var uncertainty: Double
    public var speed: Double
    public var trapSpeed: Double?

    public init(_ m: MilestoneTime) {
        name = m.milestone.description
        seconds = m.seconds
        uncertainty = m.uncertainty
        speed = m.speed
        trapSpeed = m.trapSpeed
    }
}

/// A finished acceleration run.
public struct GPSRunView: Sendable, Hashable, Codable {
    public var milestones: [GPSMilestoneView]
    /// m/s, and seconds from the start.
    public var topSpeed: Double
    public var topSpeedSeconds: Double
    /// Metres.
    public var distance: Double
    /// Why the run has no times; nil for a timed run.
    public var voided: String?
    public var fixRate: Double
    public var rollout: Bool
    /// Unix seconds when it finished.
    public var wallTime: Double

    public init(_ r: AccelerationResult, rollout: Bool, wallTime: Double) {
        milestones = r.times.map(GPSMilestoneView.init)
        topSpeed = r.topSpeed
        topSpeedSeconds = r.topSpeedSeconds
        distance = r.distance
        voided = r.voided
        fixRate = r.fixRate
        self.rollout = rollout
        self.wallTime = wallTime
    }
}

/// The receiver and the timer now: `GET /api/gps` and each message of `/api/gps/ws`.
public struct GPSLive: Sendable, Hashable, Codable {
    /// Changes with every fix or state change.
    public var version: UInt64 = 0
    /// `fix`, `no-fix`, `no-receiver`, `no-gpsd`, and what to do when not `fix`.
    public var link: String
    public var linkDetail: String
    /// 0 none, 2 2D, 3 3D.
    public var mode: Int
    public var satellitesUsed: Int?
    public var satellitesSeen: Int?
    /// The fix's horizontal error (gpsd's eph), m.
    public var accuracy: Double?
    /// The timer's accuracy gate, m.
    public var accuracyGate: Double
    /// Fixes a second measured, and asked for.
    public var rate: Double?
    public var wantedRate: Double?
    public var rateWarning: String?
    public var device: String?
    /// `acquiring`, `ready`, `armed`, `running`, `complete`, `voided`, and why.
    public var state: String
    public var stateDetail: String
    /// The last fix's speed, m/s; nil without a fix.
    public var speed: Double?
    /// While running: seconds and metres from the launch, and the milestones so far.
    public var elapsed: Double?
    public var distance: Double?
    public var milestones: [GPSMilestoneView]
    /// The last finished run, and the runs since the gate started (newest first).
    public var last: GPSRunView?
    public var runs: [GPSRunView]
    public var rollout: Bool

    public init(status: ReceiverStatus, settings: AccelerationSettings, state: AccelerationState, stateDetail: String) {
        link = status.link.rawValue
        linkDetail = status.detail
        mode = status.mode.rawValue
        satellitesUsed = status.satellitesUsed
        satellitesSeen = status.satellitesSeen
        accuracy = status.horizontalError
        accuracyGate = settings.accuracy
        rate = status.rate
        wantedRate = status.wantedRate
        rateWarning = status.rateWarning
        device = status.device
        self.state = state.rawValue
        self.stateDetail = stateDetail
        // A speed from a receiver no longer heard is no speed.
        speed = status.link == .fix ? status.speed : nil
        milestones = []
        runs = []
        rollout = settings.rollout
    }
}

/// The page's view of the GPS timer (the daemon's GPS gate).
public protocol GPSDesk: Sendable {
    /// The receiver and the timer now.
    func live() -> GPSLive
}

/// Where the daemon plugs its GPS timer in; empty on a gate without `[gps]`.
public final class GPSDeskSlot: Sendable {
    private let desk = Mutex<(any GPSDesk)?>(nil)
    public init() {}
    public func connect(_ d: any GPSDesk) { desk.withLock { $0 = d } }
    public var current: (any GPSDesk)? { desk.withLock { $0 } }
}

extension WebServer {
    func gpsDesk() throws -> any GPSDesk {
        guard let d = bridge.gps.current else {
            throw APIError(.notFound, field: "gps", reason: "this gate has no GPS timer: add a [gps] table to its settings (see selftest)")
        }
        return d
    }

    /// Why 20 ms: receivers give at most 25 fixes a second; each is sent once.
    static let gpsPeriod = Duration.milliseconds(20)

    func addGPSRoutes(to router: Router<WebContext>) {
        let s = self
        router.get("/api/gps") { _, _ in try s.json(try s.gpsDesk().live()) }
    }

    /// The in-car view's feed: the live state as JSON text, once per change.
    func addGPSWebSocket(to router: Router<BasicWebSocketRequestContext>) {
        let slot = bridge.gps
        router.ws("/api/gps/ws") { inbound, outbound, _ in
            guard let desk = slot.current else {
                // One message saying why, then the socket closes.
                try await outbound.write(.text("{\"error\":\"this gate has no GPS timer: add a [gps] table to its settings\"}"))
                return
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { for try await _ in inbound {} }
                group.addTask {
                    var sent: UInt64 = .max
                    while !Task.isCancelled {
                        let live = desk.live()
                        if live.version != sent {
                            let data = try JSONEncoder.board.encode(live)
                            try await outbound.write(.text(String(decoding: data, as: UTF8.self)))
                            sent = live.version
                        }
                        try await Task.sleep(for: WebServer.gpsPeriod)
                    }
                }
                try await group.next()
                group.cancelAll()
            }
        }
    }
}
