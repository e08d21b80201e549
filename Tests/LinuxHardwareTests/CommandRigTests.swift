// SPDX-License-Identifier: Apache-2.0
// The sprintgate command on the rig's devices: selftest, record and run.

import Foundation
import GateCore
import GateSim
import Testing

/// A board file and settings file for the rig's devices, in a scratch directory.
struct RigBoard {
    let dir: String
    var settings: String { dir + "/gate.toml" }

    /// With `socMillidegrees`, the board's thermal zone is a file in the scratch directory
    /// holding that temperature.
    init(socMillidegrees: Int? = nil) throws {
        dir = NSTemporaryDirectory() + "sprintgate-rig-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var thermal = ""
        if let socMillidegrees {
            try "\(socMillidegrees)\n".write(toFile: dir + "/soc-temp", atomically: true, encoding: .utf8)
            thermal = "thermal_zone = \"\(dir)/soc-temp\""
        }
        var board = """
            # The qemu rig: vivid camera, gpio-sim lines, ALSA loopback.
            [board]
            name = "qemu rig"
            \(thermal)
            [camera]
            device = "\(Rig.videoCapture)"
            format = "GREY"
            width = 640
            height = 480
            fps = 60
            [audio]
            device = "\(Rig.alsaPlayback)"
            [peer]
            group = "rig"

            """
        for role in ["start-button", "ready-led", "armed-led", "crossing-led", "buzzer"] {
            let input = role == "start-button"
            board += """
                [gpio.\(role)]
                chip = "\(Rig.gpioChipLabel)"
                line = "\(role)"
                active_low = \(input)
                bias = "\(input ? "pull-up" : "as-is")"
                \(input ? "debounce_ms = 20" : "")

                """
        }
        try board.write(toFile: dir + "/rig.toml", atomically: true, encoding: .utf8)
        try "board = \"rig.toml\"\nstate_dir = \"\(dir)\"\n".write(toFile: settings, atomically: true, encoding: .utf8)
    }

    /// Adds `toml` (tables of a test's own) to the settings file.
    func addSettings(_ toml: String) throws {
        try (String(contentsOfFile: settings, encoding: .utf8) + toml).write(toFile: settings, atomically: true, encoding: .utf8)
    }
}

/// Runs the sprintgate binary built beside the test binary; returns status and output.
/// `during` runs while it does and may signal it.
func sprintgate(_ args: [String], during: ((Process) -> Void)? = nil) throws -> (status: Int32, out: String) {
    let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    let binary = URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("sprintgate")
    let p = Process()
    p.executableURL = binary
    p.arguments = args
    let pipe = Pipe()
    p.standardOutput = pipe
    p.standardError = pipe
    try p.run()
    during?(p)
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: data, as: UTF8.self))
}

