// SPDX-License-Identifier: Apache-2.0
// The ready LED: what the gate sees, as patterns a coach can tell apart from a distance.

public import GateCore

/// Maps the gate status to the ready LED. Distinct patterns, most urgent first:
/// - off: not ready to time (camera missing or silent, background still being learned);
/// - fast blink (5 Hz): the camera is shaking;
/// - double flash each second: an athlete passed but was too small (camera too far);
/// - slow blink (1 Hz): a body stands at the line (the gate is not clear);
/// - steady on: armed and clear, ready to time.
public enum StatusLight: String, Sendable, Hashable {
    case off, shaking, tooFar = "too-far", occupied, ready

    public init(status: GateStatus, camera: DeviceState) {
        if camera != .streaming { self = .off }
        else if status.shaking { self = .shaking }
        else if status.tooFar { self = .tooFar }
        else if !status.clear { self = .occupied }
        else if status.armed { self = .ready }
        else { self = .off }
    }

    /// The LED level of this pattern at `now`.
    public func level(at now: MonotonicInstant) -> Bool {
        let ms = Int((now.nanoseconds / 1_000_000) % 1000)
        switch self {
        case .off: return false
        case .ready: return true
        case .shaking: return ms % 200 < 100
        case .occupied: return ms < 500
        case .tooFar: return ms < 120 || (ms >= 240 && ms < 360)
        }
    }
}
