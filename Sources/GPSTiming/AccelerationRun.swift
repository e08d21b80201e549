// SPDX-License-Identifier: Apache-2.0
// The acceleration timer: acquiring, ready, armed, running, complete; milestones from a
// standing start timed between fixes, on the receiver's timeline.

import GateCore

/// What an acceleration run is timed with.
public struct AccelerationSettings: Sendable, Hashable {
    /// The fix must be at least this good (gpsd's `eph`, m) to arm and through the run.
    public var accuracy: Double
    /// Time from the end of a 1 ft rollout, as drag strips start their clock, instead of
    /// from the first movement.
    public var rollout: Bool
    /// The milestones timed; the run completes at the last of them.
    public var targets: Set<Milestone>

    /// The accuracy gates offered, m.
    public static let accuracies: [Double] = [5, 10, 15, 20]

    public init(accuracy: Double = 10, rollout: Bool = false, targets: Set<Milestone> = Set(Milestone.allCases)) {
        self.accuracy = accuracy
        self.rollout = rollout
        self.targets = targets
    }
}

/// Where the timer is.
public enum AccelerationState: String, Sendable, Hashable {
    /// No fix, or one worse than the accuracy gate.
    case acquiring
    /// A good fix; the vehicle is not standing still.
    case ready
    /// Standing still with a good fix: the next launch is timed.
    case armed
    case running
    /// The last target reached, or the vehicle slowing down.
    case complete
    /// The run was stopped without times (the reason is in the result).
    case voided
}

/// One milestone's time.
public struct MilestoneTime: Sendable, Hashable {
    public var milestone: Milestone
    /// Seconds from the start (the first movement, or the end of the rollout).
    public var seconds: Double
    /// Its one-sigma uncertainty from the fix rate and the speed's error, seconds.
    public var uncertainty: Double
    /// Speed at the milestone, m/s.
    public var speed: Double
    /// The average speed over the 66 ft before it, m/s, at 1/8 and 1/4 mile.
    public var trapSpeed: Double?

    public init(milestone: Milestone, seconds: Double, uncertainty: Double, speed: Double, trapSpeed: Double? = nil) {
        self.milestone = milestone
        self.seconds = seconds
        self.uncertainty = uncertainty
        self.speed = speed
        self.trapSpeed = trapSpeed
    }
}

/// A finished run.
public struct AccelerationResult: Sendable, Hashable {
    /// When motion began, and when timing started (the same without rollout).
    public var launch: GPSTime
    public var start: GPSTime
    public var times: [MilestoneTime]
    /// The highest speed, m/s, and when, seconds from the start.
    public var topSpeed: Double
    public var topSpeedSeconds: Double
    /// Metres covered from the start to the last fix of the run.
    public var distance: Double
    /// Why the run has no times; nil for a timed run.
    public var voided: String?
    /// Fixes a second the receiver gave during the run.
    public var fixRate: Double

    public init(launch: GPSTime, start: GPSTime, times: [MilestoneTime], topSpeed: Double, topSpeedSeconds: Double,
                distance: Double, voided: String?, fixRate: Double) {
        self.launch = launch
        self.start = start
        self.times = times
        self.topSpeed = topSpeed
        self.topSpeedSeconds = topSpeedSeconds
        self.distance = distance
        self.voided = voided
        self.fixRate = fixRate
    }

    public func time(_ m: Milestone) -> MilestoneTime? { times.first { $0.milestone == m } }
}

/// What a fix changed.
public enum AccelerationEvent: Sendable, Hashable {
    case state(AccelerationState, String)
    case launched(GPSTime)
    case milestone(MilestoneTime)
    case finished(AccelerationResult)
}

/// The acceleration timer over a receiver's fixes, one `ingest` each. Distance is
/// integrated from the Doppler speed, never from positions; each milestone's instant is
/// interpolated between fixes (speeds through a line fitted to the fixes around it); a fix
/// worse than the gate during a run voids it with the reason rather than give a wrong time.
public struct AccelerationRun: Sendable {
    public let settings: AccelerationSettings
    public private(set) var state: AccelerationState = .acquiring
    /// The last run, timed or voided.
    public private(set) var last: AccelerationResult?

