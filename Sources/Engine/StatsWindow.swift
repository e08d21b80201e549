// SPDX-License-Identifier: Apache-2.0
// The loop's 10-second statistics: frames, drops, detections and loop latency percentiles.

public import GateCore

/// Collects per-frame figures over a window and renders the fixed-column stats line
/// (`fps drop det p50_ms p99_ms offset_us peers`). Fixed storage: adding allocates nothing.
public struct StatsWindow: Sendable {
    /// Latency bins: bin i holds latencies in [edge(i), edge(i+1)), edges doubling every 8
    /// bins from 10 µs, so 64 bins reach about 2.5 s with 9 % resolution.
    static let bins = 64
    private var counts: [UInt32]
    private var windowStart: MonotonicInstant?
    public private(set) var frames: UInt64 = 0
    public private(set) var dropped: UInt64 = 0
    public private(set) var detections: UInt64 = 0
    public let interval: Span

    public init(interval: Span = .seconds(10)) {
        self.interval = interval
        counts = [UInt32](repeating: 0, count: Self.bins)
    }

    static func edgeNs(_ i: Int) -> Double { 10_000 * pow2(Double(i) / 8) }

    private static func pow2(_ x: Double) -> Double {
        // 2^x without Foundation: integer part by shifting, fraction by a short series.
        let n = Int(x.rounded(.down)), f = x - Double(n)
        let ln2 = 0.6931471805599453
        var term = 1.0, sum = 1.0
        for k in 1...12 { term *= f * ln2 / Double(k); sum += term }
        return sum * Double(1 << n)
    }

    /// Records one processed frame: its latency from the frame's timestamp to the end of
    /// processing, drops reported with it, and whether it held a crossing.
    public mutating func add(latency: Span, dropped: UInt64, detection: Bool, now: MonotonicInstant) {
        if windowStart == nil { windowStart = now }
        frames += 1
        self.dropped += dropped
        if detection { detections += 1 }
        let ns = Double(max(0, latency.nanoseconds))
        var i = 0
        while i < Self.bins - 1 && ns >= Self.edgeNs(i + 1) { i += 1 }
        counts[i] &+= 1
    }

    /// Latency percentile `p` (0...1) in milliseconds: the upper edge of its bin.
    public func percentileMs(_ p: Double) -> Double {
        let total = counts.reduce(0) { $0 + UInt64($1) }
        guard total > 0 else { return 0 }
        let target = UInt64((p * Double(total)).rounded(.up))
        var seen: UInt64 = 0
        for i in 0..<Self.bins {
            seen += UInt64(counts[i])
            if seen >= max(1, target) { return Self.edgeNs(i + 1) / 1e6 }
        }
        return Self.edgeNs(Self.bins) / 1e6
    }

    public static let header = "   fps  drop   det  p50_ms  p99_ms  offset_us  peers"

    /// The stats line when the window is over (then the window restarts), else nil.
    public mutating func line(now: MonotonicInstant, offsetMicroseconds: Double = 0, peers: Int = 0) -> String? {
        guard let start = windowStart, now.since(start) >= interval else { return nil }
        let seconds = now.since(start).seconds
        let fps = Double(frames) / seconds
        func col(_ s: String, _ w: Int) -> String { String(repeating: " ", count: max(0, w - s.count)) + s }
        func fixed(_ v: Double, _ d: Int) -> String { fixedPoint(v, digits: d) }
        let s = col(fixed(fps, 1), 6) + col("\(dropped)", 6) + col("\(detections)", 6)
            + col(fixed(percentileMs(0.5), 2), 8) + col(fixed(percentileMs(0.99), 2), 8)
            + col(fixed(offsetMicroseconds, 1), 11) + col("\(peers)", 7)
        frames = 0
        dropped = 0
        detections = 0
        for i in 0..<Self.bins { counts[i] = 0 }
        windowStart = now
        return s
    }
}
