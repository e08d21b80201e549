// SPDX-License-Identifier: Apache-2.0
// Synthetic PM5 pieces with exact truth: what an erg would send for a steady piece or a
// workout of intervals, with the stretch out of reach and malformed notifications a hub
// must live through.

/// A steady piece, or a workout of intervals, on one erg, and what its PM5 sends for it.
public struct PM5Piece: Sendable {
    public var erg = 1
    /// Metres.
    public var distance = 2000.0
    /// Strokes a minute.
    public var strokeRate = 24.0
    /// Seconds per 500 m.
    public var pace = 110.0
    /// Metres per split.
    public var split = 500.0
    public var sampleRate = PM5SampleRate.halfSecond
    /// Hub seconds at which the piece starts.
    public var start = 0.0
    /// A stretch of hub seconds in which the erg is out of reach: nothing sent arrives,
    /// and the PM5 goes on counting.
    public var outOfReach: ClosedRange<Double>?
    /// Every `malformedEvery`-th stroke data is sent cut a byte short (0: none).
    public var malformedEvery = 0
    public var forceCurvePoints = 24
    /// Intervals rowed at the same pace and rate, each followed by its rest; empty: one
    /// piece of `distance` with splits of `split`. As a real PM5 reports them (Concept2's
    /// Bluetooth interface definition, and captures of real PM5s): elapsed time, distance
    /// and the stroke count start again at each interval; during a rest only status is
    /// sent, with the interval type REST and the workout state INTERVALREST, its elapsed
    /// time standing still and the rest time counting down; as the rest ends come the
    /// interval's data (0x0037, numbered from 1) and stroke data with all values 0; the
    /// total work distance (0x0031) runs on across the workout.
    public var intervals: [PM5Workout.Interval] = []
    /// Whether the end-of-workout summary is sent: real PM5s have been seen to leave it out.
    public var sendsSummary = true

    public init() {}

    /// What arrived and what was true.
    public struct Result: Sendable {
        public var events: [PM5LogEvent]
        /// Stroke counts the PM5 sent, in order, and those that arrived whole (with the
        /// interval of each, from 1).
        public var strokesSent: [UInt16]
        public var strokesArrived: [UInt16]
        public var intervalsArrived: [Int] = []
        /// Stroke data notifications sent malformed.
        public var malformed: Int
        /// The workout's end, seconds of the piece.
        public var elapsed: Double
    }

    public func events() -> Result {
        var out: [PM5LogEvent] = [.connected(t: start, erg: erg)]
        let speed = 500 / pace
        let elapsed = distance / speed
        var sent: [UInt16] = [], arrived: [UInt16] = [], arrivedIntervals: [Int] = []
        var malformed = 0
        var reachable = true
        /// Sends `data` at piece time `t`; whether it arrived (the erg was in reach).
        func emit(_ t: Double, _ data: PM5Data, cut: Bool) -> Bool {
            let hub = start + t
            let inside = outOfReach.map { $0.contains(hub) } ?? false
            if inside && reachable {
                out.append(.disconnected(t: outOfReach!.lowerBound, erg: erg))
                reachable = false
            } else if !inside && !reachable {
                out.append(.connected(t: outOfReach!.upperBound, erg: erg))
                reachable = true
            }
            guard !inside else { return false }
            var (c, bytes) = data.encoded
            if cut { bytes.removeLast() }
            out.append(.notification(t: hub, erg: erg, characteristic: c, bytes: bytes))
            return true
        }
        // The timeline: status samples, strokes with their force curves, splits, the summary;
        // each entry with the interval it belongs to.
        var timeline: [(Double, Int, PM5Data, Bool, Int)] = []
        let end: Double
        if intervals.isEmpty {
            timeline += strokes(at: 0, length: elapsed, distance: distance, interval: 1)
            var s = sampleRate.interval
            while s < elapsed {
                let d = speed * s
                timeline.append((s, 3, .generalStatus(GeneralStatus(
                    elapsed: s, distance: d, workoutType: 3, intervalType: 1, workoutState: 1, rowingState: 1, strokeState: 2,
                    totalWorkDistance: d.rounded(.down), workoutDuration: UInt32(distance), workoutDurationType: 0x80, dragFactor: 120)), false, 1))
                timeline.append((s + 0.001, 4, .additionalStatus(AdditionalStatus(
                    elapsed: s, speed: speed, strokeRate: UInt8(strokeRate), heartRate: 150, currentPace: pace, averagePace: pace,
                    restDistance: 0, restTime: 0, ergMachineType: 0)), false, 1))
                s += sampleRate.interval
            }
            var k = 1
            while Double(k) * split <= distance {
                let at = Double(k) * split / speed
                timeline.append((at, 5, .splitData(SplitData(elapsed: at, distance: Double(k) * split, splitTime: split / speed,
                                                             splitDistance: split, restTime: 0, restDistance: 0, splitType: 1,
                                                             splitNumber: UInt8(k))), false, 1))
                k += 1
            }
            timeline.append((elapsed, 3, .generalStatus(GeneralStatus(
                elapsed: elapsed, distance: distance, workoutType: 3, intervalType: 1, workoutState: PM5WorkoutState.workoutEnd.rawValue,
                rowingState: 0, strokeState: 0, totalWorkDistance: distance, workoutDuration: UInt32(distance), workoutDurationType: 0x80,
                dragFactor: 120)), false, 1))
            if sendsSummary {
                timeline.append((elapsed + 0.05, 6, .workoutSummary(WorkoutSummary(
                    logDate: 0, logTime: 0, elapsed: elapsed, distance: distance, averageStrokeRate: UInt8(strokeRate), endingHeartRate: 160,
                    averageHeartRate: 150, minimumHeartRate: 120, maximumHeartRate: 165, averageDragFactor: 120, recoveryHeartRate: nil,
                    workoutType: 3, averagePace: pace)), false, 1))
            }
            end = elapsed
        } else {
            end = intervalTimeline(&timeline, speed: speed)
        }
        timeline.sort { ($0.0, $0.1) < ($1.0, $1.1) }
        for (tt, _, data, cut, interval) in timeline {
            let delivered = emit(tt, data, cut: cut)
            if case .strokeData(let st) = data, !st.zeroed {
                sent.append(st.strokeCount)
                if delivered && cut { malformed += 1 }
                if delivered && !cut {
                    arrived.append(st.strokeCount)
                    arrivedIntervals.append(interval)
                }
            }
        }
        return Result(events: out, strokesSent: sent, strokesArrived: arrived, intervalsArrived: arrivedIntervals, malformed: malformed,
                      elapsed: end)
    }

