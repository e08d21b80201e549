// SPDX-License-Identifier: Apache-2.0
// The gate's own settings file (/etc/sprintgate/gate.toml): a board file plus overrides.

public import Archery
public import Detector
public import Engine
public import GateCore
import GATT
public import VideoDelay

internal import TOMLKit
import Foundation

/// Everything `sprintgate run` needs: the board, the detector, the engine and where to
/// keep state. Decoded strictly: unknown keys and bad values stop start-up with an error
/// naming file, key and allowed range.
public struct GateSettings: Sendable {
    /// The settings file these came from.
    public var source: String
    /// The board file (absolute, or relative to the settings file) and its decoded contents
    /// with the `[camera]` overrides applied.
    public var boardPath: String
    public var board: BoardConfig
    /// Where runs and the state of a run in progress are kept.
    public var stateDirectory: String
    /// Gate line column in input pixels; `nil` for the middle of the frame.
    public var gateX: Double?
    public var preset: Preset?
    public var speedUnit: SpeedUnit
    public var engine: EngineConfig
    public var minHeight: Double?
    /// What the camera gate times (`[detector] subject`): athletes' torsos by default, or
    /// vehicles' foremost points for a speed trap or an ET timer.
    public var subject: CrossingSubject = .athlete
    /// In work-image pixels per second.
    public var minVelocity: Double?
    public var motionThreshold: Int?
    public var rowReadout: Span
    /// The `[peers]` table: multi-gate racing, off when the table is absent.
    public var peers: PeerSettings?
    /// The `[ski]` table: how the ski track logger tells runs from lifts and stops, for skiers
/// and for snowboarders (who sit down longer between turns).
///
/// ```toml
/// [ski]
/// min_run_s = 30                  # shorter descents are not runs (a hop between lifts)
/// min_vertical_m = 30             # nor are descents of less vertical
/// longest_pause_s = 90            # a longer stop ends a run
/// snowboard_min_run_s = 30
/// snowboard_min_vertical_m = 30
/// snowboard_longest_pause_s = 180
/// button = false                  # the start button starts and stops tracking (not
///                                 # sprints), while the delay video mode is off
/// sport = "ski"                   # "ski" or "snowboard": tracks the button starts
/// ```
public struct SkiTrackSettings: Sendable, Hashable {
    public var button = false
    public var sport = "ski"
    public var minRunSeconds = 30
    public var minVerticalMetres = 30
    public var longestPauseSeconds = 90
    public var snowboardMinRunSeconds = 30
    public var snowboardMinVerticalMetres = 30
    public var snowboardLongestPauseSeconds = 180

    public init() {}

    init(_ t: TableReader) throws(ConfigError) {
        try t.checkKeys(GateSettings.knownKeys.keys("ski"))
        if let v = try t.bool("button", "true or false") { button = v }
        if let v = try t.string("sport", "\"ski\" or \"snowboard\"") {
            guard v == "ski" || v == "snowboard" else { throw t.error(.invalidValue, "sport", "\"\(v)\" is not \"ski\" or \"snowboard\"") }
            sport = v
        }
        let run = "a run lasts at least 5 s and at most 10 minutes are asked of it"
        let vertical = "a run drops at least 5 m and at most 500 m are asked of it"
        let pause = "a stop inside a run lasts 10 s to 15 minutes"
        if let v = try t.optionalInt("min_run_s", in: 5 ... 600, why: run) { minRunSeconds = v }
        if let v = try t.optionalInt("min_vertical_m", in: 5 ... 500, why: vertical) { minVerticalMetres = v }
        if let v = try t.optionalInt("longest_pause_s", in: 10 ... 900, why: pause) { longestPauseSeconds = v }
        if let v = try t.optionalInt("snowboard_min_run_s", in: 5 ... 600, why: run) { snowboardMinRunSeconds = v }
        if let v = try t.optionalInt("snowboard_min_vertical_m", in: 5 ... 500, why: vertical) { snowboardMinVerticalMetres = v }
        if let v = try t.optionalInt("snowboard_longest_pause_s", in: 10 ... 900, why: pause) { snowboardLongestPauseSeconds = v }
    }
}

/// The `[video]` table: the delay mode, off when the table is absent or not enabled.
    public var video: VideoSettings?
    /// The `[video]` table as written, enabled or not (the page turns the delay mode on
    /// with its values).
    public var videoTable: VideoSettings?
    /// The `[gps]` table: GPS timing through gpsd, off when the table is absent.
    public var gps: GPSSettings?
    /// The ski track logger's settings (it runs wherever `[gps]` does).
    public var ski = SkiTrackSettings()
    /// The `[mqtt]` table: results and status published to a broker, off when absent.
    public var mqtt: MQTTSettings?
    /// The `[rowing]` table: the rowing hub for PM5s over Bluetooth, off when absent.
    public var rowing: RowingSettings?

