// SPDX-License-Identifier: Apache-2.0
// The clock the gate serves to peers and NTP clients, and the test-only skew applied to it.

import Foundation
public import GateCore

/// A deliberate offset and frequency error applied to the gate's network-facing clock.
/// **For tests only** (`--test-clock-skew`): several gates on one machine share one
/// CLOCK_MONOTONIC, so the multi-gate tests give each its own error to recover.
public struct ClockSkew: Sendable, Hashable {
    /// Added to every reading, in nanoseconds.
    public var offsetNanoseconds: Int64 = 0
    /// Frequency error in parts per million (positive: the skewed clock runs fast).
    public var ppm: Double = 0
    /// The instant from which the frequency error accumulates.
    public var origin = MonotonicInstant(nanoseconds: 0)

    public static let none = ClockSkew()

    /// Parses `"OFFSET_MS,PPM"`, e.g. `"-250.5,40"`; nil when it is not that.
    public init?(parsing text: String, origin: MonotonicInstant) {
        let parts = text.split(separator: ",")
        guard parts.count == 2, let ms = Double(parts[0]), let ppm = Double(parts[1]), ms.isFinite, ppm.isFinite,
              abs(ms) <= 86_400_000, abs(ppm) <= 1000 else { return nil }
        offsetNanoseconds = Int64((ms * 1e6).rounded())
        self.ppm = ppm
        self.origin = origin
    }

    public init() {}

    /// The skewed reading of local instant `t` (monotonic domain, nanoseconds).
    public func apply(_ t: MonotonicInstant) -> MonotonicInstant {
        let drift = Double(t.nanoseconds - origin.nanoseconds) * ppm * 1e-6
        return MonotonicInstant(nanoseconds: t.nanoseconds + offsetNanoseconds + Int64(drift.rounded()))
    }

    /// The local instant whose skewed reading is `peer`: `apply`'s inverse, to the
    /// nanosecond.
    public func local(_ peer: MonotonicInstant) -> MonotonicInstant {
        guard self != .none else { return peer }
        let sinceOrigin = Double(peer.nanoseconds - offsetNanoseconds - origin.nanoseconds) / (1 + ppm * 1e-6)
        return MonotonicInstant(nanoseconds: origin.nanoseconds + Int64(sinceOrigin.rounded()))
    }
}

/// The wall clock served over NTP: local CLOCK_MONOTONIC (skewed in tests) plus an
/// anchor `CLOCK_REALTIME − CLOCK_MONOTONIC` read once at start.
///
/// Why monotonic mapped to the NTP era rather than CLOCK_REALTIME: a gate has no RTC
/// and no internet at a track, so its realtime clock is whatever the last fake-hwclock
/// save or a phone said, and it can be stepped mid-race; the race timeline must not jump.
/// Serving monotonic + a fixed anchor gives clients a steady clock whose rate is the
/// gate's crystal, and whose epoch is the best wall-clock guess at start.
public struct ServedClock: Sendable {
    public let anchorNanoseconds: Int64
    public let skew: ClockSkew

    public init(skew: ClockSkew, now: MonotonicInstant) {
        // Foundation's Date reads CLOCK_REALTIME (µs resolution is plenty for an anchor).
        let realtime = Int64((Date().timeIntervalSince1970 * 1e6).rounded()) * 1000
        anchorNanoseconds = realtime - now.nanoseconds
        self.skew = skew
    }

    /// Nanoseconds since the Unix epoch at local instant `t`.
    public func unixNanoseconds(at t: MonotonicInstant) -> Int64 { skew.apply(t).nanoseconds + anchorNanoseconds }
}
