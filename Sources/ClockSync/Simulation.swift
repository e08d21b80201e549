// SPDX-License-Identifier: Apache-2.0
// Virtual-time simulation of a host and a peer gate exchanging pings over an impaired link.

public import GateCore

/// The simulations' generator: GateCore's SplitMix64, reproduced exactly from its seed.
public typealias SimulationRandom = SplitMix64

extension SplitMix64 {
    /// Approximately standard normal (Irwin–Hall sum of twelve uniforms; tails cut at ±6).
    public mutating func gaussian() -> Double {
        var s = 0.0
        for _ in 0..<12 { s += unit() }
        return s - 6
    }
}

/// How the simulated network treats a datagram.
///
/// Each direction's one-way delay is drawn independently per datagram, uniform in
/// `[minimumDelay, minimumDelay + jitter]`, plus `returnExtra` on the peer → host direction
/// (a constant asymmetry). With `busyExtra`, the host → peer direction alternates between
/// quiet and busy spells (each of a length uniform in 2 to 20 s) and a busy spell adds
/// uniform in `[busyExtra / 2, busyExtra]` per datagram: a user-space relay or a loaded
/// host that delays one way at times, so the asymmetry changes with the round trip.
/// Each datagram is lost independently with probability `loss`.
/// The peer answers a ping after a turnaround uniform in `turnaround`.
public struct LinkProfile: Sendable, Hashable {
    public var name: String
    public var minimumDelay: Span
    public var jitter: Span
    public var returnExtra: Span
    public var busyExtra: Span
    public var loss: Double
    public var turnaround: ClosedRange<Int64>

    public init(name: String, minimumDelay: Span, jitter: Span, returnExtra: Span = .zero, busyExtra: Span = .zero,
                loss: Double = 0, turnaround: ClosedRange<Int64> = 20_000...200_000) {
        self.name = name
        self.busyExtra = busyExtra
        self.minimumDelay = minimumDelay
        self.jitter = jitter
        self.returnExtra = returnExtra
        self.loss = min(max(loss.isFinite ? loss : 0, 0), 1)
        self.turnaround = turnaround
    }

    /// A one-line statement of the model, for reports.
    public var summary: String {
        let lo = Double(minimumDelay.nanoseconds) / 1000, hi = Double(minimumDelay.nanoseconds + jitter.nanoseconds) / 1000
        var s = "each direction's delay independent uniform in [\(fixedPoint(lo, digits: 1)), \(fixedPoint(hi, digits: 1))] µs"
        if returnExtra != .zero { s += ", return path +\(fixedPoint(Double(returnExtra.nanoseconds) / 1000, digits: 1)) µs" }
        if busyExtra != .zero {
            s += ", outward path +\(fixedPoint(Double(busyExtra.nanoseconds) / 2000, digits: 1)) to \(fixedPoint(Double(busyExtra.nanoseconds) / 1000, digits: 1)) µs in busy spells of 2 to 20 s"
        }
        s += ", loss \(fixedPoint(loss * 100, digits: 1)) % per datagram"
        s += ", peer turnaround uniform in [\(turnaround.lowerBound / 1000), \(turnaround.upperBound / 1000)] µs"
        return s
    }

    /// Loopback-like: 30 µs each way plus up to 5 µs jitter, no loss.
    public static let loopback = LinkProfile(name: "loopback", minimumDelay: .microseconds(30), jitter: .microseconds(5),
                                             turnaround: 5_000...20_000)
    /// Busy Wi-Fi: 5 ± 3 ms each way (uniform in [2, 8] ms), 2 % loss.
    public static let jitteryWiFi = LinkProfile(name: "wifi", minimumDelay: .milliseconds(2), jitter: .milliseconds(6),
                                                loss: 0.02)
}

/// The truth of the peer's clock against the host's.
public struct ClockTruth: Sendable, Hashable {
    /// Peer − host at the start of the run.
    public var initialOffset: Span
    /// Frequency of the peer against the host at the start, dimensionless (50e-6 = 50 ppm).
    public var frequency: Double
    /// Random walk of the frequency: standard deviation of its change over one second,
    /// dimensionless per √s.
    public var wander: Double