    /// Below this the vehicle is standing: 0.5 mph.
    public static let stillSpeed = 0.5 * Units.mph
    /// Standing this long arms the timer.
    public static let stillTime = 1.0
    /// A launch is above 2 mph, rising on two fixes in a row by at least 0.5 m/s² each, and
    /// above its own 95 % speed error: a standing receiver's noise under a poor fix does not
    /// rise steadily, and a car pulling away does.
    public static let launchSpeed = 2 * Units.mph
    static let launchAcceleration = 0.5
    /// The top speed is locked on a drop of 2 mph over three falling fixes.
    public static let slowdown = 2 * Units.mph
    /// Harder than 1.5 g between two fixes is a bad fix (multipath), not the car.
    static let plausibleAcceleration = 15.0
    /// Doppler speed noise assumed when the receiver gives no `eps`, m/s (one sigma).
    static let defaultSpeedSigma = 0.1

    private var recent: [GPSFix] = []
    private var lastStill: GPSFix?
    private var run: Running?

    private struct Running: Sendable {
        var launch: GPSTime
        var launchSigma: Double
        /// (seconds from launch, metres from launch, speed) of every fix used.
        var samples: [(t: Double, d: Double, v: Double)]
        var speedSigma: Double
        /// Timing origin: (seconds, metres) from launch; the rollout's end, or zero.
        var origin: (t: Double, d: Double)?
        var originSigma: Double
        var times: [MilestoneTime] = []
        /// Speed targets crossed, waiting for the fixes after them.
        var pending: [(milestone: Milestone, raw: Double)] = []
        var top: (v: Double, t: Double) = (0, 0)
        var rejected = 0
        /// The last fix at rest, and the fixes the launch is fitted on (seconds from it, speed).
        var anchor = GPSTime(nanoseconds: 0)
        var fitPoints: [(t: Double, v: Double)] = []
        var refined = false
        /// The fixes integrated, in order.
        var used: [GPSFix] = []
    }

    public init(settings: AccelerationSettings = AccelerationSettings()) {
        self.settings = settings
    }

    /// While running: seconds and metres from the launch to the last fix, and the
    /// milestones timed so far (the in-car view fills them in as they come).
    public var progress: (seconds: Double, distance: Double, times: [MilestoneTime])? {
        guard state == .running, let run, let s = run.samples.last else { return nil }
        return (s.t, s.d, run.times)
    }

    private func good(_ f: GPSFix) -> Bool {
        f.mode >= .twoD && (f.horizontalError ?? 0) <= settings.accuracy
    }

    private func qualityReason(_ f: GPSFix) -> String {
        f.mode < .twoD ? "no fix" : "fix worse than \(Int(settings.accuracy)) m (\(Int((f.horizontalError ?? 0).rounded())) m)"
    }

    private static func sigma(_ f: GPSFix) -> Double { f.speedError.map { $0 / 1.96 } ?? defaultSpeedSigma }

    public mutating func ingest(_ fix: GPSFix) -> [AccelerationEvent] {
        if let prev = recent.last, fix.time <= prev.time { return [] }
        var events: [AccelerationEvent] = []
        recent.append(fix)
        if recent.count > 64 { recent.removeFirst(recent.count - 64) }
        switch state {
        case .acquiring, .complete, .voided:
            // A finished run stays on show until the vehicle stands again (armed for the
            // next) or the fix is lost.
            if good(fix) {
                if state == .acquiring { go(.ready, "fix within \(Int(settings.accuracy)) m", &events) }
                noteStill(fix, &events)
            } else if state != .acquiring {
                go(.acquiring, qualityReason(fix), &events)
            }
        case .ready, .armed:
            guard good(fix) else {
                go(.acquiring, qualityReason(fix), &events)
                break
            }
            if state == .armed, let estimate = launch() {
                start(estimate, fix, &events)
                go(.running, "launch", &events)
                events.append(.launched(run!.launch))
                advance(fix, &events)
            } else {
                noteStill(fix, &events)
            }
        case .running:
            advance(fix, &events)
        }
        return events
    }

    private mutating func go(_ s: AccelerationState, _ why: String, _ events: inout [AccelerationEvent]) {
        guard state != s else { return }
        state = s
        events.append(.state(s, why))
    }

    /// Arms after a second at rest: the median speed of the last second's fixes below
    /// 0.5 mph and none above 2 mph (a receiver's noise at rest crosses 0.5 mph now and then;
    /// its median does not). Goes back to ready when moving without a launch.
    private mutating func noteStill(_ fix: GPSFix, _ events: inout [AccelerationEvent]) {
        if fix.speed < Self.stillSpeed { lastStill = fix }
        let second = recent.filter { fix.time - $0.time <= Self.stillTime + 1e-6 }
        let speeds = second.map(\.speed).sorted()
        let standing = fix.time - second.first!.time >= 0.9 * Self.stillTime && speeds[speeds.count / 2] < Self.stillSpeed
            && speeds.last! < Self.launchSpeed
        if standing {
            if state != .armed { go(.armed, "standing still", &events) }
        } else if state == .armed, lastStill.map({ fix.time - $0.time > launchWithin }) ?? true {
            go(.ready, "moving", &events)
        }
    }

