// SPDX-License-Identifier: Apache-2.0
// The daemon's side of the web page: snapshot publishing from the loop's observer,
// page commands applied on the loop thread, and the Hummingbird server on its own threads.

import Detector
public import Engine
public import GateConfig
import Foundation
public import GateCore
import LinuxHardware
import PhotoFinish
import VideoService
public import Logging
public import WebUI

/// Owns the bridge and the server. The loop thread calls `observe` (from the loop's
/// observer), `publishStatus` (a few times a second) and `applyCommands`; nothing here
/// waits for the web side.
public final class WebGate: @unchecked Sendable {
    public let bridge: GateBridge
    public let server: WebServer
    public let log: Logger
    /// The book stores runs through the storage thread: finished runs are not pushed to the results lane.
    private let bookStoresRuns: Bool
    // Loop-thread state: the current run's laps and the preset chosen on the page.
    private var laps: [LiveSnapshot.Lap] = []
    private var crossings: UInt64 = 0
    public private(set) var preset: Preset?
    /// The engine's configuration as last published (loop thread).
    private(set) var config: EngineConfig
    private var lastFrames: UInt64 = 0
    /// Where the gate line moved on the page is kept (`GateLineFile`).
    private let stateDirectory: String
    /// The camera view, once installed (loop thread).
    var cameraView: CameraView?
    private var lastFramesAt: MonotonicInstant?
    /// The page's settings beside the engine's: speed unit, the camera's frame rate (as
    /// chosen) and the detector's smallest body.
    private var speedUnit: String
    private var fps: Int
    /// A frame rate chosen on the page that the camera has not been reopened at yet.
    private var pendingFrameRate: Int?
    /// Whether the delay mode runs (as the loop's owner says, or as the page just chose),
    /// and a choice of the page's the owner has not applied yet.
    private var videoOn = false
    private var pendingVideoMode: Bool?
    private var minHeight: Double
    private var settingsVersion: UInt64 = 0
    /// False on a board without `[camera]`: the page shows the camera as `none` and leaves
    /// the camera gate's parts out.
    public var boardHasCamera = true

    /// Why: the status changes with every frame; 10 Hz is as fast as a person reads it
    /// and keeps the snapshot lock off the frame path.
    public static let statusPeriod = Span.milliseconds(100)

    /// `fps` is the camera's frame rate as opened, `minHeight` the detector's smallest body
    /// (fraction of the frame height).
    public init(gateName: String, stateDirectory: String, config: EngineConfig, preset: Preset?, speedUnit: SpeedUnit, details: [String: String],
                book: any ResultsBook, wakeFD: Int32, log: Logger, fps: Int = 0,
                minHeight: Double? = nil) throws {
        let pin: GatePIN
        do { pin = try GatePIN.loadOrCreate(directory: stateDirectory) } catch {
            throw WebGateError(description: "\(error) (the web page needs the state directory to keep its PIN)")
        }
        let settings = WebSettings(
            gateName: gateName, startTypes: StartType.allCases.map(\.rawValue),
            presets: Preset.all.map { .init(id: $0.id, title: $0.title, distanceMetres: $0.distance, startType: $0.startType.rawValue, solo: $0.solo,
                                      distances: $0.distances) },
            speedUnit: speedUnit.rawValue, details: details)
        bridge = GateBridge(wake: { EpollLoop.wake(wakeFD) })
        let hub = LiveHub(bridge: bridge, book: book, settings: settings, logger: log)
        server = WebServer(hub: hub, pin: pin, logger: log)
        self.preset = preset
        self.config = config
        self.log = log
        self.stateDirectory = stateDirectory
        self.speedUnit = speedUnit.rawValue
        self.fps = fps
        self.minHeight = minHeight ?? DetectorConfig(gateX: 0).minCrossingHeight
        bookStoresRuns = book.storesRunsItself
        bridge.settings.publish(EditableSettings(), runningFPS: fps)
        publishConfig(config)
        let videoDirectory = stateDirectory + "/video"
        bridge.video.whenOff { [log] in
            guard FileManager.default.fileExists(atPath: videoDirectory + "/sessions.sqlite") else { return 0 }
            do { return try ClipLibrary(directory: videoDirectory).deleteSessions(except: nil) } catch {
                log.error("the video sessions were not deleted: \(error)")
                return 0
            }
        }
    }

