// SPDX-License-Identifier: Apache-2.0
// What the delay mode reports and keeps: its status, the delayed picture, sessions and clips.

public import Archery
public import GateCore

/// The delayed picture a browser is shown.
public struct DelayedPicture: Sendable, Hashable {
    public var jpeg: [UInt8]
    public var width: Int
    public var height: Int
    /// The frame's camera sequence number and capture time.
    public var sequence: UInt64
    public var time: MonotonicInstant
    /// When the picture was ready to send (for the added-latency figure).
    public var publishedAt: MonotonicInstant

    public init(jpeg: [UInt8], width: Int, height: Int, sequence: UInt64, time: MonotonicInstant, publishedAt: MonotonicInstant) {
        self.jpeg = jpeg
        self.width = width
        self.height = height
        self.sequence = sequence
        self.time = time
        self.publishedAt = publishedAt
    }
}

/// Counters and settings the page shows.
public struct VideoStatus: Sendable, Hashable, Codable {
    public var encoder: String
    public var width: Int
    public var height: Int
    public var fps: Double
    public var delaySeconds: Double
    public var preRollSeconds: Double
    public var postRollSeconds: Double
    /// Frames the tap took (copied on the loop or lent), lost (the video thread was behind,
    /// or the camera closed before a lent frame was copied) and the encoder took.
    public var framesIn: UInt64
    public var framesDropped: UInt64
    public var framesEncoded: UInt64
    /// Seconds of video in the ring, its bytes and its capacity.
    public var bufferSeconds: Double
    public var bufferBytes: Int
    public var bufferCapacityBytes: Int
    /// "about N min at these settings".
    public var bufferSummary: String
    public var session: String?
    public var marksPending: Int
    public var clipsSaved: Int
    /// Marks whose frames left the buffer before they could be saved.
    public var clipsLost: Int
    /// Time spent cutting clips (MP4 and thumbnail), seconds, since start.
    public var clipSeconds: Double
    /// Bytes the saved clips take on disk (filled in by whoever reads the library).
    public var storageBytes: Int
    /// The last error that still matters (a full disk, an encoder failure), or nil.
    public var problem: String?
    /// Archery scoring's defaults for a new card from the settings file (no arrows), or nil
    /// when the file sets none.
    public var archery: ScoreSheet?
    /// The TV output: the display shown on (`HDMI-A-1 1920×1080 at 60 Hz`), or why there
    /// is none and what to do; nil when the TV output is off.
    public var tv: String?

    public init(encoder: String, width: Int, height: Int, fps: Double, delaySeconds: Double, preRollSeconds: Double,
                postRollSeconds: Double, framesIn: UInt64, framesDropped: UInt64, framesEncoded: UInt64,
                bufferSeconds: Double, bufferBytes: Int, bufferCapacityBytes: Int, bufferSummary: String, session: String?,
                marksPending: Int, clipsSaved: Int, clipsLost: Int, clipSeconds: Double, storageBytes: Int, problem: String?,
                archery: ScoreSheet? = nil) {
        self.encoder = encoder
        self.width = width
        self.height = height
        self.fps = fps
        self.delaySeconds = delaySeconds
        self.preRollSeconds = preRollSeconds
        self.postRollSeconds = postRollSeconds
        self.framesIn = framesIn
        self.framesDropped = framesDropped
        self.framesEncoded = framesEncoded
        self.bufferSeconds = bufferSeconds
        self.bufferBytes = bufferBytes
        self.bufferCapacityBytes = bufferCapacityBytes
        self.bufferSummary = bufferSummary
        self.session = session
        self.marksPending = marksPending
        self.clipsSaved = clipsSaved
        self.clipsLost = clipsLost
        self.clipSeconds = clipSeconds
        self.storageBytes = storageBytes
        self.problem = problem
        self.archery = archery
    }
}

/// One saved clip.
public struct ClipRecord: Codable, Sendable, Hashable {
    /// `<session>-<index>`, e.g. "20261126-183000-3".
    public var id: String
    public var session: String
    /// Position in its session, from 1: clip i goes with arrow i.
    public var index: Int
    /// `mark` (cut around a mark) or `buffer` (a quick save of the whole buffer).
    public var kind: String
    /// The marked frame's capture time (CLOCK_MONOTONIC ns) and camera sequence number.
    public var markNs: Int64
    public var markSequence: UInt64
    /// Capture times of the clip's first and last frames, CLOCK_MONOTONIC ns.
    public var startNs: Int64
    public var endNs: Int64
    public var frames: Int
    public var bytes: Int
    /// Whether the buffer had already lost part of the pre-roll.
    public var truncatedStart: Bool
    /// Whether the clip ends before its post-roll did: it was cut with what the buffer
    /// held when the delay mode went off.
    public var truncatedEnd: Bool
    /// When the clip was saved, seconds since 1970.
    public var savedAt: Double

    public var seconds: Double { Double(endNs - startNs) / 1e9 }

    public init(id: String, session: String, index: Int, kind: String, markNs: Int64, markSequence: UInt64, startNs: Int64,
                endNs: Int64, frames: Int, bytes: Int, truncatedStart: Bool, truncatedEnd: Bool = false, savedAt: Double) {
        self.id = id
        self.session = session
        self.index = index
        self.kind = kind
        self.markNs = markNs
        self.markSequence = markSequence
        self.startNs = startNs
        self.endNs = endNs
        self.frames = frames
        self.bytes = bytes
        self.truncatedStart = truncatedStart
        self.truncatedEnd = truncatedEnd
        self.savedAt = savedAt
    }

