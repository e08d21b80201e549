// SPDX-License-Identifier: Apache-2.0
// Each kind of board file mistake raises a ConfigError that names the file, the key and what is allowed.

import Foundation
import GateConfig
import GateCore
import Testing

/// A small valid board file that the cases below break in one place each.
private let validBoard = """
    [board]
    name = "Test board"

    [camera]
    device = "/dev/sprintgate/camera"
    format = "YUYV"
    width = 320
    height = 240
    fps = 60

    [audio]
    device = "default"

    [gpio.start-button]
    chip = "pinctrl-bcm2711"
    line = "GPIO17"
    active_low = true
    bias = "pull-up"
    debounce_ms = 20

    [gpio.ready-led]
    chip = "pinctrl-bcm2711"
    line = "GPIO22"
    active_low = false
    bias = "as-is"

    [peer]
    group = "sprintgate"

    """

private let file = "boards/test.toml"

/// One broken variant of `validBoard` and the error it must raise.
struct BrokenBoard: CustomTestStringConvertible, Sendable {
    let name: String
    /// Text to replace in `validBoard`, and its replacement.
    let replace: String
    let with: String
    let code: ConfigError.Code
    let keyPath: String
    /// Text the message must contain: the offending value and what is allowed.
    let says: String

    var testDescription: String { name }
}

