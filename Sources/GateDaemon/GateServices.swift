// SPDX-License-Identifier: Apache-2.0
// What runs beside the gate loop on the loop thread, wired once for `run`, `demo --web` and `LocalGate`.

public import Engine
import GateConfig
public import GateCore
public import LinuxHardware
public import Logging
import SQLiteStore
import WebUI

/// The services around the gate loop: results storage, the web page, the NTP server and
/// the race link. `run`, `demo --web` and `LocalGate` differ only in where frames come
/// from; each calls, on every loop iteration, `beforeFrames` then `loop.iterate` then `afterFrames`:
///
/// 1. the page's queued commands are applied (arm, start, reset, start type, preset);
/// 2. the race link is serviced: a ping is answered before the frame work, so the
///    reply's timestamps are not delayed by the detector;
/// 3. the frames;
/// 4. NTP requests are answered;
/// 5. every `WebGate.statusPeriod` the page gets the gate status.
///
/// Loop events reach every service through the one observer `install` sets, in the
/// order race link, page, storage, then the command's own console or log lines.
public final class GateServices {
    public let storage: GateStorage
    public let web: WebGate?
    public let ntp: NTPServer?
    public let link: PeerLink?
    private let log: Logger
    private var nextWebStatus: MonotonicInstant
    private var rearm = AutoRearm()

    /// Starts the NTP server (on `listenHost`:`ntpPort`, none when nil or 0) and the race
    /// link (when `peer` is set, on its own `listenHost`) and puts their sockets on `epoll`;
    /// finished races go to storage.
    /// Storage and the page are started by the caller (the page is optional for `run`
    /// and required for `demo --web`). Throws when the race link's socket cannot be opened.
    public init(storage: GateStorage, web: WebGate?, ntpPort: Int?, listenHost: String = "0.0.0.0", peer: PeerOptions?, skew: ClockSkew,
                stateDirectory: String, epoll: borrowing EpollLoop, now: MonotonicInstant,
                peerLog: Logger, log: Logger) throws {
        self.storage = storage
        self.web = web
        self.log = log
        nextWebStatus = now
        ntp = NTPServer.start(port: ntpPort, host: listenHost, skew: skew, now: now, log: peerLog)
        link = try peer.map { try PeerLink(options: $0, stateDirectory: stateDirectory, now: now, log: peerLog) }
        let link = link
        web?.onCourseChange = { preset, startType, now in
            storage.changeCourse(RunContext(preset: preset, startType: startType))
            link?.setStartType(startType, now: now)
        }
        if let ntp { add(ntp.fileDescriptor, "NTP server", to: epoll) }
        if let link {
            add(link.fileDescriptor, "race link", to: epoll)
            link.onRaceFinished = { storage.recordRace($0) }
            // Photos cross the race link both ways: a gate's to its host, the gates' into the host's store.
            if let photos = storage.photos { link.onRacePhoto = photos.remote }
            web?.onPeerCommand = { command, now in
                switch command {
                case let .assignPeer(gate, role, distance): link.assign(gate: gate, role: role, distanceMetres: distance, now: now)
                case .pauseDetection: link.setPaused(true, now: now)
                case .resumeDetection: link.setPaused(false, now: now)
                case .reset: link.resetForNextRun(now: now)
                default: break
                }
            }
        }
    }

    private func add(_ fd: Int32, _ what: String, to epoll: borrowing EpollLoop) {
        do { try epoll.add(fd) } catch { log.error("\(what) socket not watched: \(error.description); it is polled every wake-up") }
    }

    /// Sets the loop's one observer: crossings to the race link, every event to the page
    /// and to storage, then to `console` (the command's own output).
    public func install<C: FrameSource & ~Copyable, L: LineInputs & LineOutputs & ~Copyable, S: Beeper & ~Copyable>(
        on loop: inout GateLoop<C, L, S>, console: @escaping (LoopEvent) -> Void) {
        let link = link, web = web, storage = storage
        loop.observer = { event in
            // In a race session the results are the race's (the host stores them): this
            // gate's engine only arms, starts and gives feedback, and its own runs (a
            // flying start and the next athlete through the same gate) are not stored.
            let racing = link?.inSession ?? false
            if let link {
                if case let .crossing(c) = event { link.noteCrossing(c) }
                if case let .action(a, _) = event { link.noteEngine(a) }
            }
            web?.racing = racing
            web?.observe(event)
            if !racing { storage.observe(event) }
            console(event)
        }
    }

    /// Steps 1 and 2: page commands (and a lone gate arming itself again after a run, with
    /// `autoRearm`), then the race link.
    public func beforeFrames<C: FrameSource & ~Copyable, L: LineInputs & LineOutputs & ~Copyable, S: Beeper & ~Copyable>(
        _ loop: inout GateLoop<C, L, S>, now: MonotonicInstant) {
        web?.applyCommands(to: &loop, now: now)
        // In a race session the host arms the gates for the next run.
        let racing = link?.inSession ?? false
        if rearm.due(phase: racing ? .idle : loop.engine.phase, config: loop.engine.config, now: now) {
            log.info("run finished \(loop.engine.config.rearmDelay.seconds) s ago: armed again for the next one")
            loop.command(.arm, now: now)
        }
        guard let link else { return }
        storage.photos?.forwardsToRace = link.sendsPhotos
        while let p = storage.photos?.takeOutgoing() { link.notePhoto(bundle: p.bundle, crossingNs: p.crossingNs, media: p.media, now: now) }
        link.service(now: now, web: web)
        for r in link.takeEngineRequests() {
            switch r {
            case let .arm(type):
                if loop.engine.config.startType != type {
                    var cfg = loop.engine.config
                    cfg.startType = type
                    loop.reconfigure(cfg, now: now)
                    web?.publishConfig(cfg)
                    storage.changeCourse(RunContext(preset: web?.preset, startType: type))
                    log.notice("race set the start type to \(type.rawValue)")
                }
                loop.command(.arm, now: now)
            case let .falseStartElsewhere(gate, reason):
                loop.command(.falseStartElsewhere, now: now)
                // After the command: the engine's re-arm must not take it off the board.
                web?.showFalseStartElsewhere(gate: gate, reason: reason)
            case .reset:
                loop.command(.reset, now: now)
            }
        }
    }

    /// Steps 4 and 5: NTP requests, then the page's status when it is due. `camera` and
    /// `mode` are what the page shows for the camera.
    public func afterFrames<C: FrameSource & ~Copyable, L: LineInputs & LineOutputs & ~Copyable, S: Beeper & ~Copyable>(
        _ loop: borrowing GateLoop<C, L, S>, now: MonotonicInstant, camera: DeviceState, mode: String) {
        if let ntp { do { _ = try ntp.service(now: now) } catch { log.error("NTP server: \(error.description)") } }
        link?.noteStatus(loop.lastStatus, camera: camera, frames: loop.stats.frames, dropped: loop.stats.dropped, now: now)
        if let web, now >= nextWebStatus {
            nextWebStatus = now + WebGate.statusPeriod
            web.publishStatus(status: loop.lastStatus, light: loop.statusLight, camera: camera, mode: mode,
                              stats: loop.stats, p99Ms: loop.statsWindow.percentileMs(0.99), now: now)
        }
    }

    /// Writes what storage still holds and ends its threads; the race link's summary
    /// line, if a link ran.
    public func stop() -> String? {
        link?.endSession(now: Sys.monotonicNow())
        storage.stop()
        return link?.summary
    }
}