    /// The detector settings for frames of `width` (the gate line defaults to the middle).
    public func detectorConfig(width: Int) -> DetectorConfig {
        var c = DetectorConfig(gateX: gateX ?? Double(width) / 2)
        c.subject = subject
        if let minHeight { c.minCrossingHeight = minHeight }
        if let minVelocity { c.minVelocity = minVelocity }
        if let motionThreshold { c.motionThreshold = motionThreshold }
        c.rowReadout = rowReadout
        return c
    }

    /// Reads and decodes the settings file at `path`, then its board file.
    public init(contentsOf path: String) throws(ConfigError) {
        try self.init(toml: readTextFile(path), file: path)
    }

    /// Where the installed board files are, for `board = "auto"`.
    public static let installedBoards = "/usr/share/sprintgate/boards"

    /// The board file for a device-tree model string (`/proc/device-tree/model`): the
    /// Raspberry Pi's own, else the generic USB camera board.
    public static func boardName(forModel model: String?) -> String {
        let m = model ?? ""
        if m.contains("Raspberry Pi 5") { return "raspberry-pi-5-usbcam" }
        if m.contains("Raspberry Pi 4") { return "raspberry-pi-4-usbcam" }
        if m.contains("Raspberry Pi Zero 2") { return "raspberry-pi-zero-2w-usbcam" }
        return "generic-usb"
    }

    /// This machine's device-tree model, nil without one (not a board with a device tree).
    public static func deviceModel() -> String? {
        guard let text = try? readTextFile("/proc/device-tree/model") else { return nil }
        let model = text.replacingOccurrences(of: "\0", with: "").trimmingCharacters(in: .whitespacesAndNewlines)
        return model.isEmpty ? nil : model
    }

