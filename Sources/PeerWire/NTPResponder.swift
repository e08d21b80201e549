// SPDX-License-Identifier: Apache-2.0
// The NTP server's policy: which requests get a mode-4 reply, a kiss-o'-death or nothing.

public import GateCore

/// What to do with one datagram received on the NTP port.
public enum NTPResponse: Sendable, Hashable {
    /// Send this mode-4 reply; the caller fills `transmit` as late as possible.
    case reply(NTPPacket)
    /// Send this kiss-o'-death (stratum 0, code `RATE`): the client asks too often.
    case kissOfDeath(NTPPacket)
    /// Send nothing: not a client request, undecodable, or a client far over its rate
    /// (answering every packet of a flood would make the gate an amplifier).
    case ignore(NTPIgnoreReason)
}

/// Why a datagram got no answer.
public enum NTPIgnoreReason: Sendable, Hashable {
    case malformed(NTPPacketError)
    /// Not mode 3 (client): replies, broadcasts and control queries are not served.
    case notClientMode(NTPMode)
    case rateLimited
}

/// Answers NTP client requests (mode 3) with the gate's clock, as a stratum-10 local
/// reference by default.
///
/// Why stratum 10 and reference id `LOCL`: the gate's clock is not traceable to UTC (it
/// is the race's own timeline), which is what chrony's `local stratum 10` advertises;
/// leap stays 0 (not "unsynchronised") because clients discard unsynchronised servers
/// and the point is that laptops and gates can follow the race timeline.
///
/// Rate limiting is a token bucket per client IPv4 address over a fixed table (no
/// allocation after `init`): `burst` requests at once, then one per `interval`. A client
/// over its budget gets a kiss-o'-death `RATE`; one more than `burst` over it gets
/// nothing until its bucket refills.
public struct NTPResponder: Sendable {
    /// Stratum advertised in replies.
    public var stratum: UInt8 = 10
    /// Reference id: `LOCL` (a local clock).
    public var referenceID: UInt32 = NTPPacket.asciiID("LOCL")
    /// Precision advertised: 2⁻²⁰ s ≈ 1 µs, the resolution of CLOCK_MONOTONIC reads on a Pi.
    public var precision: Int8 = -20
    /// Requests a client may send back to back. Why 8: chrony's and ntpd's `iburst` send
    /// four to eight requests two seconds apart when they start.
    public let burst: Int
    /// One more request is allowed per interval. Why 1 s: no well-behaved client polls
    /// faster than every 2 s (`minpoll 1`), and tests with `maxsamples 4` finish in
    /// seconds.
    public let interval: Span
    /// Replies, kisses and ignored datagrams, for the statistics line.
    public private(set) var replies: UInt64 = 0
    public private(set) var kisses: UInt64 = 0
    public private(set) var ignored: UInt64 = 0

    private struct Bucket: Sendable {
        var client: UInt32
        var tokens: Int
        var refilled: MonotonicInstant
        var lastSeen: MonotonicInstant
    }
    private var buckets: [Bucket]

    /// - Parameter clients: how many clients are tracked at once; the least recently seen
    ///   is forgotten when a new one arrives. Why 64: a race has at most 8 gates plus a
    ///   few laptops and phones.
    public init(burst: Int = 8, interval: Span = .seconds(1), clients: Int = 64) {
        precondition(burst > 0 && interval.nanoseconds > 0 && clients > 0)
        self.burst = burst
        self.interval = interval
        buckets = []
        buckets.reserveCapacity(clients)
        self.capacity = clients
    }
    private let capacity: Int

    /// Decides the answer to `request` from `client` (IPv4 address) received at `now`
    /// (local CLOCK_MONOTONIC, for the rate limit) whose receive timestamp on the served
    /// clock is `receive`. The reply's `transmit` is set to `receive`; the caller
    /// overwrites it with a fresh reading just before sending.
    public mutating func respond(to request: UnsafeRawBufferPointer, client: UInt32, now: MonotonicInstant,
                                 receive: NTPTimestamp) -> NTPResponse {
        let packet: NTPPacket
        do { packet = try NTPPacket(decoding: request) } catch {
            ignored &+= 1
            return .ignore(.malformed(error))
        }
        guard packet.mode == .client else {
            ignored &+= 1
            return .ignore(.notClientMode(packet.mode))
        }
        let tokens = take(client: client, now: now)
        if tokens < -burst {
            ignored &+= 1
            return .ignore(.rateLimited)
        }
        var reply = NTPPacket(leap: .none, version: packet.version, mode: .server, stratum: stratum,
                              poll: packet.poll, precision: precision, referenceID: referenceID,
                              reference: receive, origin: packet.transmit, receive: receive, transmit: receive)
        if tokens < 0 {
            // RFC 5905 §7.4: a kiss-o'-death has stratum 0 and the kiss code as reference id.
            reply.stratum = 0
            reply.referenceID = NTPPacket.asciiID("RATE")
            kisses &+= 1
            return .kissOfDeath(reply)
        }
        replies &+= 1
        return .reply(reply)
    }

    /// Takes one token from `client`'s bucket and returns what is left (negative: over).
    private mutating func take(client: UInt32, now: MonotonicInstant) -> Int {
        let i: Int
        if let found = buckets.firstIndex(where: { $0.client == client }) {
            i = found
        } else if buckets.count < capacity {
            buckets.append(Bucket(client: client, tokens: burst, refilled: now, lastSeen: now))
            i = buckets.count - 1
        } else {
            var oldest = 0
            for j in buckets.indices where buckets[j].lastSeen < buckets[oldest].lastSeen { oldest = j }
            buckets[oldest] = Bucket(client: client, tokens: burst, refilled: now, lastSeen: now)
            i = oldest
        }
        let earned = now.since(buckets[i].refilled).nanoseconds / interval.nanoseconds
        if earned > 0 {
            buckets[i].tokens = min(burst, buckets[i].tokens + Int(clamping: earned))
            buckets[i].refilled = buckets[i].refilled + Span(nanoseconds: earned * interval.nanoseconds)
        }
        buckets[i].lastSeen = now
        buckets[i].tokens -= 1
        // Why floor: a flood must not dig a hole so deep the client stays banned for hours.
        buckets[i].tokens = max(buckets[i].tokens, -2 * burst - 1)
        return buckets[i].tokens
    }
}
