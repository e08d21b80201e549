// SPDX-License-Identifier: Apache-2.0
// A receiver's fix as gpsd reports it (TPV), on the receiver's own timeline.

/// An instant on the GPS receiver's clock: UTC as the fix's `time` states it, nanoseconds
/// since 1970. The receiver's timeline, not the gate's: runs are timed from fix to fix on
/// it and never mixed with `MonotonicInstant`.
public struct GPSTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var nanoseconds: Int64
    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }
    public init(seconds: Double) { nanoseconds = Int64((seconds * 1e9).rounded()) }
    public var seconds: Double { Double(nanoseconds) / 1e9 }
    public static func < (a: Self, b: Self) -> Bool { a.nanoseconds < b.nanoseconds }
    /// Seconds from `b` to `a`.
    public static func - (a: Self, b: Self) -> Double { Double(a.nanoseconds &- b.nanoseconds) / 1e9 }
    /// `a` moved by `s` seconds.
    public static func + (a: Self, s: Double) -> Self { Self(nanoseconds: a.nanoseconds &+ Int64((s * 1e9).rounded())) }
    public var description: String { "gps:\(nanoseconds)ns" }
}

/// What the receiver has: no fix, a 2D fix (no altitude) or a 3D fix: gpsd's TPV `mode`.
public enum FixMode: Int, Sendable, Hashable, Comparable {
    case none = 1, twoD = 2, threeD = 3
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// One fix: gpsd's TPV report in SI units.
public struct GPSFix: Sendable, Hashable {
    public var time: GPSTime
    public var mode: FixMode
    /// Speed over ground from the receiver's Doppler measurement, m/s.
    public var speed: Double
    /// gpsd's `eps`: the speed's error estimate, m/s (95 %); nil when the receiver gives none.
    public var speedError: Double?
    /// gpsd's `eph`: the horizontal position's error estimate, m (95 %); nil when not given.
    public var horizontalError: Double?
    /// Degrees, and metres above mean sea level; nil without them.
    public var latitude: Double?
    public var longitude: Double?
    public var altitude: Double?

    public init(time: GPSTime, mode: FixMode, speed: Double, speedError: Double? = nil, horizontalError: Double? = nil,
                latitude: Double? = nil, longitude: Double? = nil, altitude: Double? = nil) {
        self.time = time
        self.mode = mode
        self.speed = speed
        self.speedError = speedError
        self.horizontalError = horizontalError
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
    }
}
