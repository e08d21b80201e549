// SPDX-License-Identifier: Apache-2.0
// The camera's life on the loop: the wait for it at power-up, reopening with back-off, the
// frame rate chosen on the page and the thermal step-down.

public import Engine
public import GateConfig
public import GateCore
public import GateDaemon
public import LinuxHardware
public import Logging
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Keeps the V4L2 camera of a board with `[camera]` on the loop. Used on the loop's thread.
public final class CameraKeeper {
    private let config: CameraConfig
    private let log: Logger
    private let web: WebGate?
    private var backoff = ReopenBackoff()
    private var thermal: ThermalGovernor
    private var cameraFD: Int32 = -1
    private var framesAtReopen: UInt64 = 0
    private var nextThermal: MonotonicInstant
    private let thermalZone: String
    private var chosenRate: Int?
    /// How often the camera was reopened after it was lost or closed on purpose.
    public private(set) var reopens = 0

    public init(config: CameraConfig, thermalZone: String, web: WebGate?, now: MonotonicInstant, log: Logger) {
        self.config = config
        self.thermalZone = thermalZone
        self.web = web
        self.log = log
        thermal = ThermalGovernor(fps: config.fps)
        nextThermal = now
    }

    /// The SoC's temperature, when the board's thermal zone reads.
    public func socCelsius() -> Double? {
        (try? String(contentsOfFile: thermalZone, encoding: .utf8)).flatMap(ThermalGovernor.parseThermalZone)
    }

    /// Waits until `camera` opens. A gate powered on without its camera waits as long as it
    /// takes: each retry extends systemd's start timeout (EXTEND_TIMEOUT_USEC), so the
    /// service stays "activating" instead of being killed and restarted every
    /// TimeoutStartSec, and a start-up that hangs still times out. The status file shows the
    /// wait. False when a stop signal or `until` came first.
    public static func waitForCamera(_ camera: inout V4L2FrameSource, config: CameraConfig, epoll: inout EpollLoop,
                                     notify: borrowing SystemdNotify, status: StatusFile, until end: MonotonicInstant?,
                                     log: Logger, waiting: (String) -> Void = { _ in }) -> Bool {
        var backoff = ReopenBackoff()
        var lastWarning: (text: String, at: MonotonicInstant)?
        while true {
            do {
                try camera.open()
                return true
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
                waiting("The camera is not there (\(text)): plug it in, or fix [camera] device in the board file. The gate starts by itself once it opens.")
                let extend = (delay.nanoseconds + Span.seconds(30).nanoseconds) / 1000
                notify.send("EXTEND_TIMEOUT_USEC=\(extend)\nSTATUS=waiting for the camera \(config.device) (\(camera.state))")
                status.write("""
                    updated_mono_ns: \(now.nanoseconds)
                    pid: \(getpid())
                    phase: waiting for the camera
                    camera: \(camera.state): \(text)
                    what_to_do: plug the camera in (or fix [camera] device in the board file); the gate starts by itself once it opens

                    """)
                if let end, now >= end { return false }
                _ = epoll.wait(until: now + delay)
                if let signal = EpollLoop.stopSignal {
                    log.notice("stopped by signal \(signal) while waiting for the camera")
                    return false
                }
            }
        }
    }

    /// A frame rate chosen between runs, as the page chooses one: taken on the next
    /// wake-up (the camera is reopened at it).
    public func chooseFrameRate(_ fps: Int) { chosenRate = fps }

    /// Puts the open camera's descriptor on `epoll`.
    public func started<C: ApplianceCamera & ~Copyable, L: LineInputs & LineOutputs & ~Copyable, S: Beeper & ~Copyable>(
        _ loop: borrowing GateLoop<C, L, S>, epoll: borrowing EpollLoop) {
        cameraFD = loop.camera.fileDescriptor
        framesAtReopen = loop.camera.framesDelivered
        try? epoll.add(cameraFD)
    }