    /// `board = "auto"` picks the board file for `model` (this machine's by default) in
    /// `boards` (the installed board files by default).
    public init(toml text: String, file: String, model: @autoclosure () -> String? = GateSettings.deviceModel(),
                boards: String = GateSettings.installedBoards) throws(ConfigError) {
        let root: TOMLTable
        do {
            root = try TOMLTable(string: text)
        } catch let parse as TOMLParseError {
            throw ConfigError(code: .syntax, file: file, keyPath: "",
                              message: "line \(parse.source.begin.line), column \(parse.source.begin.column): \(parse.description)")
        } catch {
            throw ConfigError(code: .syntax, file: file, keyPath: "", message: "\(error)")
        }
        let doc = TableReader(table: root, path: "", file: file)
        try doc.checkKeys(Self.knownKeys.keys(""), tables: Self.knownKeys.topLevelTables)
        source = file
        let board = try doc.string("board", expected: "the path of a board file, e.g. /usr/share/sprintgate/boards/generic-usb.toml, or \"auto\"")
        let dir = file.contains("/") ? String(file[..<file.lastIndex(of: "/")!]) : "."
        if board == "auto" {
            boardPath = boards + "/" + Self.boardName(forModel: model()) + ".toml"
        } else {
            boardPath = board.hasPrefix("/") ? board : dir + "/" + board
        }
        do {
            self.board = try BoardConfig(contentsOf: boardPath)
        } catch {
            if error.code == .unreadable {
                throw doc.error(.invalidValue, "board", "cannot read \(boardPath); expected an existing board file")
            }
            throw error
        }
        stateDirectory = try doc.optionalAbsolutePath("state_dir", "directory") ?? "/var/lib/sprintgate"

        var engine = EngineConfig()
        gateX = nil
        preset = nil
        speedUnit = .metresPerSecond
        if let gate = try doc.table("gate") {
            try gate.checkKeys(Self.knownKeys.keys("gate"))
            gateX = try gate.optionalNumber("gate_x", in: 0...8192, unit: " input pixels")
            if let id = try gate.string("preset", "a preset name") {
                guard let p = Preset.named(id) else {
                    throw gate.error(.notOneOf, "preset", "\"\(id)\" is not one of \(Preset.all.map(\.id).joined(separator: ", "))")
                }
                preset = p
                engine.startType = p.startType
                engine.solo = p.solo
            }
            if let d = try gate.optionalNumber("distance_m", in: 1...10_000, unit: " m") {
                guard let p = preset, !p.distances.isEmpty else {
                    throw gate.error(.invalidValue, "distance_m", "only a preset that offers distances takes one (\(Preset.all.filter { !$0.distances.isEmpty }.map(\.id).joined(separator: ", ")))")
                }
                guard let chosen = p.choosing(distance: d) else {
                    throw gate.error(.notOneOf, "distance_m", "\(d) is not one of \(p.distances.map { $0 == $0.rounded() ? String(Int($0)) : String($0) }.joined(separator: ", ")) m for preset \(p.id)")
                }
                preset = chosen
            }
            if let st = try gate.optionalWord("start_type", StartType.self) { engine.startType = st }
            if let solo = try gate.bool("solo", "true or false") { engine.solo = solo }
            if let v = try gate.bool("rearm", "true or false") { engine.autoRearm = v }
            if let s = try gate.optionalNumber("rearm_s", in: EngineConfig.rearmDelays, unit: " s") { engine.rearmDelay = .seconds(s) }
            if let unit = try gate.optionalWord("speed_unit", SpeedUnit.self) { speedUnit = unit }
        }
        if let start = try doc.table("start") {
            try start.checkKeys(Self.knownKeys.keys("start"))
            if let r = try start.optionalRange("marks_pause_s", within: 3...20, unit: " s") { engine.marksPause = r }
            if let r = try start.optionalRange("set_pause_s", within: 0.5...5, unit: " s") { engine.setPause = r }
            if let s = try start.string("start_sound", "one of beep, gunshot, whistle") {
                guard let sound = GateSound(rawValue: s), [.beep, .gunshot, .whistle].contains(sound) else {
                    throw start.error(.notOneOf, "start_sound", "\"\(s)\" is not one of beep, gunshot, whistle")
                }
                engine.startSound = sound
            }
        }
        if let fb = try doc.table("feedback") {
            try fb.checkKeys(Self.knownKeys.keys("feedback"))
            if let v = try fb.bool("crossing_sound", "true or false") { engine.crossingSound = v }
            if let v = try fb.bool("crossing_led", "true or false") { engine.crossingLED = v }
            if let v = try fb.bool("buzzer", "true or false") { engine.crossingBuzzer = v }
            if let v = try fb.bool("spoken_time", "true or false") { engine.spokenTime = v }
        }
        minHeight = nil
        minVelocity = nil
        motionThreshold = nil
        rowReadout = .zero
        if let det = try doc.table("detector") {
            try det.checkKeys(Self.knownKeys.keys("detector"))
            if let v = try det.string("subject", "\"athlete\" or \"vehicle\"") {
                guard let s = CrossingSubject(rawValue: v) else {
                    throw det.error(.invalidValue, "subject", "\"\(v)\" is not \"athlete\" or \"vehicle\"")
                }
                subject = s
            }
            minHeight = try det.optionalNumber("min_height", in: 0.1...1, unit: " of the frame height")
            minVelocity = try det.optionalNumber("min_velocity", in: 0...10000, unit: " work pixels per second")
            motionThreshold = try det.optionalInt("motion_threshold", in: 4...128)
            if let us = try det.optionalNumber("row_time_us", in: 0...1000, unit: " µs") { rowReadout = .microseconds(us) }
        }
        if let cam = try doc.table("camera") {
            try cam.checkKeys(Self.knownKeys.keys("camera"))
            guard var camera = self.board.camera else {
                throw doc.error(.invalidValue, "camera",
                                "the board file \(self.board.source) has no [camera]: remove [camera] here, or use a board file with one")
            }
            if let fps = try cam.int("fps", "an integer, one of 30, 60, 90, 120") {
                guard CameraConfig.allowedFrameRates.contains(fps) else {
                    throw cam.error(.outOfRange, "fps", "\(fps) is not one of 30, 60, 90, 120")
                }
                camera.fps = fps
            }
            if let e = try cam.optionalInt("exposure_us", in: 1...(1_000_000 / camera.fps), why: "at most one frame period") {
                camera.exposureMicroseconds = e
            }
            self.board.camera = camera
        }
        peers = try doc.table("peers").map { t throws(ConfigError) in try PeerSettings(t) }
        videoTable = try doc.table("video").map { t throws(ConfigError) in try VideoSettings(t) }
        video = videoTable.flatMap { $0.enabled ? $0 : nil }
        if video != nil, self.board.camera == nil {
            throw doc.error(.invalidValue, "video.enabled",
                            "the delayed video needs a camera, and the board file \(self.board.source) has no [camera]: set enabled = false")
        }
        gps = try doc.table("gps").map { t throws(ConfigError) in try GPSSettings(t) }
        mqtt = try doc.table("mqtt").map { t throws(ConfigError) in try MQTTSettings(t) }
        rowing = try doc.table("rowing").map { t throws(ConfigError) in try RowingSettings(t) }
        if let t = try doc.table("ski") { ski = try SkiTrackSettings(t) }
        self.engine = engine
        if let problem = engine.validate() { throw doc.error(.invalidValue, "start", problem) }
    }
}

