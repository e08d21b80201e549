// SPDX-License-Identifier: Apache-2.0
// The sprintgate command itself: replay output format and exit status on bad input.

import Foundation
import Testing

/// Runs the `sprintgate` executable built next to this test bundle.
func runSprintgate(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
    let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    let binary = URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("sprintgate")
    guard FileManager.default.isExecutableFile(atPath: binary.path) else {
        throw CLIError(message: "\(binary.path) is missing: build all products first (scripts/test does)")
    }
    let p = Process()
    p.executableURL = binary
    p.arguments = arguments
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try p.run()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
}

struct CLIError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

@Suite("sprintgate command")
struct CommandLineTests {
    @Test("synth then replay --json prints one crossing line matching the truth")
    func synthAndReplay() throws {
        let dir = ScratchDirectory()
        let clip = dir.file("sprint.y4m")
        let synth = try runSprintgate(["synth", "--scene", "sprint", "--fps", "60", "--out", clip, "--json"])
        #expect(synth.status == 0, "\(synth.err)")
        let truthLine = try #require(synth.out.split(separator: "\n").first)
        let truth = try #require(try JSONSerialization.jsonObject(with: Data(truthLine.utf8)) as? [String: Any])
        let replay = try runSprintgate(["replay", clip, "--gate-x", "284", "--json"])
        #expect(replay.status == 0, "\(replay.err)")
        let lines = replay.out.split(separator: "\n")
        #expect(lines.count == 1)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(Set(json.keys) == ["frame", "time", "direction", "uncertainty_ms", "blob_height"])
        let time = try #require(json["time"] as? Double), trueTime = try #require(truth["time"] as? Double)
        #expect(abs(time - trueTime) < 0.004)
        #expect(json["direction"] as? String == "left_to_right")
        let frame = try #require(json["frame"] as? Double)
        #expect(abs(frame - time * 60) < 0.01)
    }

    @Test("bad input exits with status 2 and a one-line error")
    func badInput() throws {
        let dir = ScratchDirectory()
        let bad = dir.file("bad.y4m")
        try Data("YUV4MPEG2 W64 H64 F30:1 Cmono\nFRAME\n".utf8).write(to: URL(fileURLWithPath: bad))
        for args in [["replay", bad, "--gate-x", "10", "--json"],
                     ["replay", dir.file("missing.y4m"), "--gate-x", "10"],
                     ["replay", bad, "--gate-x", "999"],
                     ["replay", dir.file("x.raw"), "--gate-x", "1", "--size", "64by64", "--fps", "30"],
                     ["synth", "--scene", "no-such-scene", "--out", dir.file("o.y4m")]] {
            let r = try runSprintgate(args)
            #expect(r.status == 2, "\(args): status \(r.status)")
            let errLines = r.err.split(separator: "\n")
            #expect(errLines.count == 1 && errLines[0].hasPrefix("error: "), "\(args): \(r.err)")
        }
    }

    @Test("demo detects both runners of the built-in clip")
    func demo() throws {
        let r = try runSprintgate(["demo", "--json"])
        #expect(r.status == 0)
        #expect(r.out.split(separator: "\n").count == 2)
    }

