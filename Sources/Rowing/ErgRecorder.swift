// SPDX-License-Identifier: Apache-2.0
// One erg's session as its notifications arrive: the live view, every stroke, splits,
// the summary, and the gaps while it was out of reach.

/// A stroke as recorded: the PM5's stroke data joined with its power and calories (sent
/// in a second notification with the same stroke count) and its force curve.
public struct StrokeRecord: Sendable, Hashable {
    /// The host's instant of the stroke data's arrival, seconds on the recorder's clock.
    public var receivedAt: Double
    public var data: StrokeData
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
    public init(from: Double, to: Double?, lastStroke: UInt16?, nextStroke: UInt16?) {
        self.from = from
        self.to = to
        self.lastStroke = lastStroke
        self.nextStroke = nextStroke
    }

    /// Strokes rowed in the gap, counted by the PM5 and never received; nil until known.
    public var missedStrokes: Int? {
        guard let a = lastStroke, let b = nextStroke, b > a else { return nil }
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
    public private(set) var samples: [(at: Double, data: PM5Data)] = []
    public static let samplesBeforeRowing = 50
    /// Notifications dropped as malformed, and why the last one was.
    public private(set) var dropped = 0
    public private(set) var lastDropReason: String?
    /// Stroke data repeated with a stroke count already recorded (a PM5 resends the last
    /// stroke after a reconnect): kept once.
    public private(set) var repeatedStrokes = 0
    /// A stroke count lower than the last: a new workout began on the erg.
    public private(set) var restarts = 0

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
        gaps.append(ErgGap(from: t, to: nil, lastStroke: strokes.last?.data.strokeCount, nextStroke: nil))
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
            keep(t, data)
            live.elapsed = s.elapsed
            live.distance = s.distance
            live.dragFactor = s.dragFactor
            live.workoutState = s.state
        case .additionalStatus(let s):
            keep(t, data)
            live.elapsed = s.elapsed
            live.strokeRate = s.strokeRate
            live.heartRate = s.heartRate
            if s.currentPace > 0 { live.pace = s.currentPace }
        case .additionalStatus2:
            keep(t, data)
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
        case .additionalSplitData(let s):
            splitAverages.append(s)
        case .workoutSummary(let s):
            // Why: the PM5 sends the summary again a minute later with the recovery heart
            // rate; the newer one replaces the first.
            summary = s
            // The piece is over at its own figures, whatever the last sample said.
            live.elapsed = s.elapsed
            live.distance = s.distance
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
        samples.append((t, data))
    }

    private mutating func stroke(_ s: StrokeData, at t: Double) {
        if let last = strokes.last?.data.strokeCount {
            if s.strokeCount == last || strokes.contains(where: { $0.data.strokeCount == s.strokeCount && $0.data.elapsed == s.elapsed }) {
                repeatedStrokes += 1
                return
            }
            if s.strokeCount < last { restarts += 1 }
        }
        if var g = gaps.last, g.nextStroke == nil {
            g.nextStroke = s.strokeCount
            gaps[gaps.count - 1] = g
        }
        strokes.append(StrokeRecord(receivedAt: t, data: s))
        live.strokes = strokes.count
        live.distance = s.distance
        live.elapsed = s.elapsed
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