    /// Starts the server on Hummingbird's threads; returns at once.
    public func start(host: String, port: Int) {
        let server = self.server
        let log = self.log
        Task.detached {
            do { try await server.serve(host: host, port: port) } catch {
                log.error("web server on \(host):\(port) stopped: \(error) (is the port in use?)")
            }
        }
        log.notice("web page on http://\(host):\(port)/")
        // For `sprintgate status` and the install message: which address a phone opens.
        do { try PageAddress(host: host, port: port).save(directory: stateDirectory) } catch {
            log.warning("the page's address could not be kept in \(stateDirectory): \(error)")
        }
    }

    /// The engine's configuration and the preset, in the snapshot.
    public func publishConfig(_ config: EngineConfig) {
        self.config = config
        bridge.settings.publish(PageSettingsFile.editable(engine: config, preset: preset, speedUnit: speedUnit, fps: fps, minHeight: minHeight,
                                                          delayedVideo: videoOn))
        let p = preset
        bridge.snapshot.update {
            $0.startType = config.startType.rawValue
            $0.solo = config.solo
            $0.preset = p?.id
            $0.distanceMetres = p?.distance
        }
    }

    /// Feeds one loop event into the snapshot (and finished runs to the results lane).
    public func observe(_ event: LoopEvent) {
        switch event {
        case let .crossing(c):
            crossings += 1
            let view = LiveSnapshot.CrossingView(number: crossings, atMonoNs: c.time.nanoseconds, direction: "\(c.direction)",
                                                 uncertaintyMs: c.uncertainty.milliseconds)
            bridge.snapshot.update {
                $0.crossings.insert(view, at: 0)
                if $0.crossings.count > LiveSnapshot.crossingLimit { $0.crossings.removeLast() }
            }
        case let .action(a, _):
            switch a {
            case let .phase(p):
                let (name, start) = Self.describe(p)
                if case .armed = p { laps = [] }
                let l = laps
                bridge.snapshot.update {
                    $0.phase = name
                    $0.runStartMonoNs = start
                    // A false start stays on the board through the re-arm that follows it
                    // (the engine arms again in the same step), until the next run begins
                    // or the gate is reset.
                    if name == "armed" { $0.laps = l } else { $0.falseStart = nil }
                }
            case let .started(at, _), let .startCorrected(at):
                bridge.snapshot.update { $0.runStartMonoNs = at.nanoseconds }
            case let .lap(n, _, split, lap):
                laps.append(.init(number: n, splitSeconds: split.seconds, lapSeconds: lap.seconds))
                let l = laps
                bridge.snapshot.update { $0.laps = l }
                if config.solo { finish(seconds: lap.seconds, config: config) }
            case let .finished(_, time):
                finish(seconds: time.seconds, config: config)
            case let .falseStart(reason, _):
                bridge.snapshot.update { $0.falseStart = reason.rawValue }
            default:
                break
            }
        case let .statusLight(l):
            bridge.snapshot.update { $0.gate.light = l.rawValue }
        case .line, .deviceError, .statsLine:
            break
        }
    }

    /// Another gate's false start voided the race's run: the board says so, as for its own.
    public func showFalseStartElsewhere(gate: String, reason: String) {
        bridge.snapshot.update { $0.falseStart = "\(reason) (at gate \(gate))" }
    }

    /// Set while a race session runs (loop thread): the engine's own runs are not results.
    public var racing = false

    private func finish(seconds: Double, config: EngineConfig) {
        // The storage thread records the run; the board hears of it when it is committed.
        if bookStoresRuns || racing { return }
        let splits = config.solo ? [] : laps.map(\.splitSeconds).dropLast()
        let run = TimedRun(seconds: seconds, splits: Array(splits), startType: config.startType.rawValue, preset: preset?.id,
                           distanceMetres: config.solo ? nil : preset?.distance, wallTime: Date().timeIntervalSince1970)
        if !bridge.results.push(run) { log.error("web results lane full: a \(seconds) s run is missing from the page's history") }
    }

