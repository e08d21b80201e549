// SPDX-License-Identifier: Apache-2.0
// The appliance's own loop, as `sprintgate run` runs it on a Pi, driven in-process in
// virtual time: reps with no tap, a camera pulled out and plugged back, the thermal step
// down, a frame rate chosen between runs, and boards without a camera.

import Appliance
import Detector
import Engine
import Foundation
import Glibc
import GateConfig
import GateCore
import GateDaemon
import GateSim
import GPSD
import LinuxHardware
import Logging
import SQLiteStore
import Testing
import VideoService
import WebUI

/// A camera playing a synthetic scene as a real one streams: a frame every 1/fps from
/// the moment it opens (the scene's empty first frame between passes, the scene itself
/// during each scheduled pass). Pulled out (`plugged = false`) it goes absent at the next
/// read and refuses to open, as a USB camera does, until plugged back.
struct SceneCamera: ApplianceCamera, ~Copyable {
    let spec: SceneSpec
    private let renderer: SceneRenderer
    private let buffer: UnsafeMutableBufferPointer<UInt8>
    var request: CameraRequest
    private(set) var state = DeviceState.closed
    private(set) var lastFrameAt: MonotonicInstant?
    private(set) var framesDelivered: UInt64 = 0
    private(set) var opens = 0
    var plugged = true
    /// Only frames stamped by this instant are ready (the test sets it to the loop's now).
    var readyUntil = MonotonicInstant(nanoseconds: 0)
    /// Instants the scene's passes start at.
    var passes: [MonotonicInstant] = []
    private var origin = MonotonicInstant(nanoseconds: 0)
    private var next = 0
    /// A descriptor to stand for the device's while streaming (epoll refuses it; the
    /// test never waits on it).
    private let device = Glibc.open("/dev/null", O_RDONLY)

    init(spec: SceneSpec) {
        self.spec = spec
        renderer = SceneRenderer(spec: spec)
        buffer = .allocate(capacity: spec.width * spec.height)
        request = CameraRequest(width: spec.width, height: spec.height, fps: spec.fps)
    }

    deinit {
        buffer.deallocate()
        Glibc.close(device)
    }

    var fileDescriptor: Int32 { state == .streaming ? device : -1 }
    var exposure: Span? { nil }
    /// As a webcam lists them: its rates at every size, 25 and 50 among them.
    var offeredRates: [Int] { state == .streaming ? [25, 30, 50, 60] : [] }
    var mode: CameraMode? {
        state == .streaming ? CameraMode(format: .gray8, width: spec.width, height: spec.height, intervals: [FrameInterval(fps: Int(spec.fps))]) : nil
    }

    mutating func open() throws(DeviceError) {
        opens += 1
        guard plugged else {
            state = .absent
            throw DeviceError(operation: "open", errno: 19, path: "/dev/scene-camera", detail: "unplugged")
        }
        state = .streaming
        origin = readyUntil
        next = 0
        lastFrameAt = nil
    }

    mutating func nextFrame() -> FrameLease? {
        guard state == .streaming else { return nil }
        guard plugged else {
            state = .absent
            return nil
        }
        let t = origin + .seconds(Double(next) / spec.fps)
        guard t <= readyUntil else { return nil }
        var index = 0
        let length = Double(spec.frameCount) / spec.fps
        if let p = passes.last(where: { $0 <= t }), t.since(p).seconds < length {
            index = min(spec.frameCount - 1, Int((t.since(p).seconds * spec.fps).rounded()))
        }
        renderer.render(frame: index, into: buffer)
        let view = FrameView(base: UnsafeRawPointer(buffer.baseAddress!), width: spec.width, height: spec.height,
                             bytesPerRow: spec.width, format: .gray8, sequence: UInt64(next), timestamp: t)
        next += 1
        framesDelivered += 1
        lastFrameAt = t
        return FrameLease(view: view, slot: 0, droppedBefore: 0)
    }

    mutating func release(_ lease: FrameLease) {}
    mutating func close() { state = .closed }
    mutating func checkSignal(now: MonotonicInstant) {}
}

