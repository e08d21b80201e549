// SPDX-License-Identifier: Apache-2.0
// The video's tap on the frame path: whole frames copied into a bounded ring of slots
// that the video thread encodes.

public import GateCore
import Synchronization

/// A single-producer, single-consumer ring of preallocated frame slots between the gate
/// loop and the video thread. The loop `offer`s every frame: it is copied into a free
/// slot, or dropped and counted when every slot still waits for the encoder. The loop
/// never waits and `offer` allocates nothing.
///
/// Thread affinity: `offer` on the loop thread only; `next`/`release` on the video thread
/// only; counters from any thread.
public final class FrameTap: @unchecked Sendable {
    /// A frame in a slot: its view, and the bytes of its planes as the camera laid them out.
    public struct Slot {
        public let frame: FrameView
        public let bytes: UnsafeRawBufferPointer
    }

    private struct Meta {
        var length = 0
        var width = 0
        var height = 0
        var bytesPerRow = 0
        var format = PixelFormat.gray8
        var sequence: UInt64 = 0
        var time: Int64 = 0
    }

    public let slotCount: Int
    /// Bytes one slot holds; a larger frame is dropped and counted.
    public let slotBytes: Int
    private let storage: UnsafeMutableRawPointer
    private let metas: UnsafeMutablePointer<Meta>
    /// Frames written and read, ever; `written − read` slots are full.
    private let written: UnsafeMutablePointer<Atomic<UInt64>>
    private let read: UnsafeMutablePointer<Atomic<UInt64>>
    /// 0 copied, 1 dropped for want of a slot, 2 dropped for size.
    private let counters: UnsafeMutablePointer<Atomic<UInt64>>

    /// A tap with `slots` slots, each for one frame of `slotBytes`.
    public init(slots: Int, slotBytes: Int) {
        precondition(slots > 0 && slotBytes > 0, "a tap needs a slot")
        slotCount = slots
        self.slotBytes = slotBytes
        storage = .allocate(byteCount: slots * slotBytes, alignment: 64)
        metas = .allocate(capacity: slots)
        metas.initialize(repeating: Meta(), count: slots)
        written = .allocate(capacity: 1)
        written.initialize(to: Atomic(0))
        read = .allocate(capacity: 1)
        read.initialize(to: Atomic(0))
        counters = .allocate(capacity: 3)
        for i in 0..<3 { (counters + i).initialize(to: Atomic(0)) }
    }

    /// A tap sized for frames of `width`×`height` in `format` with rows `bytesPerRow` long.
    public convenience init(slots: Int, width: Int, height: Int, bytesPerRow: Int, format: PixelFormat) {
        self.init(slots: slots, slotBytes: Self.frameBytes(height: height, bytesPerRow: bytesPerRow, format: format))
    }

    deinit {
        storage.deallocate()
        metas.deinitialize(count: slotCount)
        metas.deallocate()
        written.deinitialize(count: 1)
        written.deallocate()
        read.deinitialize(count: 1)
        read.deallocate()
        counters.deinitialize(count: 3)
        counters.deallocate()
    }

    /// Bytes a frame's planes take: the luma (or packed) plane, then for 4:2:0 formats the
    /// chroma that follows it in a single-planar V4L2 buffer.
    public static func frameBytes(height: Int, bytesPerRow: Int, format: PixelFormat) -> Int {
        let luma = bytesPerRow * height
        switch format {
        case .nv12, .yu12: return luma + 2 * ((bytesPerRow + 1) / 2) * ((height + 1) / 2)
        default: return luma
        }
    }

    /// Frames copied for the video thread.
    public var copied: UInt64 { counters.pointee.load(ordering: .relaxed) }
    /// Frames dropped because the video thread was behind and every slot was full.
    public var dropped: UInt64 { (counters + 1).pointee.load(ordering: .relaxed) }
    /// Frames dropped because they were larger than a slot (the camera changed mode).
    public var oversize: UInt64 { (counters + 2).pointee.load(ordering: .relaxed) }

    /// Loop thread: copies `frame` into a free slot. Returns false (and counts) when it was
    /// dropped.
    @discardableResult
    public func offer(_ frame: borrowing FrameView) -> Bool {
        let length = Self.frameBytes(height: frame.height, bytesPerRow: frame.bytesPerRow, format: frame.format)
        guard length <= slotBytes else {
            (counters + 2).pointee.add(1, ordering: .relaxed)
            return false
        }
        let w = written.pointee.load(ordering: .relaxed)
        guard w - read.pointee.load(ordering: .acquiring) < UInt64(slotCount) else {
            (counters + 1).pointee.add(1, ordering: .relaxed)
            return false
        }
        let i = Int(w % UInt64(slotCount))
        (storage + i * slotBytes).copyMemory(from: frame.base, byteCount: length)
        metas[i] = Meta(length: length, width: frame.width, height: frame.height, bytesPerRow: frame.bytesPerRow,
                        format: frame.format, sequence: frame.sequence, time: frame.timestamp.nanoseconds)
        written.pointee.store(w + 1, ordering: .releasing)
        counters.pointee.add(1, ordering: .relaxed)
        return true
    }

    /// Video thread: the oldest frame waiting, or nil. Its bytes stay valid until
    /// `release`, which must follow before the next `next`.
    public func next() -> Slot? {
        let r = read.pointee.load(ordering: .relaxed)
        guard r < written.pointee.load(ordering: .acquiring) else { return nil }
        let i = Int(r % UInt64(slotCount))
        let m = metas[i]
        let base = UnsafeRawPointer(storage + i * slotBytes)
        return Slot(frame: FrameView(base: base, width: m.width, height: m.height, bytesPerRow: m.bytesPerRow, format: m.format,
                                     sequence: m.sequence, timestamp: MonotonicInstant(nanoseconds: m.time)),
                    bytes: UnsafeRawBufferPointer(start: base, count: m.length))
    }

    /// Video thread: hands the slot `next` returned back to the loop.
    public func release() {
        let r = read.pointee.load(ordering: .relaxed)
        precondition(r < written.pointee.load(ordering: .acquiring), "release without a frame taken")
        read.pointee.store(r + 1, ordering: .releasing)
    }
}