    /// The exposure the camera reports (nil: it does not say), on the page with a warning
    /// when it blurs a sprinter (`V4L2FrameSource.blurLimit`). Call after the camera opens.
    public func setExposure(_ exposure: Span?) {
        let warning = exposure.flatMap { $0 > V4L2FrameSource.blurLimit ? V4L2FrameSource.blurWarning($0) : nil }
        bridge.snapshot.update {
            $0.camera.exposureMs = exposure.map { Double($0.nanoseconds) / 1e6 }
            $0.camera.exposureWarning = warning
        }
    }

    /// Why the camera gives no frames and what to do, shown on the page until it streams
    /// (nil clears it). From the loop's thread, or before the loop starts.
    public func cameraProblem(_ text: String?) {
        bridge.snapshot.update { $0.camera.problem = text }
    }

    /// The camera opened at `mode` (e.g. `640x480`): the settings view shows it, where it
    /// showed the wait for it.
    public func cameraReady(_ settings: GateSettings, mode: String, frameWidth: Int, movedOnPage: Bool) {
        for (key, value) in Self.cameraDetails(settings, mode: mode, frameWidth: frameWidth, movedOnPage: movedOnPage) {
            server.hub.setDetail(key, value)
        }
        cameraProblem(nil)
    }

    /// Detector status, camera and counters; call every `statusPeriod`.
    public func publishStatus(status: GateStatus, light: StatusLight, camera: DeviceState, mode: String, stats: LoopStats,
                              p99Ms: Double, now: MonotonicInstant) {
        var fps = 0.0
        if let t = lastFramesAt, now > t { fps = Double(stats.frames &- lastFrames) / now.since(t).seconds }
        lastFrames = stats.frames
        lastFramesAt = now
        bridge.snapshot.update {
            $0.gate = LiveSnapshot.GateView(status, light: light.rawValue)
            $0.camera.state = boardHasCamera ? "\(camera)" : "none"
            $0.camera.mode = mode
            // Why: smooth the 10 Hz rate a little so the number does not flicker by one frame.
            $0.camera.fps = $0.camera.fps == 0 ? fps : ($0.camera.fps * 0.7 + fps * 0.3)
            $0.camera.frames = stats.frames
            $0.camera.dropped = stats.dropped
            $0.camera.latencyP99Ms = p99Ms
        }
    }

    /// Sync health of the other gates (filled by the race session when one runs).
    public func publishPeers(_ peers: [LiveSnapshot.PeerView]) {
        bridge.snapshot.update { $0.peers = peers }
    }

    public static func describe(_ p: EnginePhase) -> (String, Int64?) {
        switch p {
        case .idle: ("idle", nil)
        case .armed: ("armed", nil)
        case .holding: ("holding", nil)
        case .starting: ("starting", nil)
        case .inFrame: ("in-frame", nil)
        case let .running(start): ("running", start.nanoseconds)
        case .finished: ("finished", nil)
        }
    }

    /// Receives the page's race commands (role changes) on the loop thread; set by
    /// `GateServices` when a race link runs. Without one they are refused in the log.
    public var onPeerCommand: ((GateCommand, MonotonicInstant) -> Void)?

    /// Receives the course (preset and start type) after the page changed it, on the loop
    /// thread; set by `GateServices` so that storage records the runs after the change
    /// with it.
    public var onCourseChange: ((Preset?, StartType, MonotonicInstant) -> Void)?

    /// Applies the page's queued commands to the loop at `now` (loop thread).
    public func applyCommands<C: FrameSource & ~Copyable, L: LineInputs & LineOutputs & ~Copyable, S: Beeper & ~Copyable>(
        to loop: inout GateLoop<C, L, S>, now: MonotonicInstant) {
        while let c = bridge.commands.pop() {
            switch c {
            case .assignPeer, .pauseDetection, .resumeDetection:
                if let onPeerCommand { onPeerCommand(c, now) } else { log.warning("page asked for \(c) but no race runs here") }
            case .arm: loop.command(.arm, now: now)
            case .start: loop.command(.start, now: now)
            case .reset:
                loop.command(.reset, now: now)
                onPeerCommand?(c, now)  // A race host resets every gate for the next run.
            case let .setStartType(id):
                guard let t = StartType(rawValue: id) else { continue }
                var cfg = loop.engine.config
                cfg.startType = t
                if reconfigure(&loop, cfg, now: now, what: "start type \(id)") { onCourseChange?(preset, t, now) }
            case let .setGateLine(x):
                moveGateLine(&loop, to: x)
            case let .applySettings(change):
                applySettings(&loop, change, now: now)
            case let .setPreset(id):
                guard let p = Preset.named(id) else { continue }
                var cfg = loop.engine.config
                // The preset is published with the new configuration; a refused change keeps the old one.
                let previous = preset
                PageSettingsFile.apply(EditableSettings(preset: id), to: &cfg, preset: &preset)
                if reconfigure(&loop, cfg, now: now, what: "preset \(id)") { onCourseChange?(p, p.startType, now) } else { preset = previous }
            }
        }
    }

