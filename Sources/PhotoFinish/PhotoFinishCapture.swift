// SPDX-License-Identifier: Apache-2.0
// A frozen capture: gate columns, their timestamps and thumbnails, handed to a renderer.

public import GateCore
import Synchronization

/// One crossing's photo-finish material in preallocated memory. The loop thread fills
/// it and hands it on through `LoopEvent.photoFinish`; the receiving thread reads it,
/// renders, and must call `release()` so the loop can reuse the slot. While handed on
/// the loop never touches it, so reading it from another thread is safe.
public final class PhotoFinishCapture: @unchecked Sendable {
    /// Slot states: free, being filled on the loop thread, handed to a renderer.
    static let free = 0, filling = 1, handedOn = 2
    /// Why: behind a pointer, so reaching it is an addressor, not a read coroutine whose
    /// frame an unoptimised build allocates on every access.
    let state: UnsafeMutablePointer<Atomic<Int>>

    /// Rows of every column (input rows sampled every `config.rowStep`).
    public let columnHeight: Int
    public let thumbnailWidth: Int
    public let thumbnailHeight: Int
    /// The gate line's position in thumbnail pixels.
    public let thumbnailGateX: Double
    /// The crossing this capture shows.
    public private(set) var crossing: Crossing
    /// Gate columns in the capture, oldest first.
    public private(set) var columnCount = 0
    /// Thumbnails in the capture (at most four), oldest first.
    public private(set) var thumbnailCount = 0
    /// Consecutive frames around the crossing (thumbnail size), oldest first.
    public private(set) var stripCount = 0

    /// Order in which the recorder froze it while waiting to be taken; 0 once taken.
    var queued: UInt64 = 0
    let capacity: Int
    let columns: UnsafeMutablePointer<UInt8>
    let times: UnsafeMutablePointer<Int64>
    let sequences: UnsafeMutablePointer<UInt64>
    static let maxThumbnails = 4
    let thumbs: UnsafeMutablePointer<UInt8>
    let thumbTimes: UnsafeMutablePointer<Int64>
    let stripCapacity: Int
    let strip: UnsafeMutablePointer<UInt8>
    let stripTimes: UnsafeMutablePointer<Int64>
    let stripSequences: UnsafeMutablePointer<UInt64>

    init(config: PhotoFinishConfig) {
        state = .allocate(capacity: 1)
        state.initialize(to: Atomic(Self.free))
        capacity = config.ringCapacity
        columnHeight = config.columnHeight
        thumbnailWidth = config.thumbnailWidth
        thumbnailHeight = config.thumbnailHeight
        thumbnailGateX = (config.gateX + 0.5) / Double(config.thumbnailScale) - 0.5
        columns = .allocate(capacity: capacity * columnHeight)
        columns.initialize(repeating: 0, count: capacity * columnHeight)
        times = .allocate(capacity: capacity)
        times.initialize(repeating: 0, count: capacity)
        sequences = .allocate(capacity: capacity)
        sequences.initialize(repeating: 0, count: capacity)
        let t = Self.maxThumbnails * thumbnailWidth * thumbnailHeight
        thumbs = .allocate(capacity: t)
        thumbs.initialize(repeating: 0, count: t)
        thumbTimes = .allocate(capacity: Self.maxThumbnails)
        thumbTimes.initialize(repeating: 0, count: Self.maxThumbnails)
        stripCapacity = config.stripFramesBefore + config.stripFramesAfter
        let st = max(1, stripCapacity) * thumbnailWidth * thumbnailHeight
        strip = .allocate(capacity: st)
        strip.initialize(repeating: 0, count: st)
        stripTimes = .allocate(capacity: max(1, stripCapacity))
        stripTimes.initialize(repeating: 0, count: max(1, stripCapacity))
        stripSequences = .allocate(capacity: max(1, stripCapacity))
        stripSequences.initialize(repeating: 0, count: max(1, stripCapacity))
        crossing = Crossing(time: MonotonicInstant(nanoseconds: 0), uncertainty: .zero, direction: .leftToRight,
                            blobHeight: 0, speedWorkPixelsPerSecond: 0, reportedAtSequence: 0)
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
        columns.deallocate()
        times.deallocate()
        sequences.deallocate()
        thumbs.deallocate()
        thumbTimes.deallocate()
        strip.deallocate()
        stripTimes.deallocate()
        stripSequences.deallocate()
    }

