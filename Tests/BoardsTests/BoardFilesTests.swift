// SPDX-License-Identifier: Apache-2.0
// Loads every boards/*.toml file, decodes it and checks its GPIO lines against boards/chips.

import Foundation
import GateConfig
import GateCore
import Testing

/// Paths in the repository, found from this file's location (Tests/BoardsTests/<file>).
enum Repo {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let boards = root.appendingPathComponent("boards")
    static let chips = boards.appendingPathComponent("chips")

    /// File names of all board files, sorted; empty if the directory cannot be read.
    static func boardFiles() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: boards.path)) ?? []
        return names.filter { $0.hasSuffix(".toml") }.sorted()
    }

    /// Labels of all chip line lists, sorted.
    static func chipLabels() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: chips.path)) ?? []
        return names.filter { $0.hasSuffix(".lines") }.map { String($0.dropLast(".lines".count)) }.sorted()
    }
}

@Suite("Board files")
struct BoardFilesTests {
    @Test("boards/ holds every supported board")
    func everyBoardIsPresent() {
        let expected = [
            "generic-usb.toml", "raspberry-pi-4-usbcam.toml",
            "raspberry-pi-5-usbcam.toml", "raspberry-pi-zero-2w-usbcam.toml",
        ]
        let found = Repo.boardFiles()
        for name in expected {
            #expect(found.contains(name), "missing boards/\(name); found \(found)")
        }
    }

    @Test("decodes and its lines exist on its chips", arguments: Repo.boardFiles())
    func boardDecodesAndValidates(_ name: String) throws {
        let path = Repo.boards.appendingPathComponent(name).path
        let board = try BoardConfig(contentsOf: path)
        #expect(board.source == path)
        #expect(!board.name.isEmpty)
        #expect(board.camera?.device == "/dev/sprintgate/camera")
        try board.validateLineNames(chipsDirectory: Repo.chips.path)
    }

    @Test("every board file opens with an SPDX line and a header comment", arguments: Repo.boardFiles())
    func boardHasHeader(_ name: String) throws {
        let text = try String(contentsOf: Repo.boards.appendingPathComponent(name), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first == "# SPDX-License-Identifier: Apache-2.0")
        for heading in ["# Hardware", "# Wiring", "# OS image:"] {
            #expect(lines.contains { $0.hasPrefix(heading) }, "\(name) has no \(heading) section")
        }
    }

    @Test("Raspberry Pi boards share the documented header wiring")
    func piWiring() throws {
        let expected: [GPIORole: String] = [
            .startButton: "GPIO17", .readyLED: "GPIO22", .armedLED: "GPIO23",
            .crossingLED: "GPIO24", .buzzer: "GPIO27",
        ]
        let chips = [
            "raspberry-pi-4-usbcam.toml": "pinctrl-bcm2711",
            "raspberry-pi-5-usbcam.toml": "pinctrl-rp1",
            "raspberry-pi-zero-2w-usbcam.toml": "pinctrl-bcm2835",
        ]
        for (name, chip) in chips {
            let board = try BoardConfig(contentsOf: Repo.boards.appendingPathComponent(name).path)
            #expect(board.gpio.count == GPIORole.allCases.count, "\(name) wires every role")
            for (role, line) in expected {
                let config = try #require(board.gpio[role], "\(name) has no \(role)")
                #expect(config.line == line, "\(name) \(role)")
                #expect(config.chip == chip, "\(name) \(role)")
            }
            let button = try #require(board.gpio[.startButton])
            #expect(button.activeLow && button.bias == .pullUp && button.debounceMilliseconds > 0)
            // A GPS receiver on USB; the UART's GPIO14/15 stay free for one there.
            #expect(board.gpsReceiver == GPSReceiverConfig(device: "usb"), "\(name)")
        }
    }

    @Test("generic-usb has no GPIO and uses the default audio device")
    func genericUSB() throws {
        let board = try BoardConfig(contentsOf: Repo.boards.appendingPathComponent("generic-usb.toml").path)
        #expect(board.gpio.isEmpty)
        #expect(board.audio.device == "default")
        #expect(board.gpsReceiver == GPSReceiverConfig(device: "usb"))
        try board.validateLineNames(chipsDirectory: Repo.chips.path)
    }

    @Test("every chip list names GPIO2...GPIO27 once each", arguments: Repo.chipLabels())
    func chipListsHaveHeaderLines(_ label: String) throws {
        let chip = try ChipLines(label: label, directory: Repo.chips.path)
        #expect(chip.names.count >= 28)
        for n in 2...27 {
            #expect(chip.offset(of: "GPIO\(n)") == n, "\(label): GPIO\(n) is not unique at offset \(n)")
        }
    }

    @Test("chip lists exist for the three Raspberry Pi header chips")
    func chipListsPresent() {
        #expect(Set(Repo.chipLabels()).isSuperset(of: ["pinctrl-bcm2711", "pinctrl-bcm2835", "pinctrl-rp1"]))
    }
}
