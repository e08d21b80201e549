// SPDX-License-Identifier: Apache-2.0
// What the receiver is doing: fix mode, satellites, accuracy, and its measured update rate.

/// The receiver's update rate, measured from the fix times (its own clock, so the gate's
/// scheduling does not disturb it): the median interval of the last 25 fixes.
public struct FixRate: Sendable, Hashable {
    private var times: [GPSTime] = []
    /// Enough fixes for a second at 25 Hz; a few seconds at 1 Hz.
    static let window = 25

    public init() {}

    public mutating func note(_ t: GPSTime) {
        if let last = times.last, t <= last { return }
        // A gap of more than 5 s is a new start: the old intervals say nothing of the rate now.
        if let last = times.last, t - last > 5 { times.removeAll(keepingCapacity: true) }
        times.append(t)
        if times.count > Self.window { times.removeFirst(times.count - Self.window) }
    }

    /// Fixes per second; nil until five fixes have come.
    public var hertz: Double? {
        guard times.count >= 5, let median = Self.medianInterval(times), median > 0 else { return nil }
        return 1 / median
    }

    /// The median of the intervals between successive `times` (in order), seconds; nil with
    /// fewer than two.
    static func medianInterval<C: Collection>(_ times: C) -> Double? where C.Element == GPSTime {
        guard times.count >= 2 else { return nil }
        var gaps = zip(times, times.dropFirst()).map { $1 - $0 }
        gaps.sort()
        return gaps[gaps.count / 2]
    }
}

/// The receiver as the page, the LEDs and `selftest` show it.
public struct ReceiverStatus: Sendable, Hashable {
    public enum Link: String, Sendable, Hashable {
        /// gpsd does not answer.
        case noDaemon = "no-gpsd"
        /// gpsd answers but has no receiver.
        case noReceiver = "no-receiver"
        /// The receiver talks but has no fix.
        case noFix = "no-fix"
        case fix = "fix"
    }
    public var link: Link = .noDaemon
    /// Why, in words the user can act on, when `link` is not `.fix`.
    public var detail: String = "not started"
    public var gpsdRelease: String?
    public var device: String?
    public var driver: String?
    public var mode: FixMode = .none
    public var satellitesUsed: Int?
    public var satellitesSeen: Int?
    /// The last fix's horizontal error (m, 95 %) and speed error (m/s, 95 %).
    public var horizontalError: Double?
    public var speedError: Double?
    public var speed: Double?
    /// Measured fixes per second, and what the board asks for.
    public var rate: Double?
    public var wantedRate: Double?
    public var lastFix: GPSTime?
    /// Lines from gpsd that could not be read.
    public var badLines = 0
    /// What the gate did about the receiver's rate, when it sets it through gpsd.
    public var rateControl: RateControl?

    public enum RateControl: Sendable, Hashable {
        /// gpsd was asked for this many fixes a second and has not answered yet.
        case asked(Double)
        /// gpsd set the receiver to this many fixes a second.
        case set(Double)
        /// gpsd would not or cannot set it; what to do instead.
        case refused(String)
    }

    public init(wantedRate: Double? = nil) { self.wantedRate = wantedRate }

    /// A rate 10 % or more below what was asked: receivers left at their 1 or 5 Hz default
    /// while the board expects 10 or 25 Hz make every time coarser.
    public var rateWarning: String? {
        guard let rate, let wanted = wantedRate, rate < 0.9 * wanted else { return nil }
        let advice = switch rateControl {
        case nil: "run sprintgate selftest --fix to have gpsd set it"
        case .asked: "gpsd was asked to set it and has not answered yet"
        case .set(let h): "gpsd set it to \(Self.hz(h)), but the receiver did not change: if gpsd runs read-only (-b in GPSD_OPTIONS of /etc/default/gpsd), remove -b; else set it with its maker's tool"
        case .refused(let why): why
        }
        return "the receiver sends \(Self.hz(rate)) fixes a second, not \(Self.hz(wanted)): \(advice)"
    }

    /// `selftest`'s row: pass with a fix at the rate asked, warn without a fix yet or at a
    /// lower rate (the gate still works), fail when gpsd or the receiver is missing.
    public var verdict: (ok: Bool?, detail: String) {
        switch link {
        case .noDaemon, .noReceiver: return (false, detail)
        case .noFix: return (nil, detail)
        case .fix:
            var parts = ["\(mode == .threeD ? "3D" : "2D") fix"]
            if let used = satellitesUsed { parts.append("\(used) of \(satellitesSeen ?? used) satellites") }
            if let e = horizontalError { parts.append("±\(Int(e.rounded())) m") }
            if let r = rate { parts.append("\(Self.hz(r)) fixes/s") }
            if let d = device { parts.append(d + (driver.map { " (\($0))" } ?? "")) }
            if let w = rateWarning { return (nil, parts.joined(separator: ", ") + ": " + w) }
            return (true, parts.joined(separator: ", "))
        }
    }

    /// A rate in words: "10", "2.5".
    public static func hz(_ r: Double) -> String {
        let tenths = Int((r * 10).rounded())
        return tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(tenths % 10)"
    }
}