/// The `[gps]` table: a GPS receiver read through gpsd.
///
/// ```toml
/// [gps]
/// host = "127.0.0.1"   # where gpsd listens (its JSON port)
/// port = 2947
/// rate_hz = 10         # the fixes a second the receiver is set to, 1 to 25; a lower
///                      # measured rate is a warning
/// accuracy_m = 10      # the acceleration timer's accuracy gate: 5, 10, 15 or 20 m
/// rollout = false      # start the clock after the first foot, as drag strips do
/// set_rate = true      # the gate asks gpsd to set the receiver to rate_hz whenever it
///                      # finds it at another rate (u-blox and the receivers gpsd drives)
/// ```
public struct GPSSettings: Sendable, Hashable {
    public var host = "127.0.0.1"
    public var port = 2947
    public var rateHz = 10
    public var accuracyMetres = 10
    public var rollout = false
    public var setRate = true

    public init() {}

    init(_ t: TableReader) throws(ConfigError) {
        try t.checkKeys(GateSettings.knownKeys.keys("gps"))
        if let v = try t.string("host", "gpsd's host name or address, e.g. \"127.0.0.1\"") {
            guard !v.isEmpty, !v.contains(" ") else { throw t.error(.invalidValue, "host", "\"\(v)\" is not a host name or address") }
            host = v
        }
        if let v = try t.optionalInt("port", in: 1...65535) { port = v }
        if let v = try t.optionalInt("rate_hz", in: 1...25, why: "receivers give 1 to 25 fixes a second") { rateHz = v }
        if t.table["accuracy_m"] != nil { accuracyMetres = try t.int("accuracy_m", oneOf: [5, 10, 15, 20]) }
        if let v = try t.bool("rollout", "true or false") { rollout = v }
        if let v = try t.bool("set_rate", "true or false") { setRate = v }
    }
}

/// The `[mqtt]` table: the gate's runs and its status published to an MQTT broker
/// (Mosquitto on a hub or a laptop), for other gates' boards, Home Assistant or Node-RED.
///
/// ```toml
/// [mqtt]
/// host = "192.168.4.1"   # the broker
/// port = 1883
/// device = "finish"      # this gate's name in the topics: sprintgate/finish/...
/// ```
public struct MQTTSettings: Sendable, Hashable {
    public var host = "127.0.0.1"
    public var port = 1883
    public var device = "sprintgate"

    public init() {}

    init(_ t: TableReader) throws(ConfigError) {
        try t.checkKeys(GateSettings.knownKeys.keys("mqtt"))
        if let v = try t.string("host", "the broker's host name or address, e.g. \"192.168.4.1\"") {
            guard !v.isEmpty, !v.contains(" ") else { throw t.error(.invalidValue, "host", "\"\(v)\" is not a host name or address") }
            host = v
        }
        if let v = try t.optionalInt("port", in: 1...65535) { port = v }
        if let v = try t.string("device", "a name of letters, digits, - and _, e.g. \"finish\"") {
            // Why: the name is a topic level; "/", "+" and "#" would change the topic's shape.
            let ok = !v.isEmpty && v.count <= 32 && v.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" }
            guard ok else { throw t.error(.invalidValue, "device", "\"\(v)\" is not 1 to 32 letters, digits, - or _") }
            device = v
        }
    }
}

