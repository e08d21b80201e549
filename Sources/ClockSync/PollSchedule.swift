// SPDX-License-Identifier: Apache-2.0
// When to send the next ping to a peer: fast until it is usable, then steady.

public import GateCore

/// The recommended ping cadence for one peer, by its sync state.
///
/// A burst at `burstInterval` gets a new or lost peer usable within seconds and goes on
/// until the fit holds `warmupSamples`; then `steadyInterval` keeps enough low-delay
/// samples flowing for the delay filter to pick from (about one exchange in eight survives
/// it on a jittery Wi-Fi). A ping is well under 100 bytes each way, so even the burst to
/// seven peers costs the link nothing.
public struct PollSchedule: Sendable, Hashable {
    /// Interval while unsynced, syncing or stale. Why 100 ms: ten exchanges a second
    /// fill the filter's window in under 2 s, so a jittery link finds a fast exchange
    /// and becomes usable within a few seconds (at 200 ms it took up to 30 s in
    /// simulation).
    public var burstInterval: Span = .milliseconds(100)
    /// Interval while synced. Why 500 ms: the delay filter keeps roughly one exchange in
    /// eight on a busy link, so a fresh sample arrives every few seconds; at 1 s the
    /// 95th-percentile error on a 5 ± 3 ms link was twice as large in simulation.
    public var steadyInterval: Span = .milliseconds(500)

    /// A synced peer stays on the burst interval until its fit holds this many samples.
    /// Why 64: the first minute decides the frequency estimate, and an early frequency
    /// error extrapolated over the gaps between the few admitted samples of the steady
    /// cadence was the largest error in simulation; bursting until the fit is half full
    /// (about a minute on a 5 ± 3 ms link) brought the worst 95th percentile of forty
    /// 20-minute runs from 0.8 ms to 0.3 ms. A runs-test cut below it bursts again.
    public var warmupSamples = 64

    public init() {}

    public init(burstInterval: Span, steadyInterval: Span, warmupSamples: Int = 64) {
        self.burstInterval = burstInterval
        self.steadyInterval = steadyInterval
        self.warmupSamples = warmupSamples
    }

    /// The interval between pings for a peer in `state` whose fit holds `samplesInFit`
    /// samples; never below 1 ms, whatever the configuration.
    public func interval(for state: PeerState, samplesInFit: Int = .max) -> Span {
        let span: Span
        switch state {
        case .unsynced, .syncing, .stale: span = burstInterval
        case .synced: span = samplesInFit < warmupSamples ? burstInterval : steadyInterval
        }
        return max(span, .milliseconds(1))
    }
}
