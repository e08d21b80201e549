// SPDX-License-Identifier: Apache-2.0
// The appliance running: its gate loop and parts, one wake-up's work at a time.

import Detector
public import Engine
import Foundation
public import GateConfig
public import GateCore
public import GateSim
public import GateDaemon
public import LinuxHardware
import Logging
import SQLiteStore
import VideoDelay
import WebUI

#if canImport(Glibc)
import Glibc
#endif

/// The sound port as the appliance reports it: `ALSABeeper`, or a stand-in in tests.
public protocol ApplianceSound: Beeper, ~Copyable {
    /// Why the sound is off or degraded, for the status file; nil when it is fine.
    var warning: String? { get }
}

extension ALSABeeper: ApplianceSound {}

/// The recording stand-in, for loops driven in tests: never degraded.
extension RecordingBeeper: ApplianceSound {
    public var warning: String? { nil }
}

/// Everything around the loop, started in order: storage, MQTT, the page, the camera's
/// parts (with a frame), the areas, then the NTP server and the race link.
public struct ApplianceParts {
    /// Storage, the page and the areas, started before the camera.
    public let base: ApplianceBase
    public var storage: GateStorage { base.storage }
    public var web: WebGate? { base.web }
    public var features: ApplianceFeatures { base.features }
    public let services: GateServices
    public let video: DelayVideoSwitch?
    /// The camera's keeper; nil on a board without a camera.
    public let keeper: CameraKeeper?
}

/// The appliance running: the gate loop, its parts and the epoll loop they wait on.
/// `step(now:)` is one wake-up's work, at `now`, without waiting, so tests drive the loop
/// that runs on a Pi in virtual time; `run()` is the daemon's loop around it.
public final class ApplianceLoop<C: ApplianceCamera & ~Copyable, L: LineInputs & LineOutputs & ~Copyable, S: ApplianceSound & ~Copyable> {
    public var loop: GateLoop<C, L, S>
    public let parts: ApplianceParts
    public private(set) var epoll: EpollLoop
    private let appliance: Appliance
    private let stateFile: String
    private var lastState: String
    private var nextWatchdog: MonotonicInstant
    private var nextStatus: MonotonicInstant
    private var stopped = false

    init(loop: consuming GateLoop<C, L, S>, parts: ApplianceParts, epoll: consuming EpollLoop, appliance: Appliance,
         stateFile: String, now: MonotonicInstant) {
        self.loop = loop
        self.parts = parts
        self.epoll = epoll
        self.appliance = appliance
        self.stateFile = stateFile
        lastState = self.loop.engine.persistentState
        nextWatchdog = now
        nextStatus = now
    }

    /// One wake-up at `now`: the page's commands and the race link, the frames, the areas'
    /// turns and cues, NTP and the page's status, the saved run state, the status file
    /// each second, the watchdog every 2 s, then the camera's upkeep and the delay mode.
    public func step(now: MonotonicInstant) {
        parts.services.beforeFrames(&loop, now: now)
        loop.iterate(now: now)
        parts.features.service(&loop, now: now)
        let mode = parts.keeper == nil ? "none" : loop.camera.mode.map { "\($0)" } ?? ""
        parts.services.afterFrames(loop, now: now, camera: loop.camera.state, mode: mode)
        let state = loop.engine.persistentState
        if state != lastState {
            lastState = state
            RunState.save(state, path: stateFile, log: appliance.log)
        }
        if now >= nextStatus {
            nextStatus = now + .seconds(1)
            appliance.status.write(statusText(now: now))
        }
        if now >= nextWatchdog {
            appliance.notify.send("WATCHDOG=1")
            nextWatchdog = now + .seconds(2)
        }
        parts.keeper?.service(&loop, epoll: epoll, now: now)
        // The delay mode switched on the page (between runs).
        parts.video?.service(&loop)
    }

    /// Wakes on the camera's and the buttons' descriptors, and at least every 10 ms so
    /// timers (pulses, the countdown) fire on time, until a stop signal or `until`; then
    /// stops in order.
    public func run(until end: MonotonicInstant?) {
        while true {
            let (now, _) = epoll.wait(until: Sys.monotonicNow() + .milliseconds(10))
            if let end, now >= end { break }
            if let signal = EpollLoop.stopSignal {
                appliance.log.notice("stopping on signal \(signal)")
                appliance.notify.send("STOPPING=1")
                break
            }
            step(now: now)
        }
        stop()
    }