/// The `[rowing]` table: the rowing hub, a Bluetooth LE central for Concept2 PM5s.
///
/// ```toml
/// [rowing]
/// controller = 0        # the Bluetooth adapter, hciN (0: the Pi's own)
/// ergs = ["C2:11:22:33:44:55", "C2:11:22:33:44:66"]
///                       # PM5s connected at every start, erg 1 first (optional: the coach
///                       # also scans and picks PM5s on the page, and those are kept)
/// sample_rate_ms = 100  # how often the PM5s notify: 100, 250, 500 or 1000 ms
/// ```
public struct RowingSettings: Sendable, Hashable {
    public var controller = 0
    /// Bluetooth addresses, "C2:11:22:33:44:55", upper case.
    public var ergs: [String] = []
    public var sampleRateMs = 100
    /// Why 8: Concept2's Bluetooth interface definition allows 8 PM5s on one central, and
    /// adapters run out of connections about there.
    public static let ergsPerAdapter = 8

    public init() {}

    init(_ t: TableReader) throws(ConfigError) {
        try t.checkKeys(GateSettings.knownKeys.keys("rowing"))
        if let v = try t.optionalInt("controller", in: 0...15, why: "hci0 to hci15") { controller = v }
        if t.table["sample_rate_ms"] != nil { sampleRateMs = try t.int("sample_rate_ms", oneOf: [100, 250, 500, 1000]) }
        if let value = t.table["ergs"] {
            let expected = "a list of PM5 Bluetooth addresses, e.g. [\"C2:11:22:33:44:55\"]"
            guard let list = value.array else { throw t.error(.wrongType, "ergs", "expected \(expected)") }
            for item in list {
                guard let text = item.string else { throw t.error(.wrongType, "ergs", "expected \(expected)") }
                guard let a = BluetoothAddress(text)?.description else {
                    throw t.error(.invalidValue, "ergs", "\"\(text)\" is not a Bluetooth address (six two-digit hex numbers with colons, as `bluetoothctl devices` shows them)")
                }
                guard !ergs.contains(a) else { throw t.error(.invalidValue, "ergs", "\(a) is listed twice") }
                ergs.append(a)
            }
            guard ergs.count <= Self.ergsPerAdapter else {
                throw t.error(.invalidValue, "ergs", "\(ergs.count) PM5s; one adapter connects at most \(Self.ergsPerAdapter)")
            }
        }
    }

}

/// The `[video]` table: the delay mode (delayed replay on the page, marks cut into clips).
///
/// ```toml
/// [video]
/// enabled = true
/// delay_s = 5          # how far behind the camera the delayed view runs, 1 to 60 s
/// pre_roll_s = 5       # a clip keeps this much before its mark, 0 to 60 s
/// post_roll_s = 2      # and this much after it, 0 to 60 s
/// encoder = "auto"     # "libx264", "h264_v4l2m2m" (the Pi 4's hardware encoder), "mjpeg" (an
///                      # MJPEG camera's frames kept as they come) or "auto" (mjpeg with
///                      # an MJPEG camera, else the board file's video_encoder)
/// bitrate_kbps = 7700  # default: 0.14 bits a pixel a frame
/// memory_mb = 2000     # at most this much RAM for the buffer (default: 70 % of what is free)
/// mark_button = false  # the start button marks the delayed video instead of arming the gate
/// target_face = "wa122" # archery scoring's face: wa122, wa80, wa40, vegas3
/// bow = "recurve"      # recurve, compound, barebow
/// arrow_diameter_mm = 5.5 # the shaft, 3.1...9.9 mm (line cutters are scored from its edge)
/// arrows_per_end = 6   # 3 or 6
/// clickers = true      # clickers, camera remotes and keyboards (evdev) mark the delayed video
/// overlay = ["time", "splits", "speed", "type", "athlete"]  # drawn on run videos (default: all)
/// tv = "auto"          # the delayed view full screen on a TV on HDMI: "auto" (the first
///                      # connected display), "off", or a card such as "/dev/dri/card1"
/// tv_rotate = 0        # the TV's picture turned clockwise: 0, 90, 180 or 270
/// tv_flip = false      # the TV's picture mirrored
/// tv_versus = false    # the TV shows live (left) and delayed (right) side by side
/// ```
public struct VideoSettings: Sendable, Hashable {
    /// The settings file the table was read from, for errors found when the mode starts.
    public var file = "gate.toml"
    public var enabled = true
    public var delaySeconds = 5.0
    public var preRollSeconds = 5.0
    public var postRollSeconds = 2.0
    /// FFmpeg's encoder name, or nil for the board's choice (`auto`).
    public var encoder: String?
    public var bitrateKbps: Int?
    public var memoryMB: Int?
    /// The start button marks the delayed video (and no longer arms or starts the gate).
    public var markButton = false
    /// Keys from clickers, camera remotes and keyboards (evdev) mark the delayed video.
    public var clickers = true
    /// Archery scoring's defaults for a new score card (no arrows), when the file sets any
    /// of the face, bow, shaft diameter (mm) and arrows per end.
    public var archery: ScoreSheet?
    /// What a run's video has drawn on it unless the page chooses.
    public var overlay = Set(OverlayPart.allCases)
    /// The TV output: nil off, "" the first connected display, else a card's path.
    public var tv: String? = ""
    public var tvRotation = 0
    public var tvFlip = false
    public var tvVersus = false

