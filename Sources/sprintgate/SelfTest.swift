// SPDX-License-Identifier: Apache-2.0
// `sprintgate selftest` and `sprintgate record`: checks a user can act on, and recordings
// of what the camera and lines delivered.

import ArgumentParser
import Engine
import FFmpegVideo
import Foundation
import GateConfig
import GateCore
import GateDaemon
import GateSim
import GATT
import GPSD
import GPSTiming
import LinuxHardware
import Logging
import Rowing

/// One row of the self-test table.
struct CheckRow {
    enum Result: String { case pass = "PASS", warn = "WARN", fail = "FAIL", skip = "SKIP" }
    var check: String
    var result: Result
    var detail: String
}

struct SelfTestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "selftest",
        abstract: "Check camera, GPIO lines, audio, clock, video encoders, the TV, the GPS receiver and the rowing hub's Bluetooth, and print a table of what to fix.")

    @Option(help: "Settings file.")
    var config: String = "/etc/sprintgate/gate.toml"

    @Option(help: "Seconds of camera streaming to measure.")
    var seconds: Double = 1.5

    @Flag(help: "Also set what the gate can set: the GPS receiver's rate, through gpsd (u-blox and other receivers gpsd drives).")
    var fix = false

    func run() throws {
        let settings = loadSettings(config)
        var rows: [CheckRow] = []
        rows.append(checkClock())
        if let camera = settings.board.camera {
            rows += checkCamera(camera)
        } else {
            rows.append(CheckRow(check: "camera", result: .skip,
                                 detail: "\(settings.board.source) has no [camera]: the sprint gate and the delayed video are off; GPS, ski and rowing run"))
        }
        rows += checkGPIO(settings.board)
        rows.append(checkAudio(settings.board.audio))
        rows += checkVideo(settings)
        rows.append(checkTV(settings))
        rows.append(checkGPS(settings))
        rows.append(checkBluetooth(settings))
        let w = max(8, rows.map(\.check.count).max() ?? 8)
        print("check".padding(w) + "  result  detail")
        for r in rows { print(r.check.padding(w) + "  " + r.result.rawValue.padding(6) + "  " + r.detail) }
        let failed = rows.filter { $0.result == .fail }.count
        print("")
        print(failed == 0 ? "all checks passed" : "\(failed) check(s) failed: fix what the detail says, then run selftest again")
        if failed > 0 { throw ExitCode(1) }
    }

    /// The GPS receiver through gpsd, when `[gps]` is set: fix, satellites, accuracy and
    /// the measured rate against the one asked for.
    func checkGPS(_ settings: GateSettings) -> CheckRow {
        guard let gps = settings.gps else { return CheckRow(check: "gps", result: .skip, detail: "no [gps] in the settings") }
        let config = GPSDConfig(host: gps.host, port: UInt16(gps.port), wantedRate: Double(gps.rateHz), setRate: fix)
        let status = GPSDReceiver.probe(config, seconds: max(seconds, fix ? 10 : 6), logger: Logger(label: "sprintgate.gps"))
        var (ok, detail) = status.verdict
        if ok == true, case .set(let h) = status.rateControl { detail += "; gpsd set the receiver to \(ReceiverStatus.hz(h)) fixes/s" }
        return CheckRow(check: "gps", result: ok == true ? .pass : ok == false ? .fail : .warn, detail: detail)
    }

    /// The rowing hub's Bluetooth adapter, when `[rowing]` is set: there, up, and a short
    /// scan for PM5s (the settings file's among them, when heard).
    func checkBluetooth(_ settings: GateSettings) -> CheckRow {
        guard let r = settings.rowing else { return CheckRow(check: "bluetooth", result: .skip, detail: "no [rowing] in the settings") }
        let name = "hci\(r.controller)"
        let address: BluetoothAddress
        do throws(BlueZError) {
            address = try BlueZController.address(r.controller)
            guard try BlueZController.isUp(r.controller) else {
                return CheckRow(check: "bluetooth", result: .fail,
                                detail: "\(name) (\(address)) is down: power it on (`bluetoothctl power on`, or `rfkill unblock bluetooth` if it is blocked)")
            }
        } catch {
            return CheckRow(check: "bluetooth", result: .fail, detail: "\(error)")
        }
        let scanner = PM5Scanner(controller: r.controller, logger: Logger(label: "sprintgate.rowing"), clock: { Sys.monotonicNow().seconds })
        scanner.scan(seconds: max(seconds, 6))
        while scanner.status.scanning { usleep(100_000) }
        let st = scanner.status
        if let problem = st.problem {
            return CheckRow(check: "bluetooth", result: .warn, detail: "\(name) (\(address)) is up; no scan: \(problem)")
        }
        let heard = Set(st.found.map(\.address))
        let missing = r.ergs.filter { !heard.contains($0) }
        var detail = "\(name) (\(address)) is up; a \(Int(max(seconds, 6))) s scan heard \(st.found.count) PM5s"
            + (st.found.isEmpty ? "" : ": " + st.found.map { ($0.name ?? "PM5") + " " + $0.address }.joined(separator: ", "))
        if !missing.isEmpty { detail += "; not heard from the settings' ergs: \(missing.joined(separator: ", ")) (wake them and open their Connect screen)" }
        return CheckRow(check: "bluetooth", result: missing.isEmpty ? .pass : .warn, detail: detail)
    }

    /// The H.264 encoders this FFmpeg has, opened at the camera's size and timed on two
    /// seconds of frames: whether the delayed video can keep up. Only a failure of the one
    /// `[video]` uses fails the self-test.
    func checkVideo(_ settings: GateSettings) -> [CheckRow] {
        guard let cam = settings.board.camera else {
            return [CheckRow(check: "video", result: .skip, detail: "no [camera] on this board: no delayed video")]
        }
        let fps = Double(cam.fps)
        let chosen = settings.video.map { $0.encoder(board: settings.board) }
        return H264EncoderKind.allCases.map { kind in
            let used = chosen == kind.rawValue
            let name = "video " + kind.rawValue
            guard kind.isBuiltIn else {
                return CheckRow(check: name, result: used ? .fail : .skip, detail: "this FFmpeg has no \(kind.rawValue) encoder")
            }
            do throws(FFmpegError) {
                let rate = try H264Encoder.throughput(kind, width: cam.width, height: cam.height, fps: fps, frames: Int(2 * fps))
                let detail = "\(Int(rate)) fps at \(cam.width)x\(cam.height) (the camera gives \(cam.fps))" + (used ? ", used by [video]" : "")
                if rate >= fps * 1.2 { return CheckRow(check: name, result: .pass, detail: detail) }
                return CheckRow(check: name, result: used ? .fail : .warn,
                                detail: detail + ": too slow; lower [camera] fps, or use the board's hardware encoder")
            } catch {
                let why = kind == .v4l2m2m
                    ? "no V4L2 memory-to-memory H.264 encoder answered (a Raspberry Pi 4 has one, /dev/video11; FFmpeg says: \(error.message))"
                    : error.description
                return CheckRow(check: name, result: used ? .fail : .skip, detail: why)
            }
        }
    }

    /// The TV output: the display `[video] tv` names (or the first connected one) opened and
    /// shown a line for two seconds. No display with `tv = "auto"` is only a warning: most
    /// gates have none.
    func checkTV(_ settings: GateSettings) -> CheckRow {
        let v = settings.video ?? settings.videoTable ?? VideoSettings()
        guard let card = v.tv else { return CheckRow(check: "tv", result: .skip, detail: "off in [video] tv") }
        do {
            let screen = try DRMScreen(path: card.isEmpty ? nil : card)
            let painter = ScreenPainter(width: screen.width, height: screen.height, caption: "SprintGate self-test: the delayed view shows here")
            try screen.present { p, pitch in try painter.paintBlank(into: p, pitch: pitch) }
            usleep(2_000_000)
            return CheckRow(check: "tv", result: .pass, detail: "\(screen.path): \(screen.name)")
        } catch {
            return CheckRow(check: "tv", result: card.isEmpty ? .warn : .fail, detail: "\(error)")
        }
    }

    func checkClock() -> CheckRow {
        var last = Sys.monotonicNow()
        var steps = Set<Int64>()
        for _ in 0..<1000 {
            let t = Sys.monotonicNow()
            if t < last { return CheckRow(check: "clock", result: .fail, detail: "CLOCK_MONOTONIC went backwards") }
            if t > last { steps.insert(t.since(last).nanoseconds) }
            last = t
        }
        let finest = steps.min() ?? 0
        return finest > 0 && finest <= 1_000
            ? CheckRow(check: "clock", result: .pass, detail: "CLOCK_MONOTONIC steps of \(finest) ns")
            : CheckRow(check: "clock", result: .warn, detail: "CLOCK_MONOTONIC resolution \(finest) ns (expected 1 µs or finer)")
    }

    func checkCamera(_ cam: CameraConfig) -> [CheckRow] {
        let request = cameraRequest(cam)
        var source = V4L2FrameSource(path: cam.device, request: request, logger: Logger(label: "sprintgate.camera"))
        do { try source.open() } catch {
            let hint = error.impliedState == .absent
                ? "plug the camera in; check `ls -l \(cam.device)` and the udev rule"
                : "close other programs using the camera; check the service user is in group video"
            return [CheckRow(check: "camera", result: .fail, detail: "\(error.description): \(hint)")]
        }
        var rows = [CheckRow(check: "camera", result: .pass, detail: "\(cam.device): \(source.mode.map { "\($0)" } ?? "open")")]
        let start = Sys.monotonicNow()
        var frames = 0, dropped: UInt64 = 0, backwards = 0
        var first: MonotonicInstant?, last = MonotonicInstant(nanoseconds: 0)
        while Sys.monotonicNow().since(start).seconds < seconds {
            _ = try? Sys.waitReadable(source.fileDescriptor, timeoutMs: 100)
            guard let lease = source.nextFrame() else {
                if source.state == .absent { break }
                continue
            }
            let t = lease.view.timestamp
            if first == nil { first = t }
            if t <= last { backwards += 1 }
            last = t
            frames += 1
            dropped += lease.droppedBefore
            source.release(lease)
        }
        source.close()
        if frames < 2 || first == nil {
            rows.append(CheckRow(check: "camera frames", result: .fail, detail: "\(frames) frames in \(seconds) s: check the cable and lighting"))
            return rows
        }
        let fps = Double(frames - 1) / last.since(first!).seconds
        let ok = fps >= 0.9 * Double(cam.fps)
        rows.append(CheckRow(check: "camera rate", result: ok ? .pass : .warn,
                             detail: "\(String(format: "%.1f", fps)) fps measured, \(cam.fps) wanted"
                                 + (ok ? "" : ": in dim light UVC cameras lengthen exposure; add light or set exposure_us")))
        rows.append(CheckRow(check: "camera timestamps", result: backwards == 0 ? .pass : .fail,
                             detail: backwards == 0 ? "monotonic, \(dropped) dropped of \(frames + Int(dropped))"
                                 : "\(backwards) went backwards: the driver does not stamp CLOCK_MONOTONIC"))
        for w in source.warnings { rows.append(CheckRow(check: "camera exposure", result: .warn, detail: w)) }
        return rows
    }

    func checkGPIO(_ board: BoardConfig) -> [CheckRow] {
        guard !board.gpio.isEmpty else { return [CheckRow(check: "gpio", result: .skip, detail: "board has no [gpio] tables")] }
        var lines: GPIODLines
        do { lines = try GPIODLines(lines: board.gpio, boardFile: board.source) } catch {
            return [CheckRow(check: "gpio", result: .fail, detail: "\(error.description); compare \(board.source) with `gpioinfo`")]
        }
        var rows = [CheckRow(check: "gpio", result: .pass, detail: "\(board.gpio.count) lines requested")]
        if board.gpio[.startButton] != nil {
            do {
                let pressed = try lines.level(.startButton)
                rows.append(CheckRow(check: "start button", result: pressed ? .warn : .pass,
                                     detail: pressed ? "reads pressed: release it, or check active_low and bias" : "released"))
            } catch { rows.append(CheckRow(check: "start button", result: .fail, detail: error.description)) }
        }
        for role in [GPIORole.readyLED, .armedLED, .crossingLED, .buzzer] where board.gpio[role] != nil {
            do {
                try lines.set(role, true)
                usleep(150_000)
                try lines.set(role, false)
                rows.append(CheckRow(check: role.rawValue, result: .pass, detail: "switched on for 150 ms: did it light or sound?"))
            } catch { rows.append(CheckRow(check: role.rawValue, result: .fail, detail: error.description)) }
        }
        return rows
    }

    func checkAudio(_ audio: AudioConfig) -> CheckRow {
        var beeper = ALSABeeper(config: audio, sounds: SoundBank(), logger: Logger(label: "sprintgate.audio"))
        guard beeper.state == .streaming else {
            return CheckRow(check: "audio", result: .warn, detail: beeper.warning ?? "no audio device: set [audio] device in the board file (`aplay -L` lists them)")
        }
        let now = Sys.monotonicNow()
        do {
            let onset = try beeper.play(.beep, now: now)
            let lead = onset.since(now).milliseconds
            for _ in 0..<30 { usleep(10_000); try? beeper.service() }
            // Why: the onset comes from the stream trigger and a device whose position moves in
            // timer ticks (snd-aloop: 4 ms) can place it up to a tick before this call.
            guard lead >= -5, lead < 500 else {
                return CheckRow(check: "audio", result: .warn, detail: "beep onset estimate \(String(format: "%.1f", lead)) ms from now: the device's timestamps look wrong")
            }
            return CheckRow(check: "audio", result: .pass, detail: "\(audio.device): beep reaches the speaker \(String(format: "%.1f", lead)) ms after play")
        } catch {
            return CheckRow(check: "audio", result: .fail, detail: error.description)
        }
    }
}

struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record what the camera and input lines deliver, to replay a problem later.",
        discussion: "Writes DIR/frames.y4m (replay with `sprintgate replay DIR/frames.y4m --gate-x X`) and DIR/case.log.")

    @Option(help: "Settings file.")
    var config: String = "/etc/sprintgate/gate.toml"

    @Option(help: "Length of the recording in seconds.")
    var seconds: Double = 20

    @Option(help: "Output directory (created if missing).")
    var out: String

    func run() throws {
        guard seconds > 0, seconds <= 600 else { fail("--seconds \(seconds) is outside 0...600") }
        let settings = loadSettings(config)
        do { try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true) } catch {
            fail("\(out): cannot create (\(error.localizedDescription))")
        }
        guard let cam = settings.board.camera else {
            fail("\(settings.board.source) has no [camera]: there is nothing to record (use a board file with a [camera] table)")
        }
        let request = cameraRequest(cam)
        var source = V4L2FrameSource(path: cam.device, request: request, logger: Logger(label: "sprintgate.camera"))
        do { try source.open() } catch { fail("\(error.description): plug the camera in or check \(cam.device)") }
        let header: [(String, String)] = [
            ("Name", "recording"), ("Board", settings.board.source),
            ("Camera", "\(cam.device) \(source.mode.map { "\($0)" } ?? "")"),
            ("Recorded", "\(Date())"), ("Notes", "sprintgate record --seconds \(seconds)"),
        ]
        let fps = source.mode?.fpsList.first ?? Double(cam.fps)
        var lines: GPIODLines?
        if !settings.board.gpio.isEmpty {
            do { lines = try GPIODLines(lines: settings.board.gpio.filter { $0.key == .startButton }, boardFile: settings.board.source) }
            catch { print("warning: \(error.description); recording the camera only") }
        }
        let summary: RecordingSummary
        do {
            if lines != nil {
                summary = try recordSession(
                    camera: &source, fps: fps, seconds: seconds, directory: out, header: header,
                    now: { Sys.monotonicNow() },
                    waitForFrame: { fd in _ = try? Sys.waitReadable(fd, timeoutMs: 20) },
                    pollLines: { now, body throws(DeviceError) in try lines!.readEvents(now: now, body) })
            } else {
                summary = try recordSession(
                    camera: &source, fps: fps, seconds: seconds, directory: out, header: header,
                    now: { Sys.monotonicNow() },
                    waitForFrame: { fd in _ = try? Sys.waitReadable(fd, timeoutMs: 20) })
            }
        } catch {
            fail(error.description)
        }
        source.close()
        print("\(summary.frames) frames (\(summary.dropped) dropped, \(String(format: "%.1f", summary.measuredFPS)) fps), "
            + "\(summary.lineEvents) line events")
        print("clip: \(summary.clipPath)\nlog:  \(summary.logPath)")
    }
}
