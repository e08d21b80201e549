// SPDX-License-Identifier: Apache-2.0
// What the detector reports: crossings and gate status.

/// Which way an athlete crossed the gate line, as seen by the camera.
public enum CrossingDirection: UInt8, Sendable, Hashable, CustomStringConvertible {
    case leftToRight
    case rightToLeft

    /// The spelling used in JSON output.
    public var description: String { self == .leftToRight ? "left_to_right" : "right_to_left" }
}

/// One torso crossing of the gate line.
public struct Crossing: Sendable, Hashable {
    /// Interpolated instant the torso's leading edge reached the gate line.
    public var time: MonotonicInstant
    /// One standard deviation of `time`, from the fit residuals and timestamp model.
    public var uncertainty: Span
    public var direction: CrossingDirection
    /// Height of the athlete's blob as a fraction of the frame height, 0...1.
    public var blobHeight: Double
    /// Speed of the torso's leading edge in work-image pixels per second (always positive).
    public var speedWorkPixelsPerSecond: Double
    /// Sequence number of the frame in which the crossing was confirmed and reported.
    public var reportedAtSequence: UInt64

    public init(time: MonotonicInstant, uncertainty: Span, direction: CrossingDirection, blobHeight: Double,
                speedWorkPixelsPerSecond: Double, reportedAtSequence: UInt64) {
        self.time = time
        self.uncertainty = uncertainty
        self.direction = direction
        self.blobHeight = blobHeight
        self.speedWorkPixelsPerSecond = speedWorkPixelsPerSecond
        self.reportedAtSequence = reportedAtSequence
    }
}

/// What the gate sees right now, for LEDs, the status page and set-up help.
public struct GateStatus: Sendable, Hashable {
    /// The background is learned, the camera is steady and no cooldown runs: a crossing would be timed.
    public var armed: Bool
    /// An athlete-sized body (at least the ready height) is in view.
    public var ready: Bool
    /// No body is inside the re-arm zone around the gate line.
    public var clear: Bool
    /// A body that moved through the view was shorter than the crossing height: move the camera closer.
    public var tooFar: Bool
    /// The whole image moved recently (tripod shake, wind).
    public var shaking: Bool
    /// Height of the tallest body in view as a fraction of frame height, 0...1.
    public var blobHeight: Double
    /// Fraction of work-image pixels that differ from the learned background, 0...1.
    public var motion: Double

    public init(armed: Bool = false, ready: Bool = false, clear: Bool = true, tooFar: Bool = false,
                shaking: Bool = false, blobHeight: Double = 0, motion: Double = 0) {
        self.armed = armed
        self.ready = ready
        self.clear = clear
        self.tooFar = tooFar
        self.shaking = shaking
        self.blobHeight = blobHeight
        self.motion = motion
    }
}

/// The detector's output for one frame: at most one crossing (when two bodies' crossings
/// are confirmed in the same frame, the second is reported with the next frame) and the
/// gate status.
public struct DetectionSet: Sendable {
    public var crossing: Crossing?
    public var status: GateStatus
    public init() {
        crossing = nil
        status = GateStatus()
    }
}