extension RigDevices {
    @Suite("sprintgate on the rig", .serialized, .enabled(if: Rig.available))
    struct CommandRigTests {
        @Test("selftest passes camera, GPIO, audio and clock on the rig's devices; with [rowing], the Bluetooth adapter up and a scan that names the PM5s not heard")
        func selftest() throws {
            let board = try RigBoard()
            // With bluetoothd up (sim-tier starts it beside btvirt): the rowing hub's check,
            // with one PM5 listed that nothing advertises as.
            let bluetooth = ProcessInfo.processInfo.environment["SPRINTGATE_BLUETOOTHD"] == "1"
            if bluetooth {
                try board.addSettings("\n[rowing]\ncontroller = 0\nergs = [\"C2:00:00:00:00:99\"]\n")
            }
            let r = try sprintgate(["selftest", "--config", board.settings, "--seconds", "1"])
            print(r.out)
            #expect(r.status == 0)
            for check in ["clock", "camera", "camera timestamps", "gpio", "start button", "crossing-led", "audio"] {
                #expect(r.out.split(separator: "\n").contains { $0.hasPrefix(check + " ") && $0.contains("PASS") },
                        "\(check) did not pass")
            }
            // The video encoders: x264 timed at the camera's size (under emulation it may be
            // too slow for 60 fps, a warning while [video] is off); the Pi 4's hardware
            // encoder has no device here.
            #expect(r.out.split(separator: "\n").contains { $0.hasPrefix("video libx264 ") && $0.contains(" fps at 640x480 (the camera gives 60)") })
            #expect(r.out.split(separator: "\n").contains { $0.hasPrefix("video h264_v4l2m2m ") && $0.contains("SKIP") })
            #expect(r.out.split(separator: "\n").contains { $0.hasPrefix("gps ") && $0.contains("SKIP") && $0.contains("no [gps]") })
            if bluetooth {
                #expect(r.out.split(separator: "\n").contains {
                    $0.hasPrefix("bluetooth ") && $0.contains("WARN") && $0.contains("hci0") && $0.contains("is up; a 6 s scan heard")
                        && $0.contains("not heard from the settings' ergs: C2:00:00:00:00:99")
                })
            } else {
                #expect(r.out.split(separator: "\n").contains { $0.hasPrefix("bluetooth ") && $0.contains("SKIP") && $0.contains("no [rowing]") })
            }
        }

        @Test("record writes a replayable clip and logs a button press")
        func record() throws {
            let board = try RigBoard()
            let out = board.dir + "/rec"
            let r = try sprintgate(["record", "--config", board.settings, "--seconds", "3", "--out", out]) { p in
                // Press once recording has begun: case.log is created after the camera streams
                // and the button's line is requested (the binary takes a while to load in qemu).
                for _ in 0..<3000 where p.isRunning && !FileManager.default.fileExists(atPath: out + "/case.log") {
                    usleep(20_000)
                }
                usleep(300_000)
                HardwareRig.pull("start-button", "pull-down")  // pressed (active low)
                usleep(300_000)
                HardwareRig.pull("start-button", "pull-up")
            }
            print(r.out)
            #expect(r.status == 0)
            let log = try ReplayLog(path: out + "/case.log")
            let frames = log.events.filter { if case .frame = $0 { return true } else { return false } }.count
            #expect(frames >= 40, "\(frames) frames in 3 s at 60 fps")
            let edges = log.events.compactMap { e -> String? in if case let .line(l) = e { return "\(l.edge)" } else { return nil } }
            #expect(edges == ["rising", "falling"])
            let reader = try ClipReader(path: out + "/frames.y4m")
            #expect(reader.width == 640 && reader.height == 480)
            let replay = try sprintgate(["replay", out + "/frames.y4m", "--gate-x", "320", "--json"])
            #expect(replay.status == 0)
        }

        @Test("run comes up armed, shows the ready LED and stops cleanly on SIGTERM")
        func run() throws {
            let board = try RigBoard()
            var armed = -1
            var status: (status: Int32, out: String) = (-1, "")
            // Why polling: under software emulation the daemon's start-up (and each `status`
            // process's) takes seconds, more when other rig tests run beside it.
            let r = try sprintgate(["run", "--config", board.settings, "--seconds", "60"]) { run in
                for _ in 0..<60 {
                    usleep(500_000)
                    status = (try? sprintgate(["status", "--config", board.settings])) ?? (-1, "")
                    if status.status == 0 && status.out.contains("camera: streaming") { break }
                }
                armed = HardwareRig.value("armed-led")
                run.terminate()
            }
            print(status.out)
            #expect(status.status == 0)
            #expect(status.out.contains("camera: streaming") && status.out.contains("phase: v1 phase=armed"))
            let after = try sprintgate(["status", "--config", board.settings])
            #expect(after.status == 3 && after.out.contains("not running"))
            print(r.out)
            #expect(r.status == 0)
            #expect(r.out.contains("ready: camera 640x480"))
            #expect(armed == 1)
            #expect(r.out.contains("stopping on signal 15") && r.out.contains("stopped:"))
            #expect(FileManager.default.fileExists(atPath: board.dir + "/results.jsonl"), "the storage thread opened no journal")
        }

        /// The frame count `run` last wrote to status.txt, nil before the first write.
        static func statusFrames(_ board: RigBoard) -> Int? {
            guard let text = try? String(contentsOfFile: board.dir + "/status.txt", encoding: .utf8),
                  let line = text.split(separator: "\n").first(where: { $0.hasPrefix("frames: ") })
            else { return nil }
            return Int(line.dropFirst("frames: ".count).prefix { $0.isNumber })
        }

        /// Waits up to `seconds` for status.txt to report more than `frames` frames.
        static func framesPass(_ frames: Int, _ board: RigBoard, within seconds: Int, _ run: Process) -> Int? {
            for _ in 0..<(seconds * 5) where run.isRunning {
                if let f = statusFrames(board), f > frames { return f }
                usleep(200_000)
            }
            return nil
        }

        /// A hot SoC (80 °C in the board's thermal zone) steps the camera from 60 to 30 fps:
        /// `run` closes it and the lost-camera path reopens it asking for the new rate.
        @Test("run lowers the camera's frame rate when the SoC is hot")
        func runStepsDownWhenHot() throws {
            let board = try RigBoard(socMillidegrees: 80_000)
            var camera = ""
            var flowing = false
            let r = try sprintgate(["run", "--config", board.settings, "--seconds", "60"]) { run in
                defer { run.terminate() }
                guard let f0 = Self.framesPass(0, board, within: 60, run) else { return }
                // Frames after the reopen, then the status line written after them.
                flowing = Self.framesPass(f0 + 30, board, within: 20, run) != nil
                usleep(1_500_000)
                let text = (try? String(contentsOfFile: board.dir + "/status.txt", encoding: .utf8)) ?? ""
                camera = text.split(separator: "\n").first { $0.hasPrefix("camera: ") }.map(String.init) ?? ""
            }
            print(camera)
            print(r.out)
            #expect(r.status == 0)
            #expect(r.out.contains("SoC at 80.0 C: camera to 30 fps"))
            #expect(r.out.contains("camera back"))
            #expect(flowing, "no frames after the reopen")
            #expect(camera.hasPrefix("camera: streaming"), "\(camera)")
            // vivid's HDMI input keeps the 59.94 fps of its timings whatever is asked, so on
            // the rig the new request shows in the adapter's warning; a UVC camera takes it.
            #expect(camera.contains("@ 30") || camera.contains("@ 29.97")
                    || r.out.contains("camera runs at 59.94 fps instead of the requested 30 fps"), "\(camera)")
        }

        /// Runs curl against the page of a `run` on this guest; returns the HTTP status and body.
        static func page(_ method: String, _ path: String, pin: String? = nil, json: String? = nil) -> (status: Int, body: String) {
            var args = ["-s", "-m", "10", "-X", method, "-w", "\n%{http_code}", "http://127.0.0.1:8080" + path]
            if let pin { args += ["-H", "X-Gate-PIN: \(pin)"] }
            if let json { args += ["-H", "Content-Type: application/json", "--data", json] }
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            p.arguments = args
            let pipe = Pipe()
            p.standardOutput = pipe
            guard (try? p.run()) != nil else { return (-1, "curl did not start") }
            let out = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            let lines = out.split(separator: "\n", omittingEmptySubsequences: false)
            return (Int(lines.last ?? "") ?? -1, lines.dropLast().joined(separator: "\n"))
        }

        /// The frame rate chosen on the page applies between runs without a restart: `run`
        /// closes the camera and the lost-camera path reopens it asking for the new rate;
        /// the page then shows the rate the camera runs at.
        @Test("a frame rate chosen on the page reopens the camera at it")
        func pageFrameRate() throws {
            let board = try RigBoard()
            var progress: [String] = []
            var shown = ""
            let r = try sprintgate(["run", "--config", board.settings, "--seconds", "120"]) { run in
                defer { run.terminate() }
                guard let f0 = Self.framesPass(30, board, within: 60, run) else { progress.append("never streamed"); return }
                let pin = ((try? String(contentsOfFile: board.dir + "/web.pin", encoding: .utf8)) ?? "")
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                var put = (status: -1, body: "")
                for _ in 0..<40 where run.isRunning {
                    put = Self.page("PUT", "/api/settings", pin: pin, json: #"{"fps":30}"#)
                    if put.status == 202 { break }
                    usleep(500_000)
                }
                guard put.status == 202 else { progress.append("PUT /api/settings answered \(put)"); return }
                progress.append("streaming, \(f0) frames; 30 fps chosen")
                // Frames after the reopen, then the page's settings written after them.
                usleep(1_500_000)
                guard let f1 = Self.framesPass((Self.statusFrames(board) ?? 0) + 30, board, within: 30, run) else {
                    progress.append("no frames after the reopen")
                    return
                }
                progress.append("\(f1) frames after the reopen")
                shown = Self.page("GET", "/api/settings").body
            }
            print(progress.joined(separator: "; "))
            print(r.out)
            #expect(r.status == 0)
            #expect(progress.count == 2, "\(progress)")
            #expect(r.out.contains("the page chose 30 fps: reopening the camera"))
            #expect(r.out.contains("camera back"))
            let settings = try JSONSerialization.jsonObject(with: Data(shown.utf8)) as? [String: Any]
            let editable = settings?["editable"] as? [String: Any]
            #expect(editable?["fps"] as? Int == 30, "\(shown)")
            // vivid's HDMI input keeps the 59.94 fps of its timings whatever is asked: the
            // adapter says so and the page shows the rate the camera runs at. A UVC camera
            // takes the new rate.
            let running = settings?["runningFPS"] as? Int
            #expect(running == 30 || (running == 60 && r.out.contains("camera runs at 59.94 fps instead of the requested 30 fps")),
                    "runningFPS \(String(describing: running))")
            // The menu offers what vivid itself lists (59.94 fps at every size of its HDMI
            // input), not a fixed list.
            let rates = settings?["frameRates"] as? [Int] ?? []
            print("the page's frame-rate menu for vivid: \(rates)")
            #expect(!rates.isEmpty && rates.contains(running ?? -1), "frameRates \(rates)")
        }

        /// A camera that fails for good (every DQBUF returns EIO, as when a USB camera
        /// browns out) or goes silent with its stream on, and then refuses the first reopen
        /// (STREAMON fails with EINVAL, which leaves it closed, not absent), is reopened by
        /// `run` with back-off until frames flow again.
        @Test("run reopens a camera after a fatal streaming error, and a silent one whose reopen fails once")
        func runRecoversTheCamera() throws {
            let board = try RigBoard()
            let cam = Rig.videoCapture
            var progress: [String] = []
            let r = try sprintgate(["run", "--config", board.settings, "--seconds", "120"]) { run in
                defer { run.terminate() }
                guard let f0 = Self.framesPass(30, board, within: 60, run) else { progress.append("never streamed"); return }
                progress.append("streaming, \(f0) frames")
                do {
                    guard try VividControl.set("Inject Fatal Streaming Error", path: cam) != nil else {
                        progress.append("vivid has no fatal-error control (no_error_inj=1?)")
                        return
                    }
                } catch { progress.append("fatal error not injected: \(error)"); return }
                // Frames stop; the status file keeps the count until the reopened camera adds to it.
                usleep(1_500_000)
                let stalled = Self.statusFrames(board) ?? 0
                guard let f1 = Self.framesPass(stalled + 30, board, within: 30, run) else {
                    progress.append("no frames after the fatal error (stuck at \(stalled))")
                    return
                }
                progress.append("after the fatal error: \(stalled) then \(f1) frames")
                do {
                    try VividControl.set("Inject VIDIOC_STREAMON Error", path: cam)
                    try VividControl.set("Percentage of Dropped Buffers", to: 100, path: cam)
                } catch {
                    progress.append("silence not injected: \(error)")
                    return
                }
                // The silence must last `CameraRecovery.stalledAfter` (5 s) before a reopen,
                // whose STREAMON fails; the retry after the back-off streams (silently still).
                usleep(9_000_000)
                try? VividControl.set("Percentage of Dropped Buffers", to: 0, path: cam)
                let silent = Self.statusFrames(board) ?? 0
                guard let f2 = Self.framesPass(silent + 30, board, within: 30, run) else {
                    progress.append("no frames after the silence (stuck at \(silent))")
                    return
                }
                progress.append("after the silence: \(silent) then \(f2) frames")
            }
            print(progress.joined(separator: "; "))
            print(r.out)
            #expect(r.status == 0)
            #expect(progress.count == 3, "\(progress)")
            #expect(r.out.contains("camera lost (absent); reopening"))
            #expect(r.out.contains("camera lost (no frames for "))
            #expect(r.out.contains("VIDIOC_STREAMON failed (errno 22)"))
            // One per successful reopen: after the fatal error, and after the failed STREAMON.
            #expect(r.out.components(separatedBy: "camera back").count - 1 >= 2)
            if let failed = r.out.range(of: "VIDIOC_STREAMON failed"),
               let back = r.out.range(of: "camera back", options: .backwards) {
                #expect(failed.lowerBound < back.lowerBound, "not back after the failed reopen")
            }
        }
    }
}
