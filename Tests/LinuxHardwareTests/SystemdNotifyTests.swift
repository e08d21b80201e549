// SPDX-License-Identifier: Apache-2.0
// READY and WATCHDOG reach a notify socket the way systemd receives them.

import LinuxHardware
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("systemd notify")
struct SystemdNotifyTests {
    @Test("messages arrive on the socket named by NOTIFY_SOCKET; without it nothing is sent")
    func notify() throws {
        let path = "/tmp/sprintgate-notify-\(getpid())"
        unlink(path)
        let server = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        #expect(server >= 0)
        defer { close(server); unlink(path) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in path.utf8.enumerated() { raw[i] = b }
        }
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(server, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        let n = SystemdNotify(environment: ["NOTIFY_SOCKET": path, "WATCHDOG_USEC": "10000000"])
        let isActive = n.isActive, wd = n.watchdogNs
        #expect(isActive && wd == 10_000_000_000)
        let sent = n.send("READY=1\nSTATUS=camera streaming")
        #expect(sent)
        var buf = [UInt8](repeating: 0, count: 256)
        let got = recv(server, &buf, buf.count, 0)
        #expect(got > 0)
        #expect(String(decoding: buf[0..<max(0, got)], as: UTF8.self) == "READY=1\nSTATUS=camera streaming")

        let none = SystemdNotify(environment: [:])
        let active = none.isActive, sentNone = none.send("READY=1"), watchdog = none.watchdogNs
        #expect(!active && !sentNone && watchdog == nil)
    }
}
