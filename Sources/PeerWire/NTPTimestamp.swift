// SPDX-License-Identifier: Apache-2.0
// NTP's 64-bit timestamp and 32-bit short format, with era handling (RFC 5905 §6).

/// An NTP timestamp: 32 bits of seconds since 1900-01-01 00:00:00 UTC and 32 bits of
/// binary fraction (232 ps resolution), big-endian on the wire.
///
/// The seconds field wraps every 2³² s (136 years): era 0 ends on 2036-02-07 06:28:16 UTC
/// and era 1 starts there with the field back at 0. A timestamp therefore names an instant
/// only together with a pivot: `unixNanoseconds(near:)` picks the era that puts it within
/// 68 years of the pivot, as RFC 4330 §3 recommends. The all-zero value means "unknown"
/// (e.g. an origin timestamp in a client's first request).
public struct NTPTimestamp: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// Seconds in the high 32 bits, fraction in the low 32 bits.
    public var rawValue: UInt64

    @inlinable public init(rawValue: UInt64) { self.rawValue = rawValue }

    public init(seconds: UInt32, fraction: UInt32) { rawValue = UInt64(seconds) << 32 | UInt64(fraction) }

    /// Whole seconds within the era.
    public var seconds: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 32) }
    /// Binary fraction of a second (units of 2⁻³² s).
    public var fraction: UInt32 { UInt32(truncatingIfNeeded: rawValue) }

    /// The "unknown" timestamp.
    public static let zero = NTPTimestamp(rawValue: 0)
    public var isZero: Bool { rawValue == 0 }

    /// Seconds from 1900-01-01 (NTP's prime epoch) to 1970-01-01 (the Unix epoch): 70
    /// years including 17 leap days.
    public static let unixEpochOffsetSeconds: Int64 = 2_208_988_800

    /// The timestamp of an instant given in nanoseconds since the Unix epoch (UTC, leap
    /// seconds not counted, like CLOCK_REALTIME), rounded to the nearest fraction unit.
    /// Instants after 2036 land in era 1 (seconds field wrapped).
    public init(unixNanoseconds ns: Int64) {
        let sec = ns.quotientAndRemainder(dividingBy: 1_000_000_000)
        var whole = sec.quotient
        var nanos = sec.remainder
        if nanos < 0 {
            whole -= 1
            nanos += 1_000_000_000
        }
        // fraction = nanos · 2³² / 10⁹, rounded; nanos < 10⁹ so the product fits 64 bits.
        var frac = (UInt64(nanos) << 32 + 500_000_000) / 1_000_000_000
        if frac > UInt64(UInt32.max) {
            frac = 0
            whole += 1
        }
        let ntpSeconds = whole &+ Self.unixEpochOffsetSeconds
        self.init(seconds: UInt32(truncatingIfNeeded: ntpSeconds), fraction: UInt32(frac))
    }

    /// Nanoseconds of the fraction, rounded.
    public var fractionNanoseconds: Int64 { Int64((UInt64(fraction) * 1_000_000_000 + (1 << 31)) >> 32) }

    /// The instant in nanoseconds since the Unix epoch, taking the era that lies within
    /// 2³¹ s (68 years) of `pivot` (also nanoseconds since the Unix epoch).
    public func unixNanoseconds(near pivot: Int64) -> Int64 {
        let pivotNTP = pivot / 1_000_000_000 + Self.unixEpochOffsetSeconds
        // The signed 32-bit difference of the seconds fields picks the nearest era.
        let delta = Int64(Int32(bitPattern: seconds &- UInt32(truncatingIfNeeded: pivotNTP)))
        let ntpSeconds = pivotNTP + delta
        return (ntpSeconds - Self.unixEpochOffsetSeconds) * 1_000_000_000 + fractionNanoseconds
    }

    /// The signed difference `self − other` in nanoseconds, valid across an era boundary
    /// as long as the two are within 68 years of each other (RFC 5905's 64-bit arithmetic).
    public func nanoseconds(since other: NTPTimestamp) -> Int64 {
        let d = Int64(bitPattern: rawValue &- other.rawValue)
        // d is in units of 2⁻³² s; split to keep the product within 64 bits.
        let whole = d >> 32
        let frac = d & 0xFFFF_FFFF
        return whole * 1_000_000_000 + (frac * 1_000_000_000 + (1 << 31)) >> 32
    }

    public var description: String { "ntp:\(seconds).\(fraction)" }
}

/// NTP's 32-bit short format: 16 bits of seconds and 16 bits of fraction (15 µs
/// resolution), used for root delay and root dispersion.
public struct NTPShort: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt32
    @inlinable public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The value nearest to `nanoseconds` (clamped to 0…65535.99998 s).
    public init(nanoseconds: Int64) {
        let clamped = max(0, min(nanoseconds, 65_535_999_984_741))
        rawValue = UInt32(clamping: (UInt64(clamped) << 16 + 500_000_000) / 1_000_000_000)
    }

    /// The value in nanoseconds.
    public var nanoseconds: Int64 { Int64((UInt64(rawValue) * 1_000_000_000 + (1 << 15)) >> 16) }
}
