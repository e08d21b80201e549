// SPDX-License-Identifier: Apache-2.0
// Delay and clip settings, marks, and the packets a clip is cut from.

public import GateCore

/// Why a video setting was refused: the page's name of the field, and why.
public struct VideoSettingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `delay`, `preRoll` or `postRoll`.
    public let field: String
    public let description: String
}

/// How far behind the camera the delayed view runs.
public struct DelaySetting: Hashable, Sendable {
    /// 1 to 60 s: one second is the shortest time to turn from the target to the screen;
    /// a minute covers an archer's whole end.
    public static let range: ClosedRange<Double> = 1...60
    public let delay: Span

    public init(seconds: Double) throws(VideoSettingError) {
        guard seconds.isFinite, Self.range.contains(seconds) else {
            throw VideoSettingError(field: "delay", description: "delay \(seconds) s is outside \(Int(Self.range.lowerBound))–\(Int(Self.range.upperBound)) s")
        }
        delay = .seconds(seconds)
    }
}

/// How much a clip keeps before and after its mark.
public struct RollSetting: Hashable, Sendable {
    /// Each of pre- and post-roll: 0 to 60 s ("the 5 s before the mark" is pre-roll 5,
    /// post-roll 0).
    public static let range: ClosedRange<Double> = 0...60
    public let preRoll: Span
    public let postRoll: Span

    public init(preRollSeconds: Double, postRollSeconds: Double) throws(VideoSettingError) {
        for (field, name, v) in [("preRoll", "pre-roll", preRollSeconds), ("postRoll", "post-roll", postRollSeconds)] {
            guard v.isFinite, Self.range.contains(v) else {
                throw VideoSettingError(field: field, description: "\(name) \(v) s is outside 0–60 s")
            }
        }
        guard preRollSeconds + postRollSeconds > 0 else {
            throw VideoSettingError(field: "preRoll", description: "pre-roll and post-roll are both 0 s: a clip would be empty")
        }
        preRoll = .seconds(preRollSeconds)
        postRoll = .seconds(postRollSeconds)
    }
}

/// A key point the coach marked (button, page, clicker): the frame shown on the delayed
/// view at that moment, which is what the coach was looking at.
public struct Mark: Hashable, Sendable {
    /// When the marked frame was captured.
    public var time: MonotonicInstant
    /// The camera's sequence number of the marked frame.
    public var sequence: UInt64
    public init(time: MonotonicInstant, sequence: UInt64) {
        self.time = time
        self.sequence = sequence
    }
}

/// The capture times a clip covers: `[mark − preRoll, mark + postRoll]`.
public struct ClipWindow: Hashable, Sendable {
    public var mark: Mark
    public var start: MonotonicInstant
    public var end: MonotonicInstant

    public init(mark: Mark, roll: RollSetting) {
        self.mark = mark
        start = mark.time - roll.preRoll
        end = mark.time + roll.postRoll
    }

    /// Whether everything the clip covers has been captured by `newest`.
    public func isComplete(newest: MonotonicInstant) -> Bool { newest >= end }
}

/// Packets of a clip in a ring: decoding starts at `decodeFrom` (a keyframe), frames before
/// `showFrom` are decoded but not shown, and `through` is the last packet.
public struct ClipPackets: Hashable, Sendable {
    public var decodeFrom: UInt64
    public var showFrom: UInt64
    public var through: UInt64
    /// Whether the ring had already lost part of the window's start.
    public var truncatedStart: Bool
    /// Whether the ring holds nothing past the window's last frame and that frame comes
    /// before the window's end: the clip was cut with what the ring held (the delay mode
    /// went off, or the camera stopped, before the post-roll was captured).
    public var truncatedEnd: Bool

    /// Finds a window's packets in `ring`; nil when the ring holds none of them.
    public init?(_ window: ClipWindow, in ring: PacketRing) {
        guard let last = ring.newest(atOrBefore: window.end) else { return nil }
        let show: UInt64
        if let before = ring.newest(atOrBefore: window.start) {
            // The first frame at or after the window's start.
            show = ring.time(before) == window.start ? before : before + 1
            truncatedStart = false
        } else {
            show = ring.first
            truncatedStart = true
        }
        guard show <= last, ring.time(show) <= window.end else { return nil }
        decodeFrom = ring.keyframe(atOrBefore: show)
        showFrom = show
        through = last
        truncatedEnd = last == ring.end - 1 && ring.time(last) < window.end
    }

    /// Frames the clip shows.
    public var frameCount: Int { Int(through - showFrom + 1) }
}