    @Test("SIGTERM ends a running gate in order: storage written, summary printed, status 0")
    func stopSignal() throws {
        let dir = ScratchDirectory()
        let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("sprintgate")
        p.arguments = ["demo", "--web", "\(Int.random(in: 20_000...29_999))", "--fps", "30", "--ntp-port", "0",
                       "--state-dir", dir.file("state"), "--seconds", "60"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = Pipe()
        try p.run()
        // The loop is running once the PIN is printed; then one stats period of frames.
        var text = ""
        while !text.contains("web PIN") {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        #expect(text.contains("web PIN"))
        Thread.sleep(forTimeInterval: 1)
        p.terminate()
        text += String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationReason == .exit && p.terminationStatus == 0, "\(p.terminationReason) \(p.terminationStatus)")
        #expect(text.contains("stopping on signal 15"), "\(text)")
        #expect(text.contains("demo summary:"), "\(text)")
        #expect(FileManager.default.fileExists(atPath: dir.file("state") + "/sprintgate.sqlite"))
    }
}

@Suite("run without its camera")
struct RunWithoutCameraTests {
    @Test("run waits for a missing camera: systemd's start timeout extended, status.txt says what to do, one warning")
    func waitsForTheCamera() throws {
        let dir = ScratchDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("state"), withIntermediateDirectories: true)
        let device = "/dev/sprintgate-test-no-camera-\(getpid())"
        try """
            [board]
            name = "no camera"
            [camera]
            device = "\(device)"
            format = "GREY"
            width = 320
            height = 240
            fps = 30
            [audio]
            device = "null"
            [peer]
            group = "test"
            """.write(toFile: dir.file("board.toml"), atomically: true, encoding: .utf8)
        try """
            board = "\(dir.file("board.toml"))"
            state_dir = "\(dir.file("state"))"
            """.write(toFile: dir.file("gate.toml"), atomically: true, encoding: .utf8)
        // A notify socket standing in for systemd's.
        let socketPath = dir.file("notify")
        let server = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        #expect(server >= 0)
        defer { close(server) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in socketPath.utf8.enumerated() { raw[i] = b }
        }
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(server, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0)

        let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("sprintgate")
        p.arguments = ["run", "--config", dir.file("gate.toml"), "--seconds", "2.5", "--web-port", "0", "--ntp-port", "0"]
        var env = ProcessInfo.processInfo.environment
        env["NOTIFY_SOCKET"] = socketPath
        env.removeValue(forKey: "JOURNAL_STREAM")
        p.environment = env
        let err = Pipe()
        p.standardOutput = Pipe()
        p.standardError = err
        try p.run()
        let errText = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        // --seconds ends the wait with an error (a test's bound; the service waits for good).
        #expect(p.terminationStatus != 0)
        #expect(errText.contains("no camera within --seconds"), "\(errText)")
        // Three failed opens (0, 0.5 and 1.5 s) with the same error: one warning.
        let warnings = errText.split(separator: "\n").filter { $0.contains("waiting for it (plug it in") }
        #expect(warnings.count == 1, "\(errText)")
        #expect(warnings.first?.contains(device) == true)

        var messages: [String] = []
        var buf = [UInt8](repeating: 0, count: 512)
        while true {
            let n = recv(server, &buf, buf.count, Int32(MSG_DONTWAIT))
            if n <= 0 { break }
            messages.append(String(decoding: buf[0..<n], as: UTF8.self))
        }
        #expect(messages.count >= 3, "\(messages)")
        for m in messages {
            let extend = m.split(separator: "\n").first { $0.hasPrefix("EXTEND_TIMEOUT_USEC=") }
            let usec = extend.flatMap { Int64($0.dropFirst("EXTEND_TIMEOUT_USEC=".count)) } ?? 0
            // Beyond the next retry (at most 8 s away) by a margin.
            #expect(usec >= 30_500_000, "\(m)")
            #expect(m.contains("STATUS=waiting for the camera \(device) (absent)"), "\(m)")
            #expect(!m.contains("READY=1"), "\(m)")
        }

        let status = try String(contentsOfFile: dir.file("state") + "/status.txt", encoding: .utf8)
        #expect(status.contains("phase: waiting for the camera"), "\(status)")
        #expect(status.contains("what_to_do: plug the camera in"), "\(status)")
        #expect(status.contains("updated_mono_ns: "), "\(status)")
    }
}

@Suite("journal log lines")
struct JournalLogTests {
    /// Runs a short demo with standard error to a file; `journal` sets JOURNAL_STREAM to
    /// that file's device and inode as systemd would, otherwise to some other file's.
    func demoLog(journal: Bool) throws -> [Substring] {
        let dir = ScratchDirectory()
        return try stderrLines(["demo", "--web", "\(Int.random(in: 30_000...39_999))", "--ntp-port", "0", "--fps", "30",
                                "--seconds", "1", "--state-dir", dir.file("state")], journal: journal, status: 0)
    }

