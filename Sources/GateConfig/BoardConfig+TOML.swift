// SPDX-License-Identifier: Apache-2.0
// Decodes boards/*.toml text into BoardConfig, rejecting anything the schema does not define.

public import GateCore

internal import TOMLKit

extension BoardConfig {
    /// Decodes the text of a board file.
    ///
    /// Unknown tables and keys, wrong TOML types, missing required keys, values out of range
    /// and two roles on one line are all errors; the first one found is thrown.
    /// - Parameters:
    ///   - text: The TOML document.
    ///   - file: How errors and `source` name the document, e.g. `boards/raspberry-pi-4-usbcam.toml`.
    public init(toml text: String, file: String) throws(ConfigError) {
        let root: TOMLTable
        do {
            root = try TOMLTable(string: text)
        } catch let parse as TOMLParseError {
            let at = parse.source.begin
            throw ConfigError(
                code: .syntax,
                file: file,
                keyPath: "",
                message: "line \(at.line), column \(at.column): \(parse.description)"
            )
        } catch {
            throw ConfigError(code: .syntax, file: file, keyPath: "", message: "\(error)")
        }

        let doc = TableReader(table: root, path: "", file: file)
        try doc.checkKeys(Self.knownKeys.keys(""), tables: Self.knownKeys.topLevelTables)
        let board = try doc.requiredTable("board")
        try board.checkKeys(Self.knownKeys.keys("board"))
        let encoder = try board.string("video_encoder", "one of " + BoardConfig.videoEncoders.joined(separator: ", "))
        if let encoder, !BoardConfig.videoEncoders.contains(encoder) {
            throw board.error(.invalidValue, "video_encoder",
                              "\"\(encoder)\" is not one of " + BoardConfig.videoEncoders.joined(separator: ", "))
        }
        self.init(
            name: try board.string("name", expected: "a non-empty name of at most 64 characters", maxLength: 64),
            camera: try doc.table("camera").map(Self.camera),
            audio: try Self.audio(doc.requiredTable("audio")),
            gpio: try doc.table("gpio").map(Self.gpio) ?? [:],
            peer: try Self.peer(doc.requiredTable("peer")),
            source: file,
            thermalZone: try board.optionalAbsolutePath("thermal_zone", "file") ?? BoardConfig.defaultThermalZone,
            videoEncoder: encoder ?? "libx264",
            gpsReceiver: try doc.table("gps_receiver").map(Self.gpsReceiver)
        )
    }

    private static func gpsReceiver(_ r: TableReader) throws(ConfigError) -> GPSReceiverConfig {
        try r.checkKeys(knownKeys.keys("gps_receiver"))
        let device = try r.string("device", expected: "\"usb\" or a serial device under /dev/, e.g. /dev/serial0") {
            $0.isVisibleASCII
        }
        guard device == "usb" || (device.hasPrefix("/dev/") && device.count > 5) else {
            throw r.error(.invalidValue, "device", "\"\(device)\" is not \"usb\" or a serial device under /dev/, e.g. /dev/serial0")
        }
        var baud: Int?
        if r.table["baud"] != nil {
            guard device != "usb" else { throw r.error(.invalidValue, "baud", "a receiver on USB has no baud rate: leave baud out") }
            baud = try r.int("baud", oneOf: GPSReceiverConfig.bauds)
        }
        return GPSReceiverConfig(device: device, baud: baud)
    }

    /// Reads and decodes the board file at `path`; errors name the file as `path`.
    public init(contentsOf path: String) throws(ConfigError) {
        try self.init(toml: readTextFile(path), file: path)
    }