    /// Closes the camera, ends the services (storage written), the delay mode and every
    /// area, and writes the status file's last word. Once; later calls do nothing.
    public func stop() {
        guard !stopped else { return }
        stopped = true
        loop.closeCamera()
        if let summary = parts.services.stop() { appliance.log.notice("\(summary)") }
        parts.video?.stop()
        parts.features.stopAll()
        appliance.writeStopped(phase: "\(loop.engine.persistentState)")
        appliance.log.notice("stopped: \(loop.stats.frames) frames, \(loop.stats.dropped) dropped, \(loop.stats.crossings) crossings")
    }

    private func statusText(now: MonotonicInstant) -> String {
        let st = loop.lastStatus
        let camera = parts.keeper == nil ? "none (\(appliance.settings.board.source) has no [camera])"
            : "\(loop.camera.state) \(loop.camera.mode.map { "\($0)" } ?? "")"
        let areas = parts.features.all.isEmpty ? "none" : parts.features.all.map(\.name).joined(separator: " ")
        return """
            updated_mono_ns: \(now.nanoseconds)
            pid: \(getpid())
            phase: \(loop.engine.persistentState)
            start_type: \(appliance.settings.engine.startType.rawValue)
            camera: \(camera)
            areas: \(areas)
            start_button: \(parts.features.buttonOwner(loop))
            audio: \(loop.sound.state)\(loop.sound.warning.map { " (\($0))" } ?? "")
            ready_led: \(loop.statusLight.rawValue)
            gate: armed=\(st.armed) ready=\(st.ready) clear=\(st.clear) too_far=\(st.tooFar) shaking=\(st.shaking) blob_height=\(fixedPoint(st.blobHeight, digits: 2)) motion=\(fixedPoint(st.motion, digits: 3))
            frames: \(loop.stats.frames) dropped \(loop.stats.dropped) crossings \(loop.stats.crossings)
            last_crossing: \(appliance.latest.crossing)
            last_result: \(appliance.latest.result)

            """
    }
}

extension Appliance {
    /// Starts the appliance around `made`: restores a run in progress saved during this
    /// boot, makes and starts its parts, arms the gate (with a camera) and says it is
    /// ready. `frame` is the camera's frame once it opened; nil on a board without one.
    /// `run(lines:)` calls this with the real adapters; tests call it with stand-ins.
    /// `base` is what came up before the camera (`assembleBase`); nil makes it here.
    public func start<C: ApplianceCamera & ~Copyable, L: LineInputs & LineOutputs & ~Copyable, S: ApplianceSound & ~Copyable>(
        _ made: consuming GateLoop<C, L, S>, frame: CameraFrame?, base: ApplianceBase? = nil, epoll: consuming EpollLoop,
        now start: MonotonicInstant) throws(ApplianceError) -> ApplianceLoop<C, L, S> {
        var loop = made
        let stateFile = settings.stateDirectory + "/run.state"
        if let saved = RunState.load(path: stateFile), let restored = Engine(config: settings.engine, restoring: saved) {
            loop.engine = restored
            log.notice("resumed the run in progress from \(stateFile)")
        }
        let made: ApplianceBase
        if let base { made = base } else { made = assembleBase(epoll: epoll, frame: frame) }
        let parts = try assemble(&loop, base: made, epoll: epoll, frame: frame, now: start)
        // The page starts from the restored phase (a run in progress survives a restart).
        parts.web?.observe(.action(.phase(loop.engine.phase), start))
        parts.keeper?.started(loop, epoll: epoll)
        for fd in loop.lines.fileDescriptors { try? epoll.add(fd) }
        if !parts.features.isStarted { parts.features.startAll() }
        // The start button goes to the area that asks for it from the first wake-up on.
        parts.features.service(&loop, now: start)
        if let frame {
            if case .idle = loop.engine.phase { loop.command(.arm, now: start) }
            notify.send("READY=1\nSTATUS=armed: \(settings.engine.startType.rawValue) start, \(frame.width)x\(frame.height)")
            log.notice("ready: camera \(frame.width)x\(frame.height), gate x \(settings.detectorConfig(width: frame.width).gateX), \(settings.engine.startType.rawValue) start")
        } else {
            let areas = parts.features.all.map(\.name).joined(separator: ", ")
            notify.send("READY=1\nSTATUS=ready: no camera; \(areas.isEmpty ? "the page only" : areas)")
            log.notice("ready: no camera on this board; \(areas.isEmpty ? "no area is on ([gps], [rowing] or [mqtt] turn one on)" : "on: " + areas)")
        }
        if let keeper = parts.keeper {
            parts.services.link?.socCelsius = { keeper.socCelsius() }
            if keeper.socCelsius() == nil {
                log.notice("no SoC temperature in \(settings.board.thermalZone) ([board] thermal_zone): the frame rate is not lowered when hot")
            }
        }
        return ApplianceLoop(loop: loop, parts: parts, epoll: epoll, appliance: self, stateFile: stateFile, now: start)
    }
}