    /// Standard error of `sprintgate args`, which must exit with `status`.
    func stderrLines(_ args: [String], journal: Bool, status: Int32) throws -> [Substring] {
        let dir = ScratchDirectory()
        let path = dir.file("stderr")
        FileManager.default.createFile(atPath: path, contents: nil)
        let err = try #require(FileHandle(forWritingAtPath: path))
        var st = stat()
        #expect(stat(journal ? path : "/proc/self/exe", &st) == 0)
        let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("sprintgate")
        p.arguments = args
        var env = ProcessInfo.processInfo.environment
        env["JOURNAL_STREAM"] = "\(st.st_dev):\(st.st_ino)"
        p.environment = env
        p.standardOutput = Pipe()
        p.standardError = err
        try p.run()
        _ = (p.standardOutput as? Pipe)?.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        #expect(p.terminationStatus == status)
        return try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
    }

    @Test("under the journal each log line carries its level as a syslog priority prefix")
    func priorities() throws {
        let lines = try demoLog(journal: true)
        #expect(!lines.isEmpty)
        for line in lines {
            #expect(line.hasPrefix("<"), "\(line)")
        }
        #expect(lines.contains { $0.hasPrefix("<5>notice sprintgate") }, "\(lines)")
        let other = try demoLog(journal: false)
        #expect(!other.isEmpty && other.allSatisfy { !$0.hasPrefix("<") }, "\(other)")
    }

    @Test("a bad settings file is an error at priority err under the journal, a plain error line elsewhere")
    func badInputPriority() throws {
        let dir = ScratchDirectory()
        let config = dir.file("gate.toml")
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        try "board = \"\(repo.path)/boards/generic-usb.toml\"\n[gate]\nstart_typ = \"flying\"\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        let journal = try stderrLines(["status", "--config", config], journal: true, status: 2)
        #expect(journal.count == 1 && journal[0].hasPrefix("<3>error: \(config): gate.start_typ: unknown key"), "\(journal)")
        let plain = try stderrLines(["status", "--config", config], journal: false, status: 2)
        #expect(plain.count == 1 && plain[0].hasPrefix("error: \(config): gate.start_typ"), "\(plain)")
    }
}

@Suite("install script")
struct InstallScriptTests {
    @Test("installs binary, boards, sounds, udev rules, unit and a settings file for the board under a root")
    func installUnderRoot() throws {
        let dir = ScratchDirectory()
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = [repo.path + "/scripts/install", "--root", dir.path, "--no-build", "--no-systemctl",
                       "--board", "raspberry-pi-5-usbcam"]
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        let fm = FileManager.default
        for path in ["/usr/local/bin/sprintgate", "/usr/share/sprintgate/boards/raspberry-pi-5-usbcam.toml",
                     "/usr/share/sprintgate/boards/chips/pinctrl-rp1.lines", "/etc/udev/rules.d/90-sprintgate.rules",
                     "/etc/systemd/system/sprintgate.service", "/etc/sprintgate/gate.toml"] {
            #expect(fm.fileExists(atPath: dir.path + path), "\(path) missing")
        }
        let settings = try String(contentsOfFile: dir.path + "/etc/sprintgate/gate.toml", encoding: .utf8)
        #expect(settings.contains("board = \"/usr/share/sprintgate/boards/raspberry-pi-5-usbcam.toml\""))
        // gpsd set up for the board's GPS receiver on USB.
        let gpsd = try String(contentsOfFile: dir.path + "/etc/default/gpsd", encoding: .utf8)
        #expect(gpsd.contains("USBAUTO=\"true\"\nDEVICES=\"\"\nGPSD_OPTIONS=\"-n\""), "\(gpsd)")
        // With the board path pointed into the install root, the written settings decode.
        let local = settings.replacingOccurrences(of: "\"/usr/share", with: "\"\(dir.path)/usr/share")
        try local.write(toFile: dir.file("gate.toml"), atomically: true, encoding: .utf8)
        let status = try runSprintgate(["status", "--config", dir.file("gate.toml")])
        #expect(status.status == 3, "\(status.err)")  // decodes; the gate is just not running
        #expect(status.out.contains("not running"))
    }
}
