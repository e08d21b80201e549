// SPDX-License-Identifier: Apache-2.0
// The ring of recent gate columns and thumbnails, and the capture of a crossing from it.

public import GateCore
import Synchronization

/// Keeps the gate column and a thumbnail of every recent frame and, a post-roll after a
/// crossing, freezes the frames around it into a `PhotoFinishCapture`.
///
/// Loop-thread only. Everything is allocated in `init`; `record`, `crossingReported` and
/// `nextFinished` allocate nothing (checked by the allocation tests), so the recorder can
/// sit on the frame path.
public final class PhotoFinishRecorder {
    public let config: PhotoFinishConfig
    /// Frames whose size did not match the configuration and were not recorded.
    public private(set) var framesSkipped: UInt64 = 0
    /// Crossings not captured because every slot was still waiting for rendering or the
    /// pending list was full.
    public private(set) var capturesDropped: UInt64 = 0
    /// Captures handed on so far.
    public private(set) var capturesFinished: UInt64 = 0

    private let capacity: Int
    private let columnHeight: Int
    private let thumbSize: Int
    private let columns: UnsafeMutablePointer<UInt8>
    private let thumbs: UnsafeMutablePointer<UInt8>
    private let times: UnsafeMutablePointer<Int64>
    private let sequences: UnsafeMutablePointer<UInt64>
    /// Ring position of the next frame, and frames held (≤ capacity).
    private var head = 0
    private var count = 0
    /// Crossings recording their post-roll, oldest first (fixed storage of `maxPending`).
    private let pending: UnsafeMutablePointer<Crossing>
    private var pendingTotal = 0
    /// Order stamp of the last frozen capture; slots carry theirs until taken.
    private var lastQueued: UInt64 = 0
    private let slots: [PhotoFinishCapture]

    /// A recorder for `config`; nil with the reason when the configuration is unusable.
    public init(config: PhotoFinishConfig) throws(PhotoFinishError) {
        if let problem = config.problem { throw PhotoFinishError(problem) }
        self.config = config
        capacity = config.ringCapacity
        columnHeight = config.columnHeight
        thumbSize = config.thumbnailWidth * config.thumbnailHeight
        columns = .allocate(capacity: capacity * columnHeight)
        columns.initialize(repeating: 0, count: capacity * columnHeight)
        thumbs = .allocate(capacity: capacity * thumbSize)
        thumbs.initialize(repeating: 0, count: capacity * thumbSize)
        times = .allocate(capacity: capacity)
        times.initialize(repeating: 0, count: capacity)
        sequences = .allocate(capacity: capacity)
        sequences.initialize(repeating: 0, count: capacity)
        pending = .allocate(capacity: config.maxPending)
        slots = (0..<config.slots).map { _ in PhotoFinishCapture(config: config) }
    }

    deinit {
        columns.deallocate()
        thumbs.deallocate()
        times.deallocate()
        sequences.deallocate()
        pending.deinitialize(count: pendingTotal)
        pending.deallocate()
    }

    /// Stores `frame`'s gate column and thumbnail, then freezes every pending capture
    /// whose post-roll the frame's timestamp has reached. Call for every frame, before
    /// the frame is released to its source.
    public func record(_ frame: borrowing FrameView) {
        guard frame.width == config.frameWidth, frame.height == config.frameHeight else {
            framesSkipped &+= 1
            return
        }
        let step = frame.format.lumaStep
        let bpr = frame.bytesPerRow
        let base = frame.base.assumingMemoryBound(to: UInt8.self)
        let rowStep = config.rowStep
        let x = config.gateColumn * step
        let col = columns + head * columnHeight
        for y in 0..<columnHeight {
            col[y] = base[y * rowStep * bpr + x]
        }
        subsampleLuma(frame, scale: config.thumbnailScale, width: config.thumbnailWidth, rows: 0..<config.thumbnailHeight,
                      into: thumbs + head * thumbSize)
        times[head] = frame.timestamp.nanoseconds
        sequences[head] = frame.sequence
        head = head + 1 == capacity ? 0 : head + 1
        count = min(count + 1, capacity)

        let now = frame.timestamp
        while pendingTotal > 0, now >= pending[0].time + config.postRoll {
            let first = pending.move()
            pendingTotal -= 1
            if pendingTotal > 0 { pending.moveInitialize(from: pending + 1, count: pendingTotal) }
            freeze(first, now: now)
        }
    }

    /// Starts a capture for `crossing`; it is frozen once a frame a post-roll after the
    /// crossing instant has been recorded.
    public func crossingReported(_ crossing: Crossing) {
        guard pendingTotal < config.maxPending else {
            capturesDropped &+= 1
            return
        }
        (pending + pendingTotal).initialize(to: crossing)
        pendingTotal += 1
    }