    /// The `i`th gate column (0 = oldest), `columnHeight` luma samples top to bottom.
    /// Valid until `release()`.
    public func column(_ i: Int) -> UnsafeBufferPointer<UInt8> {
        precondition(i >= 0 && i < columnCount, "column index out of range")
        return UnsafeBufferPointer(start: columns + i * columnHeight, count: columnHeight)
    }

    /// Timestamp of the `i`th column's frame, local monotonic clock (frame convention:
    /// middle of the top row's exposure).
    public func columnTime(_ i: Int) -> MonotonicInstant {
        precondition(i >= 0 && i < columnCount, "column index out of range")
        return MonotonicInstant(nanoseconds: times[i])
    }

    /// Driver sequence number of the `i`th column's frame; gaps are dropped frames.
    public func columnSequence(_ i: Int) -> UInt64 {
        precondition(i >= 0 && i < columnCount, "column index out of range")
        return sequences[i]
    }

    /// The `i`th thumbnail, `thumbnailWidth`×`thumbnailHeight` luma, rows packed.
    public func thumbnail(_ i: Int) -> UnsafeBufferPointer<UInt8> {
        precondition(i >= 0 && i < thumbnailCount, "thumbnail index out of range")
        let n = thumbnailWidth * thumbnailHeight
        return UnsafeBufferPointer(start: thumbs + i * n, count: n)
    }

    /// Timestamp of the `i`th thumbnail's frame, local monotonic clock.
    public func thumbnailTime(_ i: Int) -> MonotonicInstant {
        precondition(i >= 0 && i < thumbnailCount, "thumbnail index out of range")
        return MonotonicInstant(nanoseconds: thumbTimes[i])
    }

    /// The `i`th frame of the strip around the crossing (0 = oldest),
    /// `thumbnailWidth`×`thumbnailHeight` luma, rows packed. Valid until `release()`.
    public func stripFrame(_ i: Int) -> UnsafeBufferPointer<UInt8> {
        precondition(i >= 0 && i < stripCount, "strip index out of range")
        let n = thumbnailWidth * thumbnailHeight
        return UnsafeBufferPointer(start: strip + i * n, count: n)
    }

    /// Timestamp of the strip's `i`th frame, local monotonic clock.
    public func stripTime(_ i: Int) -> MonotonicInstant {
        precondition(i >= 0 && i < stripCount, "strip index out of range")
        return MonotonicInstant(nanoseconds: stripTimes[i])
    }

    /// Driver sequence number of the strip's `i`th frame; gaps are dropped frames.
    public func stripSequence(_ i: Int) -> UInt64 {
        precondition(i >= 0 && i < stripCount, "strip index out of range")
        return stripSequences[i]
    }

    /// Hands the slot back to the recorder. Call once, after the last read.
    public func release() {
        state.pointee.store(Self.free, ordering: .releasing)
    }

    // MARK: Loop-thread side

    func begin(_ c: Crossing) {
        crossing = c
        columnCount = 0
        thumbnailCount = 0
        stripCount = 0
    }

    func appendColumn(from src: UnsafePointer<UInt8>, time: Int64, sequence: UInt64) {
        guard columnCount < capacity else { return }
        (columns + columnCount * columnHeight).update(from: src, count: columnHeight)
        times[columnCount] = time
        sequences[columnCount] = sequence
        columnCount += 1
    }

    func appendThumbnail(from src: UnsafePointer<UInt8>, time: Int64) {
        guard thumbnailCount < Self.maxThumbnails else { return }
        let n = thumbnailWidth * thumbnailHeight
        (thumbs + thumbnailCount * n).update(from: src, count: n)
        thumbTimes[thumbnailCount] = time
        thumbnailCount += 1
    }

    func appendStripFrame(from src: UnsafePointer<UInt8>, time: Int64, sequence: UInt64) {
        guard stripCount < stripCapacity else { return }
        let n = thumbnailWidth * thumbnailHeight
        (strip + stripCount * n).update(from: src, count: n)
        stripTimes[stripCount] = time
        stripSequences[stripCount] = sequence
        stripCount += 1
    }
}
