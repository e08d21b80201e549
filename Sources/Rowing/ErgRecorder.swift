// SPDX-License-Identifier: Apache-2.0
// One erg's session as its notifications arrive: the live view, every stroke, splits,
// the summary, and the gaps while it was out of reach.

/// A stroke as recorded: the PM5's stroke data joined with its power and calories (sent
/// in a second notification with the same stroke count) and its force curve.
public struct StrokeRecord: Sendable, Hashable {
    /// The host's instant of the stroke data's arrival, seconds on the recorder's clock.
    public var receivedAt: Double
    public var data: StrokeData
    /// The interval it was rowed in, from 1; 1 throughout a piece without intervals. The
    /// PM5's elapsed time, distance and stroke count start again at each interval.
    public var interval = 1
    /// Watts; nil until the additional stroke data came.
    public var power: UInt16?
    public var caloriesPerHour: UInt16?
    /// Pounds of force along the drive; empty when none came whole.
    public var forceCurve: [Double] = []
}

/// A stretch in which the erg was out of reach. Strokes the PM5 counted meanwhile are
/// not invented: `missedStrokes` says how many there were, once the next stroke shows it.
public struct ErgGap: Sendable, Hashable, Codable {
    /// Seconds on the recorder's clock (Unix seconds as the store gives them back).
    public var from: Double
    public var to: Double?
    /// The last stroke count heard before the gap.
    public var lastStroke: UInt16?
    /// The first stroke count heard after it.
    public var nextStroke: UInt16?
    /// The intervals of those strokes (from 1).
    public var lastInterval: Int?
    public var nextInterval: Int?
    public init(from: Double, to: Double?, lastStroke: UInt16?, nextStroke: UInt16?, lastInterval: Int? = nil, nextInterval: Int? = nil) {
        self.from = from
        self.to = to
        self.lastStroke = lastStroke
        self.nextStroke = nextStroke
        self.lastInterval = lastInterval
        self.nextInterval = nextInterval
    }

    /// Strokes rowed in the gap, counted by the PM5 and never received; nil until known,
    /// and unknown when the gap spans an interval's end (the PM5 counts each interval's
    /// strokes from 1 and does not say how many the last one had).
    public var missedStrokes: Int? {
        guard let a = lastStroke, let b = nextStroke, b > a, lastInterval == nextInterval else { return nil }
        return Int(b - a) - 1
    }
}

/// What a coach's tile shows, updated as notifications arrive.
public struct ErgLive: Sendable, Hashable {
    public var elapsed: Double?
    /// Metres.
    public var distance: Double?
    /// Seconds per 500 m.
    public var pace: Double?
    public var strokeRate: UInt8?
    /// Watts, of the last stroke.
    public var power: UInt16?
    public var heartRate: UInt8?
    public var dragFactor: UInt8?
    public var workoutState: PM5WorkoutState?
    /// The interval under way (from 1) in a workout of intervals; nil in any other.
    public var interval: Int?
    /// Metres from the workout's start: in a workout of intervals, those of the intervals
    /// before this one and this one's `distance`; `distance` in any other.
    public var workoutDistance: Double?
    public var strokes: Int = 0
    public var forceCurve: [Double] = []
    /// Seconds on the recorder's clock of the last notification.
    public var lastHeard: Double?
    public var connected = false
}

/// Records one erg's notifications. Times passed in are the host's, in seconds on any
/// monotonic clock; the PM5's own elapsed time is kept in each record.
public struct ErgRecorder: Sendable {
    public private(set) var live = ErgLive()
    public private(set) var strokes: [StrokeRecord] = []
    public private(set) var splits: [SplitData] = []
    public private(set) var splitAverages: [AdditionalSplitData] = []
    public private(set) var summary: WorkoutSummary?
    public private(set) var summaryMore: AdditionalWorkoutSummary?
    public private(set) var gaps: [ErgGap] = []
    /// Status samples kept (general and additional status), in arrival order: the piece's.
    /// Before its first stroke only the latest `samplesBeforeRowing` are kept, and none
    /// after its summary: a PM5 left on sends twenty a second, which would otherwise fill
    /// the hub's memory over a day.
    public private(set) var samples: [(at: Double, data: PM5Data, interval: Int)] = []
    public static let samplesBeforeRowing = 50
    /// Notifications dropped as malformed, and why the last one was.
    public private(set) var dropped = 0
    public private(set) var lastDropReason: String?
    /// Stroke data repeated with a stroke count already recorded (a PM5 resends the last
    /// stroke after a reconnect): kept once.
    public private(set) var repeatedStrokes = 0
    /// A stroke count lower than the last outside a workout of intervals: a new workout
    /// began on the erg.
    public private(set) var restarts = 0
    /// The stroke data with all values 0 that a PM5 sends as a rest ends: not strokes.
    public private(set) var zeroedStrokes = 0
    /// The PM5's workout type as its last general status gave it.
    public private(set) var workoutType: UInt8?
    /// The interval being rowed, from 1.
    public private(set) var interval = 1
    /// Recorder seconds of the first general status, since the last stroke, saying the
    /// workout was over (ended, terminated, logged, rearmed, or waiting to begin after
    /// strokes): a piece whose summary never comes is closed some time after it.
    public private(set) var endedAt: Double?
    /// The interval the PM5 says is under way, at least: the one after the last interval
    /// number it sent (0x0037, sent as a rest ends), or its interval count (0x0033, which
    /// counts the intervals before the one being rowed) while it rows.
    private var intervalHint = 1
    /// Since the last stroke the PM5 said the interval ended: it rested, sent the
    /// interval's data, or sent the zeroed stroke data of a rest's end.
    private var intervalEnded = false
    /// The furthest distance and the longest elapsed time heard in each interval (outside
    /// its rest), from its strokes and its status.
    private var furthest: [Int: Double] = [:]
    private var longest: [Int: Double] = [:]

