// SPDX-License-Identifier: Apache-2.0
// Small value types shared by several messages: roles, start types, readiness, camera state.

public import GateCore

/// What a gate does in a race.
public enum GateRole: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Starts the clock (by crossing, button, countdown or voice).
    case start = 1
    /// An intermediate split gate.
    case lap = 2
    /// Stops the clock.
    case finish = 3
    /// Times nothing; a gate (or phone-side host) that controls and displays.
    case control = 4

    public var description: String {
        switch self {
        case .start: return "start"
        case .lap: return "lap"
        case .finish: return "finish"
        case .control: return "control"
        }
    }
}

/// How runs of a session start; the same set as the engine's `StartType`, numbered for
/// the wire (Race maps one to the other).
public enum RaceStartType: UInt8, Sendable, Hashable, CaseIterable {
    /// The first crossing of the start gate starts the clock.
    case flying = 1
    /// Lifting a finger from the start gate's button starts the clock.
    case buttonRelease = 2
    /// "3, 2, 1, BEEP" from the start gate.
    case countdown = 3
    /// "On your marks … Set … BEEP" from the start gate.
    case voice = 4
    /// The athlete leaving the start gate's frame starts the clock.
    case inFrame = 5
}

/// The detector's readiness flags as sent in `gateStatus`, one bit each.
public struct ReadinessFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// An athlete-sized body is in view.
    public static let ready = ReadinessFlags(rawValue: 1 << 0)
    /// A crossing would be timed now.
    public static let armed = ReadinessFlags(rawValue: 1 << 1)
    /// Nobody is near the gate line.
    public static let clear = ReadinessFlags(rawValue: 1 << 2)
    /// The image moved recently (tripod shake).
    public static let shaking = ReadinessFlags(rawValue: 1 << 3)
    /// Bodies look too small: move the camera closer.
    public static let tooFar = ReadinessFlags(rawValue: 1 << 4)
    /// Every defined bit; others are rejected as malformed.
    public static let all: ReadinessFlags = [.ready, .armed, .clear, .shaking, .tooFar]

    /// The flags of a detector status.
    public init(_ status: GateStatus) {
        var flags: ReadinessFlags = []
        if status.ready { flags.insert(.ready) }
        if status.armed { flags.insert(.armed) }
        if status.clear { flags.insert(.clear) }
        if status.shaking { flags.insert(.shaking) }
        if status.tooFar { flags.insert(.tooFar) }
        self = flags
    }
}

extension DeviceState {
    /// The camera state's number on the wire.
    var wireCode: UInt8 {
        switch self {
        case .absent: return 0
        case .busy: return 1
        case .noSignal: return 2
        case .streaming: return 3
        case .closed: return 4
        }
    }

    init?(wireCode: UInt8) {
        switch wireCode {
        case 0: self = .absent
        case 1: self = .busy
        case 2: self = .noSignal
        case 3: self = .streaming
        case 4: self = .closed
        default: return nil
        }
    }
}

extension CrossingDirection {
    var wireCode: UInt8 { self == .leftToRight ? 0 : 1 }
    init?(wireCode: UInt8) {
        switch wireCode {
        case 0: self = .leftToRight
        case 1: self = .rightToLeft
        default: return nil
        }
    }
}

/// Largest distance from the start accepted, in metres: 100 km covers any track or road
/// course a gate group could time, and rejects garbage early.
let maxDistanceMetres = 100_000.0