    public init() {}

    init(_ t: TableReader) throws(ConfigError) {
        try t.checkKeys(GateSettings.knownKeys.keys("video"))
        file = t.file
        if let v = try t.string("tv", "\"auto\", \"off\" or a display card such as \"/dev/dri/card1\"") {
            switch v {
            case "auto": tv = ""
            case "off": tv = nil
            default:
                guard v.hasPrefix("/dev/") else {
                    throw t.error(.invalidValue, "tv", "\"\(v)\" is not auto, off or a device such as /dev/dri/card1")
                }
                tv = v
            }
        }
        if let r = try t.optionalInt("tv_rotate", in: 0...270) {
            guard r % 90 == 0 else { throw t.error(.invalidValue, "tv_rotate", "\(r) is not 0, 90, 180 or 270") }
            tvRotation = r
        }
        if let v = try t.bool("tv_flip", "true or false") { tvFlip = v }
        if let v = try t.bool("tv_versus", "true or false") { tvVersus = v }
        if let parts = try t.optionalWords("overlay", OverlayPart.self) { overlay = Set(parts) }
        if let v = try t.bool("enabled", "true or false") { enabled = v }
        if let v = try t.optionalNumber("delay_s", in: 1...60, unit: " s") { delaySeconds = v }
        if let v = try t.optionalNumber("pre_roll_s", in: 0...60, unit: " s") { preRollSeconds = v }
        if let v = try t.optionalNumber("post_roll_s", in: 0...60, unit: " s") { postRollSeconds = v }
        guard preRollSeconds + postRollSeconds > 0 else {
            throw t.error(.invalidValue, "post_roll_s", "pre_roll_s and post_roll_s are both 0: a clip would be empty")
        }
        if let e = try t.string("encoder", "one of auto, libx264, h264_v4l2m2m, mjpeg") {
            guard ["auto", "libx264", "h264_v4l2m2m", "mjpeg"].contains(e) else {
                throw t.error(.notOneOf, "encoder", "\"\(e)\" is not one of auto, libx264, h264_v4l2m2m, mjpeg")
            }
            encoder = e == "auto" ? nil : e
        }
        bitrateKbps = try t.optionalInt("bitrate_kbps", in: 100...50_000)
        memoryMB = try t.optionalInt("memory_mb", in: 16...65_536)
        if let v = try t.bool("mark_button", "true or false") { markButton = v }
        if let v = try t.bool("clickers", "true or false") { clickers = v }
        let face = try t.optionalWord("target_face", TargetFace.self)
        let bow = try t.optionalWord("bow", BowClass.self)
        let diameter = try t.optionalNumber("arrow_diameter_mm", in: ArrowDiameter.range, unit: " mm")
        let perEnd = try t.optionalInt("arrows_per_end", in: 3...6)
        if let perEnd, perEnd != 3 && perEnd != 6 {
            throw t.error(.invalidValue, "arrows_per_end", "\(perEnd) is not 3 (indoor) or 6 (outdoor)")
        }
        if face != nil || bow != nil || diameter != nil || perEnd != nil {
            archery = ScoreSheet(face: face ?? .wa122, bow: bow ?? .recurve, arrowDiameter: diameter ?? ArrowDiameter.standard,
                                 arrowsPerEnd: perEnd ?? 6)
        }
    }

