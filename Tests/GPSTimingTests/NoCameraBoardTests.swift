// SPDX-License-Identifier: Apache-2.0
// A board without [camera] (a car timer): `sprintgate run` serves the page and the GPS
// timer at once, and times a drive played through a real gpsd.

import Foundation
import Glibc
import Testing

@Suite("a board without a camera", .serialized)
struct NoCameraBoardTests {
    /// One HTTP/1.0 GET on loopback: the status and the body, nil while nothing listens.
    static func get(port: UInt16, _ path: String) -> (status: Int, body: String)? {
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard s >= 0 else { return nil }
        defer { close(s) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = port.bigEndian
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard ok == 0 else { return nil }
        let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        guard send(s, request, request.count, 0) == request.count else { return nil }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(s, &buffer, buffer.count, 0)
            if n <= 0 { break }
            reply += buffer[0..<n]
        }
        let text = String(decoding: reply, as: UTF8.self)
        guard let head = text.range(of: "\r\n\r\n"), let first = text.split(separator: "\r\n").first else { return nil }
        let parts = first.split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { return nil }
        return (status, String(text[head.upperBound...]))
    }

    /// `sprintgate run` (built next to this test bundle) with `config`, its page on loopback
    /// `webPort`, no NTP server, outside systemd; not started yet. Its standard error is read
    /// from the pipe.
    static func run(config: String, webPort: UInt16) throws -> (Process, Pipe) {
        let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let binary = URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("sprintgate")
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build all products first (scripts/test does)")
        let p = Process()
        p.executableURL = binary
        p.arguments = ["run", "--config", config, "--web-host", "127.0.0.1", "--web-port", String(webPort),
                       "--ntp-port", "0", "--seconds", "300"]
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "JOURNAL_STREAM")
        env.removeValue(forKey: "NOTIFY_SOCKET")
        p.environment = env
        let err = Pipe()
        p.standardOutput = FileHandle.nullDevice
        p.standardError = err
        return (p, err)
    }

    static func json(_ body: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any]
    }

    @Test("`sprintgate run` with a board file without [camera] and with [gps]: the page, GET /api/gps and the live board (camera \"none\") come up at once; a standing start played through gpsd is timed and stored; SIGTERM stops it cleanly")
    func gpsOnlyBoard() async throws {
        if let why = GPSFake.skipReason { print("SKIP: \(why)"); return }
        let truth = Truth(GPSFakeTests.realistic)
        let log = NMEALog.write(NMEALog.epochs(truth, rate: 10, still: 3.037), header: ["Name: standing start at 10 Hz", "Notes: synthetic"])
        let gpsdPort = GPSFake.freePort()
        let session = try await onOwnThread { try GPSFake.Session(log: log, name: "nocamera", cycle: 0.01, port: gpsdPort) }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sprintgate-nocamera-\(getpid())").path
        try? FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir + "/state", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A car timer: no [camera] table at all.
        try """
            [board]
            name = "Car timer, no camera"
            [audio]
            device = "null"
            [peer]
            group = "test"
            """.write(toFile: dir + "/board.toml", atomically: true, encoding: .utf8)
        try """
            board = "\(dir)/board.toml"
            state_dir = "\(dir)/state"
            [gps]
            port = \(gpsdPort)
            """.write(toFile: dir + "/gate.toml", atomically: true, encoding: .utf8)
        let webPort = GPSFake.freePort()
        let (p, err) = try Self.run(config: dir + "/gate.toml", webPort: webPort)
        let started = Date()
        try p.run()
        defer { if p.isRunning { p.terminate() } }
        // Why 60 s: a bound for a loaded machine; the time taken is printed, and is about
        // a second on an idle one.
        var gps: [String: Any]?
        while gps == nil, Date().timeIntervalSince(started) < 60, p.isRunning {
            if let r = Self.get(port: webPort, "/api/gps"), r.status == 200 { gps = Self.json(r.body) } else { try await Task.sleep(for: .milliseconds(50)) }
        }
        let upAfter = Date().timeIntervalSince(started)
        try #require(gps != nil, "no /api/gps within 60 s (running: \(p.isRunning))")
        print("a board without a camera: GET /api/gps answered \(String(format: "%.2f", upAfter)) s after the start")
        let page = try #require(Self.get(port: webPort, "/"))
        #expect(page.status == 200 && page.body.contains("<html"))
        let live = try #require(Self.get(port: webPort, "/api/live").flatMap { Self.json($0.body) })
        let camera = ((live["board"] as? [String: Any])?["gate"] as? [String: Any])?["camera"] as? [String: Any]
        #expect(camera?["state"] as? String == "none", "\(live)")
        // The drive, through gpsd: the run is timed and stored as on a gate with a camera.
        let fixEnd = Date().addingTimeInterval(60)
        while Date() < fixEnd, (Self.get(port: webPort, "/api/gps").flatMap { Self.json($0.body) }?["link"] as? String) == "no-gpsd" {
            try await Task.sleep(for: .milliseconds(50))
        }
        session.go()
        _ = try await onOwnThread { session.finish() }
        var runs: [[String: Any]] = []
        let runEnd = Date().addingTimeInterval(60)
        while runs.isEmpty, Date() < runEnd {
            if let r = Self.get(port: webPort, "/api/gps/runs"), r.status == 200,
               let list = (try? JSONSerialization.jsonObject(with: Data(r.body.utf8))) as? [[String: Any]] {
                runs = list
            }
            if runs.isEmpty { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(runs.count == 1, "runs: \(runs)")
        let status = try String(contentsOfFile: dir + "/state/status.txt", encoding: .utf8)
        #expect(status.contains("camera: none") && status.contains("areas: gps"), "\(status)")
        p.terminate()
        let errText = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "\(errText)")
        #expect(errText.contains("no [camera]") && errText.contains("ready: no camera on this board"), "\(errText)")
        #expect(!errText.contains("error:"), "\(errText)")
    }

    @Test("`sprintgate run` on a board whose camera is missing: the page comes up at once and says to plug the camera in; the GPS timer answers meanwhile; SIGTERM while waiting ends it cleanly")
    func cameraMissingAtPowerUp() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sprintgate-nocam-yet-\(getpid())").path
        try? FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir + "/state", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try """
            [board]
            name = "A gate whose camera is unplugged"
            [camera]
            device = "/dev/sprintgate-missing-\(getpid())"
            format = "GREY"
            width = 320
            height = 240
            fps = 30
            [audio]
            device = "null"
            [peer]
            group = "test"
            """.write(toFile: dir + "/board.toml", atomically: true, encoding: .utf8)
        try """
            board = "\(dir)/board.toml"
            state_dir = "\(dir)/state"
            [gps]
            port = \(GPSFake.freePort())
            """.write(toFile: dir + "/gate.toml", atomically: true, encoding: .utf8)
        let webPort = GPSFake.freePort()
        let (p, err) = try Self.run(config: dir + "/gate.toml", webPort: webPort)
        try p.run()
        defer { if p.isRunning { p.terminate() } }
        // Why 60 s: a bound for a loaded machine; it is about a second on an idle one.
        var problem: String?
        let end = Date().addingTimeInterval(60)
        while problem == nil, Date() < end, p.isRunning {
            let live = Self.get(port: webPort, "/api/live").flatMap { Self.json($0.body) }
            let camera = ((live?["board"] as? [String: Any])?["gate"] as? [String: Any])?["camera"] as? [String: Any]
            problem = camera?["problem"] as? String
            if problem == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        let said = try #require(problem, "the page never said what the gate waits for")
        #expect(said.contains("plug it in") && said.contains("/dev/sprintgate-missing-"), "\(said)")
        #expect(Self.get(port: webPort, "/api/gps")?.status == 200)
        let status = try String(contentsOfFile: dir + "/state/status.txt", encoding: .utf8)
        #expect(status.contains("phase: waiting for the camera"), "\(status)")
        p.terminate()
        let errText = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "\(errText)")
        #expect(errText.contains("while waiting for the camera"), "\(errText)")
        let stopped = try String(contentsOfFile: dir + "/state/status.txt", encoding: .utf8)
        #expect(stopped.contains("never started (no camera)"), "\(stopped)")
    }
}
