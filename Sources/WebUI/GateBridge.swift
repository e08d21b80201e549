// SPDX-License-Identifier: Apache-2.0
// The two lanes between the gate loop and the web side: snapshot and results out, commands in.

public import GateCore

/// A command from the page to the gate loop. The daemon maps it onto the engine
/// (`EngineCommand`, or a new engine configuration while no run is under way).
public enum GateCommand: Sendable, Hashable {
    case arm
    /// Starts a countdown or voice start.
    case start
    case reset
    /// A start type id from `WebSettings.startTypes`, e.g. `"countdown"`.
    case setStartType(String)
    /// A preset id from `WebSettings.presets`, e.g. `"flying-30m"`.
    case setPreset(String)
    /// Race host: a gate's role (`start`, `lap`, `finish`, `control`) and its distance
    /// from the start line in metres.
    case assignPeer(gate: UInt32, role: String, distanceMetres: Double)
    /// Race host: every gate stops reporting crossings (people walking about between
    /// runs), and starts again.
    case pauseDetection
    case resumeDetection
    /// The detector's gate line, in camera pixels (moved on the camera view).
    case setGateLine(Double)
    /// Settings changed on the page (validated); the loop applies them between runs and
    /// keeps them for the next start.
    case applySettings(EditableSettings)
}

/// The roles a race host can give a gate, as the page and the API name them.
public let peerRoles = ["start", "lap", "finish", "control"]

/// A finished run or lap as the loop reports it; the web side adds athlete, speed and PR.
public struct TimedRun: Sendable, Hashable {
    /// Final time (a finished run) or lap time (solo laps), seconds.
    public var seconds: Double
    /// Split times since the start of the run, seconds, oldest first (empty for a plain run).
    public var splits: [Double]
    public var startType: String
    public var preset: String?
    /// Distance timed in metres, when the preset names one.
    public var distanceMetres: Double?
    /// Wall-clock time of the finish, Unix seconds (display and storage only).
    public var wallTime: Double

    public init(seconds: Double, splits: [Double] = [], startType: String, preset: String?,
                distanceMetres: Double?, wallTime: Double) {
        self.seconds = seconds
        self.splits = splits
        self.startType = startType
        self.preset = preset
        self.distanceMetres = distanceMetres
        self.wallTime = wallTime
    }
}

/// Everything the daemon and the web side share. The loop only writes the snapshot,
/// pushes finished runs and pops commands: none of these waits for the web side.
public final class GateBridge: Sendable {
    /// Gate state, written by the loop's observer.
    public let snapshot: SnapshotCell
    /// Page → loop. Full means the loop is not draining; the page gets 503.
    public let commands: BoundedQueue<GateCommand>
    /// Loop → web: finished runs, drained by the web side into the results book.
    public let results: BoundedQueue<TimedRun>
    /// Camera view: the encoder's latest picture, and viewers' requests for more.
    public let camera = CameraFeed()
    /// The settings as the loop runs them (the page's settings form).
    public let settings = SettingsCell()
    /// The delayed video, when the gate runs it.
    public let video = VideoDeskSlot()
    /// Timed runs' videos, when the gate keeps them.
    public let runVideos = RunVideoDeskSlot()
    /// The GPS acceleration timer, on a gate with `[gps]`.
    public let gps = GPSDeskSlot()
    /// The ski track logger, on a gate with `[gps]`.
    public let ski = SkiDeskSlot()
    /// The rowing hub, on a gate with `[rowing]`.
    public let rowing = RowingDeskSlot()
    /// The gate's wall clock, which an offline gate takes from a coach's phone.
    public let wallClock = WallClockSlot()
    private let wake: @Sendable () -> Void

    /// Why: a person presses buttons a few times per second; 64 covers a burst from
    /// several phones while the loop drains every 10 ms.
    public static let commandCapacity = 64
    /// Why: a run ends at most every second or so; 256 rides out a stalled web side.
    public static let resultCapacity = 256

    /// - Parameter wake: wakes the gate loop (writes its eventfd); called from web threads.
    public init(snapshot: SnapshotCell = SnapshotCell(), wake: @escaping @Sendable () -> Void) {
        self.snapshot = snapshot
        commands = BoundedQueue(capacity: Self.commandCapacity)
        results = BoundedQueue(capacity: Self.resultCapacity)
        self.wake = wake
    }

    /// Queues `command` and wakes the loop; false when the queue is full.
    public func send(_ command: GateCommand) -> Bool {
        guard commands.push(command) else { return false }
        wake()
        return true
    }
}