    /// A launch shows within this long of the last fix at rest, seconds: 2 s, or the three
    /// moving fixes it takes and a half interval more on a slow (1 Hz) receiver.
    static let launchWithin = 2.0
    private var launchWithin: Double { max(Self.launchWithin, 3.5 * fixInterval) }

    /// The receiver's interval between fixes, seconds: the median of the last few.
    private var fixInterval: Double { FixRate.medianInterval(recent.suffix(9).map(\.time)) ?? 0.1 }

    /// A run with no fix for longer than this (or one and a half of the receiver's
    /// intervals, on a 1 Hz receiver) is voided: the distance between would be guessed.
    static let longestGap = 1.0

    private func rising<C: Collection>(_ fixes: C) -> Bool where C.Element == GPSFix {
        zip(fixes, fixes.dropFirst()).allSatisfy { a, b in (b.speed - a.speed) / (b.time - a.time) >= Self.launchAcceleration }
    }

    /// The launch, if the last fixes show one: the newest above 2 mph by more than its own
    /// 95 % error, the two before rising steadily into it, and the speeds since the last fix
    /// at rest fitting a pull from rest to within 0.3 m/s (a standing receiver's noise
    /// does not).
    private func launch() -> LaunchFit.Estimate? {
        guard recent.count >= 3, let last = recent.last, lastStill != nil else { return nil }
        let three = recent.suffix(3)
        guard rising(three), last.speed - (last.speedError ?? 0) >= Self.launchSpeed else { return nil }
        var points = launchPoints()
        // The fit takes the fixes up to the first above 4 m/s, or the first three moving ones
        // on a slow receiver.
        while points.filter({ $0.v >= 2 * Self.stillSpeed }).count > 3 && points.last!.v > 4
            && points[points.count - 2].v > Self.launchSpeed { points.removeLast() }
        // Two terms and the instant need three moving fixes to be fixed by them.
        guard points.filter({ $0.v >= 2 * Self.stillSpeed }).count >= 3,
              let e = LaunchFit.estimate(points, moving: 2 * Self.stillSpeed, noise: Self.sigma(last)), e.residual <= Self.launchResidual else { return nil }
        return e
    }

    /// The fixes the launch is fitted on, relative to the last fix at rest: the moving ones
    /// so far, and three at rest before the last one, or with `rest` all of those of the
    /// second before it. The launch is found on the first (a standing receiver's noise
    /// must not fit a pull from rest, and many fixes at rest would dilute its residual);
    /// it is fitted again on the second once the car is clearly away, because a build-up
    /// can begin well before the last fix below 0.5 mph and the fixes at rest before its
    /// start are what hold the fit back from an earlier one: on a 25 Hz receiver three
    /// fixes are only 0.12 s.
    private func launchPoints(rest: Bool = false) -> [(t: Double, v: Double)] {
        guard let still = lastStill, let at = recent.lastIndex(where: { $0.time == still.time }) else { return [] }
        let second = rest ? recent[..<at].firstIndex { still.time - $0.time <= Self.restBefore + 1e-6 } ?? at : at
        return recent[max(0, min(second, at - 3))...].map { (t: $0.time - still.time, v: $0.speed) }
    }

    /// How long before the last fix at rest the launch is fitted again, seconds: longer
    /// than the longest build-up the fit considers.
    static let restBefore = 1.0

    /// How closely the first moving fixes must follow a pull from rest, m/s.
    static let launchResidual = 0.3
    /// The launch is fitted again on the fixes up to this speed, m/s: far enough for a
    /// dozen fixes at 10 Hz, early enough for the acceleration to change only slowly.
    static let launchWindow = 10.0

    private mutating func start(_ estimate: LaunchFit.Estimate, _ fix: GPSFix, _ events: inout [AccelerationEvent]) {
        let launch = lastStill!.time + estimate.t0
        let sigma = Self.sigma(fix)
        let launchSigma = estimate.uncertainty
        var r = Running(launch: launch, launchSigma: launchSigma, samples: [(0, 0, 0)], speedSigma: sigma,
                        origin: settings.rollout ? nil : (0, 0), originSigma: settings.rollout ? 0 : launchSigma)
        r.anchor = lastStill!.time
        r.fitPoints = launchPoints(rest: true).filter { $0.t <= fix.time - lastStill!.time - 1e-9 || $0.t < 0 }
        // The moving fixes already seen are integrated from the launch.
        for f in recent where f.time > launch && f.time < fix.time {
            append(&r, f)
        }
        run = r
    }

