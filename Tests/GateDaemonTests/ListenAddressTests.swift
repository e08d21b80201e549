// SPDX-License-Identifier: Apache-2.0
// Every socket a gate listens on is bound to the address it was given: the demo's NTP
// server and race link on loopback, as its page, so a demo on a laptop serves nothing to
// the network unless told to.

import Engine
import Foundation
import GateCore
import GateDaemon
import Glibc
import LinuxHardware
import Race
import SQLiteStore
import Testing

@Suite(.serialized) struct ListenAddressTests {
    /// The IPv4 address a socket is bound to, dotted.
    func boundAddress(_ fd: Int32) -> String {
        var sa = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &sa) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        let ip = UInt32(bigEndian: sa.sin_addr.s_addr)
        return "\(ip >> 24).\(ip >> 16 & 255).\(ip >> 8 & 255).\(ip & 255)"
    }

    @Test("the NTP server and the race link bind the address given, and every address by default")
    func socketsBindTheGivenAddress() throws {
        for (host, expected) in [("127.0.0.1", "127.0.0.1"), ("0.0.0.0", "0.0.0.0")] {
            let dir = StateDir()
            let epoll = try EpollLoop()
            let storage = GateStorage.start(stateDirectory: dir.path, context: RunContext(preset: nil, startType: .flying), log: LocalRaceTests.log)
            var peer = PeerOptions(role: .host, port: 0, pairingCode: "TRACK-2024", gateID: 1)
            peer.listenHost = host
            let services = try GateServices(storage: storage, web: nil, ntpPort: Int.random(in: 40_000 ... 49_999), listenHost: host, peer: peer,
                                            skew: .none, stateDirectory: dir.path, epoll: epoll, now: Sys.monotonicNow(),
                                            peerLog: LocalRaceTests.log, log: LocalRaceTests.log)
            let ntp = try #require(services.ntp)
            let link = try #require(services.link)
            #expect(boundAddress(ntp.fileDescriptor) == expected)
            #expect(boundAddress(link.fileDescriptor) == expected)
            _ = services.stop()
        }
    }
}