    /// Force curves dropped because a notification of theirs was lost.
    public private(set) var spoiledCurves = 0

    private var curve: [Double] = []
    private var curveExpected = 0
    private var curveParts = 0
    private var curveNext: UInt8 = 0
    private var curveSpoiled = false
    private var curveLastAt: Double?

    public init() {}

    /// The erg connected (or came back).
    public mutating func connected(at t: Double) {
        live.connected = true
        if var g = gaps.last, g.to == nil {
            g.to = t
            gaps[gaps.count - 1] = g
        }
    }

    /// The erg went out of reach.
    public mutating func disconnected(at t: Double) {
        guard live.connected else { return }
        live.connected = false
        gaps.append(ErgGap(from: t, to: nil, lastStroke: strokes.last?.data.strokeCount, nextStroke: nil, lastInterval: strokes.last?.interval))
        // A force curve cut off by the gap is not finished from later packets.
        resetCurve()
    }

    /// A notification's raw bytes from characteristic `id`: decoded strictly, dropped and
    /// counted when malformed.
    public mutating func receive(characteristic id: UInt16, _ bytes: [UInt8], at t: Double) {
        do {
            receive(try PM5Data.decode(characteristic: id, bytes), at: t)
        } catch {
            dropped += 1
            lastDropReason = error.description
        }
    }

    /// A decoded notification.
    public mutating func receive(_ data: PM5Data, at t: Double) {
        live.lastHeard = t
        switch data {
        case .generalStatus(let s):
            live.elapsed = s.elapsed
            live.distance = s.distance
            live.dragFactor = s.dragFactor
            live.workoutState = s.state
            workoutType = s.workoutType
            if intervals, s.state == .intervalRest || s.state == .intervalWorkTimeToRest || s.state == .intervalWorkDistanceToRest {
                intervalEnded = true
            }
            // Why the sample's interval: the next interval's status comes before its
            // first stroke, its distance already counted from 0.
            let k = sampleInterval
            live.interval = intervals ? k : nil
            if s.state != .intervalRest { heard(elapsed: s.elapsed, distance: s.distance, in: k) }
            live.workoutDistance = intervals ? distance(before: k) + s.distance : s.distance
            keep(t, data)
            // Why not cleared by the states that follow: the PM5 goes on from the end to
            // logged, rearmed and waiting; only a stroke says rowing went on.
            if let state = s.state, state.finished || state == .rearm || (state == .waitToBegin && !strokes.isEmpty), endedAt == nil {
                endedAt = t
            }
        case .additionalStatus(let s):
            keep(t, data)
            live.elapsed = s.elapsed
            live.strokeRate = s.strokeRate
            live.heartRate = s.heartRate
            if s.currentPace > 0 { live.pace = s.currentPace }
        case .additionalStatus2(let s):
            keep(t, data)
            // Why only while rowing: during a rest the count already includes the interval
            // to come, and the first rest frame may still carry the old one.
            if intervals, live.workoutState == .intervalWorkTime || live.workoutState == .intervalWorkDistance {
                intervalHint = max(intervalHint, Int(s.intervalCount) + 1)
            }
        case .strokeData(let s):
            stroke(s, at: t)
        case .additionalStrokeData(let s):
            // Why: the PM5 sends it after the stroke data of the same stroke count.
            if let i = strokes.lastIndex(where: { $0.data.strokeCount == s.strokeCount }) {
                strokes[i].power = s.strokePower
                strokes[i].caloriesPerHour = s.strokeCaloriesPerHour
                if i == strokes.count - 1 { live.power = s.strokePower }
            }
        case .splitData(let s):
            splits.append(s)
            if intervals {
                intervalHint = max(intervalHint, Int(s.splitNumber) + 1)
                intervalEnded = true
            }
        case .additionalSplitData(let s):
            splitAverages.append(s)
        case .workoutSummary(let s):
            // Why: the PM5 sends the summary again a minute later with the recovery heart
            // rate; the newer one replaces the first.
            summary = s
            // The piece is over at its own figures, whatever the last sample said.
            live.elapsed = s.elapsed
            live.distance = s.distance
            live.workoutDistance = s.distance
            if !(live.workoutState?.finished ?? false) { live.workoutState = .workoutEnd }
        case .additionalWorkoutSummary(let s):
            summaryMore = s
        case .forceCurve(let p):
            forceCurvePacket(p, at: t)
        }
    }

