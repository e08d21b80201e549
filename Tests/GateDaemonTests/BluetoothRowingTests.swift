// SPDX-License-Identifier: Apache-2.0
// The daemon's `[rowing]` without a radio: PM5s picked on the page become ergs and are
// kept across a restart, the settings file's PM5s come first and stay, an adapter's
// eighth PM5 is its last, and a scan where there is no Bluetooth says so. The links
// themselves are tested in the rig (BluetoothRigTests).

import Foundation
import GateConfig
import GateDaemon
import Logging
import Rowing
import Testing
import WebUI

@Suite struct BluetoothRowingTests {
    static func directory(_ name: String) -> String {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("sprintgate-btrowing-\(name)-\(getpid())").path
        try? FileManager.default.removeItem(atPath: d)
        try? FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        return d
    }

    @Test("picks on the page: numbered after the settings file's PM5s, kept across a restart, let go; the settings' PM5 stays; eight is the limit")
    func picks() throws {
        let dir = Self.directory("picks")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var settings = RowingSettings()
        // Why hci15: no such controller here, so every link attempt fails and is retried,
        // as with PM5s switched off.
        settings.controller = 15
        settings.ergs = ["C2:00:00:00:00:01"]
        let first = BluetoothRowing(settings: settings, store: nil, stateDirectory: dir, logger: Logger(label: "test"), clock: { 0 })
        first.start()
        #expect(first.bluetooth.picked.map(\.erg) == [1] && first.bluetooth.picked[0].fromSettings)
        let v0 = first.hub.rowingLive().version
        #expect(try first.hub.pickPM5(address: "c2:00:00:00:00:02") == 2)
        #expect(first.hub.rowingLive().version != v0)
        #expect(try first.hub.pickPM5(address: "C2:00:00:00:00:03") == 3)
        #expect(throws: ResultsBookError.self) { try first.hub.pickPM5(address: "C2:00:00:00:00:02") }
        #expect(throws: ResultsBookError.self) { try first.hub.pickPM5(address: "PM5 430123456") }
        #expect(throws: ResultsBookError.self) { try first.hub.letGo(erg: 1) }
        try first.hub.letGo(erg: 2)
        #expect(throws: ResultsBookError.self) { try first.hub.letGo(erg: 2) }
        #expect(first.hub.rowingLive().board.tiles.map(\.erg) == [1, 3])
        // The freed number is taken again.
        #expect(try first.hub.pickPM5(address: "C2:00:00:00:00:04") == 2)
        first.stop()

        let second = BluetoothRowing(settings: settings, store: nil, stateDirectory: dir, logger: Logger(label: "test"), clock: { 0 })
        second.start()
        defer { second.stop() }
        let live = second.hub.rowingLive()
        #expect(live.bluetooth?.picked.map { "\($0.erg) \($0.address)" } == ["1 C2:00:00:00:00:01", "2 C2:00:00:00:00:04", "3 C2:00:00:00:00:03"])
        #expect(live.board.tiles.map(\.erg) == [1, 2, 3] && live.bluetooth?.controller == "hci15")
        for n in 5...9 { _ = try second.hub.pickPM5(address: "C2:00:00:00:00:0\(n)") }
        #expect(second.bluetooth.picked.count == 8)
        do {
            _ = try second.hub.pickPM5(address: "C2:00:00:00:00:10")
            Issue.record("a ninth PM5 was taken")
        } catch {
            #expect(error.kind == .conflict && error.reason.contains("as many as one adapter takes"))
        }
    }

    @Test("a scan where the controller cannot be reached ends with what is wrong, and the hub goes on")
    func scanWithoutBluetooth() throws {
        let dir = Self.directory("scan")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var settings = RowingSettings()
        settings.controller = 15
        let rowing = BluetoothRowing(settings: settings, store: nil, stateDirectory: dir, logger: Logger(label: "test"), clock: { Date().timeIntervalSince1970 })
        rowing.start()
        defer { rowing.stop() }
        try rowing.hub.scanPM5s()
        let deadline = Date().addingTimeInterval(30)
        while rowing.bluetooth.scanning, Date() < deadline { usleep(20_000) }
        let b = rowing.bluetooth
        #expect(!b.scanning && b.found.isEmpty)
        // Without Bluetooth in the kernel, the socket; with it, the controller hci15.
        #expect(b.scanProblem?.hasPrefix("Bluetooth:") == true || b.scanProblem?.contains("controller") == true, "\(b.scanProblem ?? "no problem")")
    }
}
