// SPDX-License-Identifier: Apache-2.0
// Settings' ranges, clip windows cut from the ring, the memory budget and the frame tap.

import CMallocCounter
import Foundation
import GateCore
import Testing
import VideoDelay

@Suite("Clips, budget and frame tap")
struct ClipAndTapTests {
    @Test("delay 1–60 s and rolls 0–60 s; anything else is refused by name")
    func settings() throws {
        #expect(try DelaySetting(seconds: 1).delay == .seconds(1))
        #expect(try DelaySetting(seconds: 60).delay == .seconds(60))
        let low = #expect(throws: VideoSettingError.self) { try DelaySetting(seconds: 0.5) }
        #expect(low?.description == "delay 0.5 s is outside 1–60 s" && low?.field == "delay")
        #expect(throws: VideoSettingError.self) { try DelaySetting(seconds: 61) }
        #expect(throws: VideoSettingError.self) { try DelaySetting(seconds: .nan) }
        let five = try RollSetting(preRollSeconds: 5, postRollSeconds: 0)
        #expect(five.preRoll == .seconds(5) && five.postRoll == .zero)
        let post = #expect(throws: VideoSettingError.self) { try RollSetting(preRollSeconds: 2, postRollSeconds: -1) }
        #expect(post?.description == "post-roll -1.0 s is outside 0–60 s" && post?.field == "postRoll")
        #expect(throws: VideoSettingError.self) { try RollSetting(preRollSeconds: 0, postRollSeconds: 0) }
    }

    @Test("a mark cuts the frames from mark − pre-roll to mark + post-roll, decoded from the keyframe before")
    func clipWindow() throws {
        let ring = PacketRing(byteCapacity: 1 << 20, packetCapacity: 1000)
        let stream = PacketStream(gop: 25, fps: 50)
        for i in 0..<500 { stream.append(i, to: ring) }  // 10 s
        // "The 5 s before the mark": mark at 8.0 s (packet 400).
        let mark = Mark(time: stream.time(400), sequence: 400)
        let w = ClipWindow(mark: mark, roll: try RollSetting(preRollSeconds: 5, postRollSeconds: 0))
        #expect(w.isComplete(newest: ring.time(ring.end - 1)))
        let c = try #require(ClipPackets(w, in: ring))
        #expect(c.showFrom == 150 && c.through == 400)
        #expect(c.decodeFrom == 150)
        #expect(!c.truncatedStart && !c.truncatedEnd)
        #expect(c.frameCount == 251)
        // A window starting between frames starts at the next frame, decoded from its keyframe.
        let odd = ClipWindow(mark: Mark(time: stream.time(400) + .milliseconds(3), sequence: 400),
                             roll: try RollSetting(preRollSeconds: 1.5, postRollSeconds: 1))
        let d = try #require(ClipPackets(odd, in: ring))
        #expect(d.showFrom == 326 && d.through == 450 && d.decodeFrom == 325)
        // Post-roll not yet captured.
        let late = ClipWindow(mark: Mark(time: stream.time(490), sequence: 490), roll: try RollSetting(preRollSeconds: 1, postRollSeconds: 2))
        #expect(!late.isComplete(newest: ring.time(ring.end - 1)))
        // Cut now (the delay mode going off): what the ring holds, and its end marked cut.
        let cut = try #require(ClipPackets(late, in: ring))
        #expect(cut.truncatedEnd && !cut.truncatedStart && cut.through == 499)
        // A window ending exactly on the newest frame is whole.
        let exact = ClipWindow(mark: Mark(time: stream.time(499), sequence: 499), roll: try RollSetting(preRollSeconds: 1, postRollSeconds: 0))
        #expect(try #require(ClipPackets(exact, in: ring)).truncatedEnd == false)
        // A mark older than the ring keeps what is left, and says so.
        let old = ClipWindow(mark: Mark(time: MonotonicInstant(seconds: 0.5), sequence: 25), roll: try RollSetting(preRollSeconds: 5, postRollSeconds: 1))
        ring.removeAll()
        for i in 500..<600 { stream.append(i, to: ring) }
        #expect(ClipPackets(old, in: ring) == nil)  // nothing of 0–1.5 s is left
        let partial = ClipWindow(mark: Mark(time: stream.time(505), sequence: 505), roll: try RollSetting(preRollSeconds: 5, postRollSeconds: 0))
        let p = try #require(ClipPackets(partial, in: ring))
        #expect(p.truncatedStart && !p.truncatedEnd && p.showFrom == 500 && p.through == 505)
    }

