// SPDX-License-Identifier: Apache-2.0
// The settings a coach changes on the page: validated here, applied by the loop between
// runs, and kept in the state directory for the next start.

import Foundation
import Synchronization

/// The page's settings. `GET /api/settings` gives them all (`editable`); a `PUT` gives any
/// of them and leaves the others. Ranges are those of the settings file.
public struct EditableSettings: Sendable, Hashable, Codable {
    /// A pause drawn at random from `min...max` seconds.
    public struct Pause: Sendable, Hashable, Codable {
        public var min: Double
        public var max: Double
        public init(min: Double, max: Double) {
            self.min = min
            self.max = max
        }
    }
    /// A preset id from `WebSettings.presets`; nil: no preset.
    public var preset: String?
    /// The preset's distance, metres, one of the distances it offers (`PresetInfo.distances`).
    public var distance: Double?
    public var startType: String?
    /// "On your marks" to "Set", and "Set" to the start sound.
    public var marksPause: Pause?
    public var setPause: Pause?
    /// `beep`, `gunshot` or `whistle`.
    public var startSound: String?
    public var crossingLED: Bool?
    public var buzzer: Bool?
    public var crossingSound: Bool?
    public var spokenTime: Bool?
    /// A lone gate arms itself again a few seconds after each run.
    public var rearm: Bool?
    public var speedUnit: String?
    /// The camera's frame rate: 30, 60, 90 or 120 (the camera reopens at it between runs).
    public var fps: Int?
    /// The smallest body the detector times, as a fraction of the frame height.
    public var minHeight: Double?
    /// The delay mode (delayed video) on or off.
    public var delayedVideo: Bool?

    public init(preset: String? = nil, distance: Double? = nil, startType: String? = nil, marksPause: Pause? = nil, setPause: Pause? = nil,
                startSound: String? = nil, crossingLED: Bool? = nil, buzzer: Bool? = nil, crossingSound: Bool? = nil,
                spokenTime: Bool? = nil, rearm: Bool? = nil, speedUnit: String? = nil, fps: Int? = nil, minHeight: Double? = nil,
                delayedVideo: Bool? = nil) {
        self.preset = preset
        self.distance = distance
        self.startType = startType
        self.marksPause = marksPause
        self.setPause = setPause
        self.startSound = startSound
        self.crossingLED = crossingLED
        self.buzzer = buzzer
        self.crossingSound = crossingSound
        self.spokenTime = spokenTime
        self.rearm = rearm
        self.speedUnit = speedUnit
        self.fps = fps
        self.minHeight = minHeight
        self.delayedVideo = delayedVideo
    }

    public static let marksPauseRange: ClosedRange<Double> = 3...20
    public static let setPauseRange: ClosedRange<Double> = 0.5...5
    public static let startSounds = ["beep", "gunshot", "whistle"]
    public static let speedUnits = ["m/s", "km/h", "mph"]
    /// The rates offered while the camera's own are not known (not open yet, or a stand-in).
    public static let frameRates = [30, 60, 90, 120]
    /// Rates a settings file may hold: the camera at the next start takes the closest it has.
    public static let anyFrameRate = 1...300
    public static let minHeightRange: ClosedRange<Double> = 0.1...1

    /// The first field that is wrong, with what it should be; nil when every given field
    /// is acceptable. `startTypes` and `presets` are what the gate knows, `distances` the
    /// distances each preset offers, and `currentPreset` the one a distance alone is for.
    /// `frameRates`: the rates the page offers (the camera's own, or `frameRates`); nil
    /// takes any whole rate in `anyFrameRate` (a settings file read before the camera opens).
    public func problem(startTypes: [String], presets: [String], distances: [String: [Double]] = [:],
                        currentPreset: String? = nil, frameRates: [Int]? = nil) -> (field: String, reason: String)? {
        if let p = preset, !presets.contains(p) { return ("preset", "unknown preset '\(p)'") }
        if let d = distance {
            guard let id = preset ?? currentPreset else { return ("distance", "choose a preset that offers distances first") }
            let offered = distances[id] ?? []
            guard !offered.isEmpty else { return ("distance", "the preset '\(id)' runs over its own distance only") }
            guard offered.contains(d) else {
                return ("distance", "one of \(offered.map { $0 == $0.rounded() ? String(Int($0)) : String($0) }.joined(separator: ", ")) m for '\(id)'")
            }
        }
        if let t = startType, !startTypes.contains(t) { return ("startType", "one of \(startTypes.joined(separator: ", "))") }
        for (name, pause, range) in [("marksPause", marksPause, Self.marksPauseRange), ("setPause", setPause, Self.setPauseRange)] {
            guard let p = pause else { continue }
            guard p.min.isFinite, p.max.isFinite, range.contains(p.min), range.contains(p.max) else {
                return (name, "seconds within \(range.lowerBound)...\(range.upperBound)")
            }
            guard p.min <= p.max else { return (name, "the shortest pause is longer than the longest") }
        }
        if let s = startSound, !Self.startSounds.contains(s) { return ("startSound", "one of \(Self.startSounds.joined(separator: ", "))") }
        if let u = speedUnit, !Self.speedUnits.contains(u) { return ("speedUnit", "one of \(Self.speedUnits.joined(separator: ", "))") }
        if let f = fps {
            if let rates = frameRates {
                if !rates.contains(f) { return ("fps", "one of \(rates.map(String.init).joined(separator: ", ")) frames per second") }
            } else if !Self.anyFrameRate.contains(f) {
                return ("fps", "a whole number of frames per second within \(Self.anyFrameRate.lowerBound)...\(Self.anyFrameRate.upperBound)")
            }
        }
        if let h = minHeight, !(h.isFinite && Self.minHeightRange.contains(h)) {
            return ("minHeight", "a fraction of the frame height within \(Self.minHeightRange.lowerBound)...\(Self.minHeightRange.upperBound)")
        }
        return nil
    }

