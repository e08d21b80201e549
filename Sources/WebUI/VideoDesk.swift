// SPDX-License-Identifier: Apache-2.0
// The delay mode as the page sees it: the delayed picture, marks, sessions and clips.

public import Archery
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
    /// Saves the part from `from` to `to` seconds of a clip as a new clip of its session
    /// (kind `trim`, without re-encoding). Blocks while it copies.
    func trim(clip id: String, from: Double, to: Double) throws(VideoDeskError) -> ClipRecord
    /// Deletes a session that is not open: its clips, its score and its folder.
    func delete(session id: String) throws(VideoDeskError)

    /// Session `id`'s archery score card, nil when it has not been scored.
    func scoreCard(session id: String) throws(VideoDeskError) -> ScoreCard?
    /// Chooses the face, bow, shaft and end size; refused once arrows are placed.
    func setUpScore(session id: String, face: TargetFace, bow: BowClass, arrowDiameter: Double,
                    arrowsPerEnd: Int) throws(VideoDeskError) -> ScoreCard
    /// Places, moves or takes back an arrow; returns the card.
    func changeScore(session id: String, _ change: ScoreChange) throws(VideoDeskError) -> ScoreCard
    /// Deletes every session but the open one (which goes on); returns how many went.
    func deleteEndedSessions() -> Int
}

/// A refused video request: what kind of refusal, the field and why.
public struct VideoDeskError: Error, Sendable, Hashable {
    /// The same kinds as the results book's, answered the same way: `invalid` (a value out
    /// of range or malformed), `notFound` (no such session or clip), `conflict` (an open
    /// session, no face chosen, nothing to undo), `unavailable` (a full disk).
    public typealias Kind = ResultsBookError.Kind
    public var kind: Kind
    public var field: String
    public var reason: String
    public init(_ kind: Kind = .invalid, field: String, reason: String) {
        self.kind = kind
        self.field = field
        self.reason = reason
    }
}

/// Where the daemon plugs its delay mode in; empty on a gate without video.
public final class VideoDeskSlot: Sendable {
    private let desk = Mutex<(any VideoDesk)?>(nil)
    private let stored = Mutex<(@Sendable () -> Int)?>(nil)
    public init() {}
    public func connect(_ d: any VideoDesk) { desk.withLock { $0 = d } }
    public func disconnect() { desk.withLock { $0 = nil } }
    public var current: (any VideoDesk)? { desk.withLock { $0 } }
    /// How the sessions kept on the gate are deleted while the delay mode is off (they stay
    /// on the card when it is switched off). Returns how many went.
    public func whenOff(deleteSessions: @escaping @Sendable () -> Int) { stored.withLock { $0 = deleteSessions } }

    /// Deletes every video session on the gate but the one being recorded, whether the
    /// delay mode is on or off; returns how many went.
    public func deleteEndedSessions() -> Int {
        // Why under the lock: switching the mode on while the stored sessions are deleted
        // would open the library twice over the same folder.
        desk.withLock { d in
            if let d { return d.deleteEndedSessions() }
            return stored.withLock { $0 }?() ?? 0
        }
    }
}
