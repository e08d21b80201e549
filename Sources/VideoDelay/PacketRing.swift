// SPDX-License-Identifier: Apache-2.0
// A RAM ring of compressed video packets that always starts at a keyframe.

public import GateCore

/// What `PacketRing.append` did with a packet.
public enum AppendOutcome: Equatable, Sendable {
    /// Stored; older groups of pictures may have been evicted to make room.
    case stored
    /// Refused: the ring is empty and the packet is not a keyframe, so nothing could
    /// decode it. The encoder's next keyframe starts the ring.
    case waitingForKeyframe
    /// Refused: the packet alone is larger than the whole ring.
    case tooLarge
}

/// Compressed packets in capture order, in one preallocated byte arena and one
/// preallocated index, so appending allocates nothing. When full, the oldest group of
/// pictures (a keyframe and the packets up to the next one) is evicted whole, so the
/// oldest packet is always a keyframe and every packet in the ring can be decoded from the
/// keyframe before it.
///
/// Packets are numbered from 0 in the order they were stored; a number stays valid until
/// its packet is evicted (`contains`). Times must not decrease (the encoder makes no
/// B-frames, so output order is capture order).
///
/// One thread owns a ring (the video thread); it is not safe to share.
public final class PacketRing: @unchecked Sendable {
    private struct Entry {
        var offset: Int
        var length: Int
        var time: Int64
        var sequence: UInt64
        var keyframe: Bool
    }

    /// Bytes the arena holds.
    public let byteCapacity: Int
    /// Packets the index holds.
    public let packetCapacity: Int
    private let arena: UnsafeMutableRawPointer
    private let entries: UnsafeMutablePointer<Entry>
    /// Number of the oldest packet held, and one past the newest.
    public private(set) var first: UInt64 = 0
    public private(set) var end: UInt64 = 0
    /// Where the next packet's bytes go in the arena.
    private var writeOffset = 0
    /// Bytes of the packets held.
    public private(set) var storedBytes = 0
    /// Packets evicted to make room, since creation.
    public private(set) var evicted: UInt64 = 0
    /// Packets refused (`waitingForKeyframe` or `tooLarge`), since creation.
    public private(set) var refused: UInt64 = 0

    public init(byteCapacity: Int, packetCapacity: Int) {
        precondition(byteCapacity > 0 && packetCapacity > 0, "a ring needs room")
        self.byteCapacity = byteCapacity
        self.packetCapacity = packetCapacity
        arena = .allocate(byteCount: byteCapacity, alignment: 16)
        entries = .allocate(capacity: packetCapacity)
        entries.initialize(repeating: Entry(offset: 0, length: 0, time: 0, sequence: 0, keyframe: false), count: packetCapacity)
    }

    deinit {
        arena.deallocate()
        entries.deinitialize(count: packetCapacity)
        entries.deallocate()
    }

    public var count: Int { Int(end - first) }
    public var isEmpty: Bool { first == end }
    public func contains(_ n: UInt64) -> Bool { n >= first && n < end }

    private func entry(_ n: UInt64) -> UnsafeMutablePointer<Entry> {
        precondition(contains(n), "packet \(n) is not in the ring (\(first)..<\(end))")
        return entries + Int(n % UInt64(packetCapacity))
    }

    /// When packet `n` was captured (the middle of its frame's exposure, as `FrameView`).
    public func time(_ n: UInt64) -> MonotonicInstant { MonotonicInstant(nanoseconds: entry(n).pointee.time) }
    /// The camera's sequence number of packet `n`'s frame.
    public func sequence(_ n: UInt64) -> UInt64 { entry(n).pointee.sequence }
    public func isKeyframe(_ n: UInt64) -> Bool { entry(n).pointee.keyframe }
    /// Packet `n`'s bytes, valid until the next `append`.
    public func bytes(_ n: UInt64) -> UnsafeRawBufferPointer {
        let e = entry(n).pointee
        return UnsafeRawBufferPointer(start: arena + e.offset, count: e.length)
    }

    /// Time from the oldest packet to the newest.
    public var span: Span {
        guard !isEmpty else { return .zero }
        return time(end - 1).since(time(first))
    }

    /// Stores a packet, evicting the oldest groups of pictures as needed.
    @discardableResult
    public func append(_ packet: UnsafeRawBufferPointer, time: MonotonicInstant, sequence: UInt64, keyframe: Bool) -> AppendOutcome {
        let length = packet.count
        guard length <= byteCapacity else {
            refused += 1
            return .tooLarge
        }
        if isEmpty && !keyframe {
            refused += 1
            return .waitingForKeyframe
        }
        if !isEmpty {
            precondition(time.nanoseconds >= entry(end - 1).pointee.time, "packets must come in capture order")
        }
        var place = placement(length)
        while place == nil || count == packetCapacity {
            evictOldestGroup()
            if isEmpty {
                // Evicting a group to fit a delta frame emptied the ring: the delta frame
                // cannot start it.
                guard keyframe else {
                    refused += 1
                    return .waitingForKeyframe
                }
                writeOffset = 0
            }
            place = placement(length)
        }
        let offset = place!
        if length > 0, let src = packet.baseAddress {
            (arena + offset).copyMemory(from: src, byteCount: length)
        }
        entries[Int(end % UInt64(packetCapacity))] = Entry(offset: offset, length: length, time: time.nanoseconds,
                                                           sequence: sequence, keyframe: keyframe)
        end += 1
        writeOffset = offset + length
        storedBytes += length
        return .stored
    }

    /// Where `length` bytes fit without touching a held packet, or nil.
    private func placement(_ length: Int) -> Int? {
        guard !isEmpty else { return length <= byteCapacity ? 0 : nil }
        let head = entry(first).pointee.offset
        let w = writeOffset
        if head < w || (head == w && storedBytes == 0) {
            // Held bytes are [head, w): free space after them, then before them.
            if w + length <= byteCapacity { return w }
            return length <= head ? 0 : nil
        }
        // Held bytes wrap: [head, capacity) and [0, w); free space is [w, head).
        return w + length <= head ? w : nil
    }

    private func evictOldestGroup() {
        repeat {
            storedBytes -= entry(first).pointee.length
            first += 1
            evicted += 1
        } while !isEmpty && !entry(first).pointee.keyframe
    }

    /// The newest packet captured at or before `t`, or nil when every packet is newer.
    public func newest(atOrBefore t: MonotonicInstant) -> UInt64? {
        guard !isEmpty, time(first) <= t else { return nil }
        var lo = first, hi = end - 1  // time(lo) <= t
        while lo < hi {
            let mid = lo + (hi - lo + 1) / 2
            if time(mid) <= t { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    /// The keyframe at or before packet `n`: where decoding must begin to show `n`.
    public func keyframe(atOrBefore n: UInt64) -> UInt64 {
        var k = n
        while !isKeyframe(k) {
            precondition(k > first, "the oldest packet is always a keyframe")
            k -= 1
        }
        return k
    }

    /// Drops every packet (a new session, or a camera change).
    public func removeAll() {
        first = end
        writeOffset = 0
        storedBytes = 0
    }
}
