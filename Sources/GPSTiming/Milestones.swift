// SPDX-License-Identifier: Apache-2.0
// The acceleration timer's targets: speeds and distances from a standing start.

/// A target of an acceleration run: a speed reached or a distance covered.
public enum Milestone: Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case zeroTo60mph, zeroTo100kmh, zeroTo100mph
    case feet60, feet330, eighthMile, feet1000, quarterMile, halfMile

    /// Metres a second for a speed target, nil for a distance.
    public var speed: Double? {
        switch self {
        case .zeroTo60mph: return 60 * Units.mph
        case .zeroTo100kmh: return 100 / 3.6
        case .zeroTo100mph: return 100 * Units.mph
        default: return nil
        }
    }

    /// Metres for a distance target, nil for a speed.
    public var distance: Double? {
        switch self {
        case .feet60: return 60 * Units.foot
        case .feet330: return 330 * Units.foot
        case .eighthMile: return Units.mile / 8
        case .feet1000: return 1000 * Units.foot
        case .quarterMile: return Units.mile / 4
        case .halfMile: return Units.mile / 2
        default: return nil
        }
    }

    /// Whether a trap speed goes with it: drag strips trap at 1/8 and 1/4 mile.
    public var hasTrap: Bool { self == .eighthMile || self == .quarterMile }

    public var description: String {
        switch self {
        case .zeroTo60mph: return "0-60 mph"
        case .zeroTo100kmh: return "0-100 km/h"
        case .zeroTo100mph: return "0-100 mph"
        case .feet60: return "60 ft"
        case .feet330: return "330 ft"
        case .eighthMile: return "1/8 mile"
        case .feet1000: return "1000 ft"
        case .quarterMile: return "1/4 mile"
        case .halfMile: return "1/2 mile"
        }
    }
}

/// Conversions to SI units.
public enum Units {
    /// Metres a second in one mile an hour (the international mile, 1609.344 m).
    public static let mph = 1609.344 / 3600
    public static let foot = 0.3048
    public static let mile = 1609.344
    /// A drag strip's rollout: the car moves this far before its tyre leaves the staging beam.
    public static let rollout = 1 * foot
    /// Trap speed is the average over the last 66 ft before the mark, as drag strips time it.
    public static let trap = 66 * foot
}
