// SPDX-License-Identifier: Apache-2.0
// Plays an NMEA log through a real gpsd with gpsfake's machinery, the gate's client watching.

import Foundation
import GPSD
import GPSTiming
import Glibc

/// Runs blocking work (sockets, child processes) on a thread of its own, so the test
/// runner's shared threads stay free for the suites running beside it.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { c in
        let t = Thread { c.resume(with: Result { try body() }) }
        t.start()
    }
}

enum GPSFake {
    /// `scripts/gps/fake-feed`: gpsd started and fed by gpsfake's own library (python3-gps).
    static let feeder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/gps/fake-feed").path

    /// Debian's gpsd and gpsd-clients (which brings python3-gps); `.ci/run` installs both.
    static var skipReason: String? {
        FileManager.default.isExecutableFile(atPath: "/usr/sbin/gpsd")
            && FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/gps/fake.py")
            ? nil : "gpsd or python3-gps is not installed (apt install gpsd gpsd-clients)"
    }

    /// A TCP port nobody listens on now.
    static func freePort() -> UInt16 {
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(s) }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(s, $0, &len) } }
        return UInt16(bigEndian: a.sin_port)
    }

    /// A gpsd on `port`, waiting to be fed `log` (`go`), `cycle` seconds between sentences.
    final class Session: @unchecked Sendable {
        let process = Process()
        let port: UInt16
        let file: URL
        private let input = Pipe(), output = Pipe()

        convenience init(log: String, name: String, cycle: Double = 0, port: UInt16 = GPSFake.freePort()) throws {
            try self.init(bytes: Data(log.utf8), name: name, cycle: cycle, port: port)
        }

        /// `writable`: gpsd may write to the receiver (not `-b`), and `finish()` returns what
        /// it wrote.
        init(bytes: Data, name: String, cycle: Double = 0, port: UInt16 = GPSFake.freePort(), writable: Bool = false) throws {
            self.port = port
            file = FileManager.default.temporaryDirectory.appendingPathComponent("sprintgate-\(name)-\(getpid())-\(port).log")
            try bytes.write(to: file)
            process.executableURL = URL(fileURLWithPath: GPSFake.feeder)
            process.arguments = [String(port), file.path, String(cycle)] + (writable ? ["rw"] : [])
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            // "ready" once gpsd listens.
            var said = Data()
            while !said.contains(UInt8(ascii: "\n")) {
                let d = output.fileHandleForReading.availableData
                if d.isEmpty { throw GPSDError("fake-feed ended before gpsd was ready") }
                said += d
            }
        }

        /// Connects to its gpsd; retries for a while, as a loaded machine may take a moment
        /// between gpsd's start and its listening.
        func connect() throws -> GPSDConnection {
            let end = Date().addingTimeInterval(20)
            while true {
                do { return try GPSDConnection(port: port, timeout: 5) } catch {
                    if Date() > end { throw error }
                    usleep(100_000)
                }
            }
        }

        /// Starts feeding the log.
        func go() { input.fileHandleForWriting.write(Data("go\n".utf8)) }

        /// Waits for the feed to end; the bytes gpsd wrote to the receiver (a writable
        /// session's "sent" line), empty otherwise.
        func finish() -> [UInt8] {
            let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            guard let line = said.split(separator: "\n").first(where: { $0.hasPrefix("sent ") }) else { return [] }
            let hex = Array(line.dropFirst(5).utf8)
            return stride(from: 0, to: hex.count - 1, by: 2).compactMap { UInt8(String(decoding: hex[$0 ... $0 + 1], as: UTF8.self), radix: 16) }
        }

        deinit {
            try? input.fileHandleForWriting.close()
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            try? FileManager.default.removeItem(at: file)
        }
    }

    /// Every report gpsd sent the gate's client while `log` was played, and the lines that
    /// could not be read.
    static func play(_ log: String, name: String) async throws -> (reports: [GPSDReport], bad: [String]) {
        try await onOwnThread { try playBlocking(log, name: name) }
    }

    private static func playBlocking(_ log: String, name: String) throws -> (reports: [GPSDReport], bad: [String]) {
        let session = try Session(log: log, name: name)
        let c = try session.connect()
        try c.watch()
        var reports: [GPSDReport] = [], bad: [String] = []
        var watching = false
        // gpsd stops, and closes the connection, once the log is through; a quiet spell of
        // 15 s also ends it (a stuck gpsd must not hang the tests).
        while true {
            let next: GPSDConnection.Read
            do { next = try c.nextLine(timeout: 15) } catch { break }
            guard case .line(let text) = next else { break }
            do {
                let r = try GPSDReport.decode(text)
                reports.append(r)
                if case .watch = r, !watching {
                    watching = true
                    session.go()
                }
            } catch { bad.append(error.description) }
        }
        return (reports, bad)
    }

    static func fixes(_ reports: [GPSDReport]) -> [GPSFix] {
        var drivers = GPSDDrivers()
        return reports.compactMap { drivers.fix($0) }
    }
}
