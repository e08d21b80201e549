// SPDX-License-Identifier: Apache-2.0
// Time arithmetic and pixel formats of the core module.

import GateCore
import Testing

@Suite("Core types")
struct CoreTests {
    @Test("monotonic instants and spans convert and subtract exactly")
    func instants() {
        let a = MonotonicInstant(seconds: 1.25)
        #expect(a.nanoseconds == 1_250_000_000)
        let b = a + .milliseconds(2.5)
        #expect(b.since(a) == Span(nanoseconds: 2_500_000))
        #expect(b.since(a).milliseconds == 2.5)
        #expect((b - .microseconds(500)).nanoseconds == 1_252_000_000)
        #expect(a < b)
    }

    @Test("pixel formats carry their V4L2 four-character codes and sizes")
    func formats() {
        // 'G' 'R' 'E' 'Y' little-endian, as v4l2_fourcc() packs it.
        #expect(PixelFormat.gray8.rawValue == 0x5945_5247)
        #expect(PixelFormat.yuyv.description == "YUYV")
        #expect(PixelFormat.yuyv.lumaStep == 2)
        #expect(PixelFormat.nv12.lumaStep == 1)
        #expect(PixelFormat.gray8.frameBytes(width: 640, height: 480) == 307_200)
        #expect(PixelFormat.yuyv.frameBytes(width: 640, height: 480) == 614_400)
        #expect(PixelFormat.yu12.frameBytes(width: 5, height: 3) == 15 + 2 * 3 * 2)
    }

    @Test("fixed-point formatting rounds and pads without Foundation")
    func formatting() {
        #expect(fixedPoint(1.005, digits: 1) == "1.0")
        #expect(fixedPoint(-0.5, digits: 2) == "-0.50")
        #expect(fixedPoint(-0.0001, digits: 2) == "0.00")
        #expect(fixedPoint(12.3456, digits: 3) == "12.346")
        #expect(fixedPoint(7, digits: 0) == "7")
        #expect(fixedPoint(.nan, digits: 2) == "nan")
    }
}

@Suite("Bounded queue")
struct BoundedQueueTests {
    @Test("first in, first out; a full queue drops and counts instead of growing")
    func fifoAndDrops() {
        let q = BoundedQueue<Int>(capacity: 3)
        #expect(q.push(1) && q.push(2) && q.push(3))
        #expect(!q.push(4))
        #expect(q.dropped == 1 && q.count == 3)
        #expect(q.pop() == 1)
        #expect(q.push(5))
        #expect([q.pop(), q.pop(), q.pop(), q.pop()] == [2, 3, 5, nil])
        #expect(q.pushed == 4)
    }

    @Test("a producer thread and a consumer thread lose nothing that was accepted")
    func concurrent() async {
        let q = BoundedQueue<Int>(capacity: 64)
        let done = BoundedQueue<Bool>(capacity: 1)
        let producer = Task.detached {
            var accepted: [Int] = []
            for i in 0..<20_000 where q.push(i) { accepted.append(i) }
            done.push(true)
            return accepted
        }
        let consumer = Task.detached {
            var got: [Int] = []
            var finished = false
            while true {
                if let v = q.pop() { got.append(v); continue }
                if finished { break }
                finished = done.count > 0  // one more pass after the producer is done
            }
            return got
        }
        let accepted = await producer.value
        let got = await consumer.value
        #expect(got == accepted)
        #expect(UInt64(accepted.count) + q.dropped == 20_000)
    }
}
