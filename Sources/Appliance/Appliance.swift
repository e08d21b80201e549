// SPDX-License-Identifier: Apache-2.0
// The appliance as `sprintgate run` runs it: settings resolved once, the areas a board
// enables, the epoll loop, the status file and the watchdog.

import Detector
public import Engine
import FFmpegVideo
import Foundation
public import GateConfig
public import GateCore
public import GateDaemon
public import LinuxHardware
public import Logging
import Race
import SQLiteStore
import VideoDelay
import VideoService
import WebUI

/// What the command line adds to the settings file.
public struct ApplianceOptions: Sendable {
    /// Where the page, the NTP server and the race link listen.
    public var webHost = "0.0.0.0"
    /// The page's port; 0 turns the page off.
    public var webPort = 8080
    /// Stop at this instant (tests); runs until a stop signal otherwise.
    public var until: MonotonicInstant?
    public var level: Logger.Level = .info
    /// The NTP server's port (nil: 123 as root, off otherwise; 0: off).
    public var ntpPort: Int?
    /// The race link, when racing is on.
    public var peer: PeerOptions?
    public var skew: ClockSkew = .none
    /// The start and feedback sounds.
    public var soundDirectory = "/usr/share/sprintgate/sounds"

    public init() {}
}

/// A settings error found once the appliance is under way (a `[video]` value the camera
/// cannot honour, a race link that cannot open its socket): bad input, which systemd must
/// not retry. The command prints it and exits with status 2.
public struct ApplianceError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// One appliance: the areas its settings enable around one gate loop on one epoll loop.
///
/// A board with `[camera]` runs the camera gate (the detector, the engine, the photo
/// finish, the delayed video) and every area its settings name; a board without one runs
/// the same loop with `NoCamera` for the GPIO lines and the sound, and its areas (GPS,
/// ski, rowing, MQTT) and page come up at once. `sprintgate run` is this with the real
/// adapters.
public final class Appliance {
    public private(set) var settings: GateSettings
    let options: ApplianceOptions
    let log: Logger
    let status: StatusFile
    let notify = SystemdNotify(environment: ProcessInfo.processInfo.environment)
    var latest = (crossing: "none", result: "none")

    /// `loaded` with what the coach changed on the page (kept in the state directory) over it.
    public init(settings loaded: GateSettings, options: ApplianceOptions) {
        var log = Logger(label: "sprintgate.run")
        log.logLevel = options.level
        self.log = log
        self.options = options
        settings = loaded
        status = StatusFile(stateDirectory: loaded.stateDirectory)
        if var page = PageSettingsFile.loadAtStart(directory: settings.stateDirectory, log: log) {
            // A faster frame rate must keep a fixed exposure within one frame.
            if let f = page.fps, let cam = settings.board.camera, let e = cam.exposureMicroseconds, e > 1_000_000 / f {
                log.warning("the page chose \(f) fps, but the board's exposure_us \(e) is longer than a frame at that rate; keeping \(cam.fps) fps")
                page.fps = nil
            }
            PageSettingsFile.apply(page, to: &settings)
        }
    }

    /// Runs until a stop signal (or `options.until`) with `lines` as the board's GPIO.
    public func run<Lines: LineInputs & LineOutputs & ~Copyable>(lines: consuming Lines) throws(ApplianceError) {
        let board = settings.board
        log.notice("board \(settings.boardPath)\(board.name.isEmpty ? "" : " (\(board.name))")")
        var epoll = try Self.openLoop()
        guard let cam = board.camera else {
            log.notice("no [camera] in \(board.source): the camera gate is off")
            let loop = GateLoop(camera: NoCamera(), lines: lines, sound: makeSound(),
                                detector: NoCamera.detector(settings.detectorConfig(width: NoCamera.width)), engine: Engine(config: settings.engine))
            try start(loop, frame: nil, epoll: epoll, now: Sys.monotonicNow()).run(until: options.until)
            return
        }
        var camLog = Logger(label: "sprintgate.camera")
        camLog.logLevel = options.level
        var request = CameraRequest(width: cam.width, height: cam.height, fps: Double(cam.fps))
        request.exposureMicroseconds = cam.exposureMicroseconds
        var camera = V4L2FrameSource(path: cam.device, request: request, logger: camLog)
        // The page and the areas come up first: a gate powered on without its camera is
        // reached from a phone at once, and the page says what it waits for.
        let base = assembleBase(epoll: epoll, frame: nil)
        base.features.startAll()
        let web = base.web
        let opened = CameraKeeper.waitForCamera(&camera, config: cam, epoll: &epoll, notify: notify, status: status,
                                                until: options.until, log: log) { web?.cameraProblem($0) }
        guard opened else {
            base.features.stopAll()
            base.storage.stop()
            if options.until.map({ Sys.monotonicNow() >= $0 }) ?? false { throw ApplianceError("no camera within --seconds") }
            writeStopped(phase: "never started (no camera)")
            return
        }
        let width = camera.mode?.width ?? request.width, height = camera.mode?.height ?? request.height
        // The line as last moved on the page wins over the settings file's gate_x.
        let movedOnPage = GateLineFile.load(directory: settings.stateDirectory, frameWidth: width)
        if let x = movedOnPage {
            settings.gateX = x
            log.notice("gate line at x \(x) as moved on the page (\(GateLineFile.path(directory: settings.stateDirectory))); it overrides gate_x")
        }
        let detector = PhotoFinishDetector(config: settings.detectorConfig(width: width), inputWidth: width, inputHeight: height)
        let loop = GateLoop(camera: camera, lines: lines, sound: makeSound(), detector: detector, engine: Engine(config: settings.engine))
        let frame = CameraFrame(width: width, height: height, movedOnPage: movedOnPage != nil, config: cam)
        try start(loop, frame: frame, base: base, epoll: epoll, now: Sys.monotonicNow()).run(until: options.until)
    }

    /// The camera's frame, once it opened, and the board's `[camera]` it was asked by.
    public struct CameraFrame: Sendable {
        public var width: Int
        public var height: Int
        /// Whether the gate line was moved on the page (it overrides `gate_x`).
        public var movedOnPage: Bool
        public var config: CameraConfig

        public init(width: Int, height: Int, movedOnPage: Bool = false, config: CameraConfig) {
            self.width = width
            self.height = height
            self.movedOnPage = movedOnPage
            self.config = config
        }
    }

    /// The epoll loop, which SIGTERM, SIGINT and SIGHUP wake to stop in order.
    static func openLoop() throws(ApplianceError) -> EpollLoop {
        do {
            let epoll = try EpollLoop()
            try epoll.catchStopSignals()
            return epoll
        } catch { throw ApplianceError(error.description) }
    }

    func makeSound() -> ALSABeeper {
        var audioLog = Logger(label: "sprintgate.audio")
        audioLog.logLevel = options.level
        let bank: SoundBank
        do { bank = try SoundBank(directory: options.soundDirectory) } catch { bank = SoundBank() }
        return ALSABeeper(config: settings.board.audio, sounds: bank, logger: audioLog)
    }

    func writeStopped(phase: String) {
        status.write("stopped_mono_ns: \(Sys.monotonicNow().nanoseconds)\nphase: \(phase)\n")
    }
}
