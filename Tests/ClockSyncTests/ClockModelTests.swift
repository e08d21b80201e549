// SPDX-License-Identifier: Apache-2.0
// Conversions between local, peer and network timelines, with their errors.

import ClockSync
import GateCore
import Testing

@Suite struct ClockModelTests {
    @Test func onTheHostLocalIsNetwork() throws {
        let m = ClockModel.host()
        let t = MonotonicInstant(nanoseconds: 123_456_789)
        let n = try #require(m.network(fromLocal: t))
        #expect(n.value == NetworkInstant(nanoseconds: 123_456_789))
        #expect(n.uncertainty == .zero && n.maxError == .zero)
        #expect(m.local(fromNetwork: n.value)?.value == t)
        #expect(m.state(at: t) == .synced)
    }

    @Test func hostMapsAPeerInstant() throws {
        let m = ClockModel.host()
        var peer = PeerClock()
        // Peer 7 s ahead, 80 ppm fast; 30 exchanges a second apart, so the frequency prior's
        // pull towards zero is a ten-thousandth of the slope (tens of nanoseconds here).
        let last = feed(&peer, count: 30, start: 1_000_000_000, every: 1_000_000_000, offset: 7_000_000_000, frequency: 80e-6)
        let crossingLocal = last.nanoseconds + 500_000_000
        let crossingPeer = crossingLocal + 7_000_000_000 + Int64((80e-6 * Double(crossingLocal)).rounded())
        let n = try #require(m.network(fromPeer: PeerInstant(nanoseconds: crossingPeer), clock: peer))
        #expect(abs(n.value.nanoseconds - crossingLocal) < 200)
        #expect(n.maxError >= .milliseconds(1))
        let l = try #require(ClockModel.local(fromPeer: PeerInstant(nanoseconds: crossingPeer), clock: peer))
        #expect(l.value.nanoseconds == n.value.nanoseconds)
    }

    @Test func followerConvertsBothWaysAndAddsErrors() throws {
        var m = ClockModel.follower()
        let t = MonotonicInstant(nanoseconds: 50_000_000_000)
        #expect(m.network(fromLocal: t) == nil)
        #expect(m.local(fromNetwork: NetworkInstant(nanoseconds: 0)) == nil)
        #expect(m.state(at: t) == .unsynced)
        // The host is 3 s behind us and 30 ppm slow.
        let last = feed(&m.hostClock, count: 30, start: 40_000_000_000, every: 1_000_000_000, offset: -3_000_000_000,
                        frequency: -30e-6)
        let n = try #require(m.network(fromLocal: last))
        let truth = last.nanoseconds - 3_000_000_000 + Int64((-30e-6 * Double(last.nanoseconds)).rounded())
        #expect(abs(n.value.nanoseconds - truth) < 200)
        let back = try #require(m.local(fromNetwork: n.value))
        #expect(abs(back.value.nanoseconds - last.nanoseconds) <= 1)

        // A third gate's instant through this follower carries both mappings' errors.
        var other = PeerClock()
        feed(&other, count: 30, start: 40_000_000_000, every: 1_000_000_000, offset: 2_000_000_000)
        let p = PeerInstant(nanoseconds: last.nanoseconds + 2_000_000_000)
        let viaPeer = try #require(ClockModel.local(fromPeer: p, clock: other))
        let composed = try #require(m.network(fromPeer: p, clock: other))
        #expect(composed.maxError.nanoseconds == viaPeer.maxError.nanoseconds + n.maxError.nanoseconds)
        #expect(composed.uncertainty >= max(viaPeer.uncertainty, n.uncertainty))
    }

    @Test func changingRoleRestartsTracking() {
        var m = ClockModel.follower()
        feed(&m.hostClock, count: 10, start: 0)
        m.setRole(.host)
        #expect(m.role == .host)
        m.setRole(.follower)
        #expect(m.hostClock.offset(at: MonotonicInstant(nanoseconds: 0)) == nil)
    }
}