    /// Once the car passes `launchWindow`, the launch is fitted again on all its fixes up to there
    /// (it was first found on the first three) and the run integrated again from it.
    private func refine(_ r: inout Running) {
        r.refined = true
        guard r.times.isEmpty, let e = LaunchFit.estimate(r.fitPoints, moving: 2 * Self.stillSpeed, noise: r.speedSigma),
              e.residual <= Self.launchResidual else { return }
        let launch = r.anchor + e.t0
        guard abs(launch - r.launch) < 0.5 else { return }
        let fixes = r.used
        r.launch = launch
        r.launchSigma = e.uncertainty
        if !settings.rollout { r.originSigma = r.launchSigma } else { r.origin = nil }
        r.samples = [(0, 0, 0)]
        r.used = []
        for f in fixes where f.time > launch { append(&r, f) }
    }

    /// One sigma of the distance integrated over the first `n` intervals of `dt` seconds.
    private static func distanceSigma(_ r: Running, upTo t: Double) -> Double {
        let n = Double(r.samples.filter { $0.t <= t }.count)
        let dt = r.samples.count > 2 ? (r.samples.last!.t - r.samples[1].t) / Double(r.samples.count - 2) : 0.1
        return r.speedSigma * dt * n.squareRoot()
    }

    private func append(_ r: inout Running, _ f: GPSFix) {
        let t = f.time - r.launch
        let p = r.samples.last!
        let d = p.d + (f.speed + p.v) / 2 * (t - p.t)
        r.samples.append((t, d, f.speed))
        r.used.append(f)
        if !r.refined && f.speed <= Self.launchWindow { r.fitPoints.append((f.time - r.anchor, f.speed)) }
    }

    private mutating func advance(_ fix: GPSFix, _ events: inout [AccelerationEvent]) {
        guard var r = run else { return }
        let t = fix.time - r.launch
        let p = r.samples.last!
        if !good(fix) {
            return end(&r, voided: true, why: "\(qualityReason(fix)) \(fixedPoint(t, digits: 1)) s into the run", events: &events)
        }
        if t - p.t > max(Self.longestGap, 1.5 * fixInterval) + 1e-6 {
            return end(&r, voided: true, why: "no fix for \(fixedPoint(t - p.t, digits: 1)) s", events: &events)
        }
        // (Beyond what the speed's own noise can do between two fixes.)
        if abs(fix.speed - p.v) > (Self.plausibleAcceleration * (t - p.t) + 4 * r.speedSigma) && r.samples.count > 1 {
            r.rejected += 1
            run = r
            if r.rejected > 3 { end(&r, voided: true, why: "speed jumps on \(r.rejected) fixes (reflections off buildings?)", events: &events) }
            return
        }
        append(&r, fix)
        if !r.refined && (fix.speed > Self.launchWindow || fix.time - r.launch > 3) { refine(&r) }
        let s = r.samples.last!
        // The rollout: timing starts once the car has moved 1 ft.
        if r.origin == nil, s.d >= Units.rollout {
            let o = Self.instant(r.samples, distance: Units.rollout)
            r.origin = (o, Units.rollout)
            // The launch barely moves it (the car is at rest then): its error is the
            // integrated distance's, over the speed there.
            r.originSigma = Self.distanceSigma(r, upTo: o) / max(Self.speed(r.samples, at: o), 0.5)
        }
        // A launch that stops again within 3 s was not one: back to armed, no run.
        if s.t < 3 && s.v < Self.stillSpeed && r.samples.count > 4 {
            run = nil
            lastStill = fix
            go(.armed, "no launch: standing again", &events)
            return
        }
        if s.v > r.top.v { r.top = (s.v, s.t) }
        if let origin = r.origin {
            for m in settings.targets where !r.times.contains(where: { $0.milestone == m }) && !r.pending.contains(where: { $0.milestone == m }) {
                if let target = m.speed, p.v < target, s.v >= target {
                    r.pending.append((m, p.t + (target - p.v) / (s.v - p.v) * (s.t - p.t)))
                } else if let target = m.distance, s.d >= target + origin.d {
                    let at = Self.instant(r.samples, distance: target + origin.d)
                    var time = MilestoneTime(milestone: m, seconds: at - origin.t, uncertainty: 0, speed: Self.speed(r.samples, at: at))
                    let dt = Self.distanceSigma(r, upTo: at) / max(time.speed, 1)
                    time.uncertainty = (dt * dt + r.originSigma * r.originSigma).squareRoot()
                    if m.hasTrap {
                        let before = Self.instant(r.samples, distance: target + origin.d - Units.trap)
                        time.trapSpeed = Units.trap / (at - before)
                    }
                    r.times.append(time)
                    events.append(.milestone(time))
                }
            }
        }
        // Speed targets once the fixes 0.3 s past them are in.
        let window = 0.3
        if let origin = r.origin {
            let due = r.pending.filter { s.t >= $0.raw + window }
            for pending in due {
                let time = Self.speedCrossing(r, pending.milestone, raw: pending.raw, window: window, origin: origin)
                r.times.append(time)
                events.append(.milestone(time))
            }
            r.pending.removeAll { s.t >= $0.raw + window }
        }
        run = r
        let done = settings.targets.allSatisfy { m in r.times.contains { $0.milestone == m } }
        let tail = r.samples.suffix(4)
        let slowing = tail.count == 4 && zip(tail, tail.dropFirst()).allSatisfy { $0.v > $1.v } && r.top.v - s.v >= Self.slowdown
        if done || slowing {
            end(&r, voided: false, why: done ? "last target reached" : "slowing down", events: &events)
        }
    }

