// SPDX-License-Identifier: Apache-2.0
// The settings changed on the page, kept in the state directory for the next start.

public import Engine
import Foundation
import GateCore
public import Logging
public import GateConfig
public import WebUI

/// `STATE_DIR/page-settings.json`: the page's settings (`EditableSettings`) as last
/// applied. At start they override the settings file's (`apply`); the file is written
/// whole beside it, then renamed into place.
public enum PageSettingsFile {
    public static func path(directory: String) -> String { directory + "/page-settings.json" }

    /// The stored settings; nil when there are none. A file that does not read as valid
    /// settings is an error naming why (the gate then starts with the settings file's).
    /// Start types and presets are the engine's unless given.
    public static func load(directory: String, startTypes: [String] = StartType.allCases.map(\.rawValue),
                            presets: [String] = Preset.all.map(\.id)) throws -> EditableSettings? {
        let p = path(directory: directory)
        guard FileManager.default.fileExists(atPath: p) else { return nil }
        let data = try Data(contentsOf: URL(fileURLWithPath: p))
        let s: EditableSettings
        do { s = try JSONDecoder().decode(EditableSettings.self, from: data) } catch {
            throw PageSettingsError(description: "\(p) is not the page's settings (\(error)); delete it or save the settings again")
        }
        let offered = Dictionary(uniqueKeysWithValues: Preset.all.map { ($0.id, $0.distances) })
        if let problem = s.problem(startTypes: startTypes, presets: presets, distances: offered) {
            throw PageSettingsError(description: "\(p): \(problem.field) \(problem.reason); delete it or save the settings again")
        }
        return s
    }

    /// `load` at a gate's start: what it applies is logged, and an unreadable file is
    /// logged and skipped (the gate starts with the settings file's).
    public static func loadAtStart(directory: String, log: Logger) -> EditableSettings? {
        do {
            guard let s = try load(directory: directory) else { return nil }
            log.notice("settings changed on the page applied from \(path(directory: directory))")
            return s
        } catch {
            log.error("\(error)")
            return nil
        }
    }

    public static func save(_ s: EditableSettings, directory: String) throws {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .prettyPrinted]
        try e.encode(s).write(to: URL(fileURLWithPath: path(directory: directory)), options: .atomic)
    }

    /// `s` over `settings`: start, feedback, speed unit, body size, the camera's frame
    /// rate and the delay mode as chosen on the page (turned on, the delay mode takes the
    /// settings file's `[video]` values, or the defaults).
    public static func apply(_ s: EditableSettings, to settings: inout GateSettings) {
        apply(s, to: &settings.engine, preset: &settings.preset)
        if let u = s.speedUnit.flatMap(SpeedUnit.init(rawValue:)) { settings.speedUnit = u }
        if let h = s.minHeight { settings.minHeight = h }
        // Why the guards: a board without a camera keeps no frame rate and no delay mode,
        // whatever a page settings file written on another board says.
        if let f = s.fps { settings.board.camera?.fps = f }
        if let v = s.delayedVideo, settings.board.camera != nil { settings.video = v ? settings.videoTable ?? VideoSettings() : nil }
    }

    /// The preset and the engine's part of `s`: a preset brings its start type (and solo),
    /// which a start type given with it overrides, and its first distance unless one of
    /// the others is chosen (a distance alone is for the preset chosen before).
    public static func apply(_ s: EditableSettings, to engine: inout EngineConfig, preset: inout Preset?) {
        if let p = s.preset.flatMap(Preset.named) {
            preset = p
            engine.startType = p.startType
            engine.solo = p.solo
        }
        if let d = s.distance, let p = preset?.choosing(distance: d) { preset = p }
        apply(s, to: &engine)
    }

    /// The engine's part of `s` (start type, pauses, start sound, feedback, re-arming).
    public static func apply(_ s: EditableSettings, to engine: inout EngineConfig) {
        if let t = s.startType.flatMap(StartType.init(rawValue:)) { engine.startType = t }
        if let m = s.marksPause { engine.marksPause = m.min...m.max }
        if let p = s.setPause { engine.setPause = p.min...p.max }
        if let sound = s.startSound.flatMap(GateSound.init(rawValue:)) { engine.startSound = sound }
        if let v = s.crossingLED { engine.crossingLED = v }
        if let v = s.buzzer { engine.crossingBuzzer = v }
        if let v = s.crossingSound { engine.crossingSound = v }
        if let v = s.spokenTime { engine.spokenTime = v }
        if let v = s.rearm { engine.autoRearm = v }
    }

    /// The page's view of a running configuration.
    public static func editable(engine: EngineConfig, preset: Preset?, speedUnit: String, fps: Int, minHeight: Double,
                                delayedVideo: Bool? = nil) -> EditableSettings {
        EditableSettings(preset: preset?.id, distance: preset.flatMap { $0.distances.isEmpty ? nil : $0.distance }, startType: engine.startType.rawValue,
                         marksPause: .init(min: engine.marksPause.lowerBound, max: engine.marksPause.upperBound),
                         setPause: .init(min: engine.setPause.lowerBound, max: engine.setPause.upperBound),
                         startSound: engine.startSound.rawValue, crossingLED: engine.crossingLED, buzzer: engine.crossingBuzzer,
                         crossingSound: engine.crossingSound, spokenTime: engine.spokenTime, rearm: engine.autoRearm, speedUnit: speedUnit, fps: fps,
                         minHeight: minHeight, delayedVideo: delayedVideo)
    }
}

public struct PageSettingsError: Error, CustomStringConvertible {
    public let description: String
}
