// SPDX-License-Identifier: Apache-2.0
// The gate settings file: the shipped default decodes, and each mistake is named.

import Detector
import Engine
import Foundation
import GateConfig
import GateCore
import Archery
import Testing
import VideoDelay

@Suite("Gate settings")
struct GateSettingsTests {
    static let defaultFile = Repo.boards.appendingPathComponent("gate/default.toml").path

    @Test("the shipped default decodes with its board and preset")
    func shippedDefault() throws {
        let s = try GateSettings(contentsOf: Self.defaultFile)
        #expect(s.board.name.isEmpty == false)
        #expect(s.preset?.id == "flying-30m")
        #expect(s.engine.startType == .flying)
        #expect(s.engine.marksPause == 8...12 && s.engine.setPause == 1.5...2.3)
        #expect(s.speedUnit == .metresPerSecond)
        #expect(s.detectorConfig(width: 640).gateX == 320)
        #expect(s.stateDirectory == "/var/lib/sprintgate")
    }

    func settings(_ body: String) throws(ConfigError) -> GateSettings {
        let board = Repo.boards.appendingPathComponent("generic-usb.toml").path
        return try GateSettings(toml: "board = \"\(board)\"\n" + body, file: "gate.toml")
    }

    @Test("a board file without [camera] (a car timer, a ski logger, a rowing hub) is taken, with no camera; a [camera] override or an enabled [video] over it is an error that says what to do")
    func boardWithoutCamera() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sprintgate-nocam-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let text = try String(contentsOf: Repo.boards.appendingPathComponent("generic-usb.toml"), encoding: .utf8)
        let cut = try #require(text.range(of: "[camera]\n"))
        let end = try #require(text.range(of: "[audio]\n", range: cut.upperBound..<text.endIndex))
        let board = dir.appendingPathComponent("board.toml").path
        try (String(text[..<cut.lowerBound]) + String(text[end.lowerBound...])).write(toFile: board, atomically: true, encoding: .utf8)
        let plain = try GateSettings(toml: "board = \"\(board)\"\n[gps]\n", file: "gate.toml")
        #expect(plain.board.camera == nil && plain.gps != nil)
        for (body, key, says) in [("[camera]\nfps = 60\n", "camera", "has no [camera]: remove [camera] here"),
                                  ("[video]\nenabled = true\n", "video.enabled", "the delayed video needs a camera")] {
            do {
                _ = try GateSettings(toml: "board = \"\(board)\"\n" + body, file: "gate.toml")
                Issue.record("\(body) over a board without a camera was taken")
            } catch {
                #expect(error.keyPath == key && error.file == "gate.toml" && error.description.contains(says), "\(error)")
            }
        }
        // The delayed video's table turned off is fine: nothing asks for the camera.
        #expect(try GateSettings(toml: "board = \"\(board)\"\n[video]\nenabled = false\n", file: "gate.toml").video == nil)
    }

    @Test("re-arming after a run: on after 3 s unless the file says otherwise; out of range is an error naming the key")
    func rearm() throws {
        let plain = try settings("")
        #expect(plain.engine.autoRearm && plain.engine.rearmDelay == .seconds(3))
        let off = try settings("[gate]\nrearm = false\nrearm_s = 8\n")
        #expect(!off.engine.autoRearm && off.engine.rearmDelay == .seconds(8))
        #expect(throws: ConfigError.self) { try settings("[gate]\nrearm_s = 0.1\n") }
        do {
            _ = try settings("[gate]\nrearm = \"yes\"\n")
            Issue.record("a word for a boolean was taken")
        } catch {
            #expect(error.description.contains("rearm"))
        }
    }

    @Test("overrides reach the engine, detector and camera")
    func overrides() throws {
        let s = try settings("""
            [gate]
            gate_x = 100.5
            preset = "60m"
            start_type = "countdown"
            speed_unit = "km/h"
            [start]
            set_pause_s = [1, 2]
            start_sound = "gunshot"
            [detector]
            subject = "vehicle"
            min_height = 0.4
            row_time_us = 25
            [camera]
            fps = 60
            exposure_us = 2000
            """)
        #expect(s.engine.startType == .countdown)
        #expect(s.engine.setPause == 1...2 && s.engine.startSound == .gunshot)
        #expect(s.speedUnit == .kilometresPerHour)
        let d = s.detectorConfig(width: 640)
        #expect(d.gateX == 100.5 && d.minCrossingHeight == 0.4 && d.rowReadout == .microseconds(25))
        #expect(d.subject == .vehicle)
        #expect(s.board.camera?.fps == 60 && s.board.camera?.exposureMicroseconds == 2000)
    }

    @Test("[mqtt]: off when absent; host, port and device when given")
    func mqttTable() throws {
        #expect(try settings("").mqtt == nil)
        let m = try #require(try settings("[mqtt]\nhost = \"192.168.4.1\"\nport = 1884\ndevice = \"finish_2\"").mqtt)
        #expect(m.host == "192.168.4.1" && m.port == 1884 && m.device == "finish_2")
        #expect(try settings("[mqtt]").mqtt == MQTTSettings())
    }

    @Test("[rowing]: off when absent; the adapter, the PM5s (addresses in capitals) and the sample rate when given")
    func rowingTable() throws {
        #expect(try settings("").rowing == nil)
        let r = try #require(try settings("[rowing]\ncontroller = 1\nergs = [\"c2:11:22:33:44:55\", \"C2:11:22:33:44:66\"]\nsample_rate_ms = 500").rowing)
        #expect(r.controller == 1 && r.ergs == ["C2:11:22:33:44:55", "C2:11:22:33:44:66"] && r.sampleRateMs == 500)
        #expect(try settings("[rowing]").rowing == RowingSettings())
    }

    @Test("mistakes name file, key and what is allowed", arguments: [
        ("[rowing]\nergs = [\"C2:11:22:33:44\"]", "rowing.ergs", "not a Bluetooth address"),
        ("[rowing]\nergs = [\"C2:11:22:33:44:+5\"]", "rowing.ergs", "not a Bluetooth address"),
        ("[rowing]\nergs = \"C2:11:22:33:44:55\"", "rowing.ergs", "a list of PM5 Bluetooth addresses"),
        ("[rowing]\nergs = [\"C2:11:22:33:44:55\", \"c2:11:22:33:44:55\"]", "rowing.ergs", "listed twice"),
        ("[rowing]\nergs = [\"00:00:00:00:00:01\", \"00:00:00:00:00:02\", \"00:00:00:00:00:03\", \"00:00:00:00:00:04\", \"00:00:00:00:00:05\", \"00:00:00:00:00:06\", \"00:00:00:00:00:07\", \"00:00:00:00:00:08\", \"00:00:00:00:00:09\"]", "rowing.ergs", "at most 8"),
        ("[rowing]\nsample_rate_ms = 50", "rowing.sample_rate_ms", "100, 250, 500"),
        ("[rowing]\ncontroller = 20", "rowing.controller", "out of range"),
        ("[rowing]\nadapter = \"hci0\"", "rowing.adapter", "unknown key"),
        ("state_dir = \"var/lib/sprintgate\"", "state_dir", "\"var/lib/sprintgate\" is not an absolute path"),
        ("[gate]\nstart_typ = \"flying\"", "gate.start_typ", "unknown key"),
        ("[gate]\nstart_type = \"rolling\"", "gate.start_type", "flying, button-release"),
        ("[gate]\npreset = \"marathon\"", "gate.preset", "flying-30m"),
        ("[gate]\npreset = \"flying\"\ndistance_m = 25", "gate.distance_m", "10, 20, 30 m"),
        ("[gate]\npreset = \"60m\"\ndistance_m = 60", "gate.distance_m", "only a preset that offers distances"),
        ("[start]\nmarks_pause_s = [2, 10]", "start.marks_pause_s", "3.0...20.0"),
        ("[start]\nset_pause_s = [3, 1]", "start.set_pause_s", "[3.0, 1.0]"),
        ("[start]\nstart_sound = \"horn\"", "start.start_sound", "beep, gunshot, whistle"),
        ("[detector]\nmin_height = 2", "detector.min_height", "out of range"),
        ("[detector]\nsubject = \"car\"", "detector.subject", "\"athlete\" or \"vehicle\""),
        ("[mqtt]\ndevice = \"finish/line\"", "mqtt.device", "letters, digits, - or _"),
        ("[mqtt]\nport = 0", "mqtt.port", "out of range"),
        ("[mqtt]\nbroker = \"x\"", "mqtt.broker", "unknown key"),
        ("[camera]\nfps = 50", "camera.fps", "30, 60, 90, 120"),
        ("[feedback]\nbuzzer = \"yes\"", "feedback.buzzer", "true or false"),
        ("[sound]\nvolume = 3", "sound", "unknown table"),
        ("[peers]\nrole = \"gate\"", "peers.pairing_code", "missing"),
        ("[peers]\npairing_code = \"TRACK-2024\"\nrole = \"boss\"", "peers.role", "host, gate"),
        ("[peers]\npairing_code = \"AB-12\"\nrole = \"gate\"", "peers.pairing_code", "6...64"),
        ("[peers]\npairing_code = \"TRACK_2024!\"\nrole = \"gate\"", "peers.pairing_code", "letters A-Z"),
        ("[peers]\npairing_code = \"TRACK-2024\"\nrole = \"gate\"\nport = 70000", "peers.port", "out of range"),
        ("[peers]\npairing_code = \"TRACK-2024\"\nrole = \"gate\"\nhost = \"10.0.0\"", "peers.host", "IPv4"),
        ("[peers]\npairing_code = \"TRACK-2024\"\nrole = \"host\"\nhost = \"10.0.0.1\"", "peers.host", "only a gate"),
        ("[peers]\npairing_code = \"TRACK-2024\"\nrole = \"gate\"\npeer_port = 1", "peers.peer_port", "unknown key"),
        ("[video]\ndelay_s = 90", "video.delay_s", "out of range"),
        ("[video]\ndelay = 5", "video.delay", "unknown key"),
        ("[video]\npre_roll_s = 0\npost_roll_s = 0", "video.post_roll_s", "a clip would be empty"),
        ("[video]\nencoder = \"h265\"", "video.encoder", "auto, libx264, h264_v4l2m2m"),
        ("[video]\nbitrate_kbps = 10", "video.bitrate_kbps", "out of range"),
        ("[video]\nmark_button = \"yes\"", "video.mark_button", "true or false"),
        ("[video]\nclickers = 1", "video.clickers", "true or false"),
        ("[video]\ntarget_face = \"wa60\"", "video.target_face", "wa122, wa80, wa40, vegas3"),
        ("[video]\nbow = \"longbow\"", "video.bow", "recurve, compound, barebow"),
        ("[video]\narrow_diameter_mm = 12", "video.arrow_diameter_mm", "out of range"),
        ("[video]\narrows_per_end = 4", "video.arrows_per_end", "3 (indoor) or 6 (outdoor)"),
        ("[video]\noverlay = [\"time\", \"wind\"]", "video.overlay", "time, splits, speed, type, athlete"),
        ("[video]\noverlay = \"time\"", "video.overlay", "a list of strings"),
        ("[video]\ntv = \"hdmi\"", "video.tv", "auto, off or a device such as /dev/dri/card1"),
        ("[video]\ntv_rotate = 45", "video.tv_rotate", "not 0, 90, 180 or 270"),
        ("[video]\ntv_rotate = 360", "video.tv_rotate", "out of range"),
        ("[video]\ntv_flip = \"yes\"", "video.tv_flip", "true or false"),
        ("[gps]\nrate = 10", "gps.rate", "allowed keys: host, port, rate_hz, accuracy_m, rollout, set_rate"),
        ("[gps]\nrate_hz = 50", "gps.rate_hz", "out of range 1...25 (receivers give 1 to 25 fixes a second)"),
        ("[gps]\naccuracy_m = 7", "gps.accuracy_m", "not one of 5, 10, 15, 20"),
        ("[gps]\nport = \"2947\"", "gps.port", "an integer in 1...65535"),
        ("[gps]\nhost = \"\"", "gps.host", "not a host name or address"),
        ("[ski]\nmin_run = 30", "ski.min_run", "allowed keys: min_run_s, min_vertical_m, longest_pause_s"),
        ("[ski]\nmin_vertical_m = 2", "ski.min_vertical_m", "out of range 5...500"),
        ("[ski]\nsnowboard_longest_pause_s = 3600", "ski.snowboard_longest_pause_s", "out of range 10...900"),
        ("[ski]\nmin_run_s = \"long\"", "ski.min_run_s", "an integer in 5...600"),
    ])
    func mistakes(body: String, key: String, allowed: String) {
        do {
            _ = try settings(body)
            Issue.record("accepted: \(body)")
        } catch {
            #expect(error.description.hasPrefix("gate.toml: \(key): "), "\(error.description)")
            #expect(error.description.contains(allowed), "\(error.description)")
        }
    }

    @Test("[video]: off without it or when not enabled; its delay, rolls and limits; the encoder follows the board file")
    func video() throws {
        #expect(try settings("").video == nil)
        #expect(try settings("[video]\nenabled = false\ndelay_s = 10").video == nil)
        let v = try #require(try settings("[video]\ndelay_s = 8\npre_roll_s = 5\npost_roll_s = 0\nbitrate_kbps = 4000\nmemory_mb = 512").video)
        #expect(v.delaySeconds == 8 && v.preRollSeconds == 5 && v.postRollSeconds == 0)
        #expect(v.bitrateKbps == 4000 && v.memoryMB == 512)
        // The encoder: the board file's unless the settings name one.
        func board(_ name: String) throws -> BoardConfig { try BoardConfig(contentsOf: Repo.boards.appendingPathComponent(name).path) }
        #expect(v.encoder(board: try board("raspberry-pi-4-usbcam.toml")) == "h264_v4l2m2m")
        #expect(v.encoder(board: try board("raspberry-pi-zero-2w-usbcam.toml")) == "h264_v4l2m2m")
        #expect(v.encoder(board: try board("raspberry-pi-5-usbcam.toml")) == "libx264")
        #expect(v.encoder(board: try board("generic-usb.toml")) == "libx264")
        let chosen = try #require(try settings("[video]\nencoder = \"libx264\"").video)
        #expect(chosen.encoder(board: try board("raspberry-pi-4-usbcam.toml")) == "libx264")
        #expect(chosen.delaySeconds == 5 && chosen.preRollSeconds == 5 && chosen.postRollSeconds == 2)
        // Marks away from the page: clickers by default, the start button when chosen.
        #expect(!chosen.markButton && chosen.clickers)
        let marking = try #require(try settings("[video]\nmark_button = true\nclickers = false").video)
        #expect(marking.markButton && !marking.clickers)
        // Archery's defaults: none unless the file sets one; the rest then take the usual values.
        #expect(chosen.archery == nil)
        let archery = try #require(try settings("[video]\ntarget_face = \"wa40\"\narrow_diameter_mm = 9.3").video?.archery)
        #expect(archery == ScoreSheet(face: .wa40, bow: .recurve, arrowDiameter: 9.3, arrowsPerEnd: 6))
        // What run videos have drawn on them: everything unless the file lists the parts.
        #expect(chosen.overlay == Set(OverlayPart.allCases))
        #expect(try settings("[video]\noverlay = [\"time\", \"splits\"]").video?.overlay == [.time, .splits])
        #expect(try settings("[video]\noverlay = []").video?.overlay == [])
        // An MJPEG camera's JPEGs kept as they come: with auto or mjpeg; mjpeg needs such a camera.
        #expect(try !chosen.keepsCameraJPEG(cameraFormat: "MJPG"))
        let auto = try #require(try settings("[video]\nenabled = true").video)
        #expect(try auto.keepsCameraJPEG(cameraFormat: "MJPG") && !auto.keepsCameraJPEG(cameraFormat: "YUYV"))
        let mjpeg = try #require(try settings("[video]\nencoder = \"mjpeg\"").video)
        #expect(try mjpeg.keepsCameraJPEG(cameraFormat: "MJPG"))
        #expect(throws: ConfigError.self) { try mjpeg.keepsCameraJPEG(cameraFormat: "YUYV") }
        // The error names the settings file it was read from.
        let board = Repo.boards.appendingPathComponent("generic-usb.toml").path
        let installed = try #require(try GateSettings(toml: "board = \"\(board)\"\n[video]\nencoder = \"mjpeg\"",
                                                      file: "/etc/sprintgate/gate.toml").video)
        do { _ = try installed.keepsCameraJPEG(cameraFormat: "YUYV") } catch {
            #expect(error.description == "/etc/sprintgate/gate.toml: video.encoder: \"mjpeg\" keeps a camera's JPEGs, but this camera sends YUYV: set auto or libx264")
        }
        // The TV: the first connected display unless the file says off or names a card.
        #expect(chosen.tv == "" && chosen.tvRotation == 0 && !chosen.tvFlip)
        #expect(try settings("[video]\ntv = \"off\"").video?.tv == nil)
        #expect(!chosen.tvVersus)
        let tv = try #require(try settings("[video]\ntv = \"/dev/dri/card1\"\ntv_rotate = 270\ntv_flip = true\ntv_versus = true").video)
        #expect(tv.tv == "/dev/dri/card1" && tv.tvRotation == 270 && tv.tvFlip && tv.tvVersus)
    }

    @Test("[gps]: off when absent; gpsd on loopback at 10 Hz with the 10 m gate by default; every key read")
    func gps() throws {
        #expect(try settings("").gps == nil)
        let d = try #require(try settings("[gps]").gps)
        #expect(d.host == "127.0.0.1" && d.port == 2947 && d.rateHz == 10 && d.accuracyMetres == 10 && !d.rollout && d.setRate)
        let g = try #require(try settings("[gps]\nhost = \"gps.local\"\nport = 2948\nrate_hz = 25\naccuracy_m = 20\nrollout = true\nset_rate = false").gps)
        #expect(g.host == "gps.local" && g.port == 2948 && g.rateHz == 25 && g.accuracyMetres == 20 && g.rollout && !g.setRate)
    }

    @Test("[ski]: sound defaults (a snowboarder's pauses may be twice a skier's); every key read")
    func ski() throws {
        let d = try settings("").ski
        #expect(d.minRunSeconds == 30 && d.minVerticalMetres == 30 && d.longestPauseSeconds == 90)
        #expect(d.snowboardMinRunSeconds == 30 && d.snowboardMinVerticalMetres == 30 && d.snowboardLongestPauseSeconds == 180)
        let s = try settings("[ski]\nmin_run_s = 45\nmin_vertical_m = 50\nlongest_pause_s = 60\nsnowboard_min_run_s = 40\n"
            + "snowboard_min_vertical_m = 40\nsnowboard_longest_pause_s = 300").ski
        #expect(s.minRunSeconds == 45 && s.minVerticalMetres == 50 && s.longestPauseSeconds == 60)
        #expect(s.snowboardMinRunSeconds == 40 && s.snowboardMinVerticalMetres == 40 && s.snowboardLongestPauseSeconds == 300)
        #expect(!d.button && d.sport == "ski")
        let b = try settings("[ski]\nbutton = true\nsport = \"snowboard\"").ski
        #expect(b.button && b.sport == "snowboard")
        #expect(throws: ConfigError.self) { try settings("[ski]\nsport = \"skate\"") }
    }

    @Test("a preset with distances to choose from runs over the one the file chooses")
    func presetDistance() throws {
        #expect(try settings("[gate]\npreset = \"flying\"\ndistance_m = 20").preset?.distance == 20)
        #expect(try settings("[gate]\npreset = \"flying\"").preset?.distance == 10)
    }

    @Test("board = \"auto\" picks the board file for the device tree's model among the installed ones")
    func autoBoard() throws {
        let boards = Repo.boards.path
        for (model, name) in [("Raspberry Pi 4 Model B Rev 1.4", "raspberry-pi-4-usbcam"), ("Raspberry Pi 5 Model B Rev 1.0", "raspberry-pi-5-usbcam"),
                              ("Raspberry Pi Zero 2 W Rev 1.0", "raspberry-pi-zero-2w-usbcam"), (nil, "generic-usb")] as [(String?, String)] {
            let s = try GateSettings(toml: "board = \"auto\"", file: "/etc/sprintgate/gate.toml", model: model, boards: boards)
            #expect(s.boardPath == boards + "/" + name + ".toml", "\(model ?? "no model")")
            #expect(s.board.name.isEmpty == false)
        }
        // Without the installed board files, the error names the file it looked for.
        do {
            _ = try GateSettings(toml: "board = \"auto\"", file: "gate.toml", model: "Raspberry Pi 4 Model B", boards: "/nonexistent")
            Issue.record("accepted a missing board file")
        } catch {
            #expect(error.description.contains("/nonexistent/raspberry-pi-4-usbcam.toml"), "\(error.description)")
        }
    }

    @Test("[peers] is off when absent and decoded when present")
    func peers() throws {
        #expect(try settings("").peers == nil)
        let gate = try settings("[peers]\npairing_code = \"track 2024\"\nrole = \"gate\"\nhost = \"10.77.0.1\"")
        #expect(gate.peers == PeerSettings(pairingCode: "track 2024", role: .gate, port: 47_210, hostAddress: "10.77.0.1"))
        let host = try settings("[peers]\npairing_code = \"TRACK-2024\"\nrole = \"host\"\nport = 40000")
        #expect(host.peers == PeerSettings(pairingCode: "TRACK-2024", role: .host, port: 40_000))
    }

    @Test("a missing board file is named with the board key")
    func missingBoard() {
        do {
            _ = try GateSettings(toml: "board = \"/nonexistent/board.toml\"", file: "gate.toml")
            Issue.record("accepted a missing board")
        } catch {
            #expect(error.description.hasPrefix("gate.toml: board: cannot read /nonexistent/board.toml"))
        }
    }
}
