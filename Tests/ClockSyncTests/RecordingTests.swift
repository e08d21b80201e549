// SPDX-License-Identifier: Apache-2.0
// Exchanges recorded on real sockets, replayed into a peer clock: the reported bound must
// hold against the known truth at every instant between them.

import ClockSync
import Foundation
import GateCore
import Testing

@Suite struct RecordingTests {
    struct Recording {
        var offsetNanoseconds: Int64
        var ppm: Double
        var origin: Int64
        var exchanges: [(t1: Int64, t2: Int64, t3: Int64, t4: Int64)] = []

        /// The gate's clock minus the host's at host instant `t`.
        func truth(at t: Int64) -> Double {
            Double(offsetNanoseconds) + Double(t - origin) * ppm * 1e-6
        }
    }

    static func load(_ name: String) throws -> Recording {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Recordings/\(name)")
        var recording: Recording?
        for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") where !line.hasPrefix("#") {
            if line.hasPrefix("truth ") {
                var fields: [String: String] = [:]
                for pair in line.split(separator: " ").dropFirst() {
                    let kv = pair.split(separator: "=")
                    fields[String(kv[0])] = String(kv[1])
                }
                recording = Recording(offsetNanoseconds: try #require(fields["offset_ns"].flatMap { Int64($0) }),
                                      ppm: try #require(fields["ppm"].flatMap { Double($0) }),
                                      origin: try #require(fields["origin_ns"].flatMap { Int64($0) }))
                continue
            }
            let v = line.split(separator: " ").compactMap { Int64($0) }
            try #require(v.count == 4, "bad line: \(line)")
            recording?.exchanges.append((v[0], v[1], v[2], v[3]))
        }
        return try #require(recording)
    }

    /// A relay that delays each way by a varying amount on a loaded machine: the samples'
    /// asymmetry changes with their round trip, and a short fit extrapolates a frequency
    /// error between exchanges. Recorded by `scripts/net-tier --only race`.
    @Test func boundHoldsOnARelayedLink() throws {
        let r = try Self.load("race-tier-relay.txt")
        #expect(r.exchanges.count > 300)
        var clock = PeerClock()
        var evaluations = 0, beyondBound = 0
        var worst = 0.0
        for (n, x) in r.exchanges.enumerated() {
            clock.pollSent(at: MonotonicInstant(nanoseconds: x.t1))
            _ = try? clock.add(t1: MonotonicInstant(nanoseconds: x.t1), t2: PeerInstant(nanoseconds: x.t2),
                               t3: PeerInstant(nanoseconds: x.t3), t4: MonotonicInstant(nanoseconds: x.t4))
            // Ten instants up to the next exchange, where crossings are mapped.
            let next = n + 1 < r.exchanges.count ? r.exchanges[n + 1].t4 : x.t4 + 1_000_000_000
            for k in 0..<10 {
                let t = x.t4 + (next - x.t4) * Int64(k) / 10
                let now = MonotonicInstant(nanoseconds: t)
                guard clock.state(at: now) == .synced, let e = clock.offset(at: now) else { continue }
                evaluations += 1
                let error = abs(Double(e.value.nanoseconds) - r.truth(at: t))
                worst = max(worst, error)
                if error > Double(e.maxError.nanoseconds) { beyondBound += 1 }
            }
        }
        print("relayed link: \(evaluations) evaluations, worst \(fixedPoint(worst / 1000, digits: 1)) µs, \(beyondBound) beyond maxError")
        #expect(evaluations > 2000)
        #expect(beyondBound == 0)
    }
}
