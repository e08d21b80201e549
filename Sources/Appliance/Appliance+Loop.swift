// SPDX-License-Identifier: Apache-2.0
// The appliance's parts put together around the gate loop, and the loop itself.

import Detector
public import Engine
import FFmpegVideo
import Foundation
import GateConfig
public import GateCore
import GateDaemon
public import LinuxHardware
import Logging
import SQLiteStore
import VideoDelay
import VideoService
import WebUI

#if canImport(Glibc)
import Glibc
#endif

extension Appliance {
    /// Everything around the loop, started in order: storage, MQTT, the page, the camera's
    /// parts (with a frame), the areas, then the NTP server and the race link.
    struct Parts {
        var storage: GateStorage
        var web: WebGate?
        var features: ApplianceFeatures
        var services: GateServices
        var video: DelayVideoSwitch?
        var keeper: CameraKeeper?
    }

    func runLoop<C: ApplianceCamera & ~Copyable, L: LineInputs & LineOutputs & ~Copyable>(
        _ made: consuming GateLoop<C, L, ALSABeeper>, epoll: inout EpollLoop, frame: FrameSize?) throws(ApplianceError) {
        var loop = made
        let stateFile = settings.stateDirectory + "/run.state"
        if let saved = RunState.load(path: stateFile), let restored = Engine(config: settings.engine, restoring: saved) {
            loop.engine = restored
            log.notice("resumed the run in progress from \(stateFile)")
        }
        let parts = try assemble(&loop, epoll: epoll, frame: frame)
        // The page starts from the restored phase (a run in progress survives a restart).
        parts.web?.observe(.action(.phase(loop.engine.phase), Sys.monotonicNow()))
        parts.keeper?.started(loop, epoll: epoll)
        for fd in loop.lines.fileDescriptors { try? epoll.add(fd) }
        parts.features.startAll()
        let start = Sys.monotonicNow()
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
        iterate(&loop, parts: parts, epoll: &epoll, stateFile: stateFile, start: start)
        loop.closeCamera()
        if let summary = parts.services.stop() { log.notice("\(summary)") }
        parts.video?.stop()
        parts.features.stopAll()
        writeStopped(phase: "\(loop.engine.persistentState)")
        log.notice("stopped: \(loop.stats.frames) frames, \(loop.stats.dropped) dropped, \(loop.stats.crossings) crossings")
    }

    /// The loop: wake at least every 10 ms so timers (pulses, countdown) fire on time.
    private func iterate<C: ApplianceCamera & ~Copyable, L: LineInputs & LineOutputs & ~Copyable>(
        _ loop: inout GateLoop<C, L, ALSABeeper>, parts: Parts, epoll: inout EpollLoop, stateFile: String, start: MonotonicInstant) {
        var lastState = loop.engine.persistentState
        var nextWatchdog = start
        var nextStatus = start
        let hasCamera = parts.keeper != nil
        while true {
            let (now, _) = epoll.wait(until: Sys.monotonicNow() + .milliseconds(10))
            if let end = options.until, now >= end { break }
            if let signal = EpollLoop.stopSignal {
                log.notice("stopping on signal \(signal)")
                notify.send("STOPPING=1")
                break
            }
            parts.services.beforeFrames(&loop, now: now)
            loop.iterate(now: now)
            parts.features.service(&loop, now: now)
            let mode = hasCamera ? loop.camera.mode.map { "\($0)" } ?? "" : "none"
            parts.services.afterFrames(loop, now: now, camera: loop.camera.state, mode: mode)
            let state = loop.engine.persistentState
            if state != lastState {
                lastState = state
                RunState.save(state, path: stateFile, log: log)
            }
            if now >= nextStatus {
                nextStatus = now + .seconds(1)
                writeStatus(loop, now: now, hasCamera: hasCamera, features: parts.features)
            }
            if now >= nextWatchdog {
                notify.send("WATCHDOG=1")
                nextWatchdog = now + .seconds(2)
            }
            parts.keeper?.service(&loop, epoll: epoll, now: now)
            // The delay mode switched on the page (between runs).
            parts.video?.service(&loop)
        }
    }

    private func writeStatus<C: ApplianceCamera & ~Copyable, L: LineInputs & LineOutputs & ~Copyable>(
        _ loop: borrowing GateLoop<C, L, ALSABeeper>, now: MonotonicInstant, hasCamera: Bool, features: ApplianceFeatures) {
        let st = loop.lastStatus
        let camera = hasCamera ? "\(loop.camera.state) \(loop.camera.mode.map { "\($0)" } ?? "")"
            : "none (\(settings.board.source) has no [camera])"
        status.write("""
            updated_mono_ns: \(now.nanoseconds)
            pid: \(getpid())
            phase: \(loop.engine.persistentState)
            start_type: \(settings.engine.startType.rawValue)
            camera: \(camera)
            areas: \(features.all.isEmpty ? "none" : features.all.map(\.name).joined(separator: " "))
            audio: \(loop.sound.state)\(loop.sound.warning.map { " (\($0))" } ?? "")
            ready_led: \(loop.statusLight.rawValue)
            gate: armed=\(st.armed) ready=\(st.ready) clear=\(st.clear) too_far=\(st.tooFar) shaking=\(st.shaking) blob_height=\(fixedPoint(st.blobHeight, digits: 2)) motion=\(fixedPoint(st.motion, digits: 3))
            frames: \(loop.stats.frames) dropped \(loop.stats.dropped) crossings \(loop.stats.crossings)
            last_crossing: \(latest.crossing)
            last_result: \(latest.result)

            """)
    }
}
