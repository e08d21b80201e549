// SPDX-License-Identifier: Apache-2.0
// NTPv4 header codec, 64-bit timestamps across eras, and the server's reply policy.

import GateCore
import PeerWire
import Testing

@Suite struct NTPTimestampTests {
    @Test func unixEpochIsTheDocumentedOffset() {
        let t = NTPTimestamp(unixNanoseconds: 0)
        #expect(t.seconds == 2_208_988_800)
        #expect(t.fraction == 0)
        #expect(t.unixNanoseconds(near: 0) == 0)
    }

    @Test func fractionRoundsToTheNearestUnit() {
        let half = NTPTimestamp(unixNanoseconds: 500_000_000)
        #expect(half.fraction == 0x8000_0000)
        let t = NTPTimestamp(unixNanoseconds: 1_700_000_000_123_456_789)
        #expect(abs(t.unixNanoseconds(near: 1_700_000_000_000_000_000) - 1_700_000_000_123_456_789) <= 1)
        // 999 999 999.9 ns rounds up into the next second rather than overflowing the fraction.
        let edge = NTPTimestamp(unixNanoseconds: 1_999_999_999)
        #expect(edge.unixNanoseconds(near: 0) - 1_999_999_999 <= 1)
    }

    @Test func era1WrapsTheSecondsFieldAndThePivotRecoversIt() {
        // 2036-02-07 06:28:16 UTC is the first instant of era 1: seconds field 0.
        let era1StartUnix: Int64 = (1 << 32) - NTPTimestamp.unixEpochOffsetSeconds
        let t = NTPTimestamp(unixNanoseconds: era1StartUnix * 1_000_000_000 + 250_000_000)
        #expect(t.seconds == 0)
        #expect(t.fraction == 0x4000_0000)
        // A pivot in 2026 still resolves it to 2036, not 1900.
        let pivot2026: Int64 = 1_795_000_000 * 1_000_000_000
        #expect(t.unixNanoseconds(near: pivot2026) == era1StartUnix * 1_000_000_000 + 250_000_000)
        // And a late era-0 timestamp seen from just after the wrap stays in era 0.
        let before = NTPTimestamp(unixNanoseconds: (era1StartUnix - 10) * 1_000_000_000)
        #expect(before.seconds == UInt32.max - 9)
        #expect(before.unixNanoseconds(near: (era1StartUnix + 5) * 1_000_000_000) == (era1StartUnix - 10) * 1_000_000_000)
        #expect(t.nanoseconds(since: before) == 10_250_000_000)
        #expect(before.nanoseconds(since: t) == -10_250_000_000)
    }

    @Test func randomisedRoundTripWithinOneNanosecond() {
        var rng = SplitMix64(seed: 0x5EED_0001)
        for _ in 0..<10_000 {
            // Any instant from 1970 to 2100.
            let ns = Int64(rng.next() % UInt64(4_102_444_800 * 1_000_000_000))
            let t = NTPTimestamp(unixNanoseconds: ns)
            let back = t.unixNanoseconds(near: ns &+ Int64(rng.next() % (1 << 60)) - (1 << 59))
            #expect(abs(back - ns) <= 1, "ns \(ns)")
        }
    }

    @Test func shortFormat() {
        #expect(NTPShort(nanoseconds: 1_500_000_000).rawValue == 0x0001_8000)
        #expect(NTPShort(rawValue: 0x0001_8000).nanoseconds == 1_500_000_000)
        #expect(NTPShort(nanoseconds: -5).rawValue == 0)
        #expect(NTPShort(nanoseconds: .max).rawValue == UInt32.max)
    }
}

@Suite struct NTPPacketTests {
    /// A client request as `sntp`/chrony send it: LI 0, VN 4, mode 3, transmit set.
    static func request(version: UInt8 = 4, transmit: NTPTimestamp = NTPTimestamp(seconds: 0xE000_0001, fraction: 0x1234_5678))
        -> [UInt8]
    {
        NTPPacket(version: version, mode: .client, poll: 6, transmit: transmit).bytes
    }