    /// Whether the ring keeps the camera's JPEGs as they come: with `encoder = "mjpeg"`, or
    /// `auto` when the camera sends MJPEG (no encoding at all; a clip is encoded when it is
    /// cut). `cameraFormat` is the camera's fourcc (`MJPG`); `mjpeg` with another camera
    /// throws, saying what to set.
    public func keepsCameraJPEG(cameraFormat: String?) throws(ConfigError) -> Bool {
        let sendsJPEG = cameraFormat == "MJPG"
        if encoder == "mjpeg" && !sendsJPEG {
            throw ConfigError(code: .invalidValue, file: file, keyPath: "video.encoder",
                              message: "\"mjpeg\" keeps a camera's JPEGs, but this camera sends \(cameraFormat ?? "no frames yet"): set auto or libx264")
        }
        return encoder == "mjpeg" || (encoder == nil && sendsJPEG)
    }

    /// The encoder: the settings file's, else the one the board file names
    /// (`[board] video_encoder`: the Pi 4's hardware encoder there, x264 on a Pi 5, which
    /// has none).
    public func encoder(board: BoardConfig) -> String {
        encoder ?? board.videoEncoder
    }
}

/// The `[peers]` table: this gate's part in a multi-gate race.
///
/// ```toml
/// [peers]
/// pairing_code = "TRACK-2024"   # the same on every gate of the group
/// role = "gate"                 # "host" (keeps the results), "gate", or "auto" (the gates
///                                # set to auto elect a host: the lowest gate id)
/// port = 47210                  # UDP port, the same on every gate
/// host = "192.168.4.1"          # gate only, optional: the host's address when
///                               # broadcast discovery cannot reach it
/// ```
public struct PeerSettings: Sendable, Hashable {
    public enum Role: String, Sendable, Hashable, CaseIterable { case host, gate, auto }
    /// Normalised later by the key derivation; checked here for length and characters.
    public var pairingCode: String
    public var role: Role
    public var port: UInt16
    /// Gate only: the host's IPv4 address (announces go there instead of broadcast).
    public var hostAddress: String?

    /// The default port. Why 47 210: unassigned by IANA and above the ranges phones'
    /// hotspots and common LAN services use (the race protocol's default too).
    public static let defaultPort: UInt16 = 47_210
    /// Letters and digits a pairing code holds, at least and at most (the key derivation's limits).
    public static let codeLength = 6...64

    public init(pairingCode: String, role: Role, port: UInt16 = defaultPort, hostAddress: String? = nil) {
        self.pairingCode = pairingCode
        self.role = role
        self.port = port
        self.hostAddress = hostAddress
    }

    init(_ t: TableReader) throws(ConfigError) {
        try t.checkKeys(GateSettings.knownKeys.keys("peers"))
        guard let code = try t.string("pairing_code", "the group's pairing code, e.g. \"TRACK-2024\"") else {
            throw t.error(.missingKey, "pairing_code", "missing; expected the pairing code shared by every gate of the group")
        }
        let allowed = code.unicodeScalars.allSatisfy { (("0"..."9").contains($0) || ("A"..."Z").contains($0) || ("a"..."z").contains($0) || $0 == " " || $0 == "-") }
        let significant = code.unicodeScalars.filter { $0 != " " && $0 != "-" }.count
        guard allowed else {
            throw t.error(.invalidValue, "pairing_code", "may hold only letters A-Z, digits, spaces and hyphens")
        }
        guard Self.codeLength.contains(significant) else {
            throw t.error(.outOfRange, "pairing_code", "has \(significant) letters or digits; expected \(Self.codeLength.lowerBound)...\(Self.codeLength.upperBound)")
        }
        pairingCode = code
        guard let roleText = try t.string("role", "host, gate or auto") else {
            throw t.error(.missingKey, "role", "missing; expected host, gate or auto")
        }
        guard let role = Role(rawValue: roleText) else {
            throw t.error(.notOneOf, "role", "\"\(roleText)\" is not one of host, gate, auto")
        }
        self.role = role
        port = UInt16(try t.optionalInt("port", in: 1...65535) ?? Int(Self.defaultPort))
        hostAddress = try t.string("host", "the host gate's IPv4 address, e.g. \"192.168.4.1\"")
        if let h = hostAddress {
            let parts = h.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 4, parts.allSatisfy({ UInt8($0) != nil }) else {
                throw t.error(.invalidValue, "host", "\"\(h)\" is not an IPv4 address like 192.168.4.1")
            }
            guard role != .host else { throw t.error(.invalidValue, "host", "only a gate names its host (role is host)") }
        }
    }
}
