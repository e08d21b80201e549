// SPDX-License-Identifier: Apache-2.0
// A ski or snowboard day: runs told from lifts and stops in the day's fixes (Snow Buddy).

import Glibc
public import GPSTiming

/// How runs are told apart. Snowboarders sit down more often and longer between turns, so
/// their stops inside a run may be longer before the run is split.
public struct SkiSettings: Sendable, Hashable {
    /// A run shorter than this, or with less descent, is not counted (a hop between lifts).
    public var minimumRunSeconds: Double
    public var minimumRunVertical: Double
    /// A stop shorter than this inside a descent is part of the run.
    public var longestPause: Double

    public init(minimumRunSeconds: Double, minimumRunVertical: Double, longestPause: Double) {
        self.minimumRunSeconds = minimumRunSeconds
        self.minimumRunVertical = minimumRunVertical
        self.longestPause = longestPause
    }

    public static let ski = SkiSettings(minimumRunSeconds: 30, minimumRunVertical: 30, longestPause: 90)
    public static let snowboard = SkiSettings(minimumRunSeconds: 30, minimumRunVertical: 30, longestPause: 180)
}

/// A place and instant on the day's track.
public struct TrackPoint: Sendable, Hashable {
    public var time: GPSTime
    public var latitude: Double
    public var longitude: Double
    public var altitude: Double
    public var speed: Double

    public init(time: GPSTime, latitude: Double, longitude: Double, altitude: Double, speed: Double) {
        self.time = time
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.speed = speed
    }
}

public struct SkiRun: Sendable, Hashable {
    public var start: GPSTime
    public var end: GPSTime
    public var seconds: Double { end - start }
    /// Along the track, horizontal, metres.
    public var distance: Double
    /// From the top of the run to its bottom, metres.
    public var vertical: Double
    /// Average slope, degrees: the descent over the distance.
    public var slope: Double
    public var topSpeed: Double
    public var topSpeedAt: TrackPoint
    /// Distance over time, m/s.
    public var averageSpeed: Double { seconds > 0 ? distance / seconds : 0 }
    /// The run's points, for its charts and its route.
    public var points: Range<Int>
}

public struct Lift: Sendable, Hashable {
    public var start: GPSTime
    public var end: GPSTime
    public var seconds: Double { end - start }
    /// Metres climbed.
    public var vertical: Double
    public var points: Range<Int>
}

public struct SkiDay: Sendable {
    public var points: [TrackPoint]
    public var runs: [SkiRun]
    public var lifts: [Lift]
    public var totalVertical: Double { runs.reduce(0) { $0 + $1.vertical } }
    public var totalDistance: Double { runs.reduce(0) { $0 + $1.distance } }
    public var secondsOnRuns: Double { runs.reduce(0) { $0 + $1.seconds } }
    public var secondsOnLifts: Double { lifts.reduce(0) { $0 + $1.seconds } }
    public var topSpeed: Double { runs.map(\.topSpeed).max() ?? 0 }
}

/// What a fix shows the skier doing, from its speed and the elevation's trend.
private enum Kind { case still, climb, descend, flat }

public enum SkiDayAnalysis {
    /// Half the window over which the elevation's trend is fitted, seconds. Why: a
    /// receiver's altitude wanders by metres from fix to fix; over 30 s a chairlift climbs
    /// 30 m or more and a run drops as much, while a turn or a bump does not last that long.
    static let trendHalfWindow = 15.0
    /// Vertical speed that counts as climbing or descending, m/s (a lift climbs at 1 to
    /// 3 m/s, a run drops at 1 m/s or more; walking on the flat stays below).
    static let climbing = 0.3
    static let descending = -0.3
    /// Below this, standing (m/s).
    static let standing = 0.8
    /// A climb is a lift when it lasts a minute, gains 30 m and rides a straight line
    /// (a lift's cable is straight; a skier pushing uphill is not, and is not that long).
    static let liftSeconds = 60.0
    static let liftGain = 30.0
    static let liftStraightness = 0.9
    /// Lifts move between 1 and 8 m/s (a T-bar to a gondola), and steadily: the middle half
    /// of a lift's speeds lies within 1.5 m/s.
    static let liftSpeeds = 1.0 ... 8.0
    /// The longest stop inside a lift ride, seconds.
    static let liftPause = 60.0
    static let liftSteadiness = 1.5

