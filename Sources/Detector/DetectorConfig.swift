// SPDX-License-Identifier: Apache-2.0
// Tunable parameters of the photo-finish detector, with their defaults and rationale.

public import GateCore

/// Parameters of `PhotoFinishDetector`. Distances are in work-image pixels unless named
/// otherwise; heights are fractions of the frame height so a clip can be replayed at any
/// work resolution.
public struct DetectorConfig: Sendable, Hashable {
    /// Column of the gate line in input-image pixels (may be fractional).
    public var gateX: Double
    /// What the gate times: an athlete's torso, or the foremost point of a vehicle.
    public var subject: CrossingSubject = .athlete
    /// The work image's short side is at least this many pixels; the input is reduced by
    /// the largest integer factor that keeps it so (160 gives 284×160 from 568×320).
    public var workShortSide: Int = 160
    /// Smallest luma difference from the background, out of 255, that counts as motion.
    /// Raised automatically above three noise deviations in grainy light.
    public var motionThreshold: Int = 14
    /// The one body-size setting: the smallest body, as a fraction of frame height, whose
    /// crossing is timed. Every other size threshold derives from it (see `BodyScale`), so
    /// a gate aimed at a far line behaves like one aimed at a near line.
    public var minCrossingHeight: Double = 0.33
    /// Slowest leading-edge speed, in work pixels per second, that can cross; nil derives it
    /// from the body size (`BodyScale.minVelocity`). Rejects a person standing or leaning
    /// on the line.
    public var minVelocity: Double? = nil
    /// No second crossing of the same body is reported within this span after one (double
    /// triggers from one torso); different bodies are timed however close together.
    public var cooldown: Span = .milliseconds(300)
    /// Rolling-shutter readout time per input row; 0 for a global shutter.
    public var rowReadout: Span = .zero
    /// Time constant with which the background follows an empty scene (slow light drift).
    public var backgroundTimeConstant: Span = .milliseconds(500)
    /// Time constant with which a still object is absorbed into the background (a bag
    /// left on the track stops being motion after a few of these).
    public var absorbTimeConstant: Span = .seconds(10)
    /// Time constant with which each pixel's deviation from the background follows the
    /// scene: swaying leaves raise their pixels' motion threshold within a few seconds.
    public var deviationTimeConstant: Span = .seconds(4)
    /// The detector arms only after learning the background for this long.
    public var warmup: Span = .milliseconds(400)
    /// Timestamp jitter of the camera, added to every crossing's uncertainty.
    public var timestampJitter: Span = .microseconds(100)

    public init(gateX: Double) {
        self.gateX = gateX
    }
}

/// What crosses the line and which edge of it is timed.
public enum CrossingSubject: String, Sendable, Hashable, CaseIterable {
    /// A person: the torso's leading edge (trunk and shoulders; not head, arms or legs).
    /// Bodies far longer than tall (a car behind the fence) are never timed.
    case athlete
    /// A car, a kart, a bike with its rider: the foremost point of the whole moving body,
    /// with no torso logic, as a drag strip's beam sees the front of a car. Bodies of any
    /// length are timed, and pieces of one body side by side (cut by a post) are one body.
    case vehicle
}

/// Size thresholds in work pixels, all derived from `DetectorConfig.minCrossingHeight` and
/// the work image's height.
public struct BodyScale: Sendable, Hashable {
    /// Smallest measured body height that is timed, as a fraction of the frame height:
    /// 85 % of `minCrossingHeight`. Why: a silhouette measures shorter than the person
    /// (feet on a ground of their shade, hair against a dark wall), so a person exactly
    /// the set height must not fall under it.
    public let minTimedHeight: Double
    /// Smallest measured body height that is timed, in work pixels.
    public let minBody: Double
    /// Foreground fragments this many pixels apart (horizontally, or vertically in rows)
    /// belong to one body: clothes that match the background split a silhouette.
    public let joinGap: Int
    /// Smallest foreground area, in pixels, kept as part of a body (noise and leaves are less).
    public let minArea: Int
    /// Bodies from this height up are followed and shown (too far); only those of
    /// `minBody` and taller are timed.
    public let minTracked: Double
    /// A body at least this tall, as a fraction of frame height, is reported as in view
    /// and sized well enough (`ready`): 60 % of the crossing height, so a coach sees the
    /// gate notice an athlete walking up before the athlete is at full size.
    public let readyHeight: Double
    /// A body's leading edge must have been at least this far before the line, in pixels,
    /// for its crossing to count (it approached the line; it did not appear on it).
    public let armDistance: Double
    /// Default slowest crossing speed, pixels per second: a fifth of the smallest body
    /// height per second. A walker covers about 0.75 of her height per second.
    public let minVelocity: Double

    public init(config: DetectorConfig, workHeight: Int) {
        minTimedHeight = 0.85 * config.minCrossingHeight
        minBody = max(8, minTimedHeight * Double(workHeight))
        // Why: about a twentieth of the body height is the stripe of a shirt or the gap at
        // a belt where clothes match the background; smaller gaps are noise.
        joinGap = max(1, min(4, Int((minBody / 20).rounded())))
        minArea = max(4, Int((minBody * minBody / 200).rounded()))
        minTracked = 0.5 * minBody
        readyHeight = 0.6 * config.minCrossingHeight
        armDistance = max(2, 0.25 * minBody)
        minVelocity = config.minVelocity ?? 0.2 * minBody
    }
}

/// The reduction from input image to work image: an integer factor `scale` with
/// horizontal box averaging over `scale` pixels and one sampled row per `scale` rows.
public struct WorkGeometry: Sendable, Hashable {
    public let inputWidth: Int
    public let inputHeight: Int
    public let scale: Int
    public let width: Int
    public let height: Int

    /// Picks the largest integer factor that keeps the work image's short side at or
    /// above `shortSide` pixels.
    public init(inputWidth: Int, inputHeight: Int, shortSide: Int) {
        precondition(inputWidth > 0 && inputHeight > 0 && shortSide > 0, "sizes must be positive")
        self.inputWidth = inputWidth
        self.inputHeight = inputHeight
        scale = max(1, min(inputWidth, inputHeight) / shortSide)
        width = inputWidth / scale
        height = inputHeight / scale
    }

    /// Input row sampled for work row `y`: the middle row of its block.
    @inlinable public func inputRow(ofWorkRow y: Int) -> Int { y * scale + scale / 2 }

    /// Converts an input-pixel column to the work image's continuous x coordinate, where
    /// work pixel `i` spans `[i, i+1)`.
    @inlinable public func workX(ofInputX x: Double) -> Double { x / Double(scale) }
}