    @Test func headerLayoutMatchesRFC5905() throws {
        let p = NTPPacket(leap: .unsynchronized, version: 4, mode: .server, stratum: 10, poll: 6, precision: -20,
                          rootDelay: NTPShort(rawValue: 0x0102_0304), rootDispersion: NTPShort(rawValue: 0x0506_0708),
                          referenceID: NTPPacket.asciiID("LOCL"),
                          reference: NTPTimestamp(rawValue: 0x1111_1111_2222_2222),
                          origin: NTPTimestamp(rawValue: 0x3333_3333_4444_4444),
                          receive: NTPTimestamp(rawValue: 0x5555_5555_6666_6666),
                          transmit: NTPTimestamp(rawValue: 0x7777_7777_8888_8888))
        let b = p.bytes
        #expect(b.count == 48)
        #expect(b[0] == 0b11_100_100)
        #expect(b[1] == 10)
        #expect(b[2] == 6)
        #expect(b[3] == 0xEC)
        #expect(Array(b[4..<8]) == [1, 2, 3, 4])
        #expect(Array(b[12..<16]) == Array("LOCL".utf8))
        #expect(Array(b[24..<32]) == [0x33, 0x33, 0x33, 0x33, 0x44, 0x44, 0x44, 0x44])
        #expect(Array(b[40..<48]) == [0x77, 0x77, 0x77, 0x77, 0x88, 0x88, 0x88, 0x88])
        let back = try NTPPacket(decoding: b)
        #expect(back == p)
        #expect(back.referenceIDText == "LOCL")
    }

    @Test func decodesARealSntpRequest() throws {
        // A request laid out the way SNTP clients send one (RFC 4330 §5): LI 3
        // (unsynchronised client), VN 4, mode 3, all zero but the transmit timestamp.
        var b = [UInt8](repeating: 0, count: 48)
        b[0] = 0xE3
        b[40...47] = [0xEC, 0x9A, 0x3B, 0x2F, 0x80, 0x00, 0x00, 0x00]
        let p = try NTPPacket(decoding: b)
        #expect(p.leap == .unsynchronized)
        #expect(p.version == 4)
        #expect(p.mode == .client)
        #expect(p.transmit.seconds == 0xEC9A_3B2F)
        #expect(p.transmit.fraction == 0x8000_0000)
    }

    @Test func rejectsShortAndWrongVersionButIgnoresExtensions() throws {
        #expect(throws: NTPPacketError.truncated(47)) { try NTPPacket(decoding: [UInt8](repeating: 0x23, count: 47)) }
        var v0 = Self.request()
        v0[0] = 0x03
        #expect(throws: NTPPacketError.unsupportedVersion(0)) { try NTPPacket(decoding: v0) }
        var v5 = Self.request()
        v5[0] = 0x2B
        #expect(throws: NTPPacketError.unsupportedVersion(5)) { try NTPPacket(decoding: v5) }
        // A 20-byte MAC after the header (symmetric-key authentication) is ignored.
        let withMAC = Self.request() + [UInt8](repeating: 0xAA, count: 20)
        #expect(try NTPPacket(decoding: withMAC).mode == .client)
        var tiny = [UInt8](repeating: 0, count: 47)
        let r = tiny.withUnsafeMutableBytes { buf in Result { () throws(NTPPacketError) -> Int in try NTPPacket(mode: .client).encode(into: buf) } }
        #expect(throws: NTPPacketError.bufferTooSmall) { try r.get() }
    }

    @Test func kissOfDeathIsRecognised() throws {
        let k = NTPPacket(mode: .server, stratum: 0, referenceID: NTPPacket.asciiID("RATE"))
        let back = try NTPPacket(decoding: k.bytes)
        #expect(back.isKissOfDeath)
        #expect(back.referenceIDText == "RATE")
        #expect(!NTPPacket(mode: .server, stratum: 10).isKissOfDeath)
    }
}

