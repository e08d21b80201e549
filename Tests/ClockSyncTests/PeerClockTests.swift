// SPDX-License-Identifier: Apache-2.0
// Tracking one peer: states, uncertainty, steps, counters and the ping schedule.

import ClockSync
import GateCore
import Testing

/// Feeds `clock` symmetric exchanges with a fixed delay every `every` ns from `start`,
/// with the peer at `offset + frequency × t`. Returns the instant of the last reply.
@discardableResult
func feed(_ clock: inout PeerClock, count: Int, start: Int64, every: Int64 = 100_000_000, delay: Int64 = 2_000_000,
          offset: Int64 = 7_000_000_000, frequency: Double = 0) -> MonotonicInstant {
    var last = MonotonicInstant(nanoseconds: start)
    for i in 0..<count {
        let t1 = start + Int64(i) * every
        let mid = t1 + delay / 2
        let peer = mid + offset + Int64((frequency * Double(mid)).rounded())
        clock.pollSent(at: MonotonicInstant(nanoseconds: t1))
        _ = try? clock.add(t1: MonotonicInstant(nanoseconds: t1), t2: PeerInstant(nanoseconds: peer),
                           t3: PeerInstant(nanoseconds: peer), t4: MonotonicInstant(nanoseconds: t1 + delay))
        last = MonotonicInstant(nanoseconds: t1 + delay)
    }
    return last
}

@Suite struct PeerClockTests {
    @Test func statesFromUnsyncedToStale() throws {
        var c = PeerClock()
        let t0 = MonotonicInstant(nanoseconds: 10_000_000_000)
        #expect(c.state(at: t0) == .unsynced)
        #expect(c.offset(at: t0) == nil)
        #expect(c.nextPoll(now: t0) == t0)

        var last = feed(&c, count: 2, start: t0.nanoseconds)
        #expect(c.state(at: last) == .syncing)
        #expect(c.nextPoll(now: last) == MonotonicInstant(nanoseconds: t0.nanoseconds + 100_000_000) + c.configuration.schedule.burstInterval)

        last = feed(&c, count: 10, start: t0.nanoseconds + 200_000_000)
        #expect(c.state(at: last) == .synced)
        let stats = c.stats(at: last)
        #expect(stats.samplesInFit == 12)
        #expect(stats.pingsSent == 12)
        #expect(stats.replies == 12)
        // Usable after the fourth exchange: its reply at 300 ms + 2 ms after the first ping.
        #expect(stats.timeToFirstSync == Span.milliseconds(302))
        let off = try #require(stats.offset)
        #expect(abs(off.value.nanoseconds - 7_000_000_000) < 10)
        #expect(off.maxError >= .milliseconds(1))  // half the 2 ms round trip at least
        // Synced but still warming up (12 of 64 samples): the burst cadence continues.
        #expect(c.nextPoll(now: last) == MonotonicInstant(nanoseconds: t0.nanoseconds + 1_100_000_000) + c.configuration.schedule.burstInterval)

        // Silence: stale once `staleAfter` has passed without a reply.
        #expect(c.state(at: last + .seconds(14)) == .synced)
        #expect(c.state(at: last + .seconds(16)) == .stale)
        // Conversions still answer, with a grown error.
        let lateOffset = try #require(c.offset(at: last + .seconds(16)))
        #expect(lateOffset.uncertainty > off.uncertainty)
    }