private let cases: [BrokenBoard] = [
    BrokenBoard(
        name: "unknown key",
        replace: "fps = 60",
        with: "fps = 60\nfsp = 60",
        code: .unknownKey,
        keyPath: "camera.fsp",
        says: "allowed keys: device, format, width, height, fps, exposure_us"
    ),
    BrokenBoard(
        name: "relative thermal zone",
        replace: "name = \"Test board\"",
        with: "name = \"Test board\"\nthermal_zone = \"thermal_zone0/temp\"",
        code: .invalidValue,
        keyPath: "board.thermal_zone",
        says: "\"thermal_zone0/temp\" is not an absolute path"
    ),
    BrokenBoard(
        name: "unknown video encoder",
        replace: "name = \"Test board\"",
        with: "name = \"Test board\"\nvideo_encoder = \"h265\"",
        code: .invalidValue,
        keyPath: "board.video_encoder",
        says: "\"h265\" is not one of libx264, h264_v4l2m2m"
    ),
    BrokenBoard(
        name: "unknown top-level table",
        replace: "[peer]",
        with: "[display]\nwidth = 3\n\n[peer]",
        code: .unknownTable,
        keyPath: "display",
        says: "allowed tables: board, camera, audio, gpio, peer"
    ),
    BrokenBoard(
        name: "unknown nested table",
        replace: "[audio]",
        with: "[camera.crop]\nx = 1\n\n[audio]",
        code: .unknownTable,
        keyPath: "camera.crop",
        says: "unknown table"
    ),
    BrokenBoard(
        name: "unknown role",
        replace: "[gpio.ready-led]",
        with: "[gpio.ready]",
        code: .unknownRole,
        keyPath: "gpio.ready",
        says: "allowed roles: start-button, ready-led, armed-led, crossing-led, buzzer"
    ),
    BrokenBoard(
        name: "debounce on an output",
        replace: "bias = \"as-is\"",
        with: "bias = \"as-is\"\ndebounce_ms = 5",
        code: .unknownKey,
        keyPath: "gpio.ready-led.debounce_ms",
        says: "inputs only"
    ),
    BrokenBoard(
        name: "string for integer",
        replace: "fps = 60",
        with: "fps = \"60\"",
        code: .wrongType,
        keyPath: "camera.fps",
        says: "\"60\" is a string; expected an integer, one of 30, 60, 90, 120"
    ),
    BrokenBoard(
        name: "float for integer",
        replace: "width = 320",
        with: "width = 320.0",
        code: .wrongType,
        keyPath: "camera.width",
        says: "is a float; expected an integer in 16...4096"
    ),
    BrokenBoard(
        name: "string for boolean",
        replace: "active_low = true",
        with: "active_low = \"yes\"",
        code: .wrongType,
        keyPath: "gpio.start-button.active_low",
        says: "expected true or false"
    ),
    BrokenBoard(
        name: "value for table",
        replace: "[board]\nname = \"Test board\"",
        with: "board = \"Test board\"",
        code: .wrongType,
        keyPath: "board",
        says: "\"Test board\" is a string; expected a table"
    ),
    BrokenBoard(
        name: "fps not allowed",
        replace: "fps = 60",
        with: "fps = 25",
        code: .outOfRange,
        keyPath: "camera.fps",
        says: "25 is not one of 30, 60, 90, 120"
    ),
    BrokenBoard(
        name: "width out of range",
        replace: "width = 320",
        with: "width = 8",
        code: .outOfRange,
        keyPath: "camera.width",
        says: "8 is out of range 16...4096"
    ),
    BrokenBoard(
        name: "height out of range",
        replace: "height = 240",
        with: "height = 5000",
        code: .outOfRange,
        keyPath: "camera.height",
        says: "5000 is out of range 16...4096"
    ),
    BrokenBoard(
        name: "exposure longer than a frame",
        replace: "fps = 60",
        with: "fps = 60\nexposure_us = 20000",
        code: .outOfRange,
        keyPath: "camera.exposure_us",
        says: "20000 is out of range 1...16666 (one frame period at 60 fps)"
    ),
    BrokenBoard(
        name: "debounce out of range",
        replace: "debounce_ms = 20",
        with: "debounce_ms = 900",
        code: .outOfRange,
        keyPath: "gpio.start-button.debounce_ms",
        says: "900 is out of range 0...500"
    ),
    BrokenBoard(
        name: "unknown bias",
        replace: "bias = \"as-is\"",
        with: "bias = \"pullup\"",
        code: .notOneOf,
        keyPath: "gpio.ready-led.bias",
        says: "\"pullup\" is not one of as-is, disable, pull-up, pull-down"
    ),
    BrokenBoard(
        name: "unknown pixel format",
        replace: "format = \"YUYV\"",
        with: "format = \"MJPG\"",
        code: .notOneOf,
        keyPath: "camera.format",
        says: "\"MJPG\" is not one of GREY, YUYV, NV12, YU12"
    ),
    BrokenBoard(
        name: "duplicate line",
        replace: "line = \"GPIO22\"",
        with: "line = \"GPIO17\"",
        code: .duplicateLine,
        keyPath: "gpio.ready-led.line",
        says: "\"GPIO17\" on pinctrl-bcm2711 is already used by gpio.start-button"
    ),
    BrokenBoard(
        name: "missing required key",
        replace: "height = 240\n",
        with: "",
        code: .missingKey,
        keyPath: "camera.height",
        says: "missing required key; expected an integer in 16...4096"
    ),
    BrokenBoard(
        name: "missing active_low",
        replace: "active_low = false\n",
        with: "",
        code: .missingKey,
        keyPath: "gpio.ready-led.active_low",
        says: "expected true or false"
    ),
    BrokenBoard(
        name: "missing required table",
        replace: "[peer]\ngroup = \"sprintgate\"\n",
        with: "",
        code: .missingKey,
        keyPath: "peer",
        says: "missing required table [peer]"
    ),
    BrokenBoard(
        name: "camera not under /dev",
        replace: "device = \"/dev/sprintgate/camera\"",
        with: "device = \"video0\"",
        code: .invalidValue,
        keyPath: "camera.device",
        says: "\"video0\" is not under /dev/; expected e.g. /dev/sprintgate/camera"
    ),
    BrokenBoard(
        name: "peer group with spaces",
        replace: "group = \"sprintgate\"",
        with: "group = \"Track 1\"",
        code: .invalidValue,
        keyPath: "peer.group",
        says: "1 to 32 characters from a-z, 0-9 and -"
    ),
    BrokenBoard(
        name: "empty audio device",
        replace: "device = \"default\"",
        with: "device = \"\"",
        code: .invalidValue,
        keyPath: "audio.device",
        says: "expected an ALSA PCM name"
    ),
]

