// SPDX-License-Identifier: Apache-2.0
// The page's address as `sprintgate status` and the install message give it.

import Foundation
import Testing
@testable import WebUI

@Suite("Page address")
struct PageAddressTests {
    @Test("on every address: the mDNS name, then each IPv4 address; on one address, that one")
    func urls() {
        let all = PageAddress(host: "0.0.0.0", port: 8080)
        #expect(all.urls(hostname: "finish", addresses: ["192.168.4.1", "10.0.0.7"])
                == ["http://finish.local:8080/", "http://192.168.4.1:8080/", "http://10.0.0.7:8080/"])
        // No network yet: the name alone (Avahi answers it once there is one).
        #expect(all.urls(hostname: "finish", addresses: []) == ["http://finish.local:8080/"])
        // A machine that has no name of its own gives no .local address.
        #expect(all.urls(hostname: "localhost", addresses: ["10.0.0.7"]) == ["http://10.0.0.7:8080/"])
        #expect(all.urls(hostname: "(none)", addresses: []) == [])
        #expect(all.urls(hostname: "gate-2.track.example.org", addresses: []) == ["http://gate-2.local:8080/"])
        #expect(PageAddress(host: "0.0.0.0", port: 80).urls(hostname: "start", addresses: []) == ["http://start.local/"])
        #expect(PageAddress(host: "127.0.0.1", port: 18080).urls(hostname: "start", addresses: ["10.0.0.7"]) == ["http://127.0.0.1:18080/"])
    }

    @Test("kept in the state directory and read back; a missing or damaged file is no address")
    func keptAndRead() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("page-address-\(UUID())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(PageAddress.load(directory: dir) == nil)
        try PageAddress(host: "0.0.0.0", port: 8080).save(directory: dir)
        #expect(PageAddress.load(directory: dir) == PageAddress(host: "0.0.0.0", port: 8080))
        try Data("host=0.0.0.0\nport=eighty\n".utf8).write(to: URL(fileURLWithPath: dir + "/" + PageAddress.fileName))
        #expect(PageAddress.load(directory: dir) == nil)
    }
}
