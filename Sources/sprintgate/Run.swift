// SPDX-License-Identifier: Apache-2.0
// `sprintgate run`: the gate daemon. Camera, GPIO and sound on one epoll loop.

import ArgumentParser
import Detector
import Engine
import FFmpegVideo
import Foundation
import GateConfig
import GateCore
import GateDaemon
import GateSim
import GPSD
import GPSTiming
import LinuxHardware
import Logging
import SkiRuns
import SQLiteStore
import VideoDelay
import VideoService
import WebUI

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the gate: camera, detector, start types, LEDs, buzzer and sounds.",
        discussion: """
            Reads the settings file (board file plus overrides), opens the camera (reopening \
            with back-off when it is missing or pulled out), the GPIO lines and the sound \
            device (a missing speaker is a warning: the gate still times), arms the gate and \
            runs until stopped. Under systemd it reports readiness and pings the watchdog.
            """)

    @Option(help: "Settings file.")
    var config: String = "/etc/sprintgate/gate.toml"

    @Option(help: "Stop after this many seconds (for tests); runs until stopped by default.")
    var seconds: Double?

    @Option(help: "Log level: trace, debug, info, notice, warning, error.")
    var logLevel: String = "info"

    @Option(help: "Port of the gate's web page and live board; 0 turns the page off.")
    var webPort: Int = 8080

    @Option(help: "Address the web page, the NTP server and the race link listen on.")
    var webHost: String = "0.0.0.0"

    @OptionGroup(title: "Clock and multi-gate race")
    var peers: PeerArguments

    func run() throws {
        guard let level = Logger.Level(rawValue: logLevel) else { fail("--log-level \(logLevel) is not a level") }
        guard (0...65535).contains(webPort) else { fail("--web-port \(webPort) is not a port (0...65535)") }
        let settings = loadSettings(config)
        let board = settings.board
        var log = Logger(label: "sprintgate.run")
        log.logLevel = level
        if board.gpio.isEmpty {
            try runGate(settings: settings, lines: NoLines(), log: log, level: level)
        } else {
            let lines: GPIODLines
            do { lines = try GPIODLines(lines: board.gpio, boardFile: board.source) } catch {
                fail("\(error.description) (check the [gpio] tables of \(board.source) against `gpioinfo`)")
            }
            try runGate(settings: settings, lines: lines, log: log, level: level)
        }
    }

    func runGate<Lines: LineInputs & LineOutputs & ~Copyable>(settings loaded: GateSettings, lines: consuming Lines,
                                                              log: Logger, level: Logger.Level) throws {
        var settings = loaded
        // What the coach changed on the page wins over the settings file.
        if var page = PageSettingsFile.loadAtStart(directory: settings.stateDirectory, log: log) {
            // A faster frame rate must keep a fixed exposure within one frame.
            if let f = page.fps, let e = settings.board.camera.exposureMicroseconds, e > 1_000_000 / f {
                log.warning("the page chose \(f) fps, but the board's exposure_us \(e) is longer than a frame at that rate; keeping \(settings.board.camera.fps) fps")
                page.fps = nil
            }
            PageSettingsFile.apply(page, to: &settings)
        }
        let board = settings.board
        let notify = SystemdNotify(environment: ProcessInfo.processInfo.environment)
        var camLog = Logger(label: "sprintgate.camera")
        camLog.logLevel = level
        log.notice("board \(settings.boardPath)\(board.name.isEmpty ? "" : " (\(board.name))")")
        let request = cameraRequest(board.camera)
        var camera = V4L2FrameSource(path: board.camera.device, request: request, logger: camLog)
        let deadlineEnd = seconds.map { Sys.monotonicNow() + .seconds($0) }
        var epoll: EpollLoop
        do {
            epoll = try EpollLoop()
            try epoll.catchStopSignals()
        } catch { fail(error.description) }

        // The camera decides the frame size, so the detector waits for the first open.
        // A gate powered on without its camera waits for it as long as it takes: each retry
        // extends systemd's start timeout (EXTEND_TIMEOUT_USEC), so the service stays
        // "activating" instead of being killed and restarted every TimeoutStartSec, and a
        // start-up that hangs still times out. `sprintgate status` shows the wait.
        var backoff = ReopenBackoff()
        var lastWarning: (text: String, at: MonotonicInstant)?
        let statusFile = settings.stateDirectory + "/status.txt"
        func writeStatus(_ text: String) { try? text.write(toFile: statusFile, atomically: true, encoding: .utf8) }
        func writeStopped(phase: String) { writeStatus("stopped_mono_ns: \(Sys.monotonicNow().nanoseconds)\nphase: \(phase)\n") }
        while true {
            do {
                try camera.open()
                backoff.succeeded()
                break
            } catch {
                let now = Sys.monotonicNow()
                let delay = backoff.failed(at: now)
                let text = error.description
                // Once, then again only when the error changes or each minute: a gate left
                // without its camera overnight should not fill the journal.
                if lastWarning.map({ $0.text != text || now.since($0.at) >= .seconds(60) }) ?? true {
                    log.warning("camera: \(text); waiting for it (plug it in, or fix [camera] device in the board file)")
                    lastWarning = (text, now)
                }
                let extend = (delay.nanoseconds + Span.seconds(30).nanoseconds) / 1000
                notify.send("EXTEND_TIMEOUT_USEC=\(extend)\nSTATUS=waiting for the camera \(board.camera.device) (\(camera.state))")
                writeStatus("""
                    updated_mono_ns: \(now.nanoseconds)
                    pid: \(getpid())
                    phase: waiting for the camera
                    camera: \(camera.state): \(text)
                    what_to_do: plug the camera in (or fix [camera] device in the board file); the gate starts by itself once it opens

                    """)
                if let end = deadlineEnd, now >= end { fail("no camera within --seconds") }
                _ = epoll.wait(until: now + delay)
                if let signal = EpollLoop.stopSignal {
                    log.notice("stopped by signal \(signal) while waiting for the camera")
                    writeStopped(phase: "never started (no camera)")
                    return
                }
            }
        }
        let width = camera.mode?.width ?? request.width, height = camera.mode?.height ?? request.height
        // The line as last moved on the page wins over the settings file's gate_x.
        let movedOnPage = GateLineFile.load(directory: settings.stateDirectory, frameWidth: width)
        if let x = movedOnPage {
            settings.gateX = x
            log.notice("gate line at x \(x) as moved on the page (\(GateLineFile.path(directory: settings.stateDirectory))); it overrides gate_x")
        }
        let detector = PhotoFinishDetector(config: settings.detectorConfig(width: width), inputWidth: width, inputHeight: height)
        var audioLog = Logger(label: "sprintgate.audio")
        audioLog.logLevel = level
        let bank: SoundBank
        do { bank = try SoundBank(directory: "/usr/share/sprintgate/sounds") } catch { bank = SoundBank() }
        let beeper = ALSABeeper(config: board.audio, sounds: bank, logger: audioLog)
        let stateFile = settings.stateDirectory + "/run.state"
        var engine = Engine(config: settings.engine)
        if let saved = RunState.load(path: stateFile), let restored = Engine(config: settings.engine, restoring: saved) {
            engine = restored
            log.notice("resumed the run in progress from \(stateFile)")
        }
        var loop = GateLoop(camera: camera, lines: lines, sound: beeper, detector: detector, engine: engine)
        let gateLog = Logger(label: "sprintgate.gate")
        let latest = LatestResults()
        // Results go to the storage thread through a bounded queue: the loop never waits
        // for the disk; a full queue drops and counts (logged at exit).
        // Runs are assembled there from the same events and written to SQLite by its own writer.
        let storage = GateStorage.start(stateDirectory: settings.stateDirectory, context: RunContext(settings: settings), log: log)
        // `[mqtt]`: every stored run published to the broker from an outbox under the state
        // directory; the link keeps trying while the broker is away.
        var mqtt: MQTTResults?
        if let m = settings.mqtt {
            do {
                let results = try MQTTResults(settings: m, outboxDirectory: settings.stateDirectory + "/mqtt-outbox",
                                              logger: Logger(label: "sprintgate.mqtt"))
                results.attach(to: storage.commits)
                mqtt = results
                log.notice("MQTT: publishing runs to \(m.host):\(m.port) as sprintgate/\(m.device)")
            } catch {
                log.error("MQTT: not publishing: \(error)")
            }
        }
        // The page reads the same database; photo finishes are stored with the run they finish.
        storage.installPhotoFinish(on: &loop, width: width, height: height, gateX: settings.detectorConfig(width: width).gateX,
                                   fps: Double(board.camera.fps), log: log)
        let web = webPort == 0 ? nil : WebGate.startForGate(settings: settings, host: webHost, port: webPort, wakeFD: epoll.wakeFD,
                                                     cameraMode: "\(width)x\(height)", frameWidth: width, movedOnPage: movedOnPage != nil,
                                                     book: storage.book, level: level)
        _ = web?.installCameraView(on: &loop, width: width, height: height, fps: Double(board.camera.fps),
                                    gateX: settings.detectorConfig(width: width).gateX)
        web?.setExposure(loop.camera.exposure)
        web?.cameraOpened(&loop, fps: loop.camera.mode?.intervals.first?.fps ?? Double(board.camera.fps))
        // The delay mode: on from the settings file, switched on and off from the page; its
        // values are the file's [video] table (enabled or not) or the defaults.
        var videoSwitch: DelayVideoSwitch?
        if let web {
            let v = settings.video ?? settings.videoTable ?? VideoSettings()
            let fps = Double(board.camera.fps)
            let cameraFormat = loop.camera.mode?.format
            let switcher = DelayVideoSwitch(web: web, stateDirectory: settings.stateDirectory, markButton: v.markButton,
                                            clickers: v.clickers, overlay: v.overlay, commits: storage.commits) {
                let encoder = H264EncoderKind(rawValue: v.encoder(board: board)) ?? .x264
                let jpeg = try v.keepsCameraJPEG(cameraFormat: cameraFormat?.description)
                let rate = v.bitrateKbps.map { $0 * 1000 }
                    ?? (jpeg ? DelayVideoConfig.jpegBitsPerSecond(width: width, height: height, fps: fps)
                             : VideoEncoderSettings.defaultBitsPerSecond(width: width, height: height, fps: fps))
                let budget = BufferBudget(availableBytes: WebGate.availableMemory() ?? (256 << 20), bitsPerSecond: rate, fps: fps,
                                          limitBytes: v.memoryMB.map { $0 << 20 })
                return DelayVideoConfig(width: width, height: height, fps: fps, bitsPerSecond: rate, encoder: encoder,
                                        delay: try DelaySetting(seconds: v.delaySeconds),
                                        roll: try RollSetting(preRollSeconds: v.preRollSeconds, postRollSeconds: v.postRollSeconds),
                                        budget: budget, archery: v.archery,
                                        tv: v.tv.map { card in
                                            TVConfig(view: ScreenView(rotation: v.tvRotation, flip: v.tvFlip), versus: v.tvVersus) {
                                                try DRMScreen(path: card.isEmpty ? nil : card)
                                            }
                                        }, cameraJPEG: jpeg)
            }
            // Why fail: a [video] value the camera cannot honour is bad input, which systemd must
            // not retry (status 2), like any other settings error.
            if settings.video != nil {
                do { try switcher.turnOn(&loop) } catch let error as ConfigError { fail(error.description) }
            }
            videoSwitch = switcher
        } else if settings.video != nil {
            log.warning("[video] is enabled but the page is off (--web-port 0): the delayed view needs the page; video stays off")
        }
        // The GPS acceleration timer: gpsd's client on its own thread, shown on the page.
        // Its events reach the driver through the loop's buzzer, crossing LED and sounds.
        var gpsCues: FeedbackCues?
        var cuePlayer = CuePlayer()
        // The ski track logger: fed every fix by the GPS gate, started from the page.
        let ski = settings.ski
        let skiTracker = settings.gps.map { _ in
            SkiTracker(store: storage.thread.store,
                       ski: SkiSettings(minimumRunSeconds: Double(ski.minRunSeconds), minimumRunVertical: Double(ski.minVerticalMetres),
                                        longestPause: Double(ski.longestPauseSeconds)),
                       snowboard: SkiSettings(minimumRunSeconds: Double(ski.snowboardMinRunSeconds),
                                              minimumRunVertical: Double(ski.snowboardMinVerticalMetres),
                                              longestPause: Double(ski.snowboardLongestPauseSeconds)),
                       logger: Logger(label: "sprintgate.ski"))
        }
        let gps = settings.gps.map { g in
            let cues = FeedbackCues.cues()
            gpsCues = cues
            return GPSGate(config: GPSDConfig(host: g.host, port: UInt16(g.port), wantedRate: Double(g.rateHz), setRate: g.setRate),
                           settings: AccelerationSettings(accuracy: Double(g.accuracyMetres), rollout: g.rollout),
                           store: storage.thread.store, logger: Logger(label: "sprintgate.gps"), onEvent: { event in
                if let cue = GPSGate.cue(for: event) { cues.push(cue) }
            }, onFix: { fix in skiTracker?.ingest(fix) })
        }
        // With [ski] button: the start button starts and stops tracking, through the
        // loop's diversion of the button (as the delay mode's marks) while that mode is
        // off; the press is confirmed at once by a beep and a flash, then by the cue of
        // what it did.
        let skiPresses: MarkRequests? = settings.ski.button && skiTracker != nil ? MarkRequests() : nil
        let skiButtonSport = SkiTrack.Sport(rawValue: settings.ski.sport) ?? .ski
        let skiCues = gpsCues
        if let skiPresses, loop.videoMarks == nil {
            loop.videoMarks = skiPresses
            loop.buttonMarksVideo = true
        }
        if let gps, let g = settings.gps {
            if let skiTracker {
                skiTracker.follow { gps.status }
                skiTracker.resume()
                web?.bridge.ski.connect(skiTracker)
            }
            gps.start()
            web?.bridge.gps.connect(gps)
            log.notice("GPS timer on: gpsd at \(g.host):\(g.port), \(g.rateHz) fixes/s asked, \(g.accuracyMetres) m accuracy gate")
        }
        // `[rowing]`: the rowing hub, its PM5s over Bluetooth on threads of their own and
        // their sessions in the same database; with `[mqtt]` the boathouse's other hubs too.
        let rowing = settings.rowing.map { r in
            BluetoothRowing(settings: r, store: storage.thread.store, stateDirectory: settings.stateDirectory,
                            logger: Logger(label: "sprintgate.rowing"), clock: { Sys.monotonicNow().seconds })
        }
        if let rowing {
            rowing.start()
            web?.bridge.rowing.connect(rowing.hub)
        }
        let rowingMQTT = rowing.flatMap { r in mqtt.map { RowingMQTT(results: $0, hub: r.hub, logger: Logger(label: "sprintgate.mqtt")) } }
        rowingMQTT?.start()
        let services = peers.services(storage: storage, web: web, settings: settings.peers, stateDirectory: settings.stateDirectory, listenHost: webHost,
                                      epoll: epoll, now: Sys.monotonicNow(), peerLog: Logger(label: "sprintgate.peer"), log: log)
        services.install(on: &loop) { event in
            switch event {
            case let .crossing(c):
                latest.crossing = "\(c.direction) at mono \(c.time.nanoseconds) ns ±\(ClipCrossingFormat.ms(c.uncertainty)) ms"
                gateLog.info("crossing \(c.direction) at \(c.time) ±\(ClipCrossingFormat.ms(c.uncertainty)) ms height \(c.blobHeight)")
            case let .action(a, _):
                switch a {
                case let .started(at, by):
                    gateLog.notice("started at \(at) (\(by.rawValue))")
                case let .startCorrected(at): gateLog.info("start sound onset refined: \(at)")
                case let .finished(_, time):
                    latest.result = "\(ClipCrossingFormat.seconds(time)) s"
                    gateLog.notice("finished: \(ClipCrossingFormat.seconds(time)) s")
                case let .lap(n, _, split, lap):
                    latest.result = "lap \(n) \(ClipCrossingFormat.seconds(lap)) s, split \(ClipCrossingFormat.seconds(split)) s"
                    gateLog.notice("lap \(n): \(ClipCrossingFormat.seconds(lap)) s, split \(ClipCrossingFormat.seconds(split)) s")
                case let .falseStart(reason, _):
                    gateLog.warning("false start: \(reason.rawValue)")
                default: break
                }
            case let .deviceError(e):
                gateLog.warning("\(e.description)")
            case let .statsLine(line):
                gateLog.info("\(StatsWindow.header)\n\(line)")
            case let .statusLight(l):
                gateLog.info("ready LED: \(l.rawValue)")
            case .line:
                break
            }
        }
        // The page starts from the restored phase (a run in progress survives a restart).
        web?.observe(.action(.phase(loop.engine.phase), Sys.monotonicNow()))
        try? epoll.add(loop.camera.fileDescriptor)
        for fd in loop.lines.fileDescriptors { try? epoll.add(fd) }
        let start = Sys.monotonicNow()
        if case .idle = loop.engine.phase { loop.command(.arm, now: start) }
        notify.send("READY=1\nSTATUS=armed: \(settings.engine.startType.rawValue) start, \(width)x\(height)")
        log.notice("ready: camera \(width)x\(height), gate x \(settings.detectorConfig(width: width).gateX), \(settings.engine.startType.rawValue) start")

        var lastState = loop.engine.persistentState
        var cameraFD = loop.camera.fileDescriptor
        var framesAtReopen = loop.camera.stats.frames
        var nextWatchdog = start
        var nextThermal = start
        var nextStatus = start

        var thermal = ThermalGovernor(fps: board.camera.fps)
        func socCelsius() -> Double? {
            (try? String(contentsOfFile: board.thermalZone, encoding: .utf8)).flatMap(ThermalGovernor.parseThermalZone)
        }
        services.link?.socCelsius = socCelsius
        if socCelsius() == nil {
            log.notice("no SoC temperature in \(board.thermalZone) ([board] thermal_zone): the frame rate is not lowered when hot")
        }
        while true {
            // Why: wake at least every 10 ms so timers (pulses, countdown) fire on time.
            let (now, _) = epoll.wait(until: Sys.monotonicNow() + .milliseconds(10))
            if let end = deadlineEnd, now >= end { break }
            if let signal = EpollLoop.stopSignal {
                log.notice("stopping on signal \(signal)")
                notify.send("STOPPING=1")
                break
            }
            services.beforeFrames(&loop, now: now)
            loop.iterate(now: now)
            if let skiPresses, let skiTracker {
                skiPresses.take { _ in
                    skiTracker.buttonPressed(sport: skiButtonSport) { started in
                        skiCues?.push(started == nil ? .fault : started! ? .go : .done)
                    }
                }
            }
            if let gpsCues {
                cuePlayer.serve(gpsCues, lines: &loop.lines, sound: &loop.sound, quiet: CuePlayer.quiet(loop.engine.phase), now: now)
            }
            services.afterFrames(loop, now: now, camera: loop.camera.state, mode: loop.camera.mode.map { "\($0)" } ?? "")
            let state = loop.engine.persistentState
            if state != lastState {
                lastState = state
                RunState.save(state, path: stateFile, log: log)
            }
            if now >= nextStatus {
                nextStatus = now + .seconds(1)
                let st = loop.lastStatus
                let text = """
                    updated_mono_ns: \(now.nanoseconds)
                    pid: \(getpid())
                    phase: \(loop.engine.persistentState)
                    start_type: \(settings.engine.startType.rawValue)
                    camera: \(loop.camera.state) \(loop.camera.mode.map { "\($0)" } ?? "")
                    audio: \(loop.sound.state)\(loop.sound.warning.map { " (\($0))" } ?? "")
                    ready_led: \(loop.statusLight.rawValue)
                    gate: armed=\(st.armed) ready=\(st.ready) clear=\(st.clear) too_far=\(st.tooFar) shaking=\(st.shaking) blob_height=\(fixedPoint(st.blobHeight, digits: 2)) motion=\(fixedPoint(st.motion, digits: 3))
                    frames: \(loop.stats.frames) dropped \(loop.stats.dropped) crossings \(loop.stats.crossings)
                    last_crossing: \(latest.crossing)
                    last_result: \(latest.result)

                    """
                writeStatus(text)
            }
            if now >= nextWatchdog {
                notify.send("WATCHDOG=1")
                nextWatchdog = now + .seconds(2)
            }
            // Camera lost (gone, taken, closed by an error, or silent for seconds): take it
            // off the loop and reopen with back-off. The back-off resets once frames flow
            // again, so a camera that opens but stays silent is retried ever more slowly.
            if let reason = CameraRecovery.reason(state: loop.camera.state, isOpen: loop.camera.fileDescriptor >= 0,
                                                  lastFrame: loop.camera.lastFrameAt, now: now) {
                if cameraFD >= 0 {
                    epoll.remove(cameraFD)
                    cameraFD = -1
                    loop.closeCamera()
                    backoff.failed(at: now)
                    log.warning("camera lost (\(reason)); reopening")
                }
                if backoff.isDue(now: now) {
                    do {
                        try loop.camera.open()
                        framesAtReopen = loop.camera.stats.frames
                        cameraFD = loop.camera.fileDescriptor
                        try? epoll.add(cameraFD)
                        log.notice("camera back")
                        web?.cameraOpened(&loop, fps: loop.camera.mode?.intervals.first?.fps ?? loop.camera.request.fps)
                    } catch {
                        backoff.failed(at: now)
                    }
                }
            } else {
                loop.camera.checkSignal(now: now)
                if backoff.failures > 0, loop.camera.stats.frames > framesAtReopen { backoff.succeeded() }
            }
            // A frame rate chosen on the page (between runs): closed here, reopened at it on
            // the next wake-up by the lost-camera path above, as for the SoC's heat below.
            // The delay mode switched on the page (between runs).
            videoSwitch?.service(&loop)
            if let skiPresses, loop.videoMarks == nil {
                loop.videoMarks = skiPresses
                loop.buttonMarksVideo = true
            }
            if let f = web?.takeFrameRateChange() {
                if let e = board.camera.exposureMicroseconds, e > 1_000_000 / f {
                    log.warning("the page chose \(f) fps, but the board's exposure_us \(e) is longer than a frame at that rate; the camera stays at \(loop.camera.request.fps) fps")
                } else {
                    log.notice("the page chose \(f) fps: reopening the camera")
                    thermal = ThermalGovernor(fps: f)
                    if cameraFD >= 0 {
                        epoll.remove(cameraFD)
                        cameraFD = -1
                        loop.closeCamera()
                    }
                    loop.camera.request.fps = Double(f)
                }
            }
            if now >= nextThermal {
                nextThermal = now + .seconds(5)
                if let celsius = socCelsius(),
                   let fps = thermal.update(celsius: celsius, at: now.seconds) {
                    log.warning("SoC at \(celsius) C: camera to \(fps) fps")
                    // Closed here, reopened at the new rate on the next wake-up by the
                    // lost-camera path above (with its back-off if the open fails).
                    epoll.remove(cameraFD)
                    cameraFD = -1
                    loop.closeCamera()
                    loop.camera.request.fps = Double(fps)
                }
            }
        }
        loop.closeCamera()
        if let summary = services.stop() { log.notice("\(summary)") }
        videoSwitch?.stop()
        gps?.stop()
        rowing?.stop()
        rowingMQTT?.stop()
        mqtt?.stop()
        skiTracker?.flush()
        writeStopped(phase: "\(loop.engine.persistentState)")
        log.notice("stopped: \(loop.stats.frames) frames, \(loop.stats.dropped) dropped, \(loop.stats.crossings) crossings")
    }
}

/// The run-in-progress state file: the engine's state line and the boot it belongs to.
enum RunState {
    static func bootID() -> String {
        (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown"
    }

    /// The saved state line, if it was written during this boot (monotonic instants
    /// do not carry over a reboot).
    static func load(path: String) -> String? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let lines = text.split(separator: "\n")
        guard lines.count == 2, lines[0] == "boot \(bootID())" else { return nil }
        return String(lines[1])
    }

    /// Writes atomically (temporary file and rename), so power loss leaves old or new.
    static func save(_ state: String, path: String, log: Logger) {
        do {
            try ("boot \(bootID())\n" + state + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            log.error("cannot save the run state to \(path): \(error) (check the state directory's permissions)")
        }
    }
}

/// The last crossing and result, for the status file (written by the loop's observer).
final class LatestResults: @unchecked Sendable {
    var crossing = "none"
    var result = "none"
}
