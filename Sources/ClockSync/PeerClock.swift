// SPDX-License-Identifier: Apache-2.0
// Continuous tracking of one peer's clock: filter, regression, state and uncertainty.

public import GateCore

/// How usable a peer's clock estimate is.
public enum PeerState: String, Sendable, Hashable, CustomStringConvertible {
    /// No exchange has been recorded yet (or the peer was reset).
    case unsynced
    /// Exchanges are coming in but the estimate is not yet good enough to time with.
    case syncing
    /// The estimate's uncertainty is within `PeerClock.Configuration.usableUncertainty`.
    case synced
    /// It was usable, but no reply has come for `staleAfter`, or its uncertainty has
    /// grown past `staleUncertainty`. Conversions still work, with their grown error.
    case stale

    public var description: String { rawValue }
}

/// What became of one exchange given to `PeerClock.add`.
public enum SampleOutcome: Sendable, Hashable {
    /// Used in the fit.
    case admitted
    /// Discarded by the delay filter (it waited in a queue somewhere).
    case discardedForDelay
    /// Disagrees with the fit by far more than its error allows; held back unless the
    /// next exchanges confirm it.
    case outlier
    /// Several exchanges in a row confirmed a jump of the offset (the peer restarted or a
    /// clock was stepped): the history was dropped and tracking started again from these.
    case stepDetected
}

/// A snapshot of a peer's clock for status pages, logs and the race session.
public struct PeerStats: Sendable, Hashable {
    public var state: PeerState
    /// Offset `peer − local` at the instant the snapshot was taken, with its errors; nil
    /// before the first admitted exchange.
    public var offset: Estimate<Span>?
    /// Frequency of the peer's clock against ours, ppm (positive: the peer runs fast).
    public var frequencyPPM: Double?
    /// One-sigma error of `frequencyPPM`, ppm.
    public var frequencyErrorPPM: Double?
    /// Exchanges in the current fit.
    public var samplesInFit: Int
    /// Smallest round-trip delay in the filter's window.
    public var minimumDelay: Span?
    /// Local instant of the newest valid reply.
    public var lastReply: MonotonicInstant?
    /// From the first ping to the first moment the estimate was usable; nil until then.
    public var timeToFirstSync: Span?
    /// Pings sent (as reported by `pollSent`).
    public var pingsSent: UInt64
    /// Valid replies received.
    public var replies: UInt64
    /// Replies with impossible timestamps.
    public var rejectedInvalid: UInt64
    /// Replies discarded by the delay filter.
    public var discardedForDelay: UInt64
    /// Replies held back as outliers.
    public var outliers: UInt64
    /// Offset jumps that restarted tracking.
    public var steps: UInt64
}

/// Tracks one peer's clock from NTP-style exchanges: delay filter, regression of offset
/// and frequency, state, uncertainty and the ping schedule.
///
/// Owned by the race session on the engine thread; a value type that reads no clock: every
/// query takes the caller's `now` (the loop iteration's single timestamp). After `init`,
/// recording exchanges and queries allocate nothing.
public struct PeerClock: Sendable {
    /// Tuning of the tracking.
    public struct Configuration: Sendable, Hashable {
        public var filter = SampleFilter.Configuration()
        public var regression = Regression.Configuration()
        public var schedule = PollSchedule()
        /// Admitted exchanges needed before the estimate can be called usable. Why 4:
        /// with fewer, the regression's own error estimate is itself unreliable.
        public var minimumSamplesForSync = 4
        /// Largest one-sigma uncertainty at which the clock counts as synced. Why 250 µs:
        /// half the 0.5 ms budget of a split, so a 10 m split between two synced gates
        /// stays within it.
        public var usableUncertainty: Span = .microseconds(250)
        /// A synced clock turns stale when its uncertainty grows past this. Why 1 ms: beyond
        /// it a split is off by more than a coach would accept in hand timing.
        public var staleUncertainty: Span = .milliseconds(1)
        /// A synced clock turns stale with no valid reply for this long. Why 15 s: fifteen
        /// steady pings lost in a row means the peer or the link is gone.
        public var staleAfter: Span = .seconds(15)
        /// Assumed wander of the frequency after the newest sample, dimensionless: it grows
        /// the error of instants later than the newest sample. Why 0.5 ppm: a Pi's crystal
        /// moves about that much over minutes as its temperature changes.
        public var wander: Double = 0.5e-6
        /// An admitted exchange that disagrees with the fit by more than this, and by more
        /// than `outlierSigmas` of its error, is an outlier. Why 5 ms: larger than any
        /// asymmetry the delay filter lets through on Wi-Fi.
        public var stepThreshold: Span = .milliseconds(5)
        /// See `stepThreshold`. Why 10: far beyond any Gaussian tail.
        public var outlierSigmas: Double = 10
        /// Consecutive outliers that agree with each other and mean a step. Why 3: one or
        /// two can be a burst of bad luck; three is a new clock.
        public var outliersForStep = 3

