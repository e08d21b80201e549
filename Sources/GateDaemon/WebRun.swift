// SPDX-License-Identifier: Apache-2.0
// `sprintgate run`'s web page: the settings it shows and where its PIN lives.

import Detector
public import GateConfig
import GateCore
import LinuxHardware
public import Logging
public import WebUI

extension WebGate {
    /// Starts the web page for the daemon; a failure (no state directory for the PIN)
    /// is logged and the gate runs without a page rather than not at all.
    /// `book` is the SQLite-backed book over the storage thread's database (or, when that
    /// could not be opened, a memory book: the journal still keeps every run).
    /// `cameraMode` is the camera's frame size once open; nil until it opens, or on a board
    /// without `[camera]`.
    public static func startForGate(settings: GateSettings, host: String, port: Int, wakeFD: Int32, cameraMode: String?,
                                    frameWidth: Int, movedOnPage: Bool = false, book: any ResultsBook, level: Logger.Level) -> WebGate? {
        var log = Logger(label: "sprintgate.web")
        log.logLevel = level
        let board = settings.board
        var details = [
            "settings file": settings.source,
            "board file": board.source,
            "state directory": settings.stateDirectory,
        ]
        details.merge(cameraDetails(settings, mode: cameraMode, frameWidth: frameWidth, movedOnPage: movedOnPage)) { $1 }
        do {
            let web = try WebGate(gateName: "SprintGate", stateDirectory: settings.stateDirectory, config: settings.engine,
                                  preset: settings.preset, speedUnit: settings.speedUnit, details: details,
                                  book: book, wakeFD: wakeFD, log: log, fps: board.camera?.fps ?? 30,
                                  minHeight: settings.detectorConfig(width: frameWidth).minCrossingHeight)
            web.boardHasCamera = board.camera != nil
            web.bridge.wallClock.connect(SystemWallClock())
            web.start(host: host, port: port)
            return web
        } catch {
            log.error("web page off: \(error)")
            return nil
        }
    }

    /// The camera's rows of the settings view: its device, mode and rate, the gate line and
    /// what is timed once it is open (`mode`); the wait for it before; none without one.
    static func cameraDetails(_ settings: GateSettings, mode: String?, frameWidth: Int, movedOnPage: Bool) -> [String: String] {
        guard let camera = settings.board.camera else {
            return ["camera": "none: the board file has no [camera], so the camera gate is off"]
        }
        guard let mode else {
            return ["camera": "\(camera.device): not open yet; the gate waits for it (plug it in, or fix [camera] device in the board file)"]
        }
        return ["camera": "\(camera.device) \(mode) at \(camera.fps) fps",
                "gate line x": gateLineText(settings.gateX, frameWidth: frameWidth, movedOnPage: movedOnPage),
                "timed": settings.subject == .vehicle ? "vehicles: the foremost point" : "athletes: the torso"]
    }

    /// Where the detector's gate line is, as the settings view shows it: the column, and
    /// whether the settings file put it there or it is the frame's middle.
    public static func gateLineText(_ gateX: Double?, frameWidth: Int, movedOnPage: Bool = false) -> String {
        if let x = gateX, movedOnPage { return "\(x) px of \(frameWidth) (moved on the camera view; it overrides gate_x)" }
        if let x = gateX { return "\(x) px of \(frameWidth) (gate_x in the settings file)" }
        return "\(Double(frameWidth) / 2) px of \(frameWidth) (the middle of the frame; gate_x in the settings file moves it)"
    }
}