    /// Once per wake-up, after the frames: a lost camera (gone, taken, closed by an error,
    /// or silent for seconds) is taken off the loop and reopened with back-off, which
    /// resets once frames flow again, so a camera that opens but stays silent is retried
    /// ever more slowly. A frame rate chosen on the page, and the SoC's heat, close the
    /// camera here; the lost-camera path reopens it at the new rate on the next wake-up.
    public func service<C: ApplianceCamera & ~Copyable, L: LineInputs & LineOutputs & ~Copyable, S: Beeper & ~Copyable>(
        _ loop: inout GateLoop<C, L, S>, epoll: borrowing EpollLoop, now: MonotonicInstant) {
        if let reason = CameraRecovery.reason(state: loop.camera.state, isOpen: loop.camera.fileDescriptor >= 0,
                                              lastFrame: loop.camera.lastFrameAt, now: now) {
            if cameraFD >= 0 {
                close(&loop, epoll: epoll)
                backoff.failed(at: now)
                log.warning("camera lost (\(reason)); reopening")
                web?.cameraProblem("The camera was lost (\(reason)): check its cable and plug it back in. The gate reopens it by itself; no result is lost.")
            }
            if backoff.isDue(now: now) { reopen(&loop, epoll: epoll, now: now) }
        } else {
            loop.camera.checkSignal(now: now)
            if backoff.failures > 0, loop.camera.framesDelivered > framesAtReopen { backoff.succeeded() }
        }
        if let f = chosenRate ?? web?.takeFrameRateChange() {
            chosenRate = nil
            frameRateChosen(f, &loop, epoll: epoll)
        }
        if now >= nextThermal {
            nextThermal = now + .seconds(5)
            if let celsius = socCelsius(), let fps = thermal.update(celsius: celsius, at: now.seconds) {
                log.warning("SoC at \(celsius) C: camera to \(fps) fps")
                close(&loop, epoll: epoll)
                loop.camera.request.fps = Double(fps)
            }
        }
    }

    private func reopen<C: ApplianceCamera & ~Copyable, L: LineInputs & LineOutputs & ~Copyable, S: Beeper & ~Copyable>(
        _ loop: inout GateLoop<C, L, S>, epoll: borrowing EpollLoop, now: MonotonicInstant) {
        do {
            try loop.camera.open()
            framesAtReopen = loop.camera.framesDelivered
            cameraFD = loop.camera.fileDescriptor
            try? epoll.add(cameraFD)
            reopens += 1
            log.notice("camera back")
            web?.cameraProblem(nil)
            web?.cameraOpened(&loop, fps: loop.camera.mode?.intervals.first?.fps ?? loop.camera.request.fps, offered: loop.camera.offeredRates)
        } catch {
            backoff.failed(at: now)
        }
    }

    private func frameRateChosen<C: ApplianceCamera & ~Copyable, L: LineInputs & LineOutputs & ~Copyable, S: Beeper & ~Copyable>(
        _ f: Int, _ loop: inout GateLoop<C, L, S>, epoll: borrowing EpollLoop) {
        if let e = config.exposureMicroseconds, e > 1_000_000 / f {
            log.warning("the page chose \(f) fps, but the board's exposure_us \(e) is longer than a frame at that rate; the camera stays at \(loop.camera.request.fps) fps")
            return
        }
        log.notice("the page chose \(f) fps: reopening the camera")
        thermal = ThermalGovernor(fps: f)
        close(&loop, epoll: epoll)
        loop.camera.request.fps = Double(f)
    }

    private func close<C: ApplianceCamera & ~Copyable, L: LineInputs & LineOutputs & ~Copyable, S: Beeper & ~Copyable>(
        _ loop: inout GateLoop<C, L, S>, epoll: borrowing EpollLoop) {
        if cameraFD >= 0 { epoll.remove(cameraFD) }
        cameraFD = -1
        loop.closeCamera()
    }
}
