// SPDX-License-Identifier: Apache-2.0
// Keeps the exchanges that crossed the network fastest and weights them by their delay.

public import GateCore

/// A sample that passed the filter, with the noise the regression should assume for it.
public struct FilteredSample: Sendable, Hashable {
    public let sample: SyncSample
    /// Assumed one-sigma error of `sample.offset`, nanoseconds: from its delay above the
    /// window's minimum (the part of the delay that can be asymmetric noise, which moves
    /// the offset by at most half of it), plus a floor.
    public let sigmaNanoseconds: Double
    /// The smallest round-trip delay in the filter's window when the sample was admitted.
    public let minimumDelayNanoseconds: Int64
}

/// Delay filter, as chrony's: a window of the most recent round-trip delays; a sample whose
/// delay is far above the window's minimum is discarded (a queued packet makes the offset
/// wrong by up to half the extra delay), the others are weighted by how close to the
/// minimum they came.
///
/// Fixed storage, allocated once in `init`; `admit` allocates nothing.
public struct SampleFilter: Sendable {
    /// Tuning of the filter.
    public struct Configuration: Sendable, Hashable {
        /// Number of recent delays (admitted or not) whose minimum is the reference.
        /// Why 16: at the steady poll interval it spans 8 s, long enough to catch a quiet
        /// moment on a busy Wi-Fi channel, short enough to follow a route change.
        public var window: Int = 16
        /// A sample is kept when its delay is at most this many times the window minimum.
        /// Why 1.2: with 5 ± 3 ms one-way jitter about one sample in eight survives, and
        /// the survivors' asymmetry error is below half a millisecond.
        public var maximumDelayRatio: Double = 1.2
        /// Extra delay always tolerated above the minimum, whatever the ratio says. Why
        /// 5 µs: the scheduling jitter of timestamping a UDP datagram in user space on a
        /// Pi; on a loopback-like link the ratio alone would reject honest samples.
        public var minimumExcess: Span = .microseconds(5)
        /// Noise floor of every sample as a fraction of the minimum delay. Why 2 %: even
        /// the fastest exchange is only symmetric to within a few percent of its delay.
        public var floorRatio: Double = 0.02
        /// Absolute noise floor of every sample. Why 1 µs: user-space timestamping
        /// granularity, below which no link is measured.
        public var floor: Span = .microseconds(1)

        public init() {}
    }

    public let configuration: Configuration
    private var delays: [Int64]
    private var next = 0
    private var filled = 0
    /// Samples admitted so far.
    public private(set) var admitted: UInt64 = 0
    /// Samples discarded for their delay so far.
    public private(set) var discarded: UInt64 = 0

    /// Creates an empty filter. A configuration with a window below 1 or a ratio below 1
    /// is corrected to the nearest valid value.
    public init(configuration: Configuration = Configuration()) {
        var c = configuration
        c.window = max(1, c.window)
        c.maximumDelayRatio = max(1, c.maximumDelayRatio.isFinite ? c.maximumDelayRatio : 1)
        c.floorRatio = max(0, c.floorRatio.isFinite ? c.floorRatio : 0)
        self.configuration = c
        delays = Array(repeating: 0, count: c.window)
    }

    /// The smallest delay in the window, or nil before the first sample.
    public var minimumDelay: Span? {
        filled == 0 ? nil : Span(nanoseconds: windowMinimum())
    }

    /// Records `sample`'s delay and returns it with its weight when it is close enough to
    /// the window's minimum, or nil when it is discarded.
    public mutating func admit(_ sample: SyncSample) -> FilteredSample? {
        delays[next] = sample.delayNanoseconds
        next = (next + 1) % delays.count
        filled = min(filled + 1, delays.count)
        let minimum = windowMinimum()
        let excess = sample.delayNanoseconds - minimum
        // Rounded to the nanosecond so that exactly `ratio ×` the minimum is kept.
        let byRatio = (Double(minimum) * configuration.maximumDelayRatio).rounded() - Double(minimum)
        let allowed = max(byRatio, Double(configuration.minimumExcess.nanoseconds))
        guard Double(excess) <= allowed else {
            discarded += 1
            return nil
        }
        admitted += 1
        let floor = max(Double(minimum) * configuration.floorRatio, Double(configuration.floor.nanoseconds), 1)
        return FilteredSample(sample: sample, sigmaNanoseconds: Double(excess) * Self.excessToSigma + floor,
                              minimumDelayNanoseconds: minimum)
    }

    /// Forgets every delay (after a peer restart or a route change the old minimum means
    /// nothing). Counters are kept.
    public mutating func reset() {
        next = 0
        filled = 0
    }

    /// Sigma per nanosecond of delay above the minimum. The asymmetry error of a sample
    /// whose delay exceeds the minimum by `e` lies within ±e/2 *of the minimum sample's own
    /// error*, which is unknown; taking the whole half-width as one sigma, rather than the
    /// e/(2√3) of an even spread, keeps the reported uncertainty honest in the first
    /// seconds, when the observed minimum is still well above the link's true one.
    static let excessToSigma = 1 / (2 * 3.0.squareRoot())

    private func windowMinimum() -> Int64 {
        var m = Int64.max
        for i in 0..<filled where delays[i] < m { m = delays[i] }
        return m
    }
}
