// SPDX-License-Identifier: Apache-2.0
// The only place instants move between time domains: local, peer and network timelines.

public import GateCore

/// Conversions between this gate's CLOCK_MONOTONIC, peers' monotonic clocks and the
/// network timeline (the host gate's CLOCK_MONOTONIC), each with its uncertainty.
///
/// On the host the network timeline is the local clock, so local ↔ network is exact and a
/// peer's instants are mapped through that peer's `PeerClock`. On any other gate the
/// model follows the host through a `PeerClock` whose peer is the host (offset =
/// host − local). Sign convention: offset = peer − local, so `peer = local + offset`.
///
/// A value type that reads no clock; the race session owns it and feeds `hostClock` with
/// exchanges when this gate is not the host.
public struct ClockModel: Sendable {
    /// Whether this gate's clock is the network timeline.
    public enum Role: Sendable, Hashable {
        /// This gate is the host: the network timeline is its monotonic clock.
        case host
        /// This gate follows the host through `hostClock`.
        case follower
    }

    public private(set) var role: Role
    /// Tracks the host's clock as a peer (offset = host − local). Unused on the host.
    public var hostClock: PeerClock

    /// A model for the host gate.
    public static func host() -> ClockModel { ClockModel(role: .host, hostClock: PeerClock()) }

    /// A model for a gate that follows the host, tracking it with `configuration`.
    public static func follower(configuration: PeerClock.Configuration = PeerClock.Configuration()) -> ClockModel {
        ClockModel(role: .follower, hostClock: PeerClock(configuration: configuration))
    }

    private init(role: Role, hostClock: PeerClock) {
        self.role = role
        self.hostClock = hostClock
    }

    /// Changes the role (a new host was chosen); a gate that becomes a follower starts
    /// tracking the host from nothing.
    public mutating func setRole(_ newRole: Role) {
        guard newRole != role else { return }
        role = newRole
        hostClock.reset()
    }

    /// The state of the local ↔ network mapping at `now`: always `synced` on the host.
    public func state(at now: MonotonicInstant) -> PeerState {
        role == .host ? .synced : hostClock.state(at: now)
    }

    // MARK: - Local ↔ network

    /// The network instant of local instant `t`; nil on a follower before its first
    /// admitted exchange with the host.
    public func network(fromLocal t: MonotonicInstant) -> Estimate<NetworkInstant>? {
        switch role {
        case .host:
            return Estimate(value: NetworkInstant(nanoseconds: t.nanoseconds), uncertainty: .zero, maxError: .zero)
        case .follower:
            guard let o = hostClock.offset(at: t) else { return nil }
            return Estimate(value: NetworkInstant(nanoseconds: t.nanoseconds &+ o.value.nanoseconds),
                            uncertainty: o.uncertainty, maxError: o.maxError)
        }
    }

    /// The local instant of network instant `n` (e.g. a start time the host announced);
    /// nil on a follower before its first admitted exchange with the host.
    public func local(fromNetwork n: NetworkInstant) -> Estimate<MonotonicInstant>? {
        switch role {
        case .host:
            return Estimate(value: MonotonicInstant(nanoseconds: n.nanoseconds), uncertainty: .zero, maxError: .zero)
        case .follower:
            guard let (t, o) = Self.invert(PeerInstant(nanoseconds: n.nanoseconds), clock: hostClock) else { return nil }
            return Estimate(value: t, uncertainty: o.uncertainty, maxError: o.maxError)
        }
    }

    // MARK: - Peer → local / network

    /// The local instant at which `peer`'s clock read `p`, through `clock` (which tracks
    /// that peer: offset = peer − local); nil before its first admitted exchange.
    public static func local(fromPeer p: PeerInstant, clock: PeerClock) -> Estimate<MonotonicInstant>? {
        guard let (t, o) = invert(p, clock: clock) else { return nil }
        return Estimate(value: t, uncertainty: o.uncertainty, maxError: o.maxError)
    }

    /// The network instant at which a peer's clock read `p` (a crossing the peer reports),
    /// through `clock` tracking that peer from this gate. On a follower the error of the
    /// host mapping is added (in quadrature for `uncertainty`, linearly for `maxError`).
    /// Nil when either mapping has no estimate yet.
    public func network(fromPeer p: PeerInstant, clock: PeerClock) -> Estimate<NetworkInstant>? {
        guard let l = Self.local(fromPeer: p, clock: clock), let n = network(fromLocal: l.value) else { return nil }
        let a = Double(l.uncertainty.nanoseconds), b = Double(n.uncertainty.nanoseconds)
        return Estimate(value: n.value,
                        uncertainty: Span(nanoseconds: Int64((a * a + b * b).squareRoot().rounded(.up))),
                        maxError: Span(nanoseconds: l.maxError.nanoseconds &+ n.maxError.nanoseconds))
    }

    /// Solves `t + offset(t) = p` for the local instant `t`. The offset changes by at most
    /// a few hundred ppm of the correction, so two fixed-point steps converge to well
    /// under a nanosecond.
    private static func invert(_ p: PeerInstant, clock: PeerClock) -> (MonotonicInstant, Estimate<Span>)? {
        var t = MonotonicInstant(nanoseconds: p.nanoseconds)
        guard var o = clock.offset(at: t) else { return nil }
        for _ in 0..<3 {
            t = MonotonicInstant(nanoseconds: p.nanoseconds &- o.value.nanoseconds)
            guard let next = clock.offset(at: t) else { return nil }
            o = next
        }
        return (MonotonicInstant(nanoseconds: p.nanoseconds &- o.value.nanoseconds), o)
    }
}
