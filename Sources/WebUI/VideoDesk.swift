// SPDX-License-Identifier: Apache-2.0
// The delay mode as the page sees it: the delayed picture, marks, sessions and clips.

import Synchronization
public import VideoDelay

/// What the page's video routes ask of the gate's delay mode. The daemon implements it
/// over its video thread; all calls return at once.
public protocol VideoDesk: Sendable {
    /// A viewer wants delayed pictures (they keep coming for two seconds).
    func watch()
    /// The newest delayed picture.
    func latest() -> DelayedPicture?
    /// The delay mode's state, `storageBytes` filled in.
    func status() -> VideoStatus
    /// Throws a message naming the allowed range when a value is refused.
    func set(delaySeconds: Double?, preRollSeconds: Double?, postRollSeconds: Double?) throws(VideoDeskError)
    /// Marks what the delayed view shows now; returns the marked capture time, ns.
    func mark() -> Int64
    func startSession()
    func endSession()
    func quickSave()
    /// Sessions, newest first, each with its clips in order.
    func sessions() -> [SessionRecord]
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
