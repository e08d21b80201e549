// SPDX-License-Identifier: Apache-2.0
// `sprintgate demo`: the gate on the built-in demo clip with stand-in lines and sound.

import Appliance
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
import VideoDelay
import VideoService
import WebUI

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Time a two-gate session on built-in clips and print it; or run it in real time and serve its page (--web).",
        discussion: """
            A start gate and a finish gate 30 m apart, each with its own camera clip (the \
            sprint scene at 120 fps, rendered from its scene description, so it ships inside \
            the binary) and its own clock (the finish gate's 2.7 s ahead and 35 ppm fast), talk \
            over a simulated Wi-Fi link with jitter and loss in virtual time: the clocks sync, \
            a flying 30 m and a button-release 30 m are timed, each printed with its 95 % bound, \
            speed and the true time. Exits 1 when a run is not timed or misses its bound. \
            With --gate-loop it then runs one gate's loop on the two-runners clip (two athletes \
            0.45 s apart: a flying start takes the first, the second stops the clock) and \
            prints its crossings, LEDs and buzzer.

            With --web PORT the same two gates run in real time, in this process, as the daemon \
            runs them: each its own loop, storage and clock, over the race link on loopback \
            UDP. The athlete runs a flying 30 m, then a 30 m from the start gate's button, \
            every 15 s; each result is printed with the true time, stored in --state-dir and \
            shown on the start gate's page and live board on that port (the PIN is printed and \
            kept in --state-dir).

            With --web PORT --lone-gate (or with race options, to join a session, or an NTP \
            port, to serve its clock) one gate \
            replays the two-runners clip over and over and serves its page. It prints the \
            stats line every 10 s and a summary at the end (frames, late wake-ups, worst \
            latency).
            """)

    @Flag(help: "Only the crossings, one JSON object per line.")
    var json = false

    @Flag(help: "After the two-gate session, also run one gate's loop on the two-runners clip and print its LEDs.")
    var gateLoop = false

    @Option(help: "Serve the web page on this port and run in real time, looping the clip.")
    var web: Int?

    @Option(help: "Address the web page listens on (with --web), and its NTP server and race link too.")
    var webHost = "127.0.0.1"

    @Option(help: "Frame rate of the rendered clip (with --web), 30...1000.")
    var fps: Double = 120

    @Option(help: ArgumentHelp("With --web --lone-gate: the clip's exposure in milliseconds (0.1 up to one frame period); a long one blurs the runners, as a camera left on a long exposure does.", valueName: "ms"))
    var exposureMs: Double?

    @Option(help: "State directory for the web PIN (with --web).")
    var stateDir = "/tmp/sprintgate-demo"

    @Option(help: "Stop after this many seconds (with --web); runs until stopped by default.")
    var seconds: Double?

    @Option(help: "Pause between \"On your marks\" and \"Set\" of a voice start, seconds (3...20; default 8 to 12 at random).")
    var marksPause: Double?

    @Option(help: "Pause between \"Set\" and the start sound of a voice start, seconds (0.5...5; default 1.5 to 2.3 at random).")
    var setPause: Double?

    @Flag(help: "With --web: one gate alone on the two-runners clip instead of the two-gate session (implied by the race options, a served NTP port, --test-clock-skew and --button-release).")
    var loneGate = false

    @Option(help: ArgumentHelp("For tests only (with --web --lone-gate): passes start on a grid of CLOCK_MONOTONIC, one clip and its gap apart, offset by this many seconds.", visibility: .hidden))
    var passPhase: Double?

    @Option(help: ArgumentHelp("With --web: a stand-in athlete holds the start button from the start of each pass and lets go this many seconds into it (0.1...10), for button-release starts.", valueName: "seconds"))
    var buttonRelease: Double?

    @Option(help: ArgumentHelp("With --web --lone-gate: run the delay mode on the clip too, its delayed view this many seconds behind (1...60); clips go to the state directory.", valueName: "seconds"))
    var videoDelay: Double?

    @Option(help: ArgumentHelp("With --video-delay: the delayed view full screen on a display card as well (DRM/KMS), \"auto\" for the first with a connected display.", valueName: "card"))
    var tv: String?

    @Option(help: ArgumentHelp("With --web --lone-gate: run the GPS acceleration timer too, reading gpsd on this loopback port (10 fixes a second asked, the 10 m gate).", valueName: "port"))
    var gps: Int?

    @Option(help: ArgumentHelp("With --web --lone-gate: publish each stored run and the gate's status to an MQTT broker on this loopback port, as device \"demo\" (docs/mqtt.md).", valueName: "port"))
    var mqtt: Int?

    @Option(help: ArgumentHelp("With --mqtt: the device name published under (sprintgate/<device>/...).", valueName: "name"))
    var mqttDevice = "demo"

    @Option(help: ArgumentHelp("With --web --lone-gate: run the rowing hub too, with this many synthetic PM5s (1...8) rowing into it; workouts set on the page reach them as CSAFE frames.", valueName: "ergs"))
    var rowing: Int?

    @Option(help: ArgumentHelp("With --rowing: the synthetic ergs row this many times faster than real time (1...20).", valueName: "factor"))
    var rowingSpeed: Double = 1

    @Option(help: ArgumentHelp("With --web: the page's clock is a pretend one this many days behind and not synchronised, as an offline board's is after a power cut, so the page sets it from the browser's time (only the pretend clock moves, never this computer's).", valueName: "days"))
    var offlineClockDays: Double?

    @OptionGroup(title: "Clock and multi-gate race (with --web)")
    var peers: PeerArguments

    func run() throws {
        if let port = web {
            guard (1...65535).contains(port) else { fail("--web \(port) is not a port (1...65535)") }
            guard (30...1000).contains(fps) else { fail("--fps \(fps) is outside 30...1000") }
            if let s = seconds, !(s > 0) { fail("--seconds must be positive") }
            if let b = buttonRelease, !(0.1...10).contains(b) { fail("--button-release \(b) is outside 0.1...10 s") }
            if let p = passPhase, !(0...60).contains(p) { fail("--pass-phase \(p) is outside 0...60 s") }
            if let d = videoDelay, !DelaySetting.range.contains(d) { fail("--video-delay \(d) is outside 1...60 s") }
            if let g = gps, !(1...65535).contains(g) { fail("--gps \(g) is not a port (1...65535)") }
            if mqttDevice.isEmpty || mqttDevice.contains(where: { "/+#".contains($0) }) || mqttDevice.count > 64 {
                fail("--mqtt-device \"\(mqttDevice)\" must be 1 to 64 characters without /, + or #")
            }
            if let r = rowing, !(1...8).contains(r) { fail("--rowing \(r) is outside 1...8 ergs") }
            if let d = offlineClockDays, !(0...10_000).contains(d) { fail("--offline-clock-days \(d) is outside 0...10000") }
            guard (1...20).contains(rowingSpeed) else { fail("--rowing-speed \(rowingSpeed) is outside 1...20") }
            if loneGate || passPhase != nil || buttonRelease != nil || peers.givesGateOptions {
                try runLive(port: port)
            } else {
                try runSession(port: port)
            }
            return
        }
        guard let spec = SceneCatalog.scene("two-runners", fps: 120, variant: 3) else { fail("demo scene missing") }
        if json {
            for c in replayScene(spec) { print(c.json) }
            return
        }
        if !DemoRace.run() { throw ExitCode(1) }
        if !gateLoop { return }
        print("One gate's loop on the two-runners clip (two athletes 0.45 s apart: the first starts")
        print("a flying start's clock, the second stops it), with its LEDs and buzzer:")
        print("")
        var camera = ReplayFrameSource(spec: spec, start: MonotonicInstant(nanoseconds: 0))
        do { try camera.open() } catch { fail(error.description) }
        let detector = PhotoFinishDetector(config: detectorConfig(for: spec), inputWidth: spec.width, inputHeight: spec.height)
        var loop = GateLoop(camera: camera, lines: FakeLines(), sound: RecordingBeeper(), detector: detector,
                            engine: Engine(config: EngineConfig()))
        let truth = spec.expectedCrossings
        print("SprintGate demo: \(spec.frameCount) frames \(spec.width)x\(spec.height) at \(Int(spec.fps)) fps, "
            + "gate line at x=\(ClipCrossing.fixed(spec.gateX, 1)), flying start")
        print("")
        final class Clock: @unchecked Sendable { var now = 0.0 }
        let clock = Clock()
        loop.observer = { event in
            switch event {
            case let .crossing(c):
                let t = c.time.seconds
                let nearest = truth.min { abs($0.time - t) < abs($1.time - t) }
                let err = nearest.map { " (true \(ClipCrossing.fixed($0.time, 4)) s, error \(ClipCrossing.fixed((t - $0.time) * 1000, 2)) ms)" } ?? ""
                print("  crossing  \(ClipCrossing.fixed(t, 4)) s ±\(ClipCrossing.fixed(c.uncertainty.milliseconds, 2)) ms  \(c.direction)\(err)")
            case let .action(a, now):
                let at = ClipCrossing.fixed(now.seconds, 3)
                switch a {
                case let .output(role, on): print("  [\(at) s] \(role) \(on ? "on" : "off")")
                case let .started(start, by): print("  [\(at) s] clock started at \(ClipCrossing.fixed(start.seconds, 4)) s (\(by.rawValue))")
                case let .finished(_, time): print("  [\(at) s] finished: \(ClipCrossing.fixed(time.seconds, 3)) s")
                default: break
                }
            case let .statusLight(l):
                print("  [\(ClipCrossing.fixed(clock.now, 3)) s] ready LED: \(l.rawValue)")
            case .line, .deviceError, .statsLine:
                break
            }
        }
        loop.command(.arm, now: MonotonicInstant(nanoseconds: 0))
        for i in 0..<(spec.frameCount + 24) {
            let now = MonotonicInstant(seconds: Double(i) / spec.fps + 0.002)
            clock.now = now.seconds
            loop.camera.readyUntil = now
            loop.iterate(now: now)
        }
        print("")
        print("\(loop.stats.crossings) crossing(s) detected, \(truth.count) expected; "
            + "true time between them \(ClipCrossing.fixed(truth[1].time - truth[0].time, 3)) s.")
    }
}