    private static func camera(_ r: TableReader) throws(ConfigError) -> CameraConfig {
        try r.checkKeys(knownKeys.keys("camera"))
        let device = try r.string("device", expected: "a device path under /dev/, e.g. /dev/sprintgate/camera") {
            $0.isVisibleASCII
        }
        guard device.hasPrefix("/dev/"), device.count > 5 else {
            throw r.error(
                .invalidValue,
                "device",
                "\"\(device)\" is not under /dev/; expected e.g. /dev/sprintgate/camera"
            )
        }
        let names = CameraConfig.allowedFormats.map(\.name).joined(separator: ", ")
        let formatName = try r.required(
            r.string("format", "a string, one of \(names)"),
            "format",
            "a string, one of \(names)"
        )
        guard let format = CameraConfig.allowedFormats.first(where: { $0.name == formatName })?.format else {
            throw r.error(.notOneOf, "format", "\"\(formatName)\" is not one of \(names)")
        }
        let width = try r.int("width", in: CameraConfig.sizeRange)
        let height = try r.int("height", in: CameraConfig.sizeRange)
        let fps = try r.int("fps", oneOf: CameraConfig.allowedFrameRates)
        // Why: an exposure longer than the frame period forces the camera to drop its rate.
        let exposure = try r.optionalInt(
            "exposure_us",
            in: 1...(1_000_000 / fps),
            why: "one frame period at \(fps) fps"
        )
        return CameraConfig(
            device: device,
            format: format,
            width: width,
            height: height,
            fps: fps,
            exposureMicroseconds: exposure
        )
    }

    private static func audio(_ r: TableReader) throws(ConfigError) -> AudioConfig {
        try r.checkKeys(knownKeys.keys("audio"))
        let device = try r.string(
            "device",
            expected: "an ALSA PCM name such as default or plughw:CARD=Headphones,DEV=0"
        ) {
            $0.isVisibleASCII
        }
        return AudioConfig(device: device)
    }

    private static func peer(_ r: TableReader) throws(ConfigError) -> PeerConfig {
        try r.checkKeys(knownKeys.keys("peer"))
        let length = PeerConfig.nameLength
        let group = try r.string(
            "group",
            expected: "\(length.lowerBound) to \(length.upperBound) characters from a-z, 0-9 and -",
            maxLength: length.upperBound
        ) { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
        return PeerConfig(group: group)
    }

    private static func gpio(_ r: TableReader) throws(ConfigError) -> [GPIORole: GPIOLineConfig] {
        var lines: [GPIORole: GPIOLineConfig] = [:]
        for key in r.keys {
            guard let role = GPIORole(rawValue: key) else {
                let roles = GPIORole.allCases.map(\.rawValue).joined(separator: ", ")
                throw r.error(.unknownRole, key, "unknown GPIO role; allowed roles: \(roles)")
            }
            lines[role] = try line(r.required(r.table(key), key, "a table"), role: role)
        }
        // Two roles on one line would fight over it; the later role in declaration order is named.
        var owner: [String: GPIORole] = [:]
        for role in GPIORole.allCases {
            guard let line = lines[role] else { continue }
            let id = "\(line.chip)\u{0}\(line.line)"
            if let first = owner[id] {
                throw r.error(
                    .duplicateLine,
                    "\(role).line",
                    "\"\(line.line)\" on \(line.chip) is already used by gpio.\(first)"
                )
            }
            owner[id] = role
        }
        return lines
    }

    private static func line(_ r: TableReader, role: GPIORole) throws(ConfigError) -> GPIOLineConfig {
        let isInput = role.direction == .input
        if !isInput, r.keys.contains("debounce_ms") {
            throw r.error(.unknownKey, "debounce_ms", "applies to inputs only; \(role) is an output")
        }
        // The list names debounce_ms, which input roles alone take.
        try r.checkKeys(knownKeys.keys("gpio.<role>").filter { isInput || $0 != "debounce_ms" })
        let chip = try r.string("chip", expected: "a chip label such as pinctrl-bcm2711") {
            $0.isVisibleASCII && $0 != "/"
        }
        let line = try r.string("line", expected: "a line name such as GPIO17") { $0.isVisibleASCII }
        let activeLow = try r.bool("active_low")
        let bias = try r.optionalWord("bias", GPIOBias.self) ?? .asIs
        let debounce = try r.optionalInt("debounce_ms", in: GPIOLineConfig.debounceRange) ?? 0
        return GPIOLineConfig(chip: chip, line: line, activeLow: activeLow, bias: bias, debounceMilliseconds: debounce)
    }
}
