// SPDX-License-Identifier: Apache-2.0
// The appliance's parts made from its settings, in the order they depend on each other.

import Detector
import Engine
import FFmpegVideo
import Foundation
import GateConfig
import GateCore
public import GateDaemon
public import LinuxHardware
import Logging
import SQLiteStore
import VideoDelay
import VideoService
import WebUI

/// What comes up before the camera: the results' storage, the page and the areas, so a
/// gate powered on without its camera (or a board without one) is reached from a phone at
/// once and says what it waits for.
public struct ApplianceBase {
    public let storage: GateStorage
    public let web: WebGate?
    public let features: ApplianceFeatures
}

extension Appliance {
    /// Storage, then MQTT, the page (showing the camera's `frame`, or the wait for it) and
    /// the areas: one line each, in the order they depend on each other.
    public func assembleBase(epoll: borrowing EpollLoop, frame: CameraFrame?) -> ApplianceBase {
        // Results go to the storage thread through a bounded queue: the loop never waits
        // for the disk; a full queue drops and counts (logged at exit).
        let storage = GateStorage.start(stateDirectory: settings.stateDirectory, context: RunContext(settings: settings), log: log)
        let features = ApplianceFeatures(log: log)
        var mqtt: MQTTFeature?
        if let m = settings.mqtt {
            do {
                let feature = try MQTTFeature(settings: m, stateDirectory: settings.stateDirectory, commits: storage.commits)
                features.add(feature)
                mqtt = feature
                log.notice("MQTT: publishing runs to \(m.host):\(m.port) as sprintgate/\(m.device)")
            } catch {
                log.error("MQTT: not publishing: \(error)")
            }
        }
        let web = startPage(storage: storage, epoll: epoll, frame: frame)
        if let gps = GPSFeature.fromSettings(settings, store: storage.thread.store, web: web, cues: features.cues) { features.add(gps) }
        if let r = settings.rowing {
            features.add(RowingFeature(settings: r, store: storage.thread.store, stateDirectory: settings.stateDirectory, web: web,
                                       mqtt: mqtt?.results))
        }
        return ApplianceBase(storage: storage, web: web, features: features)
    }

    /// The camera's parts over `base` (the photo finish, the camera view, the keeper, the
    /// delay mode), then the services: the NTP server and the race link.
    func assemble<C: ApplianceCamera & ~Copyable, L: LineInputs & LineOutputs & ~Copyable, S: ApplianceSound & ~Copyable>(
        _ loop: inout GateLoop<C, L, S>, base: ApplianceBase, epoll: borrowing EpollLoop, frame: CameraFrame?,
        now: MonotonicInstant) throws(ApplianceError) -> ApplianceParts {
        let (storage, web) = (base.storage, base.web)
        var keeper: CameraKeeper?
        var video: DelayVideoSwitch?
        if let frame {
            // Photo finishes are stored with the run they finish.
            let gateX = settings.detectorConfig(width: frame.width).gateX
            storage.installPhotoFinish(on: &loop, width: frame.width, height: frame.height, gateX: gateX,
                                       fps: Double(frame.config.fps), log: log)
            web?.cameraReady(settings, mode: "\(frame.width)x\(frame.height)", frameWidth: frame.width, movedOnPage: frame.movedOnPage)
            _ = web?.installCameraView(on: &loop, width: frame.width, height: frame.height, fps: Double(frame.config.fps), gateX: gateX)
            web?.setExposure(loop.camera.exposure)
            web?.cameraOpened(&loop, fps: loop.camera.mode?.intervals.first?.fps ?? Double(frame.config.fps),
                              offered: loop.camera.offeredRates)
            keeper = CameraKeeper(config: frame.config, thermalZone: settings.board.thermalZone, web: web, now: now, log: log)
            video = try delayVideo(&loop, web: web, storage: storage, frame: frame)
        }
        let services: GateServices
        do {
            services = try GateServices(storage: storage, web: web, ntpPort: options.ntpPort, listenHost: options.webHost, peer: options.peer,
                                        skew: options.skew, stateDirectory: settings.stateDirectory, epoll: epoll, now: now,
                                        peerLog: Logger(label: "sprintgate.peer"), log: log)
        } catch {
            throw ApplianceError("race link not started: \(error)")
        }
        let gateLog = Logger(label: "sprintgate.gate")
        services.install(on: &loop) { [unowned self] event in self.logEvent(event, gateLog) }
        return ApplianceParts(base: base, services: services, video: video, keeper: keeper)
    }

    /// The page (nil with `webPort` 0, or when it cannot start: the gate then runs without it).
    private func startPage(storage: GateStorage, epoll: borrowing EpollLoop, frame: CameraFrame?) -> WebGate? {
        guard options.webPort != 0 else { return nil }
        return WebGate.startForGate(settings: settings, host: options.webHost, port: options.webPort, wakeFD: epoll.wakeFD,
                                    cameraMode: frame.map { "\($0.width)x\($0.height)" }, frameWidth: frame?.width ?? NoCamera.width,
                                    movedOnPage: frame?.movedOnPage ?? false, book: storage.book, level: options.level)
    }

    /// The delay mode: on from the settings file, switched on and off from the page; its
    /// values are the file's `[video]` table (enabled or not) or the defaults.
    private func delayVideo<C: ApplianceCamera & ~Copyable, L: LineInputs & LineOutputs & ~Copyable, S: ApplianceSound & ~Copyable>(
        _ loop: inout GateLoop<C, L, S>, web: WebGate?, storage: GateStorage, frame: CameraFrame) throws(ApplianceError) -> DelayVideoSwitch? {
        guard let web else {
            if settings.video != nil {
                log.warning("[video] is enabled but the page is off (--web-port 0): the delayed view needs the page; video stays off")
            }
            return nil
        }
        let v = settings.video ?? settings.videoTable ?? VideoSettings()
        let board = settings.board
        let (width, height, fps) = (frame.width, frame.height, Double(frame.config.fps))
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
        // Why throw: a [video] value the camera cannot honour is bad input, which systemd
        // must not retry (status 2), like any other settings error.
        if settings.video != nil {
            do { try switcher.turnOn(&loop) } catch let error as ConfigError { throw ApplianceError(error.description) } catch {
                log.error("delayed video not started: \(error)")
            }
        }
        return switcher
    }

    /// The journal's lines for what the loop reports, and the status file's last crossing
    /// and result.
    func logEvent(_ event: LoopEvent, _ gateLog: Logger) {
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
}
