// SPDX-License-Identifier: Apache-2.0
// One erg's record: strokes joined with their power and force curve, a disconnect marked
// as a gap and never filled, malformed notifications dropped and counted.

import Rowing
import Testing

@Suite("Erg recorder")
struct ErgRecorderTests {
    /// A synthetic piece at 24 strokes a minute: stroke `n` ends its drive at 2.5·n s.
    func stroke(_ n: UInt16) -> [PM5Data] {
        let t = 2.5 * Double(n)
        let s = StrokeData(elapsed: t, distance: 10 * Double(n), driveLength: 1.4, driveTime: 0.8, recoveryTime: 1.7,
                           strokeDistance: 10, peakDriveForce: 180, averageDriveForce: 110, workPerStroke: 600, strokeCount: n)
        let a = AdditionalStrokeData(elapsed: t, strokePower: 200 + n, strokeCaloriesPerHour: 900, strokeCount: n,
                                     projectedWorkTime: 420, projectedWorkDistance: 2000)
        return [.strokeData(s), .additionalStrokeData(a)]
    }

    /// A force curve of `points` points in notifications of nine, sequence from `seq`.
    func curve(_ points: [Double], seq: UInt8) -> [PM5Data] {
        let parts = stride(from: 0, to: points.count, by: 9).map { Array(points[$0..<min($0 + 9, points.count)]) }
        return parts.enumerated().map { i, p in .forceCurve(ForceCurvePacket(packets: parts.count, sequence: seq &+ UInt8(i), points: p)) }
    }

    @Test("every stroke is kept with its power; a stroke resent after a reconnect is kept once")
    func strokesJoined() {
        var r = ErgRecorder()
        r.connected(at: 0)
        for n in 1...20 { for d in stroke(UInt16(n)) { r.receive(d, at: 2.5 * Double(n)) } }
        #expect(r.strokes.count == 20 && r.strokes.allSatisfy { $0.power == 200 + $0.data.strokeCount })
        for d in stroke(20) { r.receive(d, at: 51) }
        #expect(r.strokes.count == 20 && r.repeatedStrokes == 1)
        #expect(r.live.strokes == 20 && r.live.power == 220 && r.live.distance == 200)
    }

    @Test("a disconnect is a gap: strokes rowed meanwhile are counted from the PM5's stroke count, never invented")
    func gapMarked() {
        var r = ErgRecorder()
        r.connected(at: 0)
        for n in 1...10 { for d in stroke(UInt16(n)) { r.receive(d, at: 2.5 * Double(n)) } }
        r.disconnected(at: 26)
        #expect(!r.live.connected && r.gaps.count == 1 && r.gaps[0].missedStrokes == nil)
        r.connected(at: 40)
        // Strokes 11 to 15 were rowed out of reach; 16 onwards arrive.
        for n in 16...20 { for d in stroke(UInt16(n)) { r.receive(d, at: 2.5 * Double(n)) } }
        #expect(r.strokes.map(\.data.strokeCount) == Array(1...10) + Array(16...20))
        #expect(r.gaps == [ErgGap(from: 26, to: 40, lastStroke: 10, nextStroke: 16, lastInterval: 1, nextInterval: 1)])
        #expect(r.gaps[0].missedStrokes == 5)
    }

    @Test("malformed notifications are dropped and counted; the record goes on")
    func malformed() {
        var r = ErgRecorder()
        r.connected(at: 0)
        r.receive(characteristic: 0x0035, [1, 2, 3], at: 1)
        r.receive(characteristic: 0x0031, Array(repeating: 0, count: 20), at: 1.1)
        r.receive(characteristic: 0x0035, stroke(1)[0].encoded.bytes, at: 2.5)
        #expect(r.dropped == 2 && r.strokes.count == 1)
        #expect(r.lastDropReason == "characteristic 0x0031: 20 bytes, expected 19; dropped")
    }