    /// Reads a `PUT` body: only the keys above, each of its type; throws naming the key.
    public static func decode(_ body: [String: Any]) throws(APIError) -> EditableSettings {
        let known: Set<String> = ["preset", "distance", "startType", "marksPause", "setPause", "startSound", "crossingLED", "buzzer",
                                  "crossingSound", "spokenTime", "rearm", "speedUnit", "fps", "minHeight", "delayedVideo"]
        if let unknown = body.keys.sorted().first(where: { !known.contains($0) }) {
            throw APIError.invalid(unknown, "not a setting; settings: \(known.sorted().joined(separator: ", "))")
        }
        var s = EditableSettings()
        func text(_ k: String) throws(APIError) -> String? {
            guard let v = body[k] else { return nil }
            guard let t = v as? String, !t.isEmpty, t.count <= 40 else { throw APIError.invalid(k, "must be text") }
            return t
        }
        func flag(_ k: String) throws(APIError) -> Bool? {
            guard let v = body[k] else { return nil }
            guard let b = WebServer.boolean(v) else { throw APIError.invalid(k, "must be true or false") }
            return b
        }
        func number(_ v: Any?, _ k: String) throws(APIError) -> Double? {
            guard let v else { return nil }
            guard let n = WebServer.number(v) else { throw APIError.invalid(k, "must be a number") }
            return n
        }
        func pause(_ k: String) throws(APIError) -> Pause? {
            guard let v = body[k] else { return nil }
            guard let d = v as? [String: Any], let lo = try number(d["min"], k), let hi = try number(d["max"], k) else {
                throw APIError.invalid(k, "must be {\"min\": seconds, \"max\": seconds}")
            }
            return Pause(min: lo, max: hi)
        }
        s.preset = try text("preset")
        s.distance = try number(body["distance"], "distance")
        s.startType = try text("startType")
        s.marksPause = try pause("marksPause")
        s.setPause = try pause("setPause")
        s.startSound = try text("startSound")
        s.crossingLED = try flag("crossingLED")
        s.buzzer = try flag("buzzer")
        s.crossingSound = try flag("crossingSound")
        s.spokenTime = try flag("spokenTime")
        s.rearm = try flag("rearm")
        s.speedUnit = try text("speedUnit")
        if let f = try number(body["fps"], "fps") {
            guard f == f.rounded(), abs(f) < 1000 else { throw APIError.invalid("fps", "a whole number of frames per second") }
            s.fps = Int(f)
        }
        s.minHeight = try number(body["minHeight"], "minHeight")
        s.delayedVideo = try flag("delayedVideo")
        if s == EditableSettings() { throw APIError.invalid("body", "give at least one setting") }
        return s
    }
}

/// What the page shows as the settings now: the loop publishes them (on change), the web
/// side reads them; `runningFPS` is the camera's rate as opened.
public final class SettingsCell: Sendable {
    private let state = Mutex<(settings: EditableSettings, runningFPS: Int?, cameraRates: [Int])>((EditableSettings(), nil, []))
    public init() {}
    /// `cameraRates`: the whole rates the camera offers, when it says (kept until it says again).
    public func publish(_ s: EditableSettings, runningFPS: Int? = nil, cameraRates: [Int]? = nil) {
        state.withLock { st in
            st.settings = s
            if let f = runningFPS { st.runningFPS = f }
            if let r = cameraRates, !r.isEmpty { st.cameraRates = r }
        }
    }
    public var current: EditableSettings { state.withLock { $0.settings } }
    public var runningFPS: Int? { state.withLock { $0.runningFPS } }
    /// The rates the page's menu offers: the camera's own once it said, else `EditableSettings.frameRates`.
    public var frameRates: [Int] { state.withLock { $0.cameraRates.isEmpty ? EditableSettings.frameRates : $0.cameraRates } }
    /// The rates a change may ask for: the camera's own and `EditableSettings.frameRates`
    /// (a camera that cannot give one runs at its closest, and the page says so).
    public var acceptedRates: [Int] { state.withLock { Array(Set($0.cameraRates + EditableSettings.frameRates)).sorted() } }
}
