// SPDX-License-Identifier: Apache-2.0
// Synthetic PM5 pieces with exact truth: what an erg would send for a steady piece, with
// the stretch out of reach and malformed notifications a hub must live through.

/// A steady piece on one erg, and what its PM5 sends for it.
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

    public init() {}

    /// What arrived and what was true.
    public struct Result: Sendable {
        public var events: [PM5LogEvent]
        /// Stroke counts the PM5 sent, in order, and those that arrived whole.
        public var strokesSent: [UInt16]
        public var strokesArrived: [UInt16]
        /// Stroke data notifications sent malformed.
        public var malformed: Int
        /// The workout's end, seconds of the piece.
        public var elapsed: Double
    }

    public func events() -> Result {
        var out: [PM5LogEvent] = [.connected(t: start, erg: erg)]
        let speed = 500 / pace
        let period = 60 / strokeRate
        let elapsed = distance / speed
        var sent: [UInt16] = [], arrived: [UInt16] = []
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
        // The timeline: status samples, strokes with their force curves, splits, the summary.
        var timeline: [(Double, Int, PM5Data, Bool)] = []
        var n: UInt16 = 0
        var t = period
        while t < elapsed {
            n += 1
            let d = speed * t
            let stroke = StrokeData(elapsed: t, distance: d, driveLength: 1.45, driveTime: 0.75, recoveryTime: period - 0.75,
                                    strokeDistance: speed * period, peakDriveForce: 190, averageDriveForce: 115,
                                    workPerStroke: 2.8 * speed * speed * speed * period, strokeCount: n)
            let cut = malformedEvery > 0 && Int(n) % malformedEvery == 0
            timeline.append((t, 0, .strokeData(stroke), cut))
            timeline.append((t + 0.01, 1, .additionalStrokeData(AdditionalStrokeData(
                elapsed: t, strokePower: UInt16((2.8 * speed * speed * speed).rounded()), strokeCaloriesPerHour: 900, strokeCount: n,
                projectedWorkTime: elapsed, projectedWorkDistance: distance)), false))
            // The drive's force: a hump from the catch to the finish, 190 lbf at its top.
            let points = (0..<forceCurvePoints).map { i -> Double in
                let x = Double(i) / Double(forceCurvePoints - 1)
                return (190 * 4 * x * (1 - x)).rounded()
            }
            let parts = stride(from: 0, to: points.count, by: ForceCurvePacket.maxPoints).map { Array(points[$0..<min($0 + ForceCurvePacket.maxPoints, points.count)]) }
            for (k, p) in parts.enumerated() {
                timeline.append((t + 0.02 + 0.01 * Double(k), 2, .forceCurve(ForceCurvePacket(
                    packets: parts.count, sequence: UInt8(truncatingIfNeeded: Int(n) * parts.count + k), points: p)), false))
            }
            t += period
        }
        var s = sampleRate.interval
        while s < elapsed {
            let d = speed * s
            timeline.append((s, 3, .generalStatus(GeneralStatus(
                elapsed: s, distance: d, workoutType: 3, intervalType: 1, workoutState: 1, rowingState: 1, strokeState: 2,
                totalWorkDistance: d.rounded(.down), workoutDuration: UInt32(distance), workoutDurationType: 0x80, dragFactor: 120)), false))
            timeline.append((s + 0.001, 4, .additionalStatus(AdditionalStatus(
                elapsed: s, speed: speed, strokeRate: UInt8(strokeRate), heartRate: 150, currentPace: pace, averagePace: pace,
                restDistance: 0, restTime: 0, ergMachineType: 0)), false))
            s += sampleRate.interval
        }
        var k = 1
        while Double(k) * split <= distance {
            let at = Double(k) * split / speed
            timeline.append((at, 5, .splitData(SplitData(elapsed: at, distance: Double(k) * split, splitTime: split / speed,
                                                         splitDistance: split, restTime: 0, restDistance: 0, splitType: 1,
                                                         splitNumber: UInt8(k))), false))
            k += 1
        }
        timeline.append((elapsed, 3, .generalStatus(GeneralStatus(
            elapsed: elapsed, distance: distance, workoutType: 3, intervalType: 1, workoutState: PM5WorkoutState.workoutEnd.rawValue,
            rowingState: 0, strokeState: 0, totalWorkDistance: distance, workoutDuration: UInt32(distance), workoutDurationType: 0x80,
            dragFactor: 120)), false))
        timeline.append((elapsed + 0.05, 6, .workoutSummary(WorkoutSummary(
            logDate: 0, logTime: 0, elapsed: elapsed, distance: distance, averageStrokeRate: UInt8(strokeRate), endingHeartRate: 160,
            averageHeartRate: 150, minimumHeartRate: 120, maximumHeartRate: 165, averageDragFactor: 120, recoveryHeartRate: nil,
            workoutType: 3, averagePace: pace)), false))
        timeline.sort { ($0.0, $0.1) < ($1.0, $1.1) }
        for (tt, _, data, cut) in timeline {
            let delivered = emit(tt, data, cut: cut)
            if case .strokeData(let st) = data {
                sent.append(st.strokeCount)
                if delivered && cut { malformed += 1 }
                if delivered && !cut { arrived.append(st.strokeCount) }
            }
        }
        return Result(events: out, strokesSent: sent, strokesArrived: arrived, malformed: malformed, elapsed: elapsed)
    }
}