@Suite(.serialized) struct ApplianceLoopTests {
    static let spec = SceneCatalog.scene("sprint", fps: 60, variant: 2)!
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A board file like the generic PC's, with the thermal zone at `thermal` and, with
    /// `camera` false, no `[camera]`; and a gate settings file over it with `body`.
    static func settings(_ dir: StateDir, camera: Bool = true, thermal: String? = nil, gate: String = "", body: String = "") throws -> GateSettings {
        var board = try String(contentsOf: repo.appendingPathComponent("boards/generic-usb.toml"), encoding: .utf8)
        if !camera, let cut = board.range(of: "[camera]\n"), let end = board.range(of: "[audio]\n") {
            board.removeSubrange(cut.lowerBound ..< end.lowerBound)
        }
        if let thermal { board = board.replacingOccurrences(of: "[board]\n", with: "[board]\nthermal_zone = \"\(thermal)\"\n") }
        try board.write(toFile: dir.path + "/board.toml", atomically: true, encoding: .utf8)
        return try GateSettings(toml: """
            board = "\(dir.path)/board.toml"
            state_dir = "\(dir.path)"
            [gate]
            gate_x = \(spec.gateX)
            \(gate)
            \(body)
            """, file: "gate.toml")
    }

    static func options() -> ApplianceOptions {
        var o = ApplianceOptions()
        o.webPort = 0
        o.ntpPort = 0
        o.level = .critical
        return o
    }

    /// The appliance over a `SceneCamera`, started at `t0`.
    static func start(_ settings: GateSettings, t0: MonotonicInstant, options: ApplianceOptions = options()) throws
        -> ApplianceLoop<SceneCamera, FakeLines, RecordingBeeper> {
        let appliance = Appliance(settings: settings, options: options)
        var config = settings.detectorConfig(width: spec.width)
        config.rowReadout = .seconds(spec.rowReadout)
        // Opened before the appliance starts, as `run` opens the real one.
        var sceneCamera = SceneCamera(spec: spec)
        sceneCamera.readyUntil = t0
        try sceneCamera.open()
        let loop = GateLoop(camera: sceneCamera, lines: FakeLines(), sound: RecordingBeeper(),
                            detector: PhotoFinishDetector(config: config, inputWidth: spec.width, inputHeight: spec.height),
                            engine: Engine(config: settings.engine))
        var camera = try #require(settings.board.camera)
        camera.width = spec.width
        camera.height = spec.height
        let running = try appliance.start(loop, frame: Appliance.CameraFrame(width: spec.width, height: spec.height, config: camera),
                                          epoll: try EpollLoop(), now: t0)
        return running
    }

    /// Steps every 5 ms from `from` to `to`, the camera's frames ready as they would be.
    static func steps(_ a: ApplianceLoop<SceneCamera, FakeLines, RecordingBeeper>, from: MonotonicInstant, to: MonotonicInstant,
                      at: (MonotonicInstant) -> Void = { _ in }) {
        var t = from
        while t < to {
            a.loop.camera.readyUntil = t
            at(t)
            a.step(now: t)
            t = t + .milliseconds(5)
        }
    }

    /// A button-release rep: pressed at `press`, let go 0.3 s later, the torso at the line 3 s after the press.
    static func rep(_ a: ApplianceLoop<SceneCamera, FakeLines, RecordingBeeper>, press: MonotonicInstant, sequence: inout UInt32) {
        for (edge, at) in [(Edge.rising, press), (.falling, press + .milliseconds(300))] {
            sequence += 1
            a.loop.lines.pending.append(LineEvent(role: .startButton, edge: edge, timestamp: at, lineSequence: sequence, globalSequence: sequence))
        }
        a.loop.camera.passes.append(press + .seconds(3) - .seconds(spec.expectedCrossings[0].time))
    }

    static func stored(_ a: ApplianceLoop<SceneCamera, FakeLines, RecordingBeeper>) throws -> [Double] {
        try a.parts.storage.book.history(HistoryQuery()).map(\.seconds).sorted()
    }

