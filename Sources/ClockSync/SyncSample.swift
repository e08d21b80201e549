// SPDX-License-Identifier: Apache-2.0
// One ping/pong exchange: the four NTP-style timestamps and the offset and delay they give.

public import GateCore

/// Why a four-timestamp exchange cannot be used.
public struct SyncSampleError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Kind: Hashable, Sendable {
        case replyBeforeRequest, peerTurnaroundNegative, negativeDelay, delayTooLong, overflow
    }
    private let kind: Kind

    /// `t4` is earlier than `t1`: the reply was received before the request was sent.
    public static let replyBeforeRequest = Self(kind: .replyBeforeRequest)
    /// `t3` is earlier than `t2`: the peer claims to have replied before it received.
    public static let peerTurnaroundNegative = Self(kind: .peerTurnaroundNegative)
    /// The peer held the request longer than the whole round trip took (delay < 0).
    public static let negativeDelay = Self(kind: .negativeDelay)
    /// The round trip took longer than `SyncSample.maximumRoundTrip`: a stale reply.
    public static let delayTooLong = Self(kind: .delayTooLong)
    /// The timestamps are so far apart that their differences overflow 64 bits.
    public static let overflow = Self(kind: .overflow)

    public var description: String {
        switch kind {
        case .replyBeforeRequest: return "reply received before the request was sent (t4 < t1)"
        case .peerTurnaroundNegative: return "peer sent its reply before receiving the request (t3 < t2)"
        case .negativeDelay: return "peer turnaround longer than the round trip (negative delay)"
        case .delayTooLong: return "round trip longer than the longest accepted (stale reply)"
        case .overflow: return "timestamps too far apart to subtract"
        }
    }
}

/// One clock-sync exchange with a peer, NTP style:
///
/// ```
/// local  ──t1──────────────────t4──▶   (this gate's CLOCK_MONOTONIC)
///            ╲                ╱
/// peer   ─────t2──────────t3─────▶     (the peer's CLOCK_MONOTONIC)
/// ```
///
/// `offset = ((t2 − t1) + (t3 − t4)) / 2` is the peer's clock minus ours (**peer − local**)
/// at the local midpoint of the exchange, exact when the two one-way delays are equal; its
/// error is at most `delay / 2`. `delay = (t4 − t1) − (t3 − t2)` is the round trip spent on
/// the network.
public struct SyncSample: Sendable, Hashable {
    /// Local send of the ping (local monotonic).
    public let t1: MonotonicInstant
    /// Peer receive of the ping (peer monotonic).
    public let t2: PeerInstant
    /// Peer send of the pong (peer monotonic).
    public let t3: PeerInstant
    /// Local receive of the pong (local monotonic).
    public let t4: MonotonicInstant
    /// Offset `peer − local` in nanoseconds at `localMidpoint`.
    public let offsetNanoseconds: Int64
    /// Round-trip network delay in nanoseconds (≥ 0).
    public let delayNanoseconds: Int64

    /// Round trips longer than this are stale replies (a pong answering a ping that had
    /// long been given up on), never a measurement worth keeping. Why 1 s: Wi-Fi power
    /// save can hold a frame for a few hundred milliseconds, never for a second.
    public static let maximumRoundTrip = Span.seconds(1)

    /// Builds a sample from the four timestamps, rejecting impossible ones.
    ///
    /// A delay of zero is accepted (both stamps at the same instant on a fast link); a
    /// negative delay of at most `tolerance` (timestamp granularity) is clamped to zero.
    public init(t1: MonotonicInstant, t2: PeerInstant, t3: PeerInstant, t4: MonotonicInstant,
                tolerance: Span = .zero) throws(SyncSampleError) {
        guard t4 >= t1 else { throw .replyBeforeRequest }
        guard t3 >= t2 else { throw .peerTurnaroundNegative }
        let (roundTrip, o1) = t4.nanoseconds.subtractingReportingOverflow(t1.nanoseconds)
        let (turnaround, o2) = t3.nanoseconds.subtractingReportingOverflow(t2.nanoseconds)
        let (forward, o3) = t2.nanoseconds.subtractingReportingOverflow(t1.nanoseconds)
        let (backward, o4) = t3.nanoseconds.subtractingReportingOverflow(t4.nanoseconds)
        guard !(o1 || o2 || o3 || o4) else { throw .overflow }
        var delay = roundTrip - turnaround
        if delay < 0 {
            guard -delay <= max(0, tolerance.nanoseconds) else { throw .negativeDelay }
            delay = 0
        }
        guard roundTrip <= Self.maximumRoundTrip.nanoseconds else { throw .delayTooLong }
        // forward + backward may overflow when each is near the limit; halve first.
        let (sum, o5) = (forward / 2).addingReportingOverflow(backward / 2)
        guard !o5 else { throw .overflow }
        self.t1 = t1
        self.t2 = t2
        self.t3 = t3
        self.t4 = t4
        self.offsetNanoseconds = sum + (forward % 2 + backward % 2) / 2
        self.delayNanoseconds = delay
    }

    /// The local instant the offset refers to: halfway between `t1` and `t4`.
    public var localMidpoint: MonotonicInstant {
        MonotonicInstant(nanoseconds: t1.nanoseconds + (t4.nanoseconds - t1.nanoseconds) / 2)
    }

    /// Offset `peer − local` at `localMidpoint`.
    public var offset: Span { Span(nanoseconds: offsetNanoseconds) }

    /// Round-trip network delay.
    public var delay: Span { Span(nanoseconds: delayNanoseconds) }
}