        public init() {}
    }

    public let configuration: Configuration
    public private(set) var filter: SampleFilter
    public private(set) var regression: Regression
    private var firstPoll: MonotonicInstant?
    private var lastPoll: MonotonicInstant?
    private var firstSync: MonotonicInstant?
    private var syncedOnce = false
    private var lastReply: MonotonicInstant?
    private var pending: (count: Int, offset: Int64) = (0, 0)
    private var pingsSent: UInt64 = 0
    private var replies: UInt64 = 0
    private var rejectedInvalid: UInt64 = 0
    private var outliers: UInt64 = 0
    private var steps: UInt64 = 0

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        filter = SampleFilter(configuration: configuration.filter)
        regression = Regression(configuration: configuration.regression)
    }

    // MARK: - Input

    /// Notes that a ping was sent to the peer at local instant `t1` (whether or not a reply
    /// comes). Drives the schedule and the time-to-first-sync.
    public mutating func pollSent(at t1: MonotonicInstant) {
        pingsSent += 1
        if firstPoll == nil { firstPoll = t1 }
        lastPoll = max(lastPoll ?? t1, t1)
    }

    /// Records an exchange from its four timestamps (see `SyncSample`). Impossible
    /// timestamps are counted and thrown, and change nothing else.
    @discardableResult
    public mutating func add(t1: MonotonicInstant, t2: PeerInstant, t3: PeerInstant,
                             t4: MonotonicInstant) throws(SyncSampleError) -> SampleOutcome {
        let sample: SyncSample
        do {
            sample = try SyncSample(t1: t1, t2: t2, t3: t3, t4: t4)
        } catch {
            rejectedInvalid += 1
            throw error
        }
        return add(sample)
    }

    /// Records a valid exchange; the reply's arrival `t4` is taken as the current time.
    @discardableResult
    public mutating func add(_ sample: SyncSample) -> SampleOutcome {
        replies += 1
        if firstPoll == nil { firstPoll = sample.t1 }
        lastReply = max(lastReply ?? sample.t4, sample.t4)
        guard let filtered = filter.admit(sample) else { return .discardedForDelay }

        var outcome = SampleOutcome.admitted
        if let predicted = regression.offset(at: sample.localMidpoint), regression.count >= configuration.minimumSamplesForSync {
            let deviation = Double(sample.offsetNanoseconds &- predicted.nanoseconds)
            let allowed = max(Double(configuration.stepThreshold.nanoseconds),
                              configuration.outlierSigmas * (predicted.sigma + filtered.sigmaNanoseconds))
            if abs(deviation) > allowed {
                outliers += 1
                // Outliers confirm each other when they agree to within the threshold.
                if pending.count > 0,
                   abs(Double(sample.offsetNanoseconds &- pending.offset)) <= Double(configuration.stepThreshold.nanoseconds) {
                    pending.count += 1
                } else {
                    pending = (1, sample.offsetNanoseconds)
                }
                guard pending.count >= configuration.outliersForStep else { return .outlier }
                steps += 1
                regression.reset()
                syncedOnce = false
                outcome = .stepDetected
            }
        }
        pending = (0, 0)
        regression.add(filtered)
        if firstSync == nil || !syncedOnce, isUsable(at: sample.t4) {
            if firstSync == nil { firstSync = sample.t4 }
            syncedOnce = true
        }
        return outcome
    }

    /// Forgets the peer's history (it restarted with a new boot epoch, or left the race).
    /// Counters and the time to first sync are kept; the state returns to `unsynced`.
    public mutating func reset() {
        filter.reset()
        regression.reset()
        syncedOnce = false
        pending = (0, 0)
        lastReply = nil
        lastPoll = nil
    }

    // MARK: - Queries

    /// The offset `peer − local` at local instant `t`, with its errors; nil before the first
    /// admitted exchange. See `Estimate` for what the two errors include.
    public func offset(at t: MonotonicInstant) -> Estimate<Span>? {
        guard let fit = regression.fit, let (r, sigma) = predicted(at: t) else { return nil }
        let asymmetry = regression.asymmetryBound(at: t) ?? fit.minimumDelayNanoseconds / 2
        let bound = asymmetry + 3 * sigma
        return Estimate(value: Span(nanoseconds: r),
                        uncertainty: Span(nanoseconds: Int64(saturating: sigma.rounded(.up))),
                        maxError: Span(nanoseconds: Int64(saturating: bound.rounded(.up))))
    }

    /// The fit's prediction at `t` and its one-sigma error with wander since the newest
    /// sample: what `offset(at:)` and `state(at:)` share (the state needs no bound).
    private func predicted(at t: MonotonicInstant) -> (nanoseconds: Int64, sigma: Double)? {
        guard let fit = regression.fit, let r = regression.offset(at: t) else { return nil }
        let beyond = Double(max(0, t.nanoseconds &- fit.newestSample.nanoseconds))
        let wander = configuration.wander * beyond
        return (r.nanoseconds, (r.sigma * r.sigma + wander * wander).squareRoot())
    }

    /// The state of the estimate at local instant `now`.
    public func state(at now: MonotonicInstant) -> PeerState {
        guard regression.fit != nil, let reply = lastReply else {
            return lastReply == nil ? .unsynced : .syncing
        }
        guard syncedOnce else { return .syncing }
        if now.since(reply) > configuration.staleAfter { return .stale }
        guard let p = predicted(at: now) else { return .syncing }
        if Span(nanoseconds: Int64(saturating: p.sigma.rounded(.up))) > configuration.staleUncertainty { return .stale }
        return .synced
    }

    /// When to send the next ping: `now` if none was sent yet, otherwise the last ping plus
    /// the schedule's interval for the current state and fit (see `PollSchedule`).
    public func nextPoll(now: MonotonicInstant) -> MonotonicInstant {
        guard let last = lastPoll else { return now }
        return last + configuration.schedule.interval(for: state(at: now), samplesInFit: regression.count)
    }

    /// A snapshot for the status page and the stats line.
    public func stats(at now: MonotonicInstant) -> PeerStats {
        let fit = regression.fit
        return PeerStats(
            state: state(at: now),
            offset: offset(at: now),
            frequencyPPM: fit.map { $0.frequency * 1e6 },
            frequencyErrorPPM: fit.map { $0.frequencyError * 1e6 },
            samplesInFit: regression.count,
            minimumDelay: filter.minimumDelay,
            lastReply: lastReply,
            timeToFirstSync: firstSync.flatMap { s in firstPoll.map { s.since($0) } },
            pingsSent: pingsSent,
            replies: replies,
            rejectedInvalid: rejectedInvalid,
            discardedForDelay: filter.discarded,
            outliers: outliers,
            steps: steps)
    }

    private func isUsable(at t: MonotonicInstant) -> Bool {
        guard regression.count >= configuration.minimumSamplesForSync, let e = offset(at: t) else { return false }
        return e.uncertainty <= configuration.usableUncertainty
    }
}