extension DemoCommand {
    /// Makes `path` (and its parents) or exits with what went wrong.
    func makeDirectory(_ path: String) {
        do { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) } catch {
            fail("cannot create --state-dir \(stateDir): \(error.localizedDescription)")
        }
    }

    /// The live demo's epoll loop, which SIGTERM, SIGINT and SIGHUP wake to stop in order.
    func openLoop() -> EpollLoop {
        do {
            let epoll = try EpollLoop()
            try epoll.catchStopSignals()
            return epoll
        } catch { fail(error.description) }
    }

    /// A flying start, with the voice start's pauses as the options set them.
    func liveConfig() -> EngineConfig {
        var config = EngineConfig()
        config.startType = .flying
        // Why shorter than a gate's: the demo's passes are only half a second apart.
        config.rearmDelay = .milliseconds(250)
        if let m = marksPause { config.marksPause = m...m }
        if let p = setPause { config.setPause = p...p }
        if let problem = config.validate() { fail(problem) }
        return config
    }

    /// The demo's page on `port`, its PIN printed: `spec`'s clip stands for the camera.
    func startPage(port: Int, config: EngineConfig, preset: Preset?, speedUnit: SpeedUnit = .metresPerSecond, minHeight: Double? = nil,
                   spec: SceneSpec, mode: String, book: any ResultsBook, wakeFD: Int32, log: Logger) -> WebGate {
        let web: WebGate
        do {
            web = try WebGate(gateName: "SprintGate demo", stateDirectory: stateDir, config: config, preset: preset,
                              speedUnit: speedUnit,
                              details: ["camera": "demo clip \(spec.width)x\(spec.height) at \(Int(spec.fps)) fps",
                                        "state directory": stateDir, "mode": mode],
                              book: book, wakeFD: wakeFD, log: log, fps: Int(spec.fps), minHeight: minHeight)
        } catch { fail("\(error)") }
        if let days = offlineClockDays {
            web.bridge.wallClock.connect(PretendWallClock(behindMs: Int64(days * 86_400_000)))
        }
        web.start(host: webHost, port: port)
        print("web PIN: \(web.server.pin.value)")
        return web
    }

    /// The demo clip in real time on the epoll loop, with the web page on Hummingbird's
    /// threads: page commands wake the loop through its eventfd.
    func runLive(port: Int) throws {
        /// The clip at `rate`, with --exposure-ms; nil when that exposure is longer than a frame.
        func clip(_ rate: Double) -> SceneSpec? {
            guard var spec = SceneCatalog.scene("two-runners", fps: rate, variant: 3) else { fail("demo scene missing at \(rate) fps") }
            if let ms = exposureMs {
                guard ms / 1000 <= 1 / rate else { return nil }
                spec.exposure = ms / 1000
            }
            return spec
        }
        if let ms = exposureMs, !(ms >= 0.1 && ms / 1000 <= 1 / fps) {
            fail("--exposure-ms \(ms) must be 0.1 up to one frame period (\(1000 / fps) ms)")
        }
        guard var spec = clip(fps) else { fail("demo scene missing at \(fps) fps") }
        // Line by line even into a pipe or a file: the PIN and results are read as they come.
        Sys.lineBufferedStandardOutput()
        var log = Logger(label: "sprintgate.web")
        log.logLevel = .notice
        makeDirectory(stateDir)
        var epoll = openLoop()
        var preset = Preset.named("flying-30m")
        var config = liveConfig()
        var speedUnit = SpeedUnit.metresPerSecond
        var detectorSettings = detectorConfig(for: spec)
        // Settings changed on this demo's page before, as a gate keeps them; the clip is
        // rendered at the frame rate chosen there.
        if let page = PageSettingsFile.loadAtStart(directory: stateDir, log: log) {
            PageSettingsFile.apply(page, to: &config, preset: &preset)
            if let u = page.speedUnit.flatMap(SpeedUnit.init(rawValue:)) { speedUnit = u }
            if let h = page.minHeight { detectorSettings.minCrossingHeight = h }
            if let f = page.fps, Double(f) != spec.fps {
                if let s = clip(Double(f)) { spec = s } else { print("the page chose \(f) fps, but --exposure-ms is longer than a frame at that rate; keeping \(Int(fps)) fps") }
            }
        }
        // Results and photo finishes go to the SQLite store under --state-dir, as on a gate.
        let storage = GateStorage.start(stateDirectory: stateDir, demoPreset: preset, log: log)
        // The demo's areas beside the gate, as a board's settings would turn them on.
        let features = ApplianceFeatures(log: log)
        var mqttFeature: MQTTFeature?
        if let mqtt {
            var m = MQTTSettings()
            m.port = mqtt
            m.device = mqttDevice
            do { mqttFeature = try MQTTFeature(settings: m, stateDirectory: stateDir, commits: storage.commits) } catch { fail("--mqtt: \(error)") }
            if let mqttFeature { features.add(mqttFeature) }
        }
        let web = startPage(port: port, config: config, preset: preset, speedUnit: speedUnit, minHeight: detectorSettings.minCrossingHeight,
                            spec: spec, mode: "demo (simulated lines, no sound)", book: storage.book, wakeFD: epoll.wakeFD, log: log)
        // Why: half a second between passes lets the detector see an empty gate again.
        let gap = Span.milliseconds(500)
        var cycle = Span.seconds(Double(spec.frameCount) / spec.fps + gap.seconds)
        // With --pass-phase every pass starts on a grid of CLOCK_MONOTONIC, so gates on one
        // machine see each runner in course order whenever they were started.
        func nextPass(after t: MonotonicInstant) -> MonotonicInstant {
            guard let phase = passPhase else { return t }
            let origin = Span.seconds(phase).nanoseconds
            let k = (t.nanoseconds - origin + cycle.nanoseconds - 1) / cycle.nanoseconds
            return MonotonicInstant(nanoseconds: origin + k * cycle.nanoseconds)
        }
        var passStart = nextPass(after: Sys.monotonicNow() + gap)
        var camera = ReplayFrameSource(spec: spec, start: passStart)
        do { try camera.open() } catch { fail(error.description) }
        // The stand-in athlete's hand on the start button: pressed as each pass starts,
        // let go `buttonRelease` seconds into it, stamped like kernel edges.
        var buttonEdges: UInt32 = 0
        func holdButton(from start: MonotonicInstant) -> [LineEvent] {
            guard let hold = buttonRelease else { return [] }
            buttonEdges += 2
            return [LineEvent(role: .startButton, edge: .rising, timestamp: start, lineSequence: buttonEdges - 1, globalSequence: buttonEdges - 1),
                    LineEvent(role: .startButton, edge: .falling, timestamp: start + .seconds(hold), lineSequence: buttonEdges,
                              globalSequence: buttonEdges)]
        }
        let detector = PhotoFinishDetector(config: detectorSettings, inputWidth: spec.width, inputHeight: spec.height)
        var lines = FakeLines()
        lines.pending = holdButton(from: passStart)
        var loop = GateLoop(camera: camera, lines: lines, sound: RecordingBeeper(), detector: detector, engine: Engine(config: config))
        storage.installPhotoFinish(on: &loop, width: spec.width, height: spec.height, gateX: detectorConfig(for: spec).gateX, fps: spec.fps, log: log)
        _ = web.installCameraView(on: &loop, width: spec.width, height: spec.height, fps: spec.fps,
                                   gateX: detectorConfig(for: spec).gateX)
        web.cameraOpened(&loop, fps: spec.fps)
        // The delay mode: on with --video-delay, switched on and off from the page (5 s
        // behind when the page turns it on). The demo reads no clickers: they would be this
        // computer's keyboards.
        let videoSize = (width: spec.width, height: spec.height, fps: spec.fps)
        let pageDelay = videoDelay ?? 5
        let tvCard = tv
        let videoSwitch = DelayVideoSwitch(web: web, stateDirectory: stateDir, markButton: false, clickers: false,
                                           commits: storage.commits) {
            DelayVideoConfig(width: videoSize.width, height: videoSize.height, fps: videoSize.fps,
                             delay: try DelaySetting(seconds: pageDelay), roll: try RollSetting(preRollSeconds: 2, postRollSeconds: 1),
                             availableMemory: min(WebGate.availableMemory() ?? (256 << 20), 256 << 20),
                             tv: tvCard.map { card in TVConfig { try DRMScreen(path: card == "auto" ? nil : card) } })
        }
        if videoDelay != nil { try videoSwitch.turnOn(&loop) }
        if let gps {
            features.add(GPSFeature(gpsd: GPSDConfig(port: UInt16(gps), wantedRate: 10), store: storage.thread.store, web: web,
                                    cues: features.cues))
        }
        // The rowing hub with synthetic ergs standing in for PM5s over Bluetooth.
        if let rowing {
            features.add(RowingFeature(syntheticErgs: rowing, speed: rowingSpeed, store: storage.thread.store, web: web,
                                       mqtt: mqttFeature?.results))
        }
        features.startAll()
        // The clip stands in for the camera: its exposure is what the camera would report.
        web.setExposure(.seconds(spec.exposure))
        let t0 = Sys.monotonicNow()
        var peerLog = Logger(label: "sprintgate.peer")
        peerLog.logLevel = .info
        let services = peers.services(storage: storage, web: web, settings: nil, stateDirectory: stateDir, listenHost: webHost, epoll: epoll, now: t0,
                                      peerLog: peerLog, log: log)
        services.install(on: &loop) { event in
            switch event {
            case let .statsLine(line): print(StatsWindow.header + "\n" + line)
            case let .action(.finished(_, time), _): print("finished: \(ClipCrossing.fixed(time.seconds, 3)) s")
            default: break
            }
        }
        loop.command(.arm, now: t0)
        func modeText() -> String { "\(spec.width)x\(spec.height) GREY \(Int(spec.fps)) fps (demo clip)" }
        var mode = modeText()
        let end = seconds.map { t0 + .seconds($0) }
        var period = 1 / spec.fps
        var lateWakeups: UInt64 = 0
        var iterations: UInt64 = 0
        var passes = 1
        while true {
            let now0 = Sys.monotonicNow()
            let k = max(0, (now0.since(passStart).seconds / period).rounded(.down) + 1)
            let nextFrame = passStart + .seconds(k * period)
            let (now, _) = epoll.wait(until: min(nextFrame, now0 + .milliseconds(10)))
            if let end, now >= end { break }
            if let signal = EpollLoop.stopSignal {
                print("stopping on signal \(signal)")
                break
            }
            loop.camera.readyUntil = now
            let before = loop.stats.frames
            videoSwitch.service(&loop)
            services.beforeFrames(&loop, now: now)
            loop.iterate(now: now)
            features.service(&loop, now: now)
            iterations += 1
            // Two or more frames in one wake-up: the loop was late by more than a frame period.
            if loop.stats.frames &- before > 1 { lateWakeups += 1 }
            if loop.camera.state == .absent {
                // Passes on a fixed schedule from the start (unless the loop fell behind by
                // more than the gap): demo gates started a set time apart see the runners
                // that far apart on every pass, as gates along a course would.
                let due = passStart + cycle
                passStart = nextPass(after: now < due ? due : now + gap)
                loop.lines.pending += holdButton(from: passStart)
                passes += 1
                // A frame rate chosen on the page: the next pass is rendered at it, as a
                // gate reopens its camera between runs.
                if let f = web.takeFrameRateChange() {
                    if let s = clip(Double(f)) {
                        spec = s
                        period = 1 / spec.fps
                        cycle = .seconds(Double(spec.frameCount) / spec.fps + gap.seconds)
                        mode = modeText()
                        web.cameraOpened(&loop, fps: spec.fps)
                        web.server.hub.setDetail("camera", "demo clip \(spec.width)x\(spec.height) at \(f) fps")
                        print("the page chose \(f) fps: the clip plays at it from this pass")
                    } else {
                        print("the page chose \(f) fps, but --exposure-ms is longer than a frame at that rate; keeping \(Int(spec.fps)) fps")
                    }
                }
                loop.reclaimVideoLoans()
                loop.camera = ReplayFrameSource(spec: spec, start: passStart)
                try? loop.camera.open()
            }
            services.afterFrames(loop, now: now, camera: loop.camera.state == .closed ? .streaming : loop.camera.state, mode: mode)
        }
        let linkSummary = services.stop()
        videoSwitch.stop()
        features.stopAll()
        let s = loop.stats
        print("demo summary: \(passes) passes, \(s.frames) frames, \(s.dropped) dropped, \(s.crossings) crossings, "
            + "\(lateWakeups) late wake-ups of \(iterations), worst latency \(ClipCrossing.fixed(Double(s.worstFrameLatencyNs) / 1e6, 2)) ms, "
            + "frame period \(ClipCrossing.fixed(period * 1000, 2)) ms, web commands dropped \(web.bridge.commands.dropped)")
        if let linkSummary { print(linkSummary) }
    }
}