@Suite struct NTPResponderTests {
    let t0 = MonotonicInstant(nanoseconds: 1_000_000_000)
    let rx = NTPTimestamp(rawValue: 0xEC9A_3B2F_0000_0000)

    func respond(_ r: inout NTPResponder, _ bytes: [UInt8], client: UInt32 = 0x0A00_0002, at t: MonotonicInstant) -> NTPResponse {
        bytes.withUnsafeBytes { r.respond(to: $0, client: client, now: t, receive: rx) }
    }

    @Test func repliesInServerModeEchoingTheClientsTransmit() {
        var r = NTPResponder()
        let tx = NTPTimestamp(seconds: 0xE000_0001, fraction: 0x1234_5678)
        guard case let .reply(p) = respond(&r, NTPPacketTests.request(transmit: tx), at: t0) else {
            Issue.record("no reply")
            return
        }
        #expect(p.mode == .server)
        #expect(p.version == 4)
        #expect(p.leap == .none)
        #expect(p.stratum == 10)
        #expect(p.referenceIDText == "LOCL")
        #expect(p.origin == tx)
        #expect(p.receive == rx)
        #expect(p.transmit == rx)
        #expect(r.replies == 1)
    }

    @Test func answersOlderVersionsInTheirOwnVersion() {
        var r = NTPResponder()
        guard case let .reply(p) = respond(&r, NTPPacketTests.request(version: 3), at: t0) else {
            Issue.record("no reply")
            return
        }
        #expect(p.version == 3)
    }

    @Test func ignoresNonClientModesAndGarbage() {
        var r = NTPResponder()
        let server = NTPPacket(mode: .server, stratum: 2).bytes
        #expect(respond(&r, server, at: t0) == .ignore(.notClientMode(.server)))
        let control = NTPPacket(mode: .control).bytes
        #expect(respond(&r, control, at: t0) == .ignore(.notClientMode(.control)))
        #expect(respond(&r, [1, 2, 3], at: t0) == .ignore(.malformed(.truncated(3))))
        #expect(r.ignored == 3)
        #expect(r.replies == 0)
    }

    @Test func rateLimitKissesThenDropsThenRecovers() {
        var r = NTPResponder(burst: 4, interval: .seconds(1))
        let req = NTPPacketTests.request()
        var kinds: [String] = []
        for i in 0..<10 {
            switch respond(&r, req, at: t0 + .milliseconds(Double(i))) {
            case .reply: kinds.append("R")
            case let .kissOfDeath(p):
                #expect(p.stratum == 0 && p.referenceIDText == "RATE")
                kinds.append("K")
            case .ignore: kinds.append("-")
            }
        }
        #expect(kinds.joined() == "RRRRKKKK--")
        // Another client is not affected.
        if case .reply = respond(&r, req, client: 0x0A00_0003, at: t0) {} else { Issue.record("other client limited") }
        // After enough quiet time the first client is served again.
        if case .reply = respond(&r, req, at: t0 + .seconds(30)) {} else { Issue.record("client not forgiven") }
    }

    @Test func tableEvictsTheLeastRecentlySeenClient() {
        var r = NTPResponder(burst: 1, interval: .seconds(60), clients: 2)
        let req = NTPPacketTests.request()
        _ = respond(&r, req, client: 1, at: t0)
        _ = respond(&r, req, client: 2, at: t0 + .seconds(1))
        // Client 1 is over budget now…
        if case .kissOfDeath = respond(&r, req, client: 1, at: t0 + .seconds(2)) {} else { Issue.record("expected a kiss") }
        // …client 3 evicts client 2 (least recent), then client 2 starts afresh.
        _ = respond(&r, req, client: 3, at: t0 + .seconds(3))
        if case .reply = respond(&r, req, client: 2, at: t0 + .seconds(4)) {} else { Issue.record("evicted client not fresh") }
    }
}