/// The error `text` raises, or nil if it decodes.
private func decodeError(_ text: String) -> ConfigError? {
    do {
        _ = try BoardConfig(toml: text, file: file)
        return nil
    } catch {
        return error
    }
}

@Suite("Config errors")
struct ConfigErrorTests {
    @Test("the unbroken board decodes to the values written")
    func validBoardDecodes() throws {
        let board = try BoardConfig(toml: validBoard, file: file)
        #expect(board.source == file)
        #expect(board.camera?.width == 320 && board.camera?.height == 240 && board.camera?.fps == 60)
        #expect(board.camera?.format == .yuyv)
        #expect(board.camera?.exposureMicroseconds == nil)
        #expect(board.audio.device == "default")
        #expect(board.peer.group == "sprintgate")
        #expect(
            board.gpio[.startButton]
                == GPIOLineConfig(
                    chip: "pinctrl-bcm2711",
                    line: "GPIO17",
                    activeLow: true,
                    bias: .pullUp,
                    debounceMilliseconds: 20
                )
        )
        #expect(
            board.gpio[.readyLED]
                == GPIOLineConfig(
                    chip: "pinctrl-bcm2711",
                    line: "GPIO22",
                    activeLow: false,
                    bias: .asIs,
                    debounceMilliseconds: 0
                )
        )
        #expect(board.gpio[.buzzer] == nil)
        #expect(board.thermalZone == "/sys/class/thermal/thermal_zone0/temp")
        try board.validateLineNames(chipsDirectory: Repo.chips.path)
        let zone = validBoard.replacingOccurrences(of: "name = \"Test board\"",
                                                   with: "name = \"Test board\"\nthermal_zone = \"/sys/class/thermal/thermal_zone2/temp\"")
        #expect(try BoardConfig(toml: zone, file: file).thermalZone == "/sys/class/thermal/thermal_zone2/temp")
        // The delayed video's encoder: libx264 unless the board names its hardware encoder.
        #expect(board.videoEncoder == "libx264")
        let hardware = validBoard.replacingOccurrences(of: "name = \"Test board\"", with: "name = \"Test board\"\nvideo_encoder = \"h264_v4l2m2m\"")
        #expect(try BoardConfig(toml: hardware, file: file).videoEncoder == "h264_v4l2m2m")
    }

    @Test("[gps_receiver]: none when absent; usb; a UART with its baud; bad devices and bauds named")
    func gpsReceiver() throws {
        #expect(try BoardConfig(toml: validBoard, file: file).gpsReceiver == nil)
        #expect(try BoardConfig(toml: validBoard + "\n[gps_receiver]\ndevice = \"usb\"\n", file: file).gpsReceiver == GPSReceiverConfig(device: "usb"))
        let uart = try BoardConfig(toml: validBoard + "\n[gps_receiver]\ndevice = \"/dev/serial0\"\nbaud = 9600\n", file: file)
        #expect(uart.gpsReceiver == GPSReceiverConfig(device: "/dev/serial0", baud: 9600))
        for (table, key, says) in [("device = \"serial0\"", "gps_receiver.device", "not \"usb\" or a serial device under /dev/"),
                                   ("device = \"usb\"\nbaud = 9600", "gps_receiver.baud", "a receiver on USB has no baud rate"),
                                   ("device = \"/dev/ttyS0\"\nbaud = 9601", "gps_receiver.baud", "not one of 4800, 9600"),
                                   ("device = \"usb\"\nspeed = 9600", "gps_receiver.speed", "allowed keys: device, baud")] {
            let error = try #require(decodeError(validBoard + "\n[gps_receiver]\n" + table + "\n"), "\(table) decoded")
            #expect(error.keyPath == key && error.message.contains(says), "\(error)")
        }
    }

    @Test("optional keys take their defaults")
    func defaults() throws {
        let text = validBoard.replacingOccurrences(of: "bias = \"pull-up\"\ndebounce_ms = 20\n", with: "")
        #expect(text != validBoard)
        let button = try #require(try BoardConfig(toml: text, file: file).gpio[.startButton])
        #expect(button.bias == .asIs)
        #expect(button.debounceMilliseconds == 0)
    }

    @Test("a broken board names file, key and what is allowed", arguments: cases)
    func brokenBoard(_ broken: BrokenBoard) throws {
        let text = validBoard.replacingOccurrences(of: broken.replace, with: broken.with)
        try #require(text != validBoard, "the case's replace text is not in the valid board")
        let error = try #require(decodeError(text), "decoded without error")
        #expect(error.code == broken.code, "\(error)")
        #expect(error.file == file)
        #expect(error.keyPath == broken.keyPath, "\(error)")
        #expect(error.message.contains(broken.says), "\(error)")
        #expect(error.description == "\(file): \(broken.keyPath): \(error.message)")
    }

    @Test("the bias error reads exactly as documented")
    func biasDescription() throws {
        let text = validBoard.replacingOccurrences(of: "bias = \"as-is\"", with: "bias = \"pullup\"")
        let error = try #require(decodeError(text))
        #expect(
            error.description
                == #"boards/test.toml: gpio.ready-led.bias: "pullup" is not one of as-is, disable, pull-up, pull-down"#
        )
    }

    @Test("a TOML syntax error names the file and position")
    func syntaxError() throws {
        let error = try #require(decodeError(validBoard.replacingOccurrences(of: "fps = 60", with: "fps = = 60")))
        #expect(error.code == .syntax)
        #expect(error.keyPath.isEmpty)
        #expect(error.description.hasPrefix("\(file): line 9, column"), "\(error)")
    }

    @Test("a missing file is unreadable and named")
    func missingFile() throws {
        let path = Repo.boards.appendingPathComponent("no-such-board.toml").path
        let error = try #require(throws: ConfigError.self) { try BoardConfig(contentsOf: path) }
        #expect(error.code == .unreadable)
        #expect(error.description.hasPrefix("\(path): cannot open"), "\(error)")
    }

    @Test("a line that is not on its chip is named with its key")
    func unknownLine() throws {
        let text = validBoard.replacingOccurrences(of: "line = \"GPIO22\"", with: "line = \"GPIO99\"")
        let board = try BoardConfig(toml: text, file: file)
        let error = try #require(throws: ConfigError.self) {
            try board.validateLineNames(chipsDirectory: Repo.chips.path)
        }
        #expect(
            error.code == .unknownLine && error.file == file && error.keyPath == "gpio.ready-led.line"
                && error.message.contains("\"GPIO99\" is not a line of pinctrl-bcm2711"),
            "\(error)"
        )
    }

    @Test("a line name shared by several lines is refused")
    func ambiguousLine() throws {
        let text =
            validBoard
            .replacingOccurrences(of: "pinctrl-bcm2711", with: "pinctrl-rp1")
            .replacingOccurrences(of: "line = \"GPIO22\"", with: "line = \"-\"")
        let board = try BoardConfig(toml: text, file: file)
        let error = try #require(throws: ConfigError.self) {
            try board.validateLineNames(chipsDirectory: Repo.chips.path)
        }
        #expect(
            error.code == .unknownLine && error.keyPath == "gpio.ready-led.line"
                && error.message.contains("lines of pinctrl-rp1"),
            "\(error)"
        )
    }

    @Test("a chip without a line list is named with its key")
    func unknownChip() throws {
        let text = validBoard.replacingOccurrences(of: "pinctrl-bcm2711", with: "pinctrl-bcm9999")
        let board = try BoardConfig(toml: text, file: file)
        let error = try #require(throws: ConfigError.self) {
            try board.validateLineNames(chipsDirectory: Repo.chips.path)
        }
        #expect(
            error.code == .unknownChip && error.file == file && error.keyPath == "gpio.start-button.chip"
                && error.message.contains("pinctrl-bcm9999"),
            "\(error)"
        )
    }
}