    private mutating func keep(_ t: Double, _ data: PM5Data) {
        guard summary == nil else { return }
        if strokes.isEmpty && samples.count >= Self.samplesBeforeRowing { samples.removeFirst(samples.count - Self.samplesBeforeRowing + 1) }
        samples.append((t, data, sampleInterval))
    }

    /// The interval a status sample is of: a rest's is the interval just rowed (its
    /// elapsed time stands at that interval's end); once the PM5 rows again after the
    /// interval ended, the next, before its first stroke comes.
    private var sampleInterval: Int {
        guard intervals, intervalEnded || intervalHint > interval, let state = live.workoutState else { return interval }
        switch state {
        case .intervalWorkTime, .intervalWorkDistance, .intervalRestEndToWorkTime, .intervalRestEndToWorkDistance, .workoutRow:
            return strokes.isEmpty ? max(interval, intervalHint) : max(interval + 1, intervalHint)
        default:
            return interval
        }
    }

    /// Whether the workout is one of intervals, by the PM5's last general status.
    public var intervals: Bool { workoutType.map(PM5WorkoutType.isIntervals) ?? false }

    /// Whether stroke data `s` begins a new piece rather than going on with this one: a
    /// stroke after the summary, or a stroke count that starts again, unless the workout
    /// is one of intervals still under way (each interval counts its strokes from 1).
    public func beginsNewPiece(_ s: StrokeData) -> Bool {
        guard !s.zeroed, let last = strokes.last else { return false }
        // The last stroke sent again (after a reconnect) goes on with this piece.
        if last.data.strokeCount == s.strokeCount && last.data.elapsed == s.elapsed { return false }
        if summary != nil { return true }
        guard s.strokeCount < last.data.strokeCount else { return false }
        return !(intervals && endedAt == nil)
    }

    /// Whether `s` is the first stroke of the next interval in a workout of intervals: the
    /// PM5 said the interval ended (and `s` is not the last stroke sent again), or its
    /// stroke count or elapsed time starts again where no stroke of this interval was.
    private func opensInterval(_ s: StrokeData) -> Bool {
        guard intervals, let last = strokes.last else { return false }
        let again = last.data.strokeCount == s.strokeCount && last.data.elapsed == s.elapsed
        if (intervalEnded || intervalHint > interval) && !again { return true }
        return (s.strokeCount < last.data.strokeCount || s.elapsed < last.data.elapsed) && !inThisInterval(s)
    }

    /// Why within the interval: every interval counts from 1, and steady intervals can put
    /// a stroke at the same count and elapsed time as one of an earlier interval.
    private func inThisInterval(_ s: StrokeData) -> Bool {
        strokes.reversed().prefix { $0.interval == interval }.contains { $0.data.strokeCount == s.strokeCount && $0.data.elapsed == s.elapsed }
    }

    /// The workout's figures from what was recorded, for a workout that ended without the
    /// PM5's summary (real PM5s have been seen to leave it out): each interval's time and
    /// distance from its data (0x0037) where it came, else from the furthest stroke or
    /// status sample of it; the mean stroke rate and drag factor of the status while
    /// rowing, and its heart rates. Nil before any stroke. The log date and time are 0.
    public func recordedSummary() -> WorkoutSummary? {
        guard let last = strokes.last else { return nil }
        var time = 0.0, distance = 0.0
        for k in 1...(intervals ? max(last.interval, interval) : 1) {
            let e = extent(of: k)
            time += e.time
            distance += e.distance
        }
        var rates: [Double] = [], drags: [Double] = [], hearts: [UInt8] = []
        for (_, data, _) in samples {
            switch data {
            case .additionalStatus(let a) where a.strokeRate > 0:
                rates.append(Double(a.strokeRate))
                if let h = a.heartRate { hearts.append(h) }
            case .generalStatus(let g) where g.dragFactor > 0 && g.rowing:
                drags.append(Double(g.dragFactor))
            default:
                continue
            }
        }
        func mean(_ v: [Double]) -> UInt8 { v.isEmpty ? 0 : UInt8(clamping: Int((v.reduce(0, +) / Double(v.count)).rounded())) }
        let heart = hearts.isEmpty ? nil : UInt8(clamping: Int((Double(hearts.reduce(0) { $0 + Int($1) }) / Double(hearts.count)).rounded()))
        return WorkoutSummary(logDate: 0, logTime: 0, elapsed: time, distance: distance, averageStrokeRate: mean(rates),
                              endingHeartRate: hearts.last, averageHeartRate: heart, minimumHeartRate: hearts.min(),
                              maximumHeartRate: hearts.max(), averageDragFactor: mean(drags), workoutType: workoutType ?? 0,
                              averagePace: distance > 0 ? time / distance * 500 : 0)
    }