    @Test func invalidExchangesAreCountedAndChangeNothing() {
        var c = PeerClock()
        #expect(throws: SyncSampleError.replyBeforeRequest) {
            try c.add(t1: MonotonicInstant(nanoseconds: 100), t2: PeerInstant(nanoseconds: 0),
                      t3: PeerInstant(nanoseconds: 0), t4: MonotonicInstant(nanoseconds: 99))
        }
        let s = c.stats(at: MonotonicInstant(nanoseconds: 100))
        #expect(s.rejectedInvalid == 1)
        #expect(s.replies == 0)
        #expect(s.state == .unsynced)
    }

    @Test func uncertaintyIncludesExtrapolationAndWander() throws {
        var c = PeerClock()
        let last = feed(&c, count: 20, start: 0, every: 1_000_000_000, delay: 1_000_000)
        let near = try #require(c.offset(at: last))
        let far = try #require(c.offset(at: last + .seconds(100)))
        // 100 s past the newest sample: at least the 0.5 ppm wander times 100 s = 50 µs.
        #expect(far.uncertainty >= Span.microseconds(50))
        #expect(far.uncertainty > near.uncertainty)
        #expect(far.maxError.nanoseconds >= far.uncertainty.nanoseconds * 3)
    }

    @Test func aPeerRestartIsDetectedAsAStep() throws {
        var c = PeerClock()
        var last = feed(&c, count: 20, start: 0, offset: 7_000_000_000)
        #expect(c.state(at: last) == .synced)
        // The peer rebooted: its clock is now 1 s behind ours.
        let restart = last.nanoseconds + 100_000_000
        var outcomes: [SampleOutcome] = []
        for i in 0..<3 {
            let t1 = restart + Int64(i) * 100_000_000
            let peer = t1 + 1_000_000 - 1_000_000_000
            outcomes.append(try c.add(t1: MonotonicInstant(nanoseconds: t1), t2: PeerInstant(nanoseconds: peer),
                                      t3: PeerInstant(nanoseconds: peer), t4: MonotonicInstant(nanoseconds: t1 + 2_000_000)))
        }
        #expect(outcomes == [.outlier, .outlier, .stepDetected])
        last = feed(&c, count: 10, start: restart + 300_000_000, offset: -1_000_000_000)
        let off = try #require(c.offset(at: last))
        #expect(abs(off.value.nanoseconds + 1_000_000_000) < 10)
        #expect(c.stats(at: last).steps == 1)
        #expect(c.state(at: last) == .synced)
    }

    @Test func steadyCadenceAfterWarmUp() {
        var c = PeerClock()
        let last = feed(&c, count: 70, start: 0)
        #expect(c.state(at: last) == .synced)
        #expect(c.nextPoll(now: last) == MonotonicInstant(nanoseconds: 6_900_000_000) + .milliseconds(500))
    }

    @Test func aSingleOutlierIsHeldBack() throws {
        var c = PeerClock()
        let last = feed(&c, count: 20, start: 0)
        let t1 = last.nanoseconds + 100_000_000
        let peer = t1 + 1_000_000 + 7_000_000_000 + 50_000_000  // 50 ms off
        let outcome = try c.add(t1: MonotonicInstant(nanoseconds: t1), t2: PeerInstant(nanoseconds: peer),
                                t3: PeerInstant(nanoseconds: peer), t4: MonotonicInstant(nanoseconds: t1 + 2_000_000))
        #expect(outcome == .outlier)
        let next = feed(&c, count: 3, start: t1 + 100_000_000)
        let off = try #require(c.offset(at: next))
        #expect(abs(off.value.nanoseconds - 7_000_000_000) < 10)
        #expect(c.stats(at: next).outliers == 1)
        #expect(c.stats(at: next).steps == 0)
    }

    @Test func resetReturnsToUnsynced() {
        var c = PeerClock()
        let last = feed(&c, count: 10, start: 0)
        c.reset()
        #expect(c.state(at: last) == .unsynced)
        #expect(c.offset(at: last) == nil)
        #expect(c.stats(at: last).timeToFirstSync != nil)
    }

    @Test func scheduleIntervals() {
        let s = PollSchedule()
        #expect(s.interval(for: .unsynced) == .milliseconds(100))
        #expect(s.interval(for: .syncing) == .milliseconds(100))
        #expect(s.interval(for: .stale) == .milliseconds(100))
        #expect(s.interval(for: .synced) == .milliseconds(500))
        #expect(s.interval(for: .synced, samplesInFit: 63) == .milliseconds(100))
        #expect(s.interval(for: .synced, samplesInFit: 64) == .milliseconds(500))
        #expect(PollSchedule(burstInterval: .zero, steadyInterval: Span(nanoseconds: -5)).interval(for: .synced) == .milliseconds(1))
    }
}