    /// The strokes of a stretch of work `length` seconds long that starts at piece time
    /// `at`, with their force curves: the PM5's elapsed time and stroke count start from 0
    /// with it.
    private func strokes(at: Double, length: Double, distance: Double, interval: Int) -> [(Double, Int, PM5Data, Bool, Int)] {
        let speed = 500 / pace
        let period = 60 / strokeRate
        var timeline: [(Double, Int, PM5Data, Bool, Int)] = []
        var n: UInt16 = 0
        var t = period
        while t < length {
            n += 1
            let d = speed * t
            let stroke = StrokeData(elapsed: t, distance: d, driveLength: 1.45, driveTime: 0.75, recoveryTime: period - 0.75,
                                    strokeDistance: speed * period, peakDriveForce: 190, averageDriveForce: 115,
                                    workPerStroke: 2.8 * speed * speed * speed * period, strokeCount: n)
            let cut = malformedEvery > 0 && Int(n) % malformedEvery == 0
            timeline.append((at + t, 0, .strokeData(stroke), cut, interval))
            timeline.append((at + t + 0.01, 1, .additionalStrokeData(AdditionalStrokeData(
                elapsed: t, strokePower: UInt16((2.8 * speed * speed * speed).rounded()), strokeCaloriesPerHour: 900, strokeCount: n,
                projectedWorkTime: length, projectedWorkDistance: distance)), false, interval))
            // The drive's force: a hump from the catch to the finish, 190 lbf at its top.
            let points = (0..<forceCurvePoints).map { i -> Double in
                let x = Double(i) / Double(forceCurvePoints - 1)
                return (190 * 4 * x * (1 - x)).rounded()
            }
            let parts = stride(from: 0, to: points.count, by: ForceCurvePacket.maxPoints).map { Array(points[$0..<min($0 + ForceCurvePacket.maxPoints, points.count)]) }
            for (k, p) in parts.enumerated() {
                timeline.append((at + t + 0.02 + 0.01 * Double(k), 2, .forceCurve(ForceCurvePacket(
                    packets: parts.count, sequence: UInt8(truncatingIfNeeded: Int(n) * parts.count + k), points: p)), false, interval))
            }
            t += period
        }
            return timeline
    }

