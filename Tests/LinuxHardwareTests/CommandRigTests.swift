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

    init() throws {
        dir = NSTemporaryDirectory() + "sprintgate-rig-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var board = """
            # The qemu rig: vivid camera, gpio-sim lines, ALSA loopback.
            [board]
            name = "qemu rig"
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
        @Test("selftest passes camera, GPIO, audio and clock on the rig's devices")
        func selftest() throws {
            let board = try RigBoard()
            let r = try sprintgate(["selftest", "--config", board.settings, "--seconds", "1"])
            print(r.out)
            #expect(r.status == 0)
            for check in ["clock", "camera", "camera timestamps", "gpio", "start button", "crossing-led", "audio"] {
                #expect(r.out.split(separator: "\n").contains { $0.hasPrefix(check + " ") && $0.contains("PASS") },
                        "\(check) did not pass")
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
    }
}