    @Test("a lone gate times five reps with no tap, each about 2.7 s, and stores all five; the status file says what it did")
    func fiveRepsNoTap() throws {
        let dir = StateDir()
        let settings = try Self.settings(dir, gate: "start_type = \"button-release\"")
        let t0 = MonotonicInstant(nanoseconds: 5_000_000_000)
        let a = try Self.start(settings, t0: t0)
        var sequence: UInt32 = 0
        for i in 0 ..< 5 { Self.rep(a, press: t0 + .seconds(2 + 9 * Double(i)), sequence: &sequence) }
        Self.steps(a, from: t0, to: t0 + .seconds(48))
        a.stop()
        let times = try Self.stored(a)
        #expect(times.count == 5, "\(times)")
        for t in times { #expect(abs(t - 2.7) < 0.05, "\(times)") }
        let status = try String(contentsOfFile: dir.path + "/status.txt", encoding: .utf8)
        #expect(status.contains("stopped_mono_ns"), "\(status)")
    }

    @Test("the camera pulled out mid-session: taken off the loop, reopened with back-off once it is back, and the next rep is timed")
    func cameraLostAndBack() throws {
        let dir = StateDir()
        let settings = try Self.settings(dir, gate: "start_type = \"button-release\"")
        let t0 = MonotonicInstant(nanoseconds: 5_000_000_000)
        let a = try Self.start(settings, t0: t0)
        var sequence: UInt32 = 0
        Self.rep(a, press: t0 + .seconds(1), sequence: &sequence)
        var framesWhileOut: UInt64 = 0
        var opensWhileOut = 0
        Self.steps(a, from: t0, to: t0 + .seconds(20)) { t in
            if t == t0 + .seconds(6) { a.loop.camera.plugged = false }
            if t == t0 + .seconds(7) { framesWhileOut = a.loop.stats.frames }
            if t == t0 + .seconds(11) {
                #expect(a.loop.stats.frames == framesWhileOut, "frames while the camera was out")
                opensWhileOut = a.loop.camera.opens
                a.loop.camera.plugged = true
                Self.rep(a, press: t0 + .seconds(13), sequence: &sequence)
            }
        }
        let keeper = try #require(a.parts.keeper)
        // Retried with back-off while out (0.5 s doubling: a handful of tries in 5 s, not 500).
        #expect(opensWhileOut >= 3 && opensWhileOut <= 8, "opened \(opensWhileOut) times")
        #expect(keeper.reopens == 1)
        #expect(a.loop.camera.state == .streaming)
        #expect(a.loop.stats.frames > framesWhileOut + 300, "frames after it came back")
        a.stop()
        let times = try Self.stored(a)
        #expect(times.count == 2, "\(times)")
        for t in times { #expect(abs(t - 2.7) < 0.05, "\(times)") }
    }

    @Test("the SoC at 80 °C steps the camera from 60 to 30 fps (closed and reopened at it); a rate chosen between runs reopens it at that rate; the page offers the camera's own rates")
    func thermalAndFrameRate() throws {
        let dir = StateDir()
        let zone = dir.path + "/temp"
        try "50000\n".write(toFile: zone, atomically: true, encoding: .utf8)
        let settings = try Self.settings(dir, thermal: zone, body: "[camera]\nfps = 60\n")
        let t0 = MonotonicInstant(nanoseconds: 5_000_000_000)
        var options = Self.options()
        options.webHost = "127.0.0.1"
        options.webPort = Self.closedPort()
        let a = try Self.start(settings, t0: t0, options: options)
        Self.steps(a, from: t0, to: t0 + .seconds(6))
        #expect(a.loop.camera.request.fps == 60)
        let page = try #require(a.parts.web)
        #expect(page.bridge.settings.frameRates == [25, 30, 50, 60] && page.bridge.settings.runningFPS == 60)
        try "80000\n".write(toFile: zone, atomically: true, encoding: .utf8)
        Self.steps(a, from: t0 + .seconds(6), to: t0 + .seconds(12))
        let keeper = try #require(a.parts.keeper)
        #expect(a.loop.camera.request.fps == 30)
        #expect(keeper.reopens == 1 && a.loop.camera.state == .streaming)
        try "50000\n".write(toFile: zone, atomically: true, encoding: .utf8)
        keeper.chooseFrameRate(60)
        Self.steps(a, from: t0 + .seconds(12), to: t0 + .seconds(14))
        #expect(a.loop.camera.request.fps == 60)
        #expect(keeper.reopens == 2 && a.loop.camera.state == .streaming)
        #expect(page.bridge.settings.frameRates == [25, 30, 50, 60], "the rates the camera offers, after each reopen")
        a.stop()
    }

    @Test("a GPS-only board and a rowing-only board: no camera, their area on, the loop stepped and stopped; the status file says camera none and names the area")
    func boardsWithoutACamera() throws {
        for (body, area) in [("[gps]\nport = \(Self.closedPort())\n", "gps"), ("[rowing]\ncontroller = 15\n", "rowing")] {
            let dir = StateDir()
            let settings = try Self.settings(dir, camera: false, body: body)
            #expect(settings.board.camera == nil)
            let appliance = Appliance(settings: settings, options: Self.options())
            let loop = GateLoop(camera: NoCamera(), lines: FakeLines(), sound: RecordingBeeper(),
                                detector: NoCamera.detector(settings.detectorConfig(width: NoCamera.width)), engine: Engine(config: settings.engine))
            let t0 = MonotonicInstant(nanoseconds: 5_000_000_000)
            let a = try appliance.start(loop, frame: nil, epoll: try EpollLoop(), now: t0)
            #expect(a.parts.keeper == nil && a.parts.video == nil)
            #expect(a.parts.features.all.map(\.name) == [area])
            var t = t0
            while t < t0 + .seconds(3) {
                a.step(now: t)
                t = t + .milliseconds(10)
            }
            // Not armed: there is no camera to time with.
            #expect(a.loop.engine.phase == .idle)
            let status = try String(contentsOfFile: dir.path + "/status.txt", encoding: .utf8)
            #expect(status.contains("camera: none") && status.contains("areas: \(area)"), "\(status)")
            a.stop()
        }
    }

    @Test("each area (GPS with the ski logger, rowing with four ergs, MQTT) started and stopped ten times: each is freed once stopped, and resident memory ends within a few MB of where it started")
    func areasOnAndOff() throws {
        let dir = StateDir()
        let store = try RunStore(directory: dir.path, logger: LocalRaceTests.log)
        let cues = FeedbackCues.cues()
        var mqtt = MQTTSettings()
        mqtt.port = Self.closedPort()
        let makers: [(String, () throws -> any Feature)] = [
            ("gps", { GPSFeature(gpsd: GPSDConfig(port: UInt16(Self.closedPort())), store: store, web: nil, cues: cues) }),
            ("rowing", { RowingFeature(syntheticErgs: 4, speed: 20, store: store, web: nil, mqtt: nil) }),
            ("mqtt", { try MQTTFeature(settings: mqtt, stateDirectory: dir.path, commits: CommitRelay()) }),
        ]
        for (name, make) in makers {
            var before = 0.0
            for round in 0 ..< 10 {
                var feature: (any Feature)? = try make()
                weak let held = feature as AnyObject?
                // The rowing area's hub, which its ergs deliver to, goes with it.
                weak let hub = (feature as? RowingFeature)?.hub
                feature?.start()
                usleep(50_000)
                feature?.stop()
                feature = nil
                // Its threads let go of it as they end, a moment later.
                let deadline = Date().addingTimeInterval(5)
                while held != nil || hub != nil, Date() < deadline { usleep(1_000) }
                #expect(held == nil && hub == nil, "\(name), round \(round): the area outlived its stop")
                if round == 0 { before = residentMB() }
            }
            let after = residentMB()
            print("\(name) on and off ten times: \(before) MB after the first round, \(after) MB after the tenth")
            #expect(after - before < 8, "\(name): \(before) MB after the first round, \(after) MB after the tenth")
        }
    }

    @Test("the start button by name: with [ski] button it goes to the GPS area's ski logger; the delay mode without mark_button leaves it there, with mark_button takes it for its marks and gives it back when switched off")
    func startButtonRouting() throws {
        for markButton in [false, true] {
            let dir = StateDir()
            let settings = try Self.settings(dir, body: """
                [gps]
                port = \(Self.closedPort())
                [ski]
                button = true
                [video]
                enabled = true
                delay_s = 2
                mark_button = \(markButton)
                clickers = false
                """)
            var options = Self.options()
            options.webHost = "127.0.0.1"
            options.webPort = Self.closedPort()
            let t0 = MonotonicInstant(nanoseconds: 5_000_000_000)
            let a = try Self.start(settings, t0: t0, options: options)
            Self.steps(a, from: t0, to: t0 + .milliseconds(100))
            let video = try #require(a.parts.video?.video, "the delay mode is on")
            #expect(a.loop.videoMarks === video.marks)
            #expect(a.parts.features.buttonOwner(a.loop) == (markButton ? "video" : "gps"))
            let status = try String(contentsOfFile: dir.path + "/status.txt", encoding: .utf8)
            #expect(status.contains("start_button: \(markButton ? "video" : "gps")"), "\(status)")
            a.parts.video?.turnOff(&a.loop)
            Self.steps(a, from: t0 + .milliseconds(100), to: t0 + .milliseconds(200))
            #expect(a.parts.features.buttonOwner(a.loop) == "gps")
            a.stop()
        }
    }

    /// A TCP port nobody listens on.
    static func closedPort() -> Int {
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(s) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(s, $0, &len) } }
        return Int(UInt16(bigEndian: addr.sin_port))
    }
}