    /// The day's runs and lifts from its fixes (any order; those without a 3D fix left out).
    public static func analyse(_ fixes: [GPSFix], settings: SkiSettings = .ski) -> SkiDay {
        let points = fixes.filter { $0.mode == .threeD && $0.latitude != nil && $0.longitude != nil && $0.altitude != nil }
            .sorted { $0.time < $1.time }
            .map { TrackPoint(time: $0.time, latitude: $0.latitude!, longitude: $0.longitude!, altitude: $0.altitude!, speed: $0.speed) }
        return analyse(points, settings: settings)
    }

    public static func analyse(_ points: [TrackPoint], settings: SkiSettings = .ski) -> SkiDay {
        let n = points.count
        guard n >= 3 else { return SkiDay(points: points, runs: [], lifts: []) }
        let trend = verticalSpeeds(points)
        var kind = [Kind](repeating: .flat, count: n)
        for i in 0 ..< n {
            if points[i].speed < standing { kind[i] = .still }
            else if trend[i] > climbing { kind[i] = .climb }
            else if trend[i] < descending { kind[i] = .descend }
        }
        // Lifts: climbs long, high and straight enough.
        var lifts: [Lift] = []
        var i = 0
        while i < n {
            guard kind[i] == .climb else { i += 1; continue }
            // A lift stops now and then (a chair's station slows it): stops of up to a
            // minute inside a climb stay part of it.
            let j = stretch(points, kind, from: i, to: n, pause: liftPause) { $0 == .climb }.last
            let gain = elevation(points, around: j) - elevation(points, around: i)
            let path = pathLength(points, i ... j)
            let straight = path > 0 ? distance(points[i], points[j]) / path : 0
            let speeds = points[i ... j].filter { $0.speed >= standing }.map(\.speed).sorted()
            let steady = speeds.count >= 4 && liftSpeeds.contains(speeds[speeds.count / 2])
                && speeds[speeds.count * 3 / 4] - speeds[speeds.count / 4] <= liftSteadiness
            if points[j].time - points[i].time >= liftSeconds, gain >= liftGain, straight >= liftStraightness, steady {
                lifts.append(Lift(start: points[i].time, end: points[j].time, vertical: gain, points: i ..< j + 1))
            }
            i = j + 1
        }
        // Runs: between lifts, the moving stretches that descend, split at long pauses.
        var runs: [SkiRun] = []
        var blockStart = 0
        for block in lifts.map(\.points) + [n ..< n] {
            var k = blockStart
            let end = block.lowerBound
            while k < end {
                // The run starts at the first fix moving downhill.
                guard kind[k] == .descend else { k += 1; continue }
                let first = k
                var (last, m) = stretch(points, kind, from: k, to: end, pause: settings.longestPause) { $0 != .still }
                // The trend marks a descent some seconds after it begins and ends: the run
                // begins with the movement before its first descending fix, and ends with
                // the movement after its last, each up to the trend's half window.
                var from = first
                while from > blockStart, kind[from - 1] != .still, points[first].time - points[from - 1].time <= trendHalfWindow { from -= 1 }
                while last > first, kind[last] != .descend { last -= 1 }
                var to = last
                while to + 1 < end, kind[to + 1] != .still, points[to + 1].time - points[last].time <= trendHalfWindow { to += 1 }
                if let run = makeRun(points, from ... to, settings) { runs.append(run) }
                k = max(m, to + 1)
            }
            blockStart = block.upperBound
        }
        return SkiDay(points: points, runs: runs, lifts: lifts)
    }

    /// A stretch of fixes from `start` (one of them) while they are `part` of it, through
    /// stops no longer than `pause` seconds, before `end`: its last fix that is part of it,
    /// and where the scan stopped (a fix neither part nor still, the end of a stop too long,
    /// or `end`).
    private static func stretch(_ points: [TrackPoint], _ kind: [Kind], from start: Int, to end: Int, pause: Double,
                                part: (Kind) -> Bool) -> (last: Int, next: Int) {
        var last = start, m = start + 1
        var stillSince: GPSTime?
        while m < end {
            if part(kind[m]) {
                last = m
                stillSince = nil
            } else if kind[m] == .still {
                if stillSince == nil { stillSince = points[m].time }
                if points[m].time - stillSince! > pause { break }
            } else {
                break
            }
            m += 1
        }
        return (last, m)
    }

