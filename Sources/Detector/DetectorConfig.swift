// SPDX-License-Identifier: Apache-2.0
// Tunable parameters of the photo-finish detector, with their defaults and rationale.

public import GateCore

/// Parameters of `PhotoFinishDetector`. Distances are in work-image pixels unless named
/// otherwise; heights are fractions of the frame height so a clip can be replayed at any
/// work resolution.
public struct DetectorConfig: Sendable, Hashable {
    /// Column of the gate line in input-image pixels (may be fractional).
    public var gateX: Double
    /// The work image's short side is at least this many pixels; the input is reduced by
    /// the largest integer factor that keeps it so (160 gives 284×160 from 568×320).
    public var workShortSide: Int = 160
    /// Smallest luma difference from the background, out of 255, that counts as motion.
    /// Raised automatically above three noise deviations in grainy light.
    public var motionThreshold: Int = 14
    /// A body must be at least this tall, as a fraction of frame height, to time a crossing.
    public var minCrossingHeight: Double = 0.33
    /// A body at least this tall is reported as in view and sized well enough (`ready`).
    public var minReadyHeight: Double = 0.20
    /// Slowest leading-edge speed, in work pixels per second, that can cross. Rejects an
    /// athlete standing or leaning on the line.
    public var minVelocity: Double = 60
    /// No second crossing is reported within this span after one (double triggers).
    public var cooldown: Span = .milliseconds(300)
    /// After crossing, a track is re-armed only once its leading edge is this fraction of
    /// the work width back on the approach side of the line.
    public var rearmFraction: Double = 0.25
    /// A column belongs to a body when it holds a vertical run of motion pixels at least
    /// this fraction of frame height (an arm is too thin to make one).
    public var columnRunFraction: Double = 0.15
    /// A body is at least this many adjacent body columns wide (an arm or pole is narrower).
    public var minBodyColumns: Int = 8
    /// Rolling-shutter readout time per input row; 0 for a global shutter.
    public var rowReadout: Span = .zero
    /// Time constant with which the background follows an empty scene (slow light drift).
    public var backgroundTimeConstant: Span = .milliseconds(500)
    /// Time constant with which a still object is absorbed into the background (a bag
    /// left on the track stops being motion after a few of these).
    public var absorbTimeConstant: Span = .seconds(10)
    /// The detector arms only after learning the background for this long.
    public var warmup: Span = .milliseconds(400)
    /// Timestamp jitter of the camera, added to every crossing's uncertainty.
    public var timestampJitter: Span = .microseconds(100)

    public init(gateX: Double) {
        self.gateX = gateX
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
