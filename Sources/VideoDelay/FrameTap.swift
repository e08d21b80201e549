// SPDX-License-Identifier: Apache-2.0
// The video's tap on the frame path: whole frames copied (or lent) into a bounded ring of
// slots that the video thread encodes.

public import GateCore
import Synchronization

/// A single-producer, single-consumer ring of preallocated frame slots between the gate
/// loop and the video thread. The loop `offer`s every frame: it is copied into a free
/// slot, or dropped and counted when every slot still waits for the encoder. The loop
/// never waits and `offer` allocates nothing.
///
/// A frame can also be *lent* (`lend`): the slot records where the camera's buffer is,
/// and the video thread copies it out when it takes the slot, so the copy leaves the
/// loop. The loop keeps the buffer until `collect` says the copy is done (or `reclaim`
/// takes the loan back, before the camera closes).
///
/// A tap that `keepsCompressed` takes an MJPEG camera's frames as the camera sent them:
/// the JPEG (`FrameView.compressed`) goes into the slot, its view's format `.mjpeg`, and
/// the luma decoded for the detector is not copied.
///
/// Thread affinity: `offer`, `lend`, `collect` and `reclaim` on the loop thread only;
/// `next`/`release` on the video thread only; counters from any thread.
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
        /// A lent frame's bytes, in the camera's buffer.
        var lent: UnsafeRawPointer?
    }

    /// A slot's loan: none (its bytes are in the slot), lent, being copied by the video
    /// thread, copied (the loop may give the buffer back), or taken back by the loop.
    private enum Loan: UInt8 {
        case none = 0, lent, copying, copied, reclaimed
    }

    public let slotCount: Int
    /// Bytes one slot holds; a larger frame is dropped and counted.
    public let slotBytes: Int
    /// Frames that carry their compressed form are kept compressed.
    public let keepsCompressed: Bool
    private let storage: UnsafeMutableRawPointer
    private let metas: UnsafeMutablePointer<Meta>
    /// Frames written and read, ever; `written − read` slots are full.
    private let written: UnsafeMutablePointer<Atomic<UInt64>>
    private let read: UnsafeMutablePointer<Atomic<UInt64>>
    /// 0 copied, 1 dropped for want of a slot, 2 dropped for size, 3 lent, 4 loans taken
    /// back before the video thread copied them.
    private let counters: UnsafeMutablePointer<Atomic<UInt64>>
    private static let counterCount = 5
    /// Each slot's `Loan`.
    private let loans: UnsafeMutablePointer<Atomic<UInt8>>

    /// A tap with `slots` slots, each for one frame of `slotBytes`; with `keepsCompressed`,
    /// compressed frames are kept as they came.
    public init(slots: Int, slotBytes: Int, keepsCompressed: Bool = false) {
        precondition(slots > 0 && slotBytes > 0, "a tap needs a slot")
        slotCount = slots
        self.slotBytes = slotBytes
        self.keepsCompressed = keepsCompressed
        storage = .allocate(byteCount: slots * slotBytes, alignment: 64)
        metas = .allocate(capacity: slots)
        metas.initialize(repeating: Meta(), count: slots)
        written = .allocate(capacity: 1)
        written.initialize(to: Atomic(0))
        read = .allocate(capacity: 1)
        read.initialize(to: Atomic(0))
        counters = .allocate(capacity: Self.counterCount)
        for i in 0..<Self.counterCount { (counters + i).initialize(to: Atomic(0)) }
        loans = .allocate(capacity: slots)
        for i in 0..<slots { (loans + i).initialize(to: Atomic(Loan.none.rawValue)) }
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
        counters.deinitialize(count: Self.counterCount)
        counters.deallocate()
        loans.deinitialize(count: slotCount)
        loans.deallocate()
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
    /// Frames lent to the video thread (copied there, not on the loop).
    public var lent: UInt64 { (counters + 3).pointee.load(ordering: .relaxed) }
    /// Loans taken back before the video thread copied them (those frames are lost).
    public var reclaimed: UInt64 { (counters + 4).pointee.load(ordering: .relaxed) }

    /// Loop thread: copies `frame` into a free slot. Returns false (and counts) when it was
    /// dropped.
    @discardableResult
    public func offer(_ frame: borrowing FrameView) -> Bool {
        guard let (i, length) = claim(frame) else { return false }
        (storage + i * slotBytes).copyMemory(from: source(frame), byteCount: length)
        publish(frame, slot: i, length: length, lent: nil)
        counters.pointee.add(1, ordering: .relaxed)
        return true
    }

    /// Loop thread: puts `frame` in a free slot without copying it; the video thread
    /// copies it when it takes the slot. Returns the loan's ticket, or nil (counted) when
    /// it was dropped. The frame's bytes must stay where they are until `collect(ticket)`
    /// is true or `reclaim(ticket)` has returned.
    public func lend(_ frame: borrowing FrameView) -> UInt64? {
        guard let (i, length) = claim(frame) else { return nil }
        let ticket = written.pointee.load(ordering: .relaxed)
        (loans + i).pointee.store(Loan.lent.rawValue, ordering: .relaxed)
        publish(frame, slot: i, length: length, lent: source(frame))
        (counters + 3).pointee.add(1, ordering: .relaxed)
        return ticket
    }

    /// Loop thread: whether loan `ticket` has been copied out, so its buffer can go back.
    public func collect(_ ticket: UInt64) -> Bool {
        (loans + Int(ticket % UInt64(slotCount))).pointee.load(ordering: .acquiring) == Loan.copied.rawValue
    }

    /// Loop thread: takes loan `ticket` back (before the camera closes or is replaced).
    /// When the video thread has not started copying it, the frame is skipped there and
    /// counted; when it is copying, this waits for that one copy to end.
    public func reclaim(_ ticket: UInt64) {
        let loan = loans + Int(ticket % UInt64(slotCount))
        if loan.pointee.compareExchange(expected: Loan.lent.rawValue, desired: Loan.reclaimed.rawValue, ordering: .acquiringAndReleasing).exchanged {
            (counters + 4).pointee.add(1, ordering: .relaxed)
            return
        }
        while loan.pointee.load(ordering: .acquiring) == Loan.copying.rawValue {}
    }

    /// Where the bytes kept of `frame` start: its JPEG when it is kept compressed.
    private func source(_ frame: borrowing FrameView) -> UnsafeRawPointer {
        if keepsCompressed, let c = frame.compressed, let b = c.baseAddress { return b }
        return frame.base
    }

    /// A free slot for `frame` and its length; nil (counted) when it is dropped.
    private func claim(_ frame: borrowing FrameView) -> (Int, Int)? {
        var length = Self.frameBytes(height: frame.height, bytesPerRow: frame.bytesPerRow, format: frame.format)
        if keepsCompressed, let c = frame.compressed { length = c.count }
        guard length <= slotBytes else {
            (counters + 2).pointee.add(1, ordering: .relaxed)
            return nil
        }
        let w = written.pointee.load(ordering: .relaxed)
        guard w - read.pointee.load(ordering: .acquiring) < UInt64(slotCount) else {
            (counters + 1).pointee.add(1, ordering: .relaxed)
            return nil
        }
        return (Int(w % UInt64(slotCount)), length)
    }

    private func publish(_ frame: borrowing FrameView, slot i: Int, length: Int, lent: UnsafeRawPointer?) {
        if lent == nil { (loans + i).pointee.store(Loan.none.rawValue, ordering: .relaxed) }
        let kept = keepsCompressed ? frame.compressed != nil : false
        metas[i] = Meta(length: length, width: frame.width, height: frame.height, bytesPerRow: kept ? frame.width : frame.bytesPerRow,
                        format: kept ? .mjpeg : frame.format, sequence: frame.sequence, time: frame.timestamp.nanoseconds, lent: lent)
        written.pointee.store(written.pointee.load(ordering: .relaxed) + 1, ordering: .releasing)
    }

    /// Video thread: the oldest frame waiting, or nil. Its bytes stay valid until
    /// `release`, which must follow before the next `next`. A lent frame is copied into
    /// its slot here; one the loop took back is skipped.
    public func next() -> Slot? {
        var r = read.pointee.load(ordering: .relaxed)
        var i = 0
        while true {
            guard r < written.pointee.load(ordering: .acquiring) else { return nil }
            i = Int(r % UInt64(slotCount))
            let loan = loans + i
            guard loan.pointee.load(ordering: .acquiring) != Loan.none.rawValue else { break }
            if loan.pointee.compareExchange(expected: Loan.lent.rawValue, desired: Loan.copying.rawValue, ordering: .acquiringAndReleasing).exchanged {
                let m = metas[i]
                (storage + i * slotBytes).copyMemory(from: m.lent!, byteCount: m.length)
                loan.pointee.store(Loan.copied.rawValue, ordering: .releasing)
                break
            }
            if loan.pointee.load(ordering: .acquiring) == Loan.copied.rawValue { break }
            // Taken back by the loop: skip it.
            r += 1
            read.pointee.store(r, ordering: .releasing)
        }
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