    /// The status, interval data and summary of a workout of intervals, added to
    /// `timeline`, with each interval's strokes from `strokes`; the piece time of its end.
    private func intervalTimeline(_ timeline: inout [(Double, Int, PM5Data, Bool, Int)], speed: Double) -> Double {
        let byDistance = intervals.allSatisfy { if case .metres = $0.work { true } else { false } }
        let byTime = intervals.allSatisfy { if case .seconds = $0.work { true } else { false } }
        // FIXEDDIST_INTERVAL, FIXEDTIME_INTERVAL or VARIABLE_INTERVAL.
        let workoutType: UInt8 = byDistance ? 7 : byTime ? 6 : 8
        let step = sampleRate.interval
        var at = 0.0, done = 0.0, work = 0.0
        for (i, v) in intervals.enumerated() {
            let n = i + 1
            let metres: Bool, length: Double, distance: Double, duration: UInt32
            switch v.work {
            case .metres(let m): (metres, length, distance, duration) = (true, Double(m) / speed, Double(m), UInt32(m))
            case .seconds(let s): (metres, length, distance, duration) = (false, s, speed * s, UInt32((s * 100).rounded()))
            }
            timeline += strokes(at: at, length: length, distance: distance, interval: n)
            func status(_ t: Double, elapsed: Double, distance d: Double, state: PM5WorkoutState, rest: Double?) {
                timeline.append((t, 3, .generalStatus(GeneralStatus(
                    elapsed: elapsed, distance: d, workoutType: workoutType, intervalType: rest != nil ? 2 : metres ? 1 : 0,
                    workoutState: state.rawValue, rowingState: rest != nil ? 0 : 1, strokeState: rest != nil ? 0 : 2,
                    totalWorkDistance: (done + d).rounded(.down), workoutDuration: duration, workoutDurationType: metres ? 0x80 : 0,
                    dragFactor: 120)), false, n))
                timeline.append((t + 0.001, 4, .additionalStatus(AdditionalStatus(
                    elapsed: elapsed, speed: rest != nil ? 0 : speed, strokeRate: rest != nil ? 0 : UInt8(strokeRate),
                    heartRate: rest != nil ? 130 : 150, currentPace: rest != nil ? 0 : pace, averagePace: pace, restDistance: 0,
                    restTime: rest ?? 0, ergMachineType: 0)), false, n))
                // The interval count: those before this one while it is rowed, this one too in its rest.
                timeline.append((t + 0.002, 4, .additionalStatus2(AdditionalStatus2(
                    elapsed: elapsed, intervalCount: UInt8(truncatingIfNeeded: rest != nil ? n : i), averagePower: 0, totalCalories: 0,
                    splitAveragePace: pace, splitAveragePower: 0, splitAverageCaloriesPerHour: 0, lastSplitTime: 0,
                    lastSplitDistance: 0)), false, n))
            }
            var s = step
            while s < length {
                status(at + s, elapsed: s, distance: speed * s, state: metres ? .intervalWorkDistance : .intervalWorkTime, rest: nil)
                s += step
            }
            // The rest: the elapsed time and distance stand still while the rest counts down.
            let rest = Double(v.restSeconds)
            var r = 0.0
            while r < rest {
                status(at + length + r, elapsed: length, distance: distance, state: .intervalRest, rest: rest - r)
                r += step
            }
            at += length + rest
            done += distance
            work += length
            let last = n == intervals.count
            if last {
                timeline.append((at, 3, .generalStatus(GeneralStatus(
                    elapsed: length, distance: distance, workoutType: workoutType, intervalType: metres ? 1 : 0,
                    workoutState: PM5WorkoutState.workoutEnd.rawValue, rowingState: 0, strokeState: 0, totalWorkDistance: done,
                    workoutDuration: duration, workoutDurationType: metres ? 0x80 : 0, dragFactor: 120)), false, n))
            }
            // As the rest ends (or the workout does): the interval's data, then, before the
            // next interval, stroke data with all values 0.
            timeline.append((at + 0.001, 5, .splitData(SplitData(elapsed: length, distance: distance, splitTime: length,
                                                                splitDistance: distance, restTime: rest, restDistance: 0,
                                                                splitType: metres ? 1 : 0, splitNumber: UInt8(truncatingIfNeeded: n))), false, n))
            if !last {
                timeline.append((at + 0.002, 0, .strokeData(StrokeData(elapsed: 0, distance: 0, driveLength: 0, driveTime: 0, recoveryTime: 0,
                                                                       strokeDistance: 0, peakDriveForce: 0, averageDriveForce: 0,
                                                                       workPerStroke: 0, strokeCount: 0)), false, n + 1))
                timeline.append((at + 0.003, 1, .additionalStrokeData(AdditionalStrokeData(
                    elapsed: 0, strokePower: 0, strokeCaloriesPerHour: 0, strokeCount: 0, projectedWorkTime: 0,
                    projectedWorkDistance: 0)), false, n + 1))
            }
        }
        if sendsSummary {
            // Work only: the rests' time is not in it (as in Concept2's logbook).
            timeline.append((at + 0.05, 6, .workoutSummary(WorkoutSummary(
                logDate: 0, logTime: 0, elapsed: work, distance: done, averageStrokeRate: UInt8(strokeRate), endingHeartRate: 160,
                averageHeartRate: 150, minimumHeartRate: 120, maximumHeartRate: 165, averageDragFactor: 120, recoveryHeartRate: nil,
                workoutType: workoutType, averagePace: pace)), false, intervals.count))
        }
        return at
    }
}