    private enum CodingKeys: String, CodingKey {
        case id, session, index, kind, markNs, markSequence, startNs, endNs, frames, bytes, truncatedStart, truncatedEnd, savedAt
    }

    /// Why by hand: session files written before `truncatedEnd` existed have no such key.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        session = try c.decode(String.self, forKey: .session)
        index = try c.decode(Int.self, forKey: .index)
        kind = try c.decode(String.self, forKey: .kind)
        markNs = try c.decode(Int64.self, forKey: .markNs)
        markSequence = try c.decode(UInt64.self, forKey: .markSequence)
        startNs = try c.decode(Int64.self, forKey: .startNs)
        endNs = try c.decode(Int64.self, forKey: .endNs)
        frames = try c.decode(Int.self, forKey: .frames)
        bytes = try c.decode(Int.self, forKey: .bytes)
        truncatedStart = try c.decode(Bool.self, forKey: .truncatedStart)
        truncatedEnd = try c.decodeIfPresent(Bool.self, forKey: .truncatedEnd) ?? false
        savedAt = try c.decode(Double.self, forKey: .savedAt)
    }
}

/// One delay session: from start to stop, with its clips in order.
public struct SessionRecord: Codable, Sendable, Hashable {
    public var id: String
    /// Seconds since 1970.
    public var startedAt: Double
    public var endedAt: Double?
    public var delaySeconds: Double
    public var preRollSeconds: Double
    public var postRollSeconds: Double
    public var clips: [ClipRecord]
    /// The archery score of the session's shots, when the coach scored it.
    public var archery: ScoreSheet?

    /// The session's shots: its clips cut at marks, in order (a quick save of the buffer is
    /// not a shot). Arrow `i` on the score card goes with shot `i`.
    public var shots: [ClipRecord] { clips.filter { $0.kind == "mark" } }

    public init(id: String, startedAt: Double, endedAt: Double?, delaySeconds: Double, preRollSeconds: Double,
                postRollSeconds: Double, clips: [ClipRecord], archery: ScoreSheet? = nil) {
        self.id = id
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.delaySeconds = delaySeconds
        self.preRollSeconds = preRollSeconds
        self.postRollSeconds = postRollSeconds
        self.clips = clips
        self.archery = archery
    }
}


/// What a run's video can have drawn on it (the settings file's `[video] overlay` list and
/// the page's choice).
public enum OverlayPart: String, Sendable, Hashable, CaseIterable, Codable {
    /// The running clock, then the run's time from the finish.
    case time
    /// Each gate's time, from the instant it is crossed.
    case splits
    /// Speed: each split's segment and the run's average.
    case speed
    /// Run type and distance.
    case type
    /// The athlete's name.
    case athlete
}

/// Where a run's video came from.
public enum RunVideoSource: String, Codable, Sendable, Hashable, CaseIterable {
    /// Cut from the gate's own video ring when the run was stored.
    case gate
    /// Uploaded from a phone; its start is marked by the coach.
    case phone
}

/// A run's video on disk.
public struct RunVideoRecord: Codable, Sendable, Hashable {
    public var runID: Int64
    public var source: RunVideoSource
    /// Where the run's clock starts, seconds of the file's timeline; nil until the coach
    /// marks it (an uploaded video).
    public var startSeconds: Double?
    public var width: Int
    public var height: Int
    public var seconds: Double
    public var frames: Int?
    public var bytes: Int
    /// The gate's clip: the buffer no longer held the first frames asked for.
    public var truncatedStart: Bool
    /// The gate's clip ends before its post-roll did: it was cut with what the buffer held
    /// when the delay mode went off.
    public var truncatedEnd: Bool
    /// Unix seconds.
    public var savedAt: Double

    public init(runID: Int64, source: RunVideoSource, startSeconds: Double?, width: Int, height: Int, seconds: Double,
                frames: Int?, bytes: Int, truncatedStart: Bool = false, truncatedEnd: Bool = false, savedAt: Double) {
        self.runID = runID
        self.source = source
        self.startSeconds = startSeconds
        self.width = width
        self.height = height
        self.seconds = seconds
        self.frames = frames
        self.bytes = bytes
        self.truncatedStart = truncatedStart
        self.truncatedEnd = truncatedEnd
        self.savedAt = savedAt
    }

    private enum CodingKeys: String, CodingKey {
        case runID, source, startSeconds, width, height, seconds, frames, bytes, truncatedStart, truncatedEnd, savedAt
    }

    /// Why by hand: records written before `truncatedEnd` existed have no such key.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        runID = try c.decode(Int64.self, forKey: .runID)
        source = try c.decode(RunVideoSource.self, forKey: .source)
        startSeconds = try c.decodeIfPresent(Double.self, forKey: .startSeconds)
        width = try c.decode(Int.self, forKey: .width)
        height = try c.decode(Int.self, forKey: .height)
        seconds = try c.decode(Double.self, forKey: .seconds)
        frames = try c.decodeIfPresent(Int.self, forKey: .frames)
        bytes = try c.decode(Int.self, forKey: .bytes)
        truncatedStart = try c.decode(Bool.self, forKey: .truncatedStart)
        truncatedEnd = try c.decodeIfPresent(Bool.self, forKey: .truncatedEnd) ?? false
        savedAt = try c.decode(Double.self, forKey: .savedAt)
    }
}