    public init(initialOffset: Span, frequency: Double = 0, wander: Double = 0) {
        self.initialOffset = initialOffset
        self.frequency = frequency
        self.wander = wander
    }
}

/// The outcome of a simulated run.
public struct SimulationResult: Sendable {
    /// |estimate − truth| of the host-timeline instant of a peer instant, nanoseconds, at
    /// evaluation instants from the first usable sync on.
    public var errors: [Double]
    /// Signed errors (estimate − truth), nanoseconds, in the same order as `errors`.
    public var signedErrors: [Double]
    /// When the largest error occurred, from the start of the run.
    public var worstErrorAt: Span = .zero
    /// Evaluations whose error exceeded the reported `maxError`.
    public var beyondMaxError: Int
    /// Evaluations whose error exceeded three times the reported `uncertainty`.
    public var beyondThreeSigma: Int
    /// Evaluations before the first usable sync (not in `errors`).
    public var evaluationsBeforeSync: Int
    /// From the first ping to the first usable estimate; nil if never usable.
    public var timeToFirstSync: Span?
    /// The host's view of the peer at the end.
    public var finalStats: PeerStats

    /// The `q`-quantile (0…1) of `errors`, nanoseconds (nearest rank); 0 when empty.
    public func errorQuantile(_ q: Double) -> Double {
        guard !errors.isEmpty else { return 0 }
        let sorted = errors.sorted()
        let rank = Int((q * Double(sorted.count - 1)).rounded())
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    /// Root mean square of `errors`, nanoseconds.
    public var rmsError: Double {
        guard !errors.isEmpty else { return 0 }
        var s = 0.0
        for e in errors { s += e * e }
        return (s / Double(errors.count)).squareRoot()
    }

    /// Largest of `errors`, nanoseconds.
    public var maxError: Double { errors.max() ?? 0 }
}

/// A host gate tracking one peer over a simulated link, in virtual time.
///
/// The host's monotonic clock is the true time (it defines the network timeline). The
/// peer's clock runs at `1 + frequency` with the frequency doing a random walk; the walk
/// steps at each ping, so the peer's clock is piecewise linear and exact between steps.
/// The host pings when `PeerClock.nextPoll` says so; at instants spread across the run
/// (every `evaluationInterval` on average, at random phase) the peer's current clock
/// reading is converted to the host timeline with `ClockModel` and compared with truth.
public struct SyncSimulation: Sendable {
    public var link: LinkProfile
    public var truth: ClockTruth
    public var configuration: PeerClock.Configuration
    public var evaluationInterval: Span = .milliseconds(500)

    public init(link: LinkProfile, truth: ClockTruth, configuration: PeerClock.Configuration = PeerClock.Configuration()) {
        self.link = link
        self.truth = truth
        self.configuration = configuration
    }

    /// Host monotonic origin of the run. Why 1000 s: a gate booted a while ago; makes the
    /// host and peer clocks differ from zero and from each other.
    static let hostStart: Int64 = 1_000_000_000_000

