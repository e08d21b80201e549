// SPDX-License-Identifier: Apache-2.0
// Run presets from the reference app and speed in the units coaches use.

public import GateCore

/// A named kind of run: its distance and how it usually starts.
public struct Preset: Sendable, Hashable {
    /// Stable identifier used in config files and the web page, e.g. `"flying-30m"`.
    public var id: String
    public var title: String
    /// Distance timed, in metres (`nil` for drills timed without one, like solo laps).
    public var distance: Double?
    public var startType: StartType
    public var solo: Bool
    /// The distances the coach chooses from, metres (empty: `distance` only). `distance`
    /// is the one chosen, the first of them unless `choosing(distance:)` said otherwise.
    public var distances: [Double]

    public init(id: String, title: String, distance: Double?, startType: StartType, solo: Bool = false, distances: [Double] = []) {
        self.id = id
        self.title = title
        self.distance = distance
        self.startType = startType
        self.solo = solo
        self.distances = distances
    }

    /// This preset run over `metres`, one of its `distances`; nil when it does not offer it.
    public func choosing(distance metres: Double) -> Preset? {
        guard distances.contains(metres) else { return nil }
        var p = self
        p.distance = metres
        return p
    }

    /// The presets of the reference app.
    public static let all: [Preset] = [
        Preset(id: "40yd", title: "40 yd", distance: 36.576, startType: .buttonRelease),
        Preset(id: "60m", title: "60 m", distance: 60, startType: .voice),
        Preset(id: "flying-10m", title: "Flying 10 m", distance: 10, startType: .flying),
        Preset(id: "flying-20m", title: "Flying 20 m", distance: 20, startType: .flying),
        Preset(id: "flying-30m", title: "Flying 30 m", distance: 30, startType: .flying),
        // The reference app's Flying Sprint: one preset, its distance chosen per session.
        Preset(id: "flying", title: "Flying sprint", distance: 10, startType: .flying, distances: [10, 20, 30]),
        Preset(id: "takeoff-5m", title: "Take-off velocity 5 m", distance: 5, startType: .flying),
        Preset(id: "30m", title: "30 m", distance: 30, startType: .buttonRelease),
        Preset(id: "solo", title: "Solo laps", distance: nil, startType: .flying, solo: true),
        // Why: the 5-10-5 shuttle covers 20 yd in total (5 + 10 + 5 yards).
        Preset(id: "pro-agility", title: "Pro agility 5-10-5", distance: 18.288, startType: .buttonRelease),
        Preset(id: "100m", title: "100 m", distance: 100, startType: .voice),
        Preset(id: "10m", title: "10 m", distance: 10, startType: .buttonRelease),
        Preset(id: "20m", title: "20 m", distance: 20, startType: .buttonRelease),
        // Why: the L-drill (3-cone) runs 5 + 5 yards out, around, and back: 30 yd in all.
        Preset(id: "l-drill", title: "L-drill", distance: 27.432, startType: .buttonRelease),
    ]

    public static func named(_ id: String) -> Preset? { all.first { $0.id == id } }
}

/// Units speed is shown in.
public enum SpeedUnit: String, Sendable, Hashable, CaseIterable {
    case metresPerSecond = "m/s"
    case kilometresPerHour = "km/h"
    case milesPerHour = "mph"

    /// Average speed over `distance` metres run in `time`, in this unit.
    public func speed(distance: Double, time: Span) -> Double? {
        guard time.nanoseconds > 0 else { return nil }
        let ms = distance / time.seconds
        switch self {
        case .metresPerSecond: return ms
        case .kilometresPerHour: return ms * 3.6
        case .milesPerHour: return ms * 3600 / 1609.344
        }
    }
}
