// SPDX-License-Identifier: Apache-2.0
// What the photo-finish recorder keeps and for how long, with the buffer sizes that follow.

public import GateCore

/// Parameters of `PhotoFinishRecorder`. All buffers are sized from these once, at
/// configuration time; nothing grows per frame.
public struct PhotoFinishConfig: Sendable, Hashable {
    /// Frame size the camera delivers, input pixels.
    public var frameWidth: Int
    public var frameHeight: Int
    /// Column of the gate line in input pixels (the detector's `gateX`; may be fractional).
    public var gateX: Double
    /// Nominal frame rate, frames per second; sizes the ring.
    public var fps: Double
    /// The composite starts this long before the crossing instant. Why: 0.3 s shows the
    /// whole approach of a sprinter's torso (about 3 m at 10 m/s) and a close second.
    public var preRoll: Span = .milliseconds(300)
    /// Recording continues this long after the crossing instant before the capture is
    /// frozen, so a runner just behind is in the picture.
    public var postRoll: Span = .milliseconds(300)
    /// Largest delay from a crossing instant to its report by the detector (the
    /// detector confirms a crossing a few frames late); the ring keeps this much extra.
    public var reportDelay: Span = .milliseconds(300)
    /// Column samples are taken every `rowStep` input rows so a column has at most this
    /// many rows. Why: 480 rows keep a torso sharp and the ring small at 1080p.
    public var maxColumnHeight: Int = 480
    /// Thumbnails are at most this wide; the frame is reduced by an integer factor.
    public var thumbnailMaxWidth: Int = 160
    /// Capture slots that can wait for rendering at once; a crossing that finds none
    /// free is counted in `PhotoFinishRecorder.capturesDropped` and skipped.
    public var slots: Int = 3
    /// Crossings whose capture can be pending (post-roll still recording) at once.
    public var maxPending: Int = 4
    /// Thumbnails around the crossing: the frame at `−thumbnailOffset`, the last frame
    /// before the crossing, the first after it, and the frame at `+thumbnailOffset`.
    public var thumbnailOffset: Span = .milliseconds(100)
    /// The frame strip around the crossing (thumbnail size, every frame): this many
    /// frames before the crossing instant and this many at or after it. Why 6 and 6:
    /// at 120 fps that is 50 ms either side, a torso's width or more; at 30 fps, 0.2 s.
    public var stripFramesBefore: Int = 6
    public var stripFramesAfter: Int = 6

    public init(frameWidth: Int, frameHeight: Int, gateX: Double, fps: Double) {
        self.frameWidth = frameWidth
        self.frameHeight = frameHeight
        self.gateX = gateX
        self.fps = fps
    }

    /// Input rows between two column samples.
    public var rowStep: Int { max(1, (frameHeight + maxColumnHeight - 1) / maxColumnHeight) }
    /// Rows of one stored column.
    public var columnHeight: Int { (frameHeight + rowStep - 1) / rowStep }
    /// Integer reduction from frame to thumbnail.
    public var thumbnailScale: Int { max(1, (frameWidth + thumbnailMaxWidth - 1) / thumbnailMaxWidth) }
    public var thumbnailWidth: Int { max(1, frameWidth / thumbnailScale) }
    public var thumbnailHeight: Int { max(1, frameHeight / thumbnailScale) }
    /// The input column read as the gate: `gateX` rounded and clamped into the frame.
    public var gateColumn: Int { min(frameWidth - 1, max(0, Int(gateX.rounded()))) }
    /// Frames the ring holds: pre-roll, post-roll and report delay at `fps`, plus a
    /// margin of eight frames for timestamp jitter.
    public var ringCapacity: Int {
        let seconds = preRoll.seconds + postRoll.seconds + reportDelay.seconds
        return Int((seconds * fps).rounded(.up)) + 8
    }

    /// Why the configuration cannot be used, or nil when it can.
    public var problem: String? {
        if frameWidth <= 0 || frameHeight <= 0 { return "frame size \(frameWidth)x\(frameHeight) is not positive" }
        if !(gateX.isFinite && gateX >= 0 && gateX < Double(frameWidth)) { return "gate x \(gateX) is outside the frame width \(frameWidth)" }
        if !(fps.isFinite && fps > 0 && fps <= 1000) { return "frame rate \(fps) is outside 0...1000 fps" }
        if preRoll.nanoseconds <= 0 || postRoll.nanoseconds <= 0 || preRoll.seconds > 5 || postRoll.seconds > 5 {
            return "pre- and post-roll must be within 0...5 s"
        }
        if reportDelay.nanoseconds < 0 || reportDelay.seconds > 5 { return "report delay must be within 0...5 s" }
        if maxColumnHeight < 16 || thumbnailMaxWidth < 16 { return "column height and thumbnail width must be at least 16" }
        if slots < 1 || slots > 16 || maxPending < 1 || maxPending > 16 { return "slots and pending must be within 1...16" }
        if stripFramesBefore < 0 || stripFramesAfter < 0 || stripFramesBefore + stripFramesAfter > 32 {
            return "strip frames before and after must be at least 0 and together at most 32"
        }
        return nil
    }
}