    /// Runs for `duration` of virtual time with the generator seeded by `seed`.
    public func run(duration: Span, seed: UInt64) -> SimulationResult {
        var rng = SimulationRandom(seed: seed)
        let model = ClockModel.host()
        var clock = PeerClock(configuration: configuration)
        // Peer clock segment: peer = segPeer + (τ − segStart)(1 + segFreq).
        var segStart = Self.hostStart
        var segPeer = Double(Self.hostStart &+ truth.initialOffset.nanoseconds)
        var freq = truth.frequency
        func peerReading(_ tau: Int64) -> Int64 {
            Int64((segPeer + Double(tau &- segStart) * (1 + freq)).rounded())
        }
        let end = Self.hostStart &+ max(0, duration.nanoseconds)
        var nextEval = Self.hostStart &+ evaluationInterval.nanoseconds / 2
        var nextPing = Self.hostStart
        var inFlight: (t1: Int64, t2: Int64, t3: Int64, t4: Int64)?
        var result = SimulationResult(errors: [], signedErrors: [], beyondMaxError: 0, beyondThreeSigma: 0,
                                      evaluationsBeforeSync: 0, timeToFirstSync: nil, finalStats: clock.stats(at: MonotonicInstant(nanoseconds: Self.hostStart)))
        let evalCount = Int(max(1, duration.nanoseconds / max(1, evaluationInterval.nanoseconds)))
        result.errors.reserveCapacity(evalCount + 16)
        result.signedErrors.reserveCapacity(evalCount + 16)

        func oneWay(extra: Span) -> Int64 {
            link.minimumDelay.nanoseconds + Int64(rng.unit() * Double(link.jitter.nanoseconds)) + extra.nanoseconds
        }
        // Busy spells of the outward path (with `busyExtra`).
        var busy = false
        var spellEnd = Self.hostStart
        func outwardExtra(at now: Int64) -> Span {
            guard link.busyExtra != .zero else { return .zero }
            while now >= spellEnd {
                busy.toggle()
                spellEnd += Int64((2 + 18 * rng.unit()) * 1e9)
            }
            guard busy else { return .zero }
            return Span(nanoseconds: Int64(Double(link.busyExtra.nanoseconds) * (0.5 + 0.5 * rng.unit())))
        }

        while true {
            let deliver = inFlight?.t4 ?? Int64.max
            let now = min(nextEval, nextPing, deliver)
            if now > end { break }
            if now == deliver, let x = inFlight {
                inFlight = nil
                _ = try? clock.add(t1: MonotonicInstant(nanoseconds: x.t1), t2: PeerInstant(nanoseconds: x.t2),
                                   t3: PeerInstant(nanoseconds: x.t3), t4: MonotonicInstant(nanoseconds: x.t4))
                nextPing = max(nextPing, clock.nextPoll(now: MonotonicInstant(nanoseconds: now)).nanoseconds)
            } else if now == nextPing {
                // New frequency segment: random-walk step for the time since the last one.
                let peerNow = segPeer + Double(now &- segStart) * (1 + freq)
                let dt = Double(now &- segStart) * 1e-9
                freq += truth.wander * dt.squareRoot() * rng.gaussian()
                segStart = now
                segPeer = peerNow
                let tNow = MonotonicInstant(nanoseconds: now)
                clock.pollSent(at: tNow)
                let lostOut = rng.unit() < link.loss, lostBack = rng.unit() < link.loss
                let forward = oneWay(extra: outwardExtra(at: now)), back = oneWay(extra: link.returnExtra)
                let turn = Int64.random(in: link.turnaround, using: &rng)
                if !lostOut && !lostBack && inFlight == nil {
                    let tau2 = now + forward, tau3 = tau2 + turn
                    inFlight = (now, peerReading(tau2), peerReading(tau3), tau3 + back)
                }
                nextPing = clock.nextPoll(now: tNow).nanoseconds
                if nextPing <= now { nextPing = now + configuration.schedule.interval(for: .unsynced).nanoseconds }
            } else {
                let t = MonotonicInstant(nanoseconds: now)
                if clock.stats(at: t).timeToFirstSync != nil,
                   let est = model.network(fromPeer: PeerInstant(nanoseconds: peerReading(now)), clock: clock) {
                    let signed = Double(est.value.nanoseconds &- now)
                    if abs(signed) > (result.errors.max() ?? -1) { result.worstErrorAt = Span(nanoseconds: now &- Self.hostStart) }
                    result.signedErrors.append(signed)
                    result.errors.append(abs(signed))
                    if abs(signed) > Double(est.maxError.nanoseconds) { result.beyondMaxError += 1 }
                    if abs(signed) > 3 * Double(est.uncertainty.nanoseconds) { result.beyondThreeSigma += 1 }
                } else {
                    result.evaluationsBeforeSync += 1
                }
                let step = Double(evaluationInterval.nanoseconds) * (0.5 + rng.unit())
                nextEval = now + max(1, Int64(step))
            }
        }
        let final = clock.stats(at: MonotonicInstant(nanoseconds: end))
        result.finalStats = final
        result.timeToFirstSync = final.timeToFirstSync
        return result
    }
}