    @Test("the budget takes 70 % of available memory and says how long it holds")
    func budget() throws {
        // 2.9 GiB available (a Pi 4 with 4 GB), 720p60 at 8 Mbit/s.
        let b = BufferBudget(availableBytes: 2_900 << 20, bitsPerSecond: 8_000_000, fps: 60)
        #expect(b.bytes == Int(Double(2_900 << 20) * 0.7))
        #expect(abs(b.seconds - Double(b.bytes) * 8 / 8e6) < 1e-9)
        #expect(b.summary == "about 35 min at these settings")
        #expect(b.packets >= Int(b.seconds * 60))
        // A settings cap of 2 GB holds 20 min of 720p60 at up to 13 Mbit/s.
        let capped = BufferBudget(availableBytes: 8 << 30, bitsPerSecond: 13_000_000, fps: 60, limitBytes: 2_000_000_000)
        #expect(capped.bytes == 2_000_000_000)
        #expect(capped.seconds >= 20 * 60)
        #expect(BufferBudget(availableBytes: 10 << 20, bitsPerSecond: 8_000_000, fps: 60).summary == "about 7 s at these settings")
        let meminfo = "MemTotal:        3884320 kB\nMemFree:          120400 kB\nMemAvailable:    2969600 kB\nBuffers:  1 kB\n"
        #expect(BufferBudget.memAvailable(meminfo: meminfo) == 2_969_600 * 1024)
        #expect(BufferBudget.memAvailable(meminfo: "MemTotal: 1 kB\n") == nil)
        // This machine's own /proc/meminfo parses.
        let own = try String(contentsOfFile: "/proc/meminfo", encoding: .utf8)
        #expect((BufferBudget.memAvailable(meminfo: own) ?? 0) > 0)
    }

    /// A grey frame whose every byte is `value`, with padded rows.
    final class TestFrame {
        let width = 64, height = 48, bytesPerRow = 80
        let base: UnsafeMutableRawPointer
        init() { base = .allocate(byteCount: 80 * 48, alignment: 16) }
        deinit { base.deallocate() }
        func view(_ i: Int) -> FrameView {
            base.initializeMemory(as: UInt8.self, repeating: UInt8(truncatingIfNeeded: i), count: bytesPerRow * height)
            return FrameView(base: base, width: width, height: height, bytesPerRow: bytesPerRow, format: .gray8,
                             sequence: UInt64(i), timestamp: MonotonicInstant(nanoseconds: Int64(i) * 16_666_667))
        }
    }

    @Test("the tap hands frames over in order, drops and counts when every slot is full, and refuses oversize frames")
    func tapOrder() throws {
        let frame = TestFrame()
        let tap = FrameTap(slots: 3, width: 64, height: 48, bytesPerRow: 80, format: .gray8)
        for i in 0..<5 { tap.offer(frame.view(i)) }
        #expect(tap.copied == 3 && tap.dropped == 2)
        for i in 0..<3 {
            let s = try #require(tap.next())
            #expect(s.frame.sequence == UInt64(i))
            #expect(s.bytes.count == 80 * 48)
            #expect(s.bytes.allSatisfy { $0 == UInt8(i) })
            #expect(s.frame.timestamp == MonotonicInstant(nanoseconds: Int64(i) * 16_666_667))
            tap.release()
        }
        #expect(tap.next() == nil)
        let small = FrameTap(slots: 2, slotBytes: 100)
        #expect(!small.offer(frame.view(9)))
        #expect(small.oversize == 1 && small.copied == 0)
        // NV12 carries its chroma after the luma plane.
        #expect(FrameTap.frameBytes(height: 48, bytesPerRow: 64, format: .nv12) == 64 * 48 * 3 / 2)
        #expect(FrameTap.frameBytes(height: 48, bytesPerRow: 128, format: .yuyv) == 128 * 48)
    }

