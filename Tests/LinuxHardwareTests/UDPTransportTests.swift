// SPDX-License-Identifier: Apache-2.0
// The UDP socket on loopback: datagrams, senders and kernel arrival timestamps.

import GateCore
import LinuxHardware
import Testing

@Suite struct UDPTransportTests {
    @Test("this machine's own IPv4 addresses (where a phone reaches the page) leave loopback out")
    func interfaceHostsLeaveLoopbackOut() {
        let hosts = UDPAddress.interfaceHosts()
        #expect(!hosts.contains { $0.hasPrefix("127.") })
        #expect(hosts.allSatisfy { $0.split(separator: ".").count == 4 } && Set(hosts).count == hosts.count)
    }

    @Test func arrivalIsTheKernelsReceiveTimeNotTheRead() throws {
        var a = try UDPTransport(host: "127.0.0.1", port: 0)
        var b = try UDPTransport(host: "127.0.0.1", port: 0)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 8)
        defer { buffer.deallocate() }
        if case .processed = try b.receive(into: buffer) { Issue.record("nothing was sent yet") }
        // The kernel turns receive timestamping on in deferred work after the first socket
        // asks for it, so the first datagrams may be stamped only when read: wait (at most
        // a second) until a datagram comes back stamped before it was read.
        for _ in 0..<200 {
            _ = try a.send([0], to: .loopback(port: b.localPort))
            let until = Sys.monotonicNow() + .milliseconds(5)
            while Sys.monotonicNow() < until {}
            let read = Sys.monotonicNow()
            if case let .processed((_, _, arrival)) = try b.receive(into: buffer), read.since(arrival) > .milliseconds(2) { break }
        }
        let before = Sys.monotonicNow()
        _ = try a.send([1, 2, 3], to: .loopback(port: b.localPort))
        // Why a wait: the datagram sits in the socket while the loop is busy elsewhere.
        let until = Sys.monotonicNow() + .milliseconds(30)
        while Sys.monotonicNow() < until {}
        let read = Sys.monotonicNow()
        guard case let .processed((n, from, arrival)) = try b.receive(into: buffer) else {
            Issue.record("loopback datagram not received")
            return
        }
        #expect(n == 3 && Array(buffer[0..<3]) == [1, 2, 3])
        #expect(from == .loopback(port: a.localPort))
        #expect(arrival >= before, "arrival \(arrival) before the send at \(before)")
        #expect(arrival < read, "arrival \(arrival) is the read at \(read), not the kernel's timestamp")
        #expect(read.since(arrival) > .milliseconds(20))
    }
}
