// SPDX-License-Identifier: Apache-2.0
// What the live board shows, as one value the gate loop publishes and the web side reads.

public import GateCore
import Synchronization

/// The gate's state for the page: written by the gate loop's observer (engine thread),
/// read by the web threads. Plain values only, so a copy is a consistent picture.
///
/// Times in the `*MonoNs` fields are CLOCK_MONOTONIC nanoseconds of the gate; the page
/// never compares them with its own clock, only with `nowMonoNs` of the same message.
public struct LiveSnapshot: Sendable, Hashable, Codable {
    /// Engine phase: `idle`, `armed`, `holding`, `starting`, `in-frame`, `running`, `finished`.
    public var phase: String = "idle"
    /// Start type id (see `WebSettings.startTypes`), e.g. `flying`.
    public var startType: String = "flying"
    /// Preset id, or nil when the gate runs without one.
    public var preset: String?
    /// Distance timed in metres (from the preset), for speed; nil when unknown.
    public var distanceMetres: Double?
    /// Solo mode: every crossing is a lap until reset.
    public var solo: Bool = false
    /// When the running clock started (CLOCK_MONOTONIC ns); nil unless `phase == "running"`.
    public var runStartMonoNs: Int64?
    /// Laps of the current run: split (since the start) and lap time, seconds.
    public var laps: [Lap] = []
    /// The last false start's reason, cleared by the next arm.
    public var falseStart: String?
    /// What the detector sees.
    public var gate = GateView()
    /// Camera device state and frame counters.
    public var camera = CameraView()
    /// The last few crossings, newest first (at most `LiveSnapshot.crossingLimit`).
    public var crossings: [CrossingView] = []
    /// Other gates of a race and their clock sync health.
    public var peers: [PeerView] = []
    /// Moves when the loop applied settings from the page: phones read them again.
    public var settingsVersion: UInt64 = 0

    /// Why: a phone screen shows about five; the rest is in the history.
    public static let crossingLimit = 8

    public init() {}

    public struct Lap: Sendable, Hashable, Codable {
        public var number: Int
        /// Time since the start, seconds.
        public var splitSeconds: Double
        /// Time since the previous lap (or the start), seconds.
        public var lapSeconds: Double
        public init(number: Int, splitSeconds: Double, lapSeconds: Double) {
            self.number = number
            self.splitSeconds = splitSeconds
            self.lapSeconds = lapSeconds
        }
    }

    public struct GateView: Sendable, Hashable, Codable {
        public var armed = false
        public var ready = false
        public var clear = true
        public var tooFar = false
        public var shaking = false
        /// Tallest body in view as a fraction of the frame height, 0...1.
        public var blobHeight = 0.0
        /// The ready LED's pattern name (`off`, `ready`, `fault`, …).
        public var light = "off"
        public init() {}
        /// The detector's status as the page shows it.
        public init(_ s: GateStatus, light: String) {
            armed = s.armed; ready = s.ready; clear = s.clear; tooFar = s.tooFar; shaking = s.shaking
            blobHeight = s.blobHeight
            self.light = light
        }
    }

    public struct CameraView: Sendable, Hashable, Codable {
        /// Device state: `absent`, `busy`, `no-signal`, `streaming`.
        public var state = "absent"
        /// E.g. `640x480 GREY 120 fps`; empty before the first open.
        public var mode = ""
        /// Frames per second over the last stats window.
        public var fps = 0.0
        public var frames: UInt64 = 0
        /// Frames the driver dropped since start (sequence gaps).
        public var dropped: UInt64 = 0
        /// 99th percentile of frame timestamp to end of processing, milliseconds.
        public var latencyP99Ms = 0.0
        /// The exposure the camera reports, milliseconds; nil when it does not say.
        public var exposureMs: Double?
        /// Set when the exposure is long enough to blur a sprinter, with what to do.
        public var exposureWarning: String?
        /// Why the camera gives no frames and what to do (missing at start-up, lost mid-run);
        /// nil while it streams.
        public var problem: String?
        public init() {}
    }

    public struct CrossingView: Sendable, Hashable, Codable {
        /// Crossing count since start (1-based), unique per gate run.
        public var number: UInt64
        /// When the torso crossed the gate line, CLOCK_MONOTONIC ns.
        public var atMonoNs: Int64
        /// `leftToRight` or `rightToLeft` as seen by the camera.
        public var direction: String
        /// Half-width of the crossing time's uncertainty, milliseconds.
        public var uncertaintyMs: Double
        public init(number: UInt64, atMonoNs: Int64, direction: String, uncertaintyMs: Double) {
            self.number = number
            self.atMonoNs = atMonoNs
            self.direction = direction
            self.uncertaintyMs = uncertaintyMs
        }
    }

    public struct PeerView: Sendable, Hashable, Codable {
        public var name: String
        /// Role in the race, e.g. `start`, `finish`, `split`.
        public var role: String
        /// Session state, e.g. `synced`, `syncing`, `lost`.
        public var state: String
        /// Clock offset `peer − local`, microseconds.
        public var offsetMicroseconds: Double
        /// Uncertainty of the offset (one sigma), microseconds.
        public var uncertaintyMicroseconds: Double
        /// Seconds since the last packet from the peer.
        public var lastSeenSecondsAgo: Double
        /// On the host: the gate's id, which `PUT /api/peers/:gate` takes to change its
        /// role and distance. Nil on a gate (its host's row is not changeable there).
        public var gateID: UInt32?
        /// On the host: the gate's distance from the start line, metres.
        public var distanceMetres: Double?
        public init(name: String, role: String, state: String, offsetMicroseconds: Double,
                    uncertaintyMicroseconds: Double, lastSeenSecondsAgo: Double, gateID: UInt32? = nil,
                    distanceMetres: Double? = nil) {
            self.name = name
            self.role = role
            self.state = state
            self.offsetMicroseconds = offsetMicroseconds
            self.uncertaintyMicroseconds = uncertaintyMicroseconds
            self.lastSeenSecondsAgo = lastSeenSecondsAgo
            self.gateID = gateID
            self.distanceMetres = distanceMetres
        }
    }
}

/// The latest snapshot and a version that grows with every change. The loop calls
/// `update` (a short lock; no I/O, no waiting on the web side); the web side polls
/// `read` and pushes when the version moved.
public final class SnapshotCell: Sendable {
    private let state: Mutex<(version: UInt64, snapshot: LiveSnapshot)>

    public init(_ initial: LiveSnapshot = LiveSnapshot()) {
        state = Mutex((1, initial))
    }

    /// Changes the snapshot in place; the version moves only when something changed.
    public func update(_ change: (inout LiveSnapshot) -> Void) {
        state.withLock { s in
            var next = s.snapshot
            change(&next)
            if next != s.snapshot {
                s.snapshot = next
                s.version &+= 1
            }
        }
    }

    /// The current snapshot and its version.
    public func read() -> (version: UInt64, snapshot: LiveSnapshot) {
        state.withLock { $0 }
    }

    public var version: UInt64 { state.withLock { $0.version } }
}