    /// The next frozen capture, oldest first, or nil. The receiver owns it until it calls
    /// `PhotoFinishCapture.release()`.
    public func nextFinished() -> PhotoFinishCapture? {
        // Why: a scan of the few slots, not a queue in an array, so that nothing is
        // written to a collection on the frame path.
        // Why: plain comparisons, no `&&` or `??`, whose autoclosures an unoptimised
        // build allocates.
        var oldest = -1
        var order = UInt64.max
        for i in 0..<slots.count {
            let q = slots[i].queued
            if q != 0, q < order {
                order = q
                oldest = i
            }
        }
        guard oldest >= 0 else { return nil }
        let c = slots[oldest]
        c.queued = 0
        return c
    }

    /// Captures still recording their post-roll.
    public var pendingCount: Int { pendingTotal }

    /// Forgets the ring (after a camera restart, the old frames no longer join the new).
    public func reset() {
        head = 0
        count = 0
        pending.deinitialize(count: pendingTotal)
        pendingTotal = 0
    }

    // MARK: - Freezing

    /// Ring index of the `i`th held frame, 0 = oldest.
    @inline(__always) private func index(_ i: Int) -> Int {
        let j = head - count + i
        return j < 0 ? j + capacity : j
    }

    private func freeze(_ crossing: Crossing, now: MonotonicInstant) {
        var free = -1
        for i in 0..<slots.count {
            let r = slots[i].state.pointee.compareExchange(expected: PhotoFinishCapture.free, desired: PhotoFinishCapture.filling,
                                                           ordering: .acquiringAndReleasing)
            if r.exchanged {
                free = i
                break
            }
        }
        let slot: PhotoFinishCapture? = free >= 0 ? slots[free] : nil
        guard let slot else {
            capturesDropped &+= 1
            return
        }
        slot.begin(crossing)
        let start = (crossing.time - config.preRoll).nanoseconds
        let c = crossing.time.nanoseconds
        let offset = config.thumbnailOffset.nanoseconds
        // Thumbnail picks: nearest to −offset, last before, first at/after, nearest to +offset.
        var before = -1, after = -1, early = -1, late = -1
        var firstAfter = count  // Ordinal of the first frame at or after the crossing.
        var earlyError = Int64.max, lateError = Int64.max
        for i in 0..<count {
            let k = index(i)
            let t = times[k]
            if t >= start { slot.appendColumn(from: columns + k * columnHeight, time: t, sequence: sequences[k]) }
            if t < c {
                before = k
            } else if after < 0 {
                after = k
                firstAfter = i
            }
            let e1 = abs(t - (c - offset))
            if t < c, e1 < earlyError { earlyError = e1; early = k }
            let e2 = abs(t - (c + offset))
            if t >= c, e2 < lateError { lateError = e2; late = k }
        }
        // Why: four calls, not a loop over an array literal, which would allocate.
        addThumbnail(early, to: slot)
        addThumbnail(before, to: slot)
        addThumbnail(after, to: slot)
        addThumbnail(late, to: slot)
        // The strip: consecutive frames, `stripFramesBefore` before the crossing and
        // `stripFramesAfter` at or after it, as many as the ring still holds.
        let stripStart = max(0, firstAfter - config.stripFramesBefore)
        let stripEnd = min(count, firstAfter + config.stripFramesAfter)
        var i = stripStart
        while i < stripEnd {
            let k = index(i)
            slot.appendStripFrame(from: thumbs + k * thumbSize, time: times[k], sequence: sequences[k])
            i += 1
        }
        slot.state.pointee.store(PhotoFinishCapture.handedOn, ordering: .releasing)
        lastQueued &+= 1
        slot.queued = lastQueued
        capturesFinished &+= 1
    }

    private func addThumbnail(_ k: Int, to slot: PhotoFinishCapture) {
        guard k >= 0 else { return }
        if slot.thumbnailCount > 0, slot.thumbTimes[slot.thumbnailCount - 1] == times[k] { return }
        slot.appendThumbnail(from: thumbs + k * thumbSize, time: times[k])
    }
}

/// A photo-finish configuration or render request that cannot be used.
public struct PhotoFinishError: Error, Sendable, Hashable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Copies output rows `rows` of `frame`'s luma reduced by `scale` (the sample at the middle
/// of each `scale`×`scale` block), `width` samples a row, packed, to `out` (which points at
/// the first of those rows). Allocates nothing: the recorder's thumbnails and the camera
/// view's bands both use it on the frame path.
@inline(__always)
func subsampleLuma(_ frame: borrowing FrameView, scale: Int, width: Int, rows: Range<Int>, into out: UnsafeMutablePointer<UInt8>) {
    let step = frame.format.lumaStep
    let bpr = frame.bytesPerRow
    let base = frame.base.assumingMemoryBound(to: UInt8.self)
    let half = scale / 2
    var t = out
    for y in rows {
        let row = base + (y * scale + half) * bpr + half * step
        for x in 0..<width { t[x] = row[x * scale * step] }
        t += width
    }
}