    private static func speedCrossing(_ r: Running, _ m: Milestone, raw: Double, window: Double, origin: (t: Double, d: Double)) -> MilestoneTime {
        let target = m.speed!
        let near = r.samples.filter { abs($0.t - raw) <= window && $0.t > 0 }
        var at = raw, slope = 0.0
        if near.count >= 3 {
            let n = Double(near.count)
            let mt = near.reduce(0) { $0 + $1.t } / n, mv = near.reduce(0) { $0 + $1.v } / n
            let sxx = near.reduce(0) { $0 + ($1.t - mt) * ($1.t - mt) }
            let sxy = near.reduce(0) { $0 + ($1.t - mt) * ($1.v - mv) }
            slope = sxy / sxx
            if slope > 0 { at = mt + (target - mv) / slope }
        }
        let a = max(slope, 0.5)
        let fitSigma = r.speedSigma / a / Double(max(near.count, 1)).squareRoot()
        return MilestoneTime(milestone: m, seconds: at - origin.t, uncertainty: (fitSigma * fitSigma + r.originSigma * r.originSigma).squareRoot(),
                             speed: target)
    }

    /// Ends the run: voided with `why`, or complete.
    private mutating func end(_ r: inout Running, voided: Bool, why: String, events: inout [AccelerationEvent]) {
        let result = Self.result(r, voided: voided ? why : nil)
        last = result
        run = nil
        lastStill = nil
        go(voided ? .voided : .complete, why, &events)
        events.append(.finished(result))
    }

    private static func result(_ r: Running, voided: String?) -> AccelerationResult {
        let origin = r.origin ?? (0, 0)
        let span = r.samples.last!.t - (r.samples.dropFirst().first?.t ?? 0)
        return AccelerationResult(launch: r.launch, start: r.launch + origin.t, times: voided == nil ? r.times.sorted { $0.seconds < $1.seconds } : [],
                                  topSpeed: r.top.v, topSpeedSeconds: r.top.t - origin.t, distance: r.samples.last!.d - origin.d,
                                  voided: voided, fixRate: span > 0 ? Double(r.samples.count - 2) / span : 0)
    }

    /// The instant the integrated distance reached `distance`, speed taken as linear between
    /// fixes (so distance is quadratic within each interval).
    static func instant(_ s: [(t: Double, d: Double, v: Double)], distance: Double) -> Double {
        guard let i = s.firstIndex(where: { $0.d >= distance }), i > 0 else { return s.first?.t ?? 0 }
        let a = s[i - 1], b = s[i]
        let dt = b.t - a.t, acc = (b.v - a.v) / dt, need = distance - a.d
        if abs(acc) < 1e-9 { return a.t + need / max(a.v, 1e-9) }
        let disc = max(0, a.v * a.v + 2 * acc * need)
        return a.t + (-a.v + disc.squareRoot()) / acc
    }

    /// Speed at `t`, linear between fixes.
    static func speed(_ s: [(t: Double, d: Double, v: Double)], at t: Double) -> Double {
        guard let i = s.firstIndex(where: { $0.t >= t }), i > 0 else { return s.last?.v ?? 0 }
        let a = s[i - 1], b = s[i]
        return a.v + (b.v - a.v) * (t - a.t) / (b.t - a.t)
    }
}
