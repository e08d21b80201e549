// SPDX-License-Identifier: Apache-2.0
// A whole gate in this process: a scene replayed as its camera, scripted start-button edges,
// and the daemon's own services (storage, race link, page). `demo --web` runs two of them
// as a start gate and a finish gate; the in-process race tests drive the same.

import Detector
public import Engine
public import GateCore
public import GateSim
public import LinuxHardware
public import Logging
import WebUI

/// One gate as `run` wires it, with a replayed scene instead of the camera, scripted edges
/// instead of GPIO and a recording beeper instead of ALSA. Everything around the loop is
/// the daemon's: `GateServices` with its SQLite storage thread, photo-finish link and race
/// link on a real UDP socket.
///
/// The camera plays `spec` once per pass. Passes are scheduled ahead (`schedulePass`); each
/// plays from its start instant, in the loop's own time, so two gates whose passes are
/// placed a few seconds apart see the same athlete run from one to the other.
public final class LocalGate {
    public typealias Loop = GateLoop<ReplayFrameSource, FakeLines, RecordingBeeper>

    public var loop: Loop
    public let services: GateServices
    public private(set) var spec: SceneSpec
    /// The scene at another frame rate, for a rate chosen on this gate's page.
    private let clip: ((Double) -> SceneSpec?)?
    private let web: WebGate?
    /// Passes still to play, oldest first (the playing one is not in it).
    private var passes: [MonotonicInstant] = []
    /// The camera holds no pass, only a clip that starts in a year (a clear gate).
    private var idle = true
    private var lineSequence: UInt32 = 0
    private var mode: String
    /// The page's camera view, when this gate serves the page.
    public private(set) var cameraView: CameraView?

    /// Starts the gate's storage under `stateDirectory` (the caller makes the directory)
    /// and its services; `web` is the page, if this gate serves one (made over
    /// `storage.book`). Throws when the race link cannot open its socket. `clip` renders
    /// the scene at a frame rate chosen on the page (without it the rate stays).
    public init(spec: SceneSpec, engine: EngineConfig, storage: GateStorage, web: WebGate?, peer: PeerOptions?,
                stateDirectory: String, epoll: borrowing EpollLoop, now: MonotonicInstant, log: Logger,
                clip: ((Double) -> SceneSpec?)? = nil, console: @escaping (LoopEvent) -> Void = { _ in }) throws {
        self.spec = spec
        self.clip = clip
        self.web = web
        let config = detectorConfig(for: spec)
        let detector = PhotoFinishDetector(config: config, inputWidth: spec.width, inputHeight: spec.height)
        loop = GateLoop(camera: Self.clearGate(spec, now: now), lines: FakeLines(), sound: RecordingBeeper(), detector: detector, engine: Engine(config: engine))
        mode = Self.modeText(spec)
        storage.installPhotoFinish(on: &loop, width: spec.width, height: spec.height, gateX: config.gateX, fps: spec.fps, log: log)
        cameraView = web?.installCameraView(on: &loop, width: spec.width, height: spec.height, fps: spec.fps, gateX: config.gateX)
        services = try GateServices(storage: storage, web: web, ntpPort: 0, peer: peer, skew: peer?.skew ?? .none,
                                    stateDirectory: stateDirectory, epoll: epoll, now: now, peerLog: log, log: log)
        services.install(on: &loop, console: console)
    }

    private static func modeText(_ spec: SceneSpec) -> String {
        "\(spec.width)x\(spec.height) GREY \(Int(spec.fps)) fps (scene \(spec.name))"
    }

    /// The race link, when this gate takes part in one.
    public var link: PeerLink? { services.link }

    /// Plays the scene once more, from `start` (after the passes already scheduled).
    public func schedulePass(at start: MonotonicInstant) {
        if idle {
            idle = false
            loop.reclaimVideoLoans()
            loop.camera = ReplayFrameSource(spec: spec, start: start)
            try? loop.camera.open()
        } else {
            passes.append(start)
        }
    }

    /// No pass: the scene from a year on, so the camera streams nothing until one is due.
    private static func clearGate(_ spec: SceneSpec, now: MonotonicInstant) -> ReplayFrameSource {
        var camera = ReplayFrameSource(spec: spec, start: now + .seconds(365 * 86_400))
        try? camera.open()
        return camera
    }

    /// Plays the scene once more so that the torso crosses the gate line at `crossing`, by
    /// the scene's truth (a scene without a crossing plays from `crossing`).
    public func schedulePass(crossingAt crossing: MonotonicInstant) {
        schedulePass(at: crossing - .seconds(spec.expectedCrossings.first?.time ?? 0))
    }

    /// The athlete's hand on the start button: pressed at `press`, let go at `release`,
    /// stamped like the kernel's edges.
    public func holdButton(from press: MonotonicInstant, releaseAt release: MonotonicInstant) {
        for (edge, at) in [(Edge.rising, press), (.falling, release)] {
            lineSequence += 1
            loop.lines.pending.append(LineEvent(role: .startButton, edge: edge, timestamp: at, lineSequence: lineSequence,
                                                globalSequence: lineSequence))
        }
    }

    /// One loop iteration at `now`, as `run` makes it: the page's commands and the race
    /// link, the frames due by `now`, then NTP and the page's status. The next pass starts
    /// once the clip has ended.
    public func step(now: MonotonicInstant) {
        services.beforeFrames(&loop, now: now)
        loop.camera.readyUntil = now
        loop.iterate(now: now)
        if loop.camera.state == .absent {
            if passes.isEmpty {
                idle = true
                loop.reclaimVideoLoans()
                loop.camera = Self.clearGate(spec, now: now)
            } else {
                loop.reclaimVideoLoans()
                loop.camera = ReplayFrameSource(spec: spec, start: passes.removeFirst())
                try? loop.camera.open()
            }
        }
        if idle { rerender(now: now) }
        // Between passes the camera still streams (a clear gate), as a real one would.
        services.afterFrames(loop, now: now, camera: .streaming, mode: mode)
    }

    /// A frame rate chosen on the page, taken while no pass plays: the next passes are
    /// rendered at it, as a gate reopens its camera between runs.
    private func rerender(now: MonotonicInstant) {
        guard let web, let clip, let f = web.takeFrameRateChange() else { return }
        guard let s = clip(Double(f)) else { return }
        spec = s
        loop.reclaimVideoLoans()
        loop.camera = Self.clearGate(s, now: now)
        mode = Self.modeText(s)
        web.server.hub.setDetail("camera", "demo clip \(s.width)x\(s.height) at \(f) fps")
        web.cameraOpened(&loop, fps: s.fps)
    }

    /// Ends the services (storage written, the host's end of session sent); the race
    /// link's summary line, if a link ran.
    public func stop() -> String? {
        cameraView?.stop()
        return services.stop()
    }
}