    private static func makeRun(_ p: [TrackPoint], _ r: ClosedRange<Int>, _ s: SkiSettings) -> SkiRun? {
        let seconds = p[r.upperBound].time - p[r.lowerBound].time
        guard seconds >= s.minimumRunSeconds else { return nil }
        let top = elevation(p, before: r.lowerBound), bottom = elevation(p, after: r.upperBound)
        let vertical = top - bottom
        guard vertical >= s.minimumRunVertical else { return nil }
        let dist = pathLength(p, r)
        var fastest = r.lowerBound
        for i in r where p[i].speed > p[fastest].speed { fastest = i }
        let slope = dist > 0 ? atan2(vertical, dist) * 180 / .pi : 0
        return SkiRun(start: p[r.lowerBound].time, end: p[r.upperBound].time, distance: dist, vertical: vertical, slope: slope,
                      topSpeed: p[fastest].speed, topSpeedAt: p[fastest], points: r.lowerBound ..< r.upperBound + 1)
    }

    /// The elevation where a run begins: the median of the fixes in the 10 s before (the
    /// skier most often stood there), robust to a receiver's altitude noise.
    static func elevation(_ p: [TrackPoint], before i: Int) -> Double {
        median(p[..<(i + 1)].reversed().prefix { p[i].time - $0.time <= 10 }.map(\.altitude))
    }

    /// The elevation where a run ends: the median of the fixes in the 10 s after.
    static func elevation(_ p: [TrackPoint], after i: Int) -> Double {
        median(p[i...].prefix { $0.time - p[i].time <= 10 }.map(\.altitude))
    }

    static func median(_ values: [Double]) -> Double {
        let z = values.sorted()
        return z.count % 2 == 1 ? z[z.count / 2] : (z[z.count / 2 - 1] + z[z.count / 2]) / 2
    }

    /// The elevation at a point, robust to a receiver's altitude noise: the median of the
    /// fixes within 5 s.
    static func elevation(_ p: [TrackPoint], around i: Int) -> Double {
        var z: [Double] = []
        var j = i
        while j >= 0, p[i].time - p[j].time <= 5 { z.append(p[j].altitude); j -= 1 }
        j = i + 1
        while j < p.count, p[j].time - p[i].time <= 5 { z.append(p[j].altitude); j += 1 }
        return median(z)
    }

    /// Each point's vertical speed: the slope of a straight line fitted to the altitudes
    /// within `trendHalfWindow` of it, m/s.
    static func verticalSpeeds(_ p: [TrackPoint]) -> [Double] {
        let n = p.count
        var out = [Double](repeating: 0, count: n)
        var lo = 0, hi = 0
        var st = 0.0, sz = 0.0, stt = 0.0, stz = 0.0, count = 0.0
        let origin = p[0].time
        func add(_ k: Int, _ sign: Double) {
            let t = p[k].time - origin, z = p[k].altitude
            st += sign * t; sz += sign * z; stt += sign * t * t; stz += sign * t * z; count += sign
        }
        for i in 0 ..< n {
            while hi < n, p[hi].time - p[i].time <= trendHalfWindow { add(hi, 1); hi += 1 }
            while p[i].time - p[lo].time > trendHalfWindow { add(lo, -1); lo += 1 }
            let d = count * stt - st * st
            out[i] = count >= 3 && d > 1e-9 ? (count * stz - st * sz) / d : 0
        }
        return out
    }

    static let earthRadius = 6_371_008.8

    /// Horizontal distance between two points, metres (haversine).
    static func distance(_ a: TrackPoint, _ b: TrackPoint) -> Double {
        let rad = Double.pi / 180
        let dlat = (b.latitude - a.latitude) * rad, dlon = (b.longitude - a.longitude) * rad
        let h = sin(dlat / 2) * sin(dlat / 2) + cos(a.latitude * rad) * cos(b.latitude * rad) * sin(dlon / 2) * sin(dlon / 2)
        return 2 * earthRadius * asin(min(1, h.squareRoot()))
    }

    /// Distance travelled, metres: the Doppler speed integrated over time (a position's
    /// noise of a few metres a fix would add more than that to a path summed from positions
    /// whenever the skier is slow).
    static func pathLength(_ p: [TrackPoint], _ r: ClosedRange<Int>) -> Double {
        var d = 0.0
        for i in r.dropFirst() { d += (p[i].speed + p[i - 1].speed) / 2 * (p[i].time - p[i - 1].time) }
        return d
    }
}
