// SPDX-License-Identifier: Apache-2.0
// The packet ring against a plain model, its keyframe rule, lookups and allocation.

import CMallocCounter
import GateCore
import Testing
import VideoDelay

/// A group of pictures: one keyframe every `gop` packets, packet `i` of `size(i)` bytes
/// holding its own number so a test can tell packets apart.
struct PacketStream {
    var gop = 5
    var fps = 50.0
    var size: (Int) -> Int = { 100 + ($0 * 37) % 300 }

    func time(_ i: Int) -> MonotonicInstant { MonotonicInstant(nanoseconds: Int64((Double(i) / fps * 1e9).rounded())) }
    func isKey(_ i: Int) -> Bool { i % gop == 0 }
    func bytes(_ i: Int) -> [UInt8] { (0..<size(i)).map { UInt8(truncatingIfNeeded: i &* 31 &+ $0) } }

    @discardableResult
    func append(_ i: Int, to ring: PacketRing) -> AppendOutcome {
        bytes(i).withUnsafeBytes { ring.append($0, time: time(i), sequence: UInt64(i), keyframe: isKey(i)) }
    }
}

@Suite("Packet ring")
struct PacketRingTests {
    @Test("every packet held reads back byte-exact, the oldest is always a keyframe, and only whole groups are evicted (3 seeds, against a model)",
          arguments: [1, 2, 3] as [UInt64])
    func model(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let ring = PacketRing(byteCapacity: 20_000, packetCapacity: 90)
        var stream = PacketStream()
        stream.gop = 7
        // Sizes vary a lot: keyframes big, some deltas empty.
        let sizes = (0..<2000).map { i in i % 7 == 0 ? 1500 + Int(rng.next() % 1500) : Int(rng.next() % 400) }
        stream.size = { sizes[$0] }
        var held: [Int] = []  // the model: packet numbers the ring should hold
        for i in 0..<2000 {
            #expect(stream.append(i, to: ring) == .stored)
            held.append(i)
            // The model keeps the newest whole groups that fit both limits.
            while held.count > 90 || held.reduce(0, { $0 + sizes[$1] }) > 20_000 {
                repeat { held.removeFirst() } while !stream.isKey(held.first!)
            }
            #expect(ring.isKeyframe(ring.first))
            #expect(Int(ring.end) == i + 1)
            // The ring may have evicted more than the model (a packet that does not fit
            // at the arena's end wastes the tail), never less, and only whole groups.
            #expect(Int(ring.first) >= held.first!)
            #expect(ring.storedBytes == (Int(ring.first)...i).reduce(0) { $0 + sizes[$1] })
        }
        for n in ring.first..<ring.end {
            #expect(Array(ring.bytes(n)) == stream.bytes(Int(n)))
            #expect(ring.sequence(n) == n)
            #expect(ring.time(n) == stream.time(Int(n)))
        }
        // A wasted tail is at most one packet (3000 bytes), so the ring holds at least the model's
        // packets less a few groups.
        #expect(ring.count >= held.count - 3 * stream.gop)
        #expect(ring.evicted == UInt64(2000 - ring.count))
    }

    @Test("a delta frame cannot start the ring; an oversized packet is refused; both counted")
    func refusals() {
        let ring = PacketRing(byteCapacity: 1000, packetCapacity: 8)
        let stream = PacketStream()
        #expect(stream.append(1, to: ring) == .waitingForKeyframe)
        #expect(ring.isEmpty)
        let big = [UInt8](repeating: 1, count: 1001)
        #expect(big.withUnsafeBytes { ring.append($0, time: .init(nanoseconds: 0), sequence: 0, keyframe: true) } == .tooLarge)
        #expect(ring.refused == 2)
        #expect(stream.append(5, to: ring) == .stored)
        #expect(stream.append(6, to: ring) == .stored)
        #expect(ring.count == 2)
        // A keyframe as large as the ring evicts everything and stands alone.
        let whole = [UInt8](repeating: 2, count: 1000)
        #expect(whole.withUnsafeBytes { ring.append($0, time: stream.time(10), sequence: 10, keyframe: true) } == .stored)
        #expect(ring.count == 1)
        #expect(ring.isKeyframe(ring.first))
        // A delta frame that only fits by evicting its own keyframe is refused.
        let delta = [UInt8](repeating: 3, count: 10)
        #expect(delta.withUnsafeBytes { ring.append($0, time: stream.time(11), sequence: 11, keyframe: false) } == .waitingForKeyframe)
        #expect(ring.isEmpty)
    }

    @Test("lookups: the newest packet at or before an instant, and the keyframe to decode it from")
    func lookups() {
        let ring = PacketRing(byteCapacity: 100_000, packetCapacity: 100)
        let stream = PacketStream()  // 50 fps, a keyframe every 5
        for i in 0..<40 { stream.append(i, to: ring) }
        #expect(ring.newest(atOrBefore: MonotonicInstant(seconds: -1)) == nil)
        #expect(ring.newest(atOrBefore: MonotonicInstant(seconds: 0)) == 0)
        #expect(ring.newest(atOrBefore: MonotonicInstant(seconds: 0.019)) == 0)
        #expect(ring.newest(atOrBefore: MonotonicInstant(seconds: 0.02)) == 1)
        #expect(ring.newest(atOrBefore: MonotonicInstant(seconds: 0.5)) == 25)
        #expect(ring.newest(atOrBefore: MonotonicInstant(seconds: 100)) == 39)
        #expect(ring.keyframe(atOrBefore: 24) == 20)
        #expect(ring.keyframe(atOrBefore: 25) == 25)
        #expect(ring.span == .milliseconds(780))
        // A delayed view 0.3 s behind the newest frame shows packet 24, decoded from 20.
        let due = ring.newest(atOrBefore: ring.time(39) - .milliseconds(300))
        #expect(due == 24)
        ring.removeAll()
        #expect(ring.isEmpty && ring.storedBytes == 0)
        #expect(ring.newest(atOrBefore: MonotonicInstant(seconds: 100)) == nil)
    }

    @Test("appending and evicting allocate nothing")
    func allocations() {
        let ring = PacketRing(byteCapacity: 50_000, packetCapacity: 64)
        let packet = [UInt8](repeating: 7, count: 3000)
        let count: Int64 = packet.withUnsafeBytes { p in
            for i in 0..<10 { ring.append(p, time: .init(nanoseconds: Int64(i)), sequence: UInt64(i), keyframe: i % 4 == 0) }
            sprintgate_alloc_count_begin()
            for i in 10..<5000 {
                ring.append(p, time: .init(nanoseconds: Int64(i)), sequence: UInt64(i), keyframe: i % 4 == 0)
                _ = ring.newest(atOrBefore: .init(nanoseconds: Int64(i - 5)))
            }
            return sprintgate_alloc_count_end()
        }
        #expect(sprintgate_alloc_hooks_active() == 1)
        #expect(count == 0)
        #expect(ring.evicted > 4000)
    }
}