    /// Applies the page's settings between runs: the engine's at once (start, feedback),
    /// the preset, a new detector for another body size, the speed unit on the page; the
    /// frame rate when the loop's owner reopens the camera (`takeFrameRateChange`). All of
    /// it is kept for the next start.
    private func applySettings<C: FrameSource & ~Copyable, L: LineInputs & LineOutputs & ~Copyable, S: Beeper & ~Copyable>(
        _ loop: inout GateLoop<C, L, S>, _ change: EditableSettings, now: MonotonicInstant) {
        guard betweenRuns(loop, what: "to change the settings") else { return }
        var cfg = loop.engine.config
        let previousPreset = preset
        PageSettingsFile.apply(change, to: &cfg, preset: &preset)
        if let problem = cfg.validate() {
            preset = previousPreset
            log.warning("page settings refused: \(problem)")
            return
        }
        if let u = change.speedUnit { speedUnit = u }
        if let v = change.delayedVideo, v != videoOn {
            videoOn = v
            pendingVideoMode = v
        }
        if let f = change.fps, f != fps {
            fps = f
            pendingFrameRate = f
        }
        if let h = change.minHeight, h != loop.detector.config.minCrossingHeight {
            let g = loop.detector.geometry
            var dc = loop.detector.config
            dc.minCrossingHeight = h
            loop.detector = PhotoFinishDetector(config: dc, inputWidth: g.inputWidth, inputHeight: g.inputHeight)
            minHeight = h
        }
        let courseChanged = cfg.startType != loop.engine.config.startType || preset != previousPreset
        if cfg != loop.engine.config {
            _ = reconfigure(&loop, cfg, now: now, what: "settings")
        } else {
            publishConfig(cfg)
        }
        if courseChanged { onCourseChange?(preset, cfg.startType, now) }
        settingsShown()
        let current = bridge.settings.current
        do {
            try PageSettingsFile.save(current, directory: stateDirectory)
            log.notice("page changed the settings; kept in \(PageSettingsFile.path(directory: stateDirectory))")
        } catch {
            log.error("page changed the settings, but they could not be kept for the next start: \(error)")
        }
    }

    /// Loop thread: the delay mode as the page chose it since the last call (on or off),
    /// for the loop's owner to start or stop (`DelayVideoSwitch`).
    public func takeVideoModeChange() -> Bool? {
        defer { pendingVideoMode = nil }
        return pendingVideoMode
    }

    /// Loop thread: the delay mode now runs, or not (shown in the page's settings).
    public func videoSwitched(on: Bool) {
        guard on != videoOn else { return }
        videoOn = on
        publishConfig(config)
    }

    /// Loop thread: the frame rate the page chose since the last call, for the loop's
    /// owner to reopen the camera at (between runs, as the settings are applied).
    public func takeFrameRateChange() -> Int? {
        defer { pendingFrameRate = nil }
        return pendingFrameRate
    }