    @Test("offering allocates nothing, and a consumer thread sees every frame it did not drop, in order")
    func tapThreads() async throws {
        let frame = TestFrame()
        let tap = FrameTap(slots: 4, width: 64, height: 48, bytesPerRow: 80, format: .gray8)
        let total = 20_000
        let consumer = Task.detached { () -> (Int, Bool) in
            var seen = 0, ordered = true, last: UInt64? = nil
            while true {
                guard let s = tap.next() else {
                    if tap.copied + tap.dropped == UInt64(total) && tap.next() == nil { break }
                    await Task.yield()
                    continue
                }
                let first = s.bytes[0], lastByte = s.bytes[s.bytes.count - 1]
                ordered = ordered && first == lastByte && first == UInt8(truncatingIfNeeded: s.frame.sequence)
                if let l = last, s.frame.sequence <= l { ordered = false }
                last = s.frame.sequence
                seen += 1
                tap.release()
            }
            return (seen, ordered)
        }
        tap.offer(frame.view(0))  // the first offer pays one-time costs, as at start-up
        sprintgate_alloc_count_begin()
        for i in 1..<total {
            // Fill the whole frame so a torn copy shows (first byte ≠ last byte).
            frame.base.initializeMemory(as: UInt8.self, repeating: UInt8(truncatingIfNeeded: i), count: 80 * 48)
            tap.offer(FrameView(base: frame.base, width: 64, height: 48, bytesPerRow: 80, format: .gray8,
                                sequence: UInt64(i), timestamp: MonotonicInstant(nanoseconds: Int64(i))))
        }
        let allocations = sprintgate_alloc_count_end()
        let (seen, ordered) = await consumer.value
        #expect(allocations == 0)
        #expect(ordered)
        #expect(UInt64(seen) == tap.copied)
        #expect(tap.copied + tap.dropped == UInt64(total))
    }
}