    /// Whether stroke data `s` would be recorded as a stroke of its own: not the zeroed
    /// data of a rest's end, nor a stroke sent again.
    public func isNewStroke(_ s: StrokeData) -> Bool { !s.zeroed && !isRepeat(s) }

    /// A stroke already recorded, sent again (the PM5 resends its last after a reconnect).
    private func isRepeat(_ s: StrokeData) -> Bool {
        guard let last = strokes.last, !opensInterval(s) else { return false }
        return last.data.strokeCount == s.strokeCount || inThisInterval(s)
    }

    private mutating func stroke(_ s: StrokeData, at t: Double) {
        // Why: as a rest ends the PM5 sends stroke data with every value 0.
        if s.zeroed {
            zeroedStrokes += 1
            return
        }
        if let last = strokes.last {
            if isRepeat(s) {
                repeatedStrokes += 1
                return
            }
            // The PM5's interval number, when it came, says which interval is next: a gap
            // may have swallowed a whole one.
            if opensInterval(s) {
                interval = max(interval + 1, intervalHint)
                live.interval = interval
            } else if s.strokeCount < last.data.strokeCount {
                restarts += 1
            }
        } else if intervals {
            // The hub came in partway through the workout.
            interval = intervalHint
            live.interval = interval
        }
        if var g = gaps.last, g.nextStroke == nil {
            g.nextStroke = s.strokeCount
            g.nextInterval = interval
            gaps[gaps.count - 1] = g
        }
        strokes.append(StrokeRecord(receivedAt: t, data: s, interval: interval))
        intervalEnded = false
        endedAt = nil
        live.strokes = strokes.count
        live.distance = s.distance
        live.elapsed = s.elapsed
        heard(elapsed: s.elapsed, distance: s.distance, in: interval)
        live.workoutDistance = intervals ? distance(before: interval) + s.distance : s.distance
    }

    private mutating func heard(elapsed: Double, distance: Double, in k: Int) {
        furthest[k] = max(furthest[k] ?? 0, distance)
        longest[k] = max(longest[k] ?? 0, elapsed)
    }

    /// Seconds and metres of interval `k` (the whole piece outside a workout of
    /// intervals): in a workout of intervals its own data (0x0037) where it came, else the
    /// longest and furthest heard in it.
    private func extent(of k: Int) -> (time: Double, distance: Double) {
        if intervals, let data = splits.last(where: { Int($0.splitNumber) == k }) { return (data.splitTime, data.splitDistance) }
        return (longest[k] ?? 0, furthest[k] ?? 0)
    }

    /// Metres of the intervals before interval `k`.
    public func distance(before k: Int) -> Double {
        guard k > 1 else { return 0 }
        return (1..<k).reduce(0) { $0 + extent(of: $1).distance }
    }

    private mutating func forceCurvePacket(_ p: ForceCurvePacket, at t: Double) {
        // Why: a curve comes in `packets` notifications one after another, sent together
        // after the drive, with running sequence numbers. A pause longer than any burst
        // starts a new curve; a packet lost or out of order spoils the curve it is in,
        // which is dropped rather than patched.
        if let last = curveLastAt, t - last > Self.curveBurst { resetCurve() }
        if curveParts > 0 && (p.packets != curveExpected || curveNext != p.sequence) { curveSpoiled = true }
        curveLastAt = t
        curveExpected = p.packets
        curveNext = p.sequence &+ 1
        curve += p.points
        curveParts += 1
        guard curveParts >= curveExpected else { return }
        if curveSpoiled {
            spoiledCurves += 1
        } else {
            live.forceCurve = curve
            if let i = strokes.indices.last { strokes[i].forceCurve = curve }
        }
        resetCurve()
    }

    private mutating func resetCurve() {
        if curveParts > 0 && curveParts < curveExpected { spoiledCurves += 1 }
        curve = []
        curveParts = 0
        curveSpoiled = false
        curveLastAt = nil
    }

    /// Longest pause between two notifications of one force curve, seconds. Why 0.25 s:
    /// the PM5 sends a curve's notifications back to back after the drive, while strokes
    /// are a second or more apart even at a sprint's 50 strokes a minute.
    static let curveBurst = 0.25
}