    /// Loop thread, after the camera (re)opened at `fps` frames per second: the photo
    /// finish's ring and the camera view's bands are sized for that rate, and the page
    /// shows the rate the camera runs at.
    /// `offered`: the whole rates the camera offers (the page's frame-rate menu), when known.
    public func cameraOpened<C: FrameSource & ~Copyable, L: LineInputs & LineOutputs & ~Copyable, S: Beeper & ~Copyable>(
        _ loop: inout GateLoop<C, L, S>, fps actual: Double, offered: [Int] = []) {
        guard actual.isFinite, actual > 0 else { return }
        // A run in progress keeps its ring (a new one would lose the frames a crossing
        // reported soon may need); the next reopen between runs resizes it.
        if let old = loop.photoFinish, abs(old.config.fps - actual) > 0.5, !Self.inRun(loop.engine.phase), old.pendingCount == 0 {
            var pc = old.config
            pc.fps = actual
            if let recorder = try? PhotoFinishRecorder(config: pc) { loop.photoFinish = recorder }
        }
        cameraView?.preview.setBands(FramePreview.bands(fps: actual))
        let rate = Int(actual.rounded())
        let rates = offered.isEmpty ? nil : offered
        if bridge.settings.runningFPS != rate || (rates != nil && rates != bridge.settings.frameRates) {
            bridge.settings.publish(bridge.settings.current, runningFPS: rate, cameraRates: rates)
            settingsShown()
        }
    }

    /// Moves the detector's gate line to `x` (input pixels) between runs: a new detector
    /// (it learns the background again) and photo-finish ring at the new column; the
    /// camera view draws it there, and it is kept for the next start.
    private func moveGateLine<C: FrameSource & ~Copyable, L: LineInputs & LineOutputs & ~Copyable, S: Beeper & ~Copyable>(
        _ loop: inout GateLoop<C, L, S>, to x: Double) {
        guard betweenRuns(loop, what: "to move the gate line") else { return }
        let g = loop.detector.geometry
        guard x.isFinite, x >= 0, x < Double(g.inputWidth) else { return }
        var dc = loop.detector.config
        dc.gateX = x
        loop.detector = PhotoFinishDetector(config: dc, inputWidth: g.inputWidth, inputHeight: g.inputHeight)
        if let old = loop.photoFinish {
            var pc = old.config
            pc.gateX = x
            if let recorder = try? PhotoFinishRecorder(config: pc) { loop.photoFinish = recorder }
        }
        cameraView?.gateX = x
        do {
            // The settings view says where the line is now, on every phone.
            server.hub.setDetail("gate line x", Self.gateLineText(x, frameWidth: g.inputWidth, movedOnPage: true))
            settingsShown()
            try GateLineFile.save(directory: stateDirectory, x: x, frameWidth: g.inputWidth)
            log.notice("page moved the gate line to x \(x) of \(g.inputWidth); kept in \(GateLineFile.path(directory: stateDirectory))")
        } catch {
            log.error("page moved the gate line to x \(x), but it could not be kept for the next start: \(error)")
        }
    }

    /// Tells every phone the settings changed (the live board's `settingsVersion`).
    private func settingsShown() {
        settingsVersion += 1
        let version = settingsVersion
        bridge.snapshot.update { $0.settingsVersion = version }
    }

    /// False, logged, while a run is in progress: the page asked `what` (e.g. "for preset
    /// 60m") then, and it is ignored.
    private func betweenRuns<C: FrameSource & ~Copyable, L: LineInputs & LineOutputs & ~Copyable, S: Beeper & ~Copyable>(
        _ loop: borrowing GateLoop<C, L, S>, what: String) -> Bool {
        guard !Self.inRun(loop.engine.phase) else {
            log.warning("page asked \(what) during a run; ignored")
            return false
        }
        return true
    }

    /// A run is in progress: started, starting, or with the athlete held in frame.
    private static func inRun(_ phase: EnginePhase) -> Bool {
        switch phase {
        case .running, .starting, .holding, .inFrame: true
        default: false
        }
    }

    /// Applies `cfg` unless a run is in progress; returns whether it did.
    private func reconfigure<C: FrameSource & ~Copyable, L: LineInputs & LineOutputs & ~Copyable, S: Beeper & ~Copyable>(
        _ loop: inout GateLoop<C, L, S>, _ cfg: EngineConfig, now: MonotonicInstant, what: String) -> Bool {
        guard betweenRuns(loop, what: "for \(what)") else { return false }
        let wasArmed = loop.engine.phase == .armed
        loop.reconfigure(cfg, now: now)
        publishConfig(cfg)
        log.notice("page set \(what)")
        if wasArmed { loop.command(.arm, now: now) }
        return true
    }
}

public struct WebGateError: Error, CustomStringConvertible {
    public let description: String
}
