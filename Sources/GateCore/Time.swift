// SPDX-License-Identifier: Apache-2.0
// Time domains of the gate: local monotonic instants and spans in nanoseconds.

/// An instant on the local CLOCK_MONOTONIC timeline, in nanoseconds.
///
/// Frame and GPIO kernel timestamps are converted to this domain by the adapters; the
/// synced network timeline (`NetworkInstant`) is a different domain and is only reached
/// through the clock model. Variables holding one are named `t` or end in `Mono`.
public struct MonotonicInstant: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Nanoseconds since an arbitrary origin (boot, for CLOCK_MONOTONIC).
    public var nanoseconds: Int64

    @inlinable public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// The instant `seconds` after the origin, rounded to the nearest nanosecond.
    @inlinable public init(seconds: Double) { self.nanoseconds = Int64((seconds * 1e9).rounded()) }

    /// Seconds since the origin.
    @inlinable public var seconds: Double { Double(nanoseconds) * 1e-9 }

    @inlinable public static func < (a: Self, b: Self) -> Bool { a.nanoseconds < b.nanoseconds }

    /// The span from `other` to `self` (positive when `self` is later).
    @inlinable public func since(_ other: MonotonicInstant) -> Span {
        Span(nanoseconds: nanoseconds &- other.nanoseconds)
    }

    @inlinable public static func + (a: Self, b: Span) -> Self { Self(nanoseconds: a.nanoseconds &+ b.nanoseconds) }
    @inlinable public static func - (a: Self, b: Span) -> Self { Self(nanoseconds: a.nanoseconds &- b.nanoseconds) }

    public var description: String { "mono:\(nanoseconds)ns" }
}

/// A signed length of time in nanoseconds, independent of time domain.
public struct Span: Hashable, Comparable, Sendable {
    public var nanoseconds: Int64

    @inlinable public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }
    @inlinable public static func seconds(_ s: Double) -> Span { Span(nanoseconds: Int64((s * 1e9).rounded())) }
    @inlinable public static func milliseconds(_ ms: Double) -> Span { Span(nanoseconds: Int64((ms * 1e6).rounded())) }
    @inlinable public static func microseconds(_ us: Double) -> Span { Span(nanoseconds: Int64((us * 1e3).rounded())) }
    @inlinable public var seconds: Double { Double(nanoseconds) * 1e-9 }
    @inlinable public var milliseconds: Double { Double(nanoseconds) * 1e-6 }
    @inlinable public static func < (a: Span, b: Span) -> Bool { a.nanoseconds < b.nanoseconds }
    public static let zero = Span(nanoseconds: 0)
}