    @Test("a force curve in three notifications joins its stroke; one lost notification spoils only its curve")
    func forceCurves() {
        var r = ErgRecorder()
        r.connected(at: 0)
        let points = (0..<25).map { Double($0 * 7 % 180) }
        for d in stroke(1) { r.receive(d, at: 2.5) }
        for (i, d) in curve(points, seq: 0).enumerated() { r.receive(d, at: 2.6 + 0.01 * Double(i)) }
        #expect(r.strokes[0].forceCurve == points && r.live.forceCurve == points)
        // Stroke 2's curve loses its middle notification; stroke 3's arrives whole.
        for d in stroke(2) { r.receive(d, at: 5) }
        let lossy = curve(points.reversed(), seq: 3)
        r.receive(lossy[0], at: 5.1)
        r.receive(lossy[2], at: 5.12)
        for d in stroke(3) { r.receive(d, at: 7.5) }
        for (i, d) in curve(points, seq: 6).enumerated() { r.receive(d, at: 7.6 + 0.01 * Double(i)) }
        #expect(r.strokes[1].forceCurve.isEmpty && r.strokes[2].forceCurve == points)
        #expect(r.spoiledCurves == 1)
    }

    @Test("status samples fill the live tile; the summary sent again a minute later replaces the first")
    func liveAndSummary() {
        var r = ErgRecorder()
        r.connected(at: 0)
        r.receive(.generalStatus(GeneralStatus(elapsed: 60, distance: 250, workoutType: 3, intervalType: 1, workoutState: 1,
                                               rowingState: 1, strokeState: 2, totalWorkDistance: 250, workoutDuration: 2000,
                                               workoutDurationType: 0x80, dragFactor: 118)), at: 60)
        r.receive(.additionalStatus(AdditionalStatus(elapsed: 60, speed: 4.2, strokeRate: 26, heartRate: 150, currentPace: 119,
                                                     averagePace: 120, restDistance: 0, restTime: 0, ergMachineType: 0)), at: 60.1)
        #expect(r.live.distance == 250 && r.live.dragFactor == 118 && r.live.strokeRate == 26 && r.live.heartRate == 150)
        #expect(r.live.pace == 119 && r.live.workoutState == .workoutRow && r.samples.count == 2)
        var s = WorkoutSummary(logDate: 1, logTime: 2, elapsed: 480, distance: 2000, averageStrokeRate: 27, endingHeartRate: 170,
                               averageHeartRate: 160, minimumHeartRate: 120, maximumHeartRate: 178, averageDragFactor: 118,
                               recoveryHeartRate: nil, workoutType: 3, averagePace: 120)
        r.receive(.workoutSummary(s), at: 480)
        s.recoveryHeartRate = 110
        r.receive(.workoutSummary(s), at: 540)
        #expect(r.summary?.recoveryHeartRate == 110)
        // After the summary the erg's status fills the tile and is not kept.
        r.receive(.generalStatus(GeneralStatus(elapsed: 480, distance: 2000, workoutType: 3, intervalType: 1, workoutState: 10,
                                               rowingState: 0, strokeState: 0, totalWorkDistance: 2000, workoutDuration: 2000,
                                               workoutDurationType: 0x80, dragFactor: 118)), at: 600)
        #expect(r.samples.count == 2 && r.live.workoutState == .workoutEnd)
    }

    @Test("an erg left on before anyone rows: only its latest status samples are kept")
    func idleErgBounded() {
        var r = ErgRecorder()
        r.connected(at: 0)
        for i in 0..<10_000 {
            r.receive(.generalStatus(GeneralStatus(elapsed: 0, distance: 0, workoutType: 1, intervalType: 0, workoutState: 0,
                                                   rowingState: 0, strokeState: 0, totalWorkDistance: 0, workoutDuration: 0,
                                                   workoutDurationType: 0, dragFactor: 118)), at: Double(i) / 10)
        }
        #expect(r.samples.count == ErgRecorder.samplesBeforeRowing && r.samples.last?.at == 999.9 && r.live.lastHeard == 999.9)
    }
}
