// SPDX-License-Identifier: Apache-2.0
// The delay mode as the page sees it: the delayed picture, marks, sessions and clips.

import Synchronization

/// The delayed picture the browser shows.
public struct VideoPicture: Sendable, Hashable {
    public var jpeg: [UInt8]
    public var width: Int
    public var height: Int
    /// The frame's camera sequence number and capture time (CLOCK_MONOTONIC ns).
    public var sequence: UInt64
    public var timeNs: Int64
    public init(jpeg: [UInt8], width: Int, height: Int, sequence: UInt64, timeNs: Int64) {
        self.jpeg = jpeg
        self.width = width
        self.height = height
        self.sequence = sequence
        self.timeNs = timeNs
    }
}

/// One clip as the page lists it.
public struct VideoClipView: Codable, Sendable, Hashable {
    public var id: String
    public var session: String
    /// Position in its session, from 1 (clip i goes with arrow i).
    public var index: Int
    /// `mark` or `buffer` (quick save).
    public var kind: String
    public var seconds: Double
    public var frames: Int
    public var bytes: Int
    public var truncatedStart: Bool
    /// Seconds since 1970.
    public var savedAt: Double
    public init(id: String, session: String, index: Int, kind: String, seconds: Double, frames: Int, bytes: Int,
                truncatedStart: Bool, savedAt: Double) {
        self.id = id
        self.session = session
        self.index = index
        self.kind = kind
        self.seconds = seconds
        self.frames = frames
        self.bytes = bytes
        self.truncatedStart = truncatedStart
        self.savedAt = savedAt
    }
}

/// One delay session with its clips in order.
public struct VideoSessionView: Codable, Sendable, Hashable {
    public var id: String
    public var startedAt: Double
    public var endedAt: Double?
    public var delaySeconds: Double
    public var clips: [VideoClipView]
    public init(id: String, startedAt: Double, endedAt: Double?, delaySeconds: Double, clips: [VideoClipView]) {
        self.id = id
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.delaySeconds = delaySeconds
        self.clips = clips
    }
}

/// The delay mode's state for the page.
public struct VideoStatusView: Codable, Sendable, Hashable {
    public var encoder: String
    public var width: Int
    public var height: Int
    public var fps: Double
    public var delaySeconds: Double
    public var preRollSeconds: Double
    public var postRollSeconds: Double
    public var framesIn: UInt64
    public var framesDropped: UInt64
    public var bufferSeconds: Double
    public var bufferSummary: String
    public var session: String?
    public var marksPending: Int
    public var clipsSaved: Int
    public var clipsLost: Int
    public var storageBytes: Int
    public var problem: String?
    public init(encoder: String, width: Int, height: Int, fps: Double, delaySeconds: Double, preRollSeconds: Double,
                postRollSeconds: Double, framesIn: UInt64, framesDropped: UInt64, bufferSeconds: Double, bufferSummary: String,
                session: String?, marksPending: Int, clipsSaved: Int, clipsLost: Int, storageBytes: Int, problem: String?) {
        self.encoder = encoder
        self.width = width
        self.height = height
        self.fps = fps
        self.delaySeconds = delaySeconds
        self.preRollSeconds = preRollSeconds
        self.postRollSeconds = postRollSeconds
        self.framesIn = framesIn
        self.framesDropped = framesDropped
        self.bufferSeconds = bufferSeconds
        self.bufferSummary = bufferSummary
        self.session = session
        self.marksPending = marksPending
        self.clipsSaved = clipsSaved
        self.clipsLost = clipsLost
        self.storageBytes = storageBytes
        self.problem = problem
    }
}

/// What the page's video routes ask of the gate's delay mode. The daemon implements it
/// over its video thread; all calls return at once.
public protocol VideoDesk: Sendable {
    /// A viewer wants delayed pictures (they keep coming for two seconds).
    func watch()
    /// The newest delayed picture.
    func latest() -> VideoPicture?
    func status() -> VideoStatusView
    /// Throws a message naming the allowed range when a value is refused.
    func set(delaySeconds: Double?, preRollSeconds: Double?, postRollSeconds: Double?) throws(VideoDeskError)
    /// Marks what the delayed view shows now; returns the marked capture time, ns.
    func mark() -> Int64
    func startSession()
    func endSession()
    func quickSave()
    func sessions() -> [VideoSessionView]
    /// Paths of a clip's MP4 and thumbnail, nil for an unknown id.
    func files(clip id: String) -> (video: String, thumbnail: String)?
    /// Deletes clips; returns how many were deleted.
    func delete(clips ids: [String]) -> Int
}

/// A refused video setting: the field and why.
public struct VideoDeskError: Error, Sendable, Hashable {
    public var field: String
    public var reason: String
    public init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }
}

/// Where the daemon plugs its delay mode in; empty on a gate without video.
public final class VideoDeskSlot: Sendable {
    private let desk = Mutex<(any VideoDesk)?>(nil)
    public init() {}
    public func connect(_ d: any VideoDesk) { desk.withLock { $0 = d } }
    public var current: (any VideoDesk)? { desk.withLock { $0 } }
}
