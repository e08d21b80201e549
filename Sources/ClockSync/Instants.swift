// SPDX-License-Identifier: Apache-2.0
// The synced network timeline and a peer gate's monotonic timeline, as distinct types.

public import GateCore

/// An instant on the synced timeline of a multi-gate race, in nanoseconds.
///
/// The network timeline *is* the host gate's CLOCK_MONOTONIC: on the host a
/// `NetworkInstant` has the same nanoseconds as its `MonotonicInstant`; on every other gate
/// it is reached only through `ClockModel`. Variables holding one end in `Net`.
///
/// Sign convention, used everywhere in this module: **offset = peer − local**, so a peer
/// instant is `local + offset` and a local instant is `peer − offset`.
public struct NetworkInstant: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Nanoseconds on the host gate's CLOCK_MONOTONIC.
    public var nanoseconds: Int64

    @inlinable public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// Seconds since the host gate's monotonic origin.
    @inlinable public var seconds: Double { Double(nanoseconds) * 1e-9 }

    @inlinable public static func < (a: Self, b: Self) -> Bool { a.nanoseconds < b.nanoseconds }

    /// The span from `other` to `self` (positive when `self` is later).
    @inlinable public func since(_ other: NetworkInstant) -> Span {
        Span(nanoseconds: nanoseconds &- other.nanoseconds)
    }

    @inlinable public static func + (a: Self, b: Span) -> Self { Self(nanoseconds: a.nanoseconds &+ b.nanoseconds) }
    @inlinable public static func - (a: Self, b: Span) -> Self { Self(nanoseconds: a.nanoseconds &- b.nanoseconds) }

    public var description: String { "net:\(nanoseconds)ns" }
}

/// An instant on a peer gate's CLOCK_MONOTONIC, in nanoseconds, as the peer stamped it
/// (the `t2`/`t3` of a ping exchange, or a crossing time a peer reports).
///
/// It is meaningless on this gate's timeline until converted by `ClockModel`. Variables
/// holding one end in `Peer`.
public struct PeerInstant: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Nanoseconds since the peer's monotonic origin (its boot).
    public var nanoseconds: Int64

    @inlinable public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    @inlinable public static func < (a: Self, b: Self) -> Bool { a.nanoseconds < b.nanoseconds }

    /// The span from `other` to `self` on the peer's clock (positive when `self` is later).
    @inlinable public func since(_ other: PeerInstant) -> Span {
        Span(nanoseconds: nanoseconds &- other.nanoseconds)
    }

    public var description: String { "peer:\(nanoseconds)ns" }
}

/// A converted instant (or an offset) with its error estimates.
///
/// `uncertainty` is one standard deviation of the statistical error: the regression's error
/// at that instant, the frequency error extrapolated to it, and clock wander since the last
/// sample. It cannot see a constant asymmetry of the network path (a packet that always
/// takes longer one way), which no two-way exchange can measure. `maxError` is a bound that
/// includes it: the most that asymmetry can move the fit (each sample is off by at most
/// half its own round trip; see `Regression.asymmetryBound(at:)`) plus three times
/// `uncertainty` (chrony's "root distance" idea, made to hold when the split of the round
/// trip between the two ways changes from one exchange to the next).
public struct Estimate<Value: Sendable & Hashable>: Sendable, Hashable {
    /// The best estimate.
    public var value: Value
    /// One standard deviation of the statistical error (always ≥ 0).
    public var uncertainty: Span
    /// A bound on the error, including path asymmetry (always ≥ `uncertainty`).
    public var maxError: Span

    public init(value: Value, uncertainty: Span, maxError: Span) {
        self.value = value
        self.uncertainty = uncertainty
        self.maxError = maxError
    }
}
