// SPDX-License-Identifier: Apache-2.0
// Offset and delay of the four-timestamp exchange, and rejection of impossible ones.

import ClockSync
import GateCore
import Testing

@Suite struct SyncSampleTests {
    @Test func offsetAndDelayOfASymmetricExchange() throws {
        // Peer 5 s ahead; 3 ms each way; the peer holds the ping 1 ms.
        let s = try SyncSample(t1: MonotonicInstant(nanoseconds: 1_000_000_000),
                               t2: PeerInstant(nanoseconds: 6_003_000_000),
                               t3: PeerInstant(nanoseconds: 6_004_000_000),
                               t4: MonotonicInstant(nanoseconds: 1_007_000_000))
        #expect(s.offsetNanoseconds == 5_000_000_000)
        #expect(s.delayNanoseconds == 6_000_000)
        #expect(s.localMidpoint == MonotonicInstant(nanoseconds: 1_003_500_000))
        #expect(s.offset == .seconds(5))
        #expect(s.delay == .milliseconds(6))
    }

    @Test func asymmetryMovesTheOffsetByHalfTheDifference() throws {
        // Peer 2 ms behind; 1 ms out, 5 ms back: the estimate is off by (1 − 5)/2 = −2 ms.
        let s = try SyncSample(t1: MonotonicInstant(nanoseconds: 10_000_000),
                               t2: PeerInstant(nanoseconds: 9_000_000),
                               t3: PeerInstant(nanoseconds: 9_000_000),
                               t4: MonotonicInstant(nanoseconds: 16_000_000))
        #expect(s.offsetNanoseconds == -4_000_000)
        #expect(s.delayNanoseconds == 6_000_000)
        #expect(abs(s.offsetNanoseconds - -2_000_000) <= s.delayNanoseconds / 2)
    }

    @Test func negativeOffsetsAndOddNanoseconds() throws {
        let s = try SyncSample(t1: MonotonicInstant(nanoseconds: 500), t2: PeerInstant(nanoseconds: 101),
                               t3: PeerInstant(nanoseconds: 102), t4: MonotonicInstant(nanoseconds: 503))
        // ((101 − 500) + (102 − 503)) / 2 = −400
        #expect(s.offsetNanoseconds == -400)
        #expect(s.delayNanoseconds == 2)
    }

    @Test func impossibleExchangesAreRejected() {
        #expect(throws: SyncSampleError.replyBeforeRequest) {
            try SyncSample(t1: MonotonicInstant(nanoseconds: 10), t2: PeerInstant(nanoseconds: 0),
                           t3: PeerInstant(nanoseconds: 0), t4: MonotonicInstant(nanoseconds: 9))
        }
        #expect(throws: SyncSampleError.peerTurnaroundNegative) {
            try SyncSample(t1: MonotonicInstant(nanoseconds: 0), t2: PeerInstant(nanoseconds: 5),
                           t3: PeerInstant(nanoseconds: 4), t4: MonotonicInstant(nanoseconds: 10))
        }
        #expect(throws: SyncSampleError.negativeDelay) {
            // The peer held it 20 ns of a 10 ns round trip.
            try SyncSample(t1: MonotonicInstant(nanoseconds: 0), t2: PeerInstant(nanoseconds: 100),
                           t3: PeerInstant(nanoseconds: 120), t4: MonotonicInstant(nanoseconds: 10))
        }
        #expect(throws: SyncSampleError.delayTooLong) {
            try SyncSample(t1: MonotonicInstant(nanoseconds: 0), t2: PeerInstant(nanoseconds: 0),
                           t3: PeerInstant(nanoseconds: 0), t4: MonotonicInstant(nanoseconds: 2_000_000_000))
        }
        #expect(throws: SyncSampleError.overflow) {
            try SyncSample(t1: MonotonicInstant(nanoseconds: .min), t2: PeerInstant(nanoseconds: .max - 10),
                           t3: PeerInstant(nanoseconds: .max), t4: MonotonicInstant(nanoseconds: .min + 100))
        }
    }

    @Test func tinyNegativeDelayWithinToleranceIsClampedToZero() throws {
        let s = try SyncSample(t1: MonotonicInstant(nanoseconds: 0), t2: PeerInstant(nanoseconds: 100),
                               t3: PeerInstant(nanoseconds: 112), t4: MonotonicInstant(nanoseconds: 10),
                               tolerance: Span(nanoseconds: 5))
        #expect(s.delayNanoseconds == 0)
        #expect(SyncSampleError.negativeDelay.description.contains("negative delay"))
    }
}
