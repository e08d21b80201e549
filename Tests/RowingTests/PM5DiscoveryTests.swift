// SPDX-License-Identifier: Apache-2.0
// Finding PM5s: BlueZ's management events decoded strictly, advertising data read, and a
// PM5 told from other devices by its name or its service, its scan response's name kept.

import GATT
import Rowing
import Testing

@Suite("PM5 discovery")
struct PM5DiscoveryTests {
    /// A Device Found event as the kernel sends it (doc/mgmt-api.txt).
    static func deviceFound(index: UInt16 = 0, address: [UInt8], type: UInt8 = 1, rssi: Int8 = -60, data: [UInt8]) -> [UInt8] {
        let params: [UInt8] = address.reversed() + [type, UInt8(bitPattern: rssi), 0, 0, 0, 0, UInt8(data.count & 0xFF), UInt8(data.count >> 8)] + data
        return [0x12, 0x00, UInt8(index), 0x00, UInt8(params.count), 0x00] + params
    }

    static let pm5Address: [UInt8] = [0xC2, 0x11, 0x22, 0x33, 0x44, 0x55]

    @Test("Start Discovery's bytes; Command Complete, Discovering and Device Found decoded; a packet whose lengths disagree refused")
    func managementPackets() throws {
        #expect(MgmtCommand.startLEDiscovery(index: 1) == [0x23, 0x00, 0x01, 0x00, 0x01, 0x00, 0x06])
        #expect(MgmtCommand.stopLEDiscovery(index: 0) == [0x24, 0x00, 0x00, 0x00, 0x01, 0x00, 0x06])
        #expect(MgmtEvent([0x01, 0x00, 0x00, 0x00, 0x04, 0x00, 0x23, 0x00, 0x0A, 0x06]) == .commandComplete(index: 0, opcode: 0x23, status: 0x0A))
        #expect(MgmtEvent([0x13, 0x00, 0x00, 0x00, 0x02, 0x00, 0x06, 0x00]) == .discovering(index: 0, types: 6, on: false))
        let ad = AdvertisingData.advertisement(services: [PM5Finder.service])
        let packet = Self.deviceFound(address: Self.pm5Address, type: 2, rssi: -48, data: ad)
        guard case .deviceFound(0, let d)? = MgmtEvent(packet) else { Issue.record("not a Device Found"); return }
        #expect(d.address == Self.pm5Address && d.random && d.rssi == -48 && d.data == ad)
        // Every cut and every wrong length field is refused, never read past.
        for n in 0..<packet.count { #expect(MgmtEvent(Array(packet[..<n])) == nil) }
        var wrong = packet
        wrong[18] &+= 1
        #expect(MgmtEvent(wrong) == nil)
        #expect(MgmtEvent([0x06, 0x00, 0x00, 0x00, 0x00, 0x00]) == .other(index: 0, code: 6))
        #expect(MgmtEvent.statusText(0x14).contains("CAP_NET_ADMIN"))
    }

    @Test("advertising data: the PM5's service and name read back; a structure running past the end refused; zero padding ends it")
    func advertisingData() throws {
        let ad = AdvertisingData.advertisement(services: [PM5Finder.service])
        #expect(ad.count <= 31)
        let read = try #require(AdvertisingData(ad + AdvertisingData.scanResponse(name: "PM5 430123456") + [0, 0, 0]))
        #expect(read.name == "PM5 430123456" && read.services == [PM5Finder.service])
        #expect(PM5Finder.service.description == "CE060000-43E5-11E4-916C-0800200C9A66")
        #expect(AdvertisingData([5, 0x09, 0x50, 0x4D]) == nil)
        #expect(AdvertisingData([3, 0x03, 0x0D]) == nil)
        #expect(try #require(AdvertisingData([3, 0x03, 0x0D, 0x18])).services == [BLEUUID(0x180D)])
        // A shortened name does not replace a complete one.
        #expect(try #require(AdvertisingData([4, 0x09, 0x50, 0x4D, 0x35, 2, 0x08, 0x50])).name == "PM5")
    }

    @Test("PM5s told from other devices; the scan response's name joins its advertisement; strongest first")
    func finder() throws {
        var f = PM5Finder()
        let ad = AdvertisingData.advertisement(services: [PM5Finder.service])
        func heard(_ address: [UInt8], _ data: [UInt8], rssi: Int8 = -60, at t: Double) {
            guard case .deviceFound(_, let d)? = MgmtEvent(Self.deviceFound(address: address, rssi: rssi, data: data)) else { return }
            f.heard(d, at: t)
        }
        heard(Self.pm5Address, ad, rssi: -70, at: 1)
        #expect(f.found.count == 1 && f.found[0].name == nil && f.found[0].address == "C2:11:22:33:44:55")
        heard(Self.pm5Address, AdvertisingData.scanResponse(name: "PM5 430123456"), rssi: -70, at: 1.1)
        #expect(f.found[0].name == "PM5 430123456" && f.found[0].lastHeard == 1.1)
        // A heart-rate strap, then a second PM5 known by its name only (its service in a
        // scan response not yet heard), stronger.
        heard([0xAA, 0, 0, 0, 0, 1], [3, 0x03, 0x0D, 0x18], at: 2)
        heard([0xAA, 0, 0, 0, 0, 1], [3, 0x03, 0x0D, 0x18], at: 2.5)
        heard([0xC2, 0, 0, 0, 0, 2], AdvertisingData.scanResponse(name: "PM5 430999999"), rssi: -40, at: 3)
        #expect(f.found.map(\.name) == ["PM5 430999999", "PM5 430123456"] && f.others == 1)
        // A device first heard without name or service, then by its name: a PM5 after all.
        heard([0xC2, 0, 0, 0, 0, 3], [2, 0x01, 0x06], at: 4)
        #expect(f.others == 2)
        heard([0xC2, 0, 0, 0, 0, 3], AdvertisingData.scanResponse(name: "PM5 430555555"), rssi: -90, at: 4.1)
        #expect(f.found.count == 3 && f.others == 1)
        heard([0xC2, 0, 0, 0, 0, 4], [9, 0x09, 0x50], at: 5)
        #expect(f.unreadable == 1 && f.found.count == 3)
    }
}