extension ClipAndTapTests {
    @Test("a lent frame is copied when the video thread takes it and can then go back to the camera; one taken back first is skipped and counted; lent and copied frames keep their order")
    func tapLoans() throws {
        let frames = (0..<4).map { _ in TestFrame() }
        let tap = FrameTap(slots: 4, width: 64, height: 48, bytesPerRow: 80, format: .gray8)
        let t0 = try #require(tap.lend(frames[0].view(0)))
        #expect(tap.offer(frames[1].view(1)))
        let t2 = try #require(tap.lend(frames[2].view(2)))
        #expect(!tap.collect(t0) && !tap.collect(t2))
        #expect(tap.lent == 2 && tap.copied == 1)
        // Frame 0 is copied out when taken: the loop may then reuse its buffer.
        let s0 = try #require(tap.next())
        #expect(tap.collect(t0) && !tap.collect(t2))
        _ = frames[0].view(99)
        #expect(s0.frame.sequence == 0 && s0.bytes.allSatisfy { $0 == 0 })
        tap.release()
        // The loop takes frame 2 back (its camera closes) before the video thread gets there.
        tap.reclaim(t2)
        #expect(tap.reclaimed == 1)
        _ = frames[2].view(98)
        let s1 = try #require(tap.next())
        #expect(s1.frame.sequence == 1 && s1.bytes.allSatisfy { $0 == 1 })
        tap.release()
        #expect(tap.next() == nil)
        // Taking back a loan already copied returns at once and counts nothing.
        let t3 = try #require(tap.lend(frames[3].view(3)))
        let s3 = try #require(tap.next())
        tap.reclaim(t3)
        #expect(s3.frame.sequence == 3 && s3.bytes.allSatisfy { $0 == 3 } && tap.reclaimed == 1)
        tap.release()
        // A full tap drops a loan like a copy.
        for i in 0..<4 { #expect(tap.lend(frames[i].view(10 + i)) != nil) }
        #expect(tap.lend(frames[0].view(20)) == nil && tap.dropped == 1)
    }

    @Test("lending allocates nothing on the loop, and a consumer thread sees every lent frame whole while the loop reuses each buffer as soon as it is copied")
    func tapLoanThreads() async throws {
        // Four camera buffers; the loop lends each and waits for it to be copied before
        // reusing it, as the gate loop gives buffers back to the camera.
        let buffers = (0..<4).map { _ in TestFrame() }
        let tap = FrameTap(slots: 8, width: 64, height: 48, bytesPerRow: 80, format: .gray8)
        let total = 20_000
        let consumer = Task.detached { () -> (Int, Bool) in
            var seen = 0, whole = true, last: UInt64? = nil
            while true {
                guard let s = tap.next() else {
                    if tap.lent + tap.dropped == UInt64(total) && tap.next() == nil { break }
                    await Task.yield()
                    continue
                }
                let v = UInt8(truncatingIfNeeded: s.frame.sequence)
                whole = whole && s.bytes.allSatisfy { $0 == v }
                if let l = last, s.frame.sequence <= l { whole = false }
                last = s.frame.sequence
                seen += 1
                tap.release()
            }
            return (seen, whole)
        }
        var tickets: [UInt64?] = Array(repeating: nil, count: 4)
        tickets.reserveCapacity(4)
        var reused = 0
        sprintgate_alloc_count_begin()
        for i in 0..<total {
            let b = i % 4
            if let t = tickets[b] {
                // The camera's buffer comes back only once the video thread has copied it.
                while !tap.collect(t) { sched_yield() }
                reused += 1
            }
            tickets[b] = tap.lend(buffers[b].view(i))
        }
        let allocations = sprintgate_alloc_count_end()
        // The buffers stay until their last loans are copied, as a camera stays open until
        // the loop has its buffers back.
        for t in tickets.compactMap({ $0 }) { while !tap.collect(t) { sched_yield() } }
        withExtendedLifetime(buffers) {}
        let (seen, whole) = await consumer.value
        #expect(allocations == 0)
        #expect(whole)
        #expect(UInt64(seen) == tap.lent && tap.lent + tap.dropped == UInt64(total))
        #expect(tap.lent > UInt64(total / 2), "\(tap.lent) lent, \(tap.dropped) dropped")
        #expect(reused > 0)
    }
}

extension ClipAndTapTests {
    @Test("mark requests: kept in order with their instants, at most 16 waiting (the rest counted lost), taken all at once; asking allocates nothing; confirmations counted")
    func markRequests() {
        let marks = MarkRequests()
        marks.request(at: MonotonicInstant(nanoseconds: 0))  // first use pays one-time costs
        marks.take { _ in }
        sprintgate_alloc_count_begin()
        for i in 0..<20 { marks.request(at: MonotonicInstant(nanoseconds: Int64(i) * 1000)) }
        let allocations = sprintgate_alloc_count_end()
        #expect(allocations == 0)
        var taken: [Int64] = []
        marks.take { taken.append($0.nanoseconds) }
        #expect(taken == (0..<16).map { Int64($0) * 1000 })
        #expect(marks.lost == 4)
        taken = []
        marks.take { taken.append($0.nanoseconds) }
        #expect(taken.isEmpty)
        #expect(marks.confirmed == 0)
        marks.confirm()
        marks.confirm()
        #expect(marks.confirmed == 2)
    }
}

extension ClipAndTapTests {
    @Test("a tap that keeps compressed frames takes an MJPEG camera's JPEG byte for byte, copied or lent, as a .mjpeg slot, and not its decoded luma; an uncompressed frame still goes in as it is; a JPEG larger than a slot is refused and counted; a tap that does not keep them takes the luma")
    func tapKeepsCameraJPEG() throws {
        let frame = TestFrame()
        // Stand-in JPEGs of varied lengths (the tap does not look inside them).
        let jpegs: [[UInt8]] = [(0..<700).map { UInt8($0 % 251) }, (0..<1900).map { UInt8(($0 * 7) % 253) }, Array(repeating: 0xFF, count: 5000)]
        let tap = FrameTap(slots: 4, slotBytes: 4000, keepsCompressed: true)
        func view(_ i: Int, _ jpeg: [UInt8]?, _ body: (FrameView) -> Void) {
            var v = frame.view(i)
            guard let jpeg else { return body(v) }
            jpeg.withUnsafeBytes { b in
                v.compressed = b
                body(v)
            }
        }
        view(0, jpegs[0]) { #expect(tap.offer($0)) }
        var ticket: UInt64?
        // The second is lent: its bytes are copied out of the "driver's buffer" when taken.
        view(1, jpegs[1]) { ticket = tap.lend($0) }
        let lentTicket = try #require(ticket)
        view(2, nil) { #expect(tap.offer($0)) }
        view(3, jpegs[2]) { #expect(!tap.offer($0)) }
        #expect(tap.oversize == 1)
        let s0 = try #require(tap.next())
        #expect(s0.frame.format == .mjpeg && Array(s0.bytes) == jpegs[0] && s0.frame.sequence == 0)
        tap.release()
        let s1 = try #require(tap.next())
        #expect(tap.collect(lentTicket))
        #expect(s1.frame.format == .mjpeg && Array(s1.bytes) == jpegs[1] && s1.frame.width == 64 && s1.frame.height == 48)
        tap.release()
        let s2 = try #require(tap.next())
        #expect(s2.frame.format == .gray8 && s2.bytes.count == 80 * 48 && s2.bytes.allSatisfy { $0 == 2 })
        tap.release()
        // Without keepsCompressed the luma goes in, whatever the frame carries.
        let plain = FrameTap(slots: 2, width: 64, height: 48, bytesPerRow: 80, format: .gray8)
        view(4, jpegs[0]) { #expect(plain.offer($0)) }
        let p = try #require(plain.next())
        #expect(p.frame.format == .gray8 && p.bytes.count == 80 * 48 && p.bytes.allSatisfy { $0 == 4 })
        plain.release()
    }
}
