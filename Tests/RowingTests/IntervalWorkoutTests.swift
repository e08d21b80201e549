// SPDX-License-Identifier: Apache-2.0
// Workouts of intervals as a real PM5 reports them: each interval starts its elapsed time,
// distance and stroke count again, rests send only status, and the rest's end brings the
// interval's data and stroke data with all values 0. One piece throughout, each stroke
// with its interval.

import Rowing
import Testing

@Suite("Interval workouts")
struct IntervalWorkoutTests {
    /// 4 × 500 m with a minute's rest, at 24 strokes a minute and 1:50/500 m.
    static func fourBy500(outOfReach: ClosedRange<Double>? = nil, summary: Bool = true) -> PM5Piece {
        var p = PM5Piece()
        p.intervals = Array(repeating: PM5Workout.Interval(.metres(500), restSeconds: 60), count: 4)
        p.outOfReach = outOfReach
        p.sendsSummary = summary
        return p
    }

    /// Plays `piece` into a recorder, checking at each stroke that it would not begin a new piece.
    static func record(_ piece: PM5Piece) -> (ErgRecorder, PM5Piece.Result, newPieces: Int) {
        let truth = piece.events()
        var r = ErgRecorder()
        var newPieces = 0
        for e in truth.events {
            switch e {
            case .connected(let t, _): r.connected(at: t)
            case .disconnected(let t, _): r.disconnected(at: t)
            case .notification(let t, _, let c, let bytes):
                if case .strokeData(let s)? = try? PM5Data.decode(characteristic: c, bytes), r.beginsNewPiece(s) { newPieces += 1 }
                r.receive(characteristic: c, bytes, at: t)
            }
        }
        return (r, truth, newPieces)
    }

    @Test("4 × 500 m / 1:00 rest: one piece, every stroke with its interval, no restart, the zeroed stroke data not kept")
    func oneWorkout() {
        let (r, truth, newPieces) = Self.record(Self.fourBy500())
        #expect(newPieces == 0 && r.restarts == 0)
        #expect(r.strokes.map(\.data.strokeCount) == truth.strokesArrived)
        #expect(r.strokes.map(\.interval) == truth.intervalsArrived)
        #expect(Set(truth.intervalsArrived) == [1, 2, 3, 4] && r.strokes.first?.data.strokeCount == 1)
        #expect(r.zeroedStrokes == 3 && r.dropped == 0 && r.repeatedStrokes == 0)
        #expect(r.splits.map(\.splitNumber) == [1, 2, 3, 4] && r.splits.allSatisfy { $0.restTime == 60 || $0.splitNumber == 4 })
        #expect(r.interval == 4 && r.live.interval == 4 && r.intervals)
        // Each interval's last stroke is short of its 500 m; the summary is the work's whole.
        let perInterval = Dictionary(grouping: r.strokes, by: \.interval).mapValues { $0.map(\.data.distance).max()! }
        #expect(perInterval.values.allSatisfy { $0 > 480 && $0 < 500 })
        #expect(r.summary?.distance == 2000 && r.summary?.workoutType == 7)
        #expect(r.live.workoutState == .workoutEnd && r.endedAt != nil)
    }

    @Test("a rest is shown as resting, with the interval under way")
    func restingTile() {
        let piece = Self.fourBy500()
        var hub = ErgHub()
        hub.add(erg: 1, name: "PM5 1")
        // Interval 1 ends at 110 s; its rest runs to 170 s.
        for e in piece.events().events where e.t <= 140 { hub.apply(e) }
        let tile = hub.board(now: 140).tiles[0]
        #expect(tile.resting == true && tile.interval == 1 && tile.distance == 500)
        // Interval 2 begins at 170 s; its status comes before its first stroke (172.5 s).
        for e in piece.events().events where e.t > 140 && e.t <= 171.2 { hub.apply(e) }
        let begun = hub.board(now: 171.2).tiles[0]
        #expect(begun.resting == false && begun.interval == 2 && (begun.distance ?? 99) < 10)
        #expect(abs((begun.workoutDistance ?? 0) - 500 - (begun.distance ?? 0)) < 0.01)
        for e in piece.events().events where e.t > 171.2 && e.t <= 200 { hub.apply(e) }
        let next = hub.board(now: 200).tiles[0]
        #expect(next.resting == false && next.interval == 2 && (next.distance ?? 0) < 200)
        // The race is on the distance from the workout's start.
        #expect(abs((next.workoutDistance ?? 0) - 500 - (next.distance ?? 0)) < 0.01)
        #expect(hub.board(now: 200).race.first?.distance == next.workoutDistance)
    }

    @Test("a gap across an interval's end: the strokes missed there are not guessed")
    func gapAcrossIntervals() {
        // Interval 2 rows from 170 s to 280 s, rests to 340 s; out of reach 260-350 s.
        let (r, truth, newPieces) = Self.record(Self.fourBy500(outOfReach: 260...350))
        #expect(newPieces == 0)
        #expect(r.strokes.map(\.interval) == truth.intervalsArrived)
        #expect(r.gaps.count == 1 && r.gaps[0].lastInterval == 2 && r.gaps[0].nextInterval == 3)
        #expect(r.gaps[0].missedStrokes == nil)
    }

    @Test("a whole interval out of reach: the PM5's interval number says which interval the next strokes are", arguments: [
        // The interval's data, sent as interval 2's rest ends at 340 s, arrives.
        165.0...339.0,
        // It is lost too; the interval count in the status while interval 3 is rowed says.
        165.0...341.0,
    ])
    func wholeIntervalMissed(gap: ClosedRange<Double>) {
        let (r, truth, newPieces) = Self.record(Self.fourBy500(outOfReach: gap))
        #expect(newPieces == 0)
        #expect(!truth.intervalsArrived.contains(2))
        #expect(r.strokes.map(\.interval) == truth.intervalsArrived)
    }

    @Test("a workout of intervals whose summary never comes ends at its end state; the next strokes are a new piece")
    func endWithoutSummary() throws {
        let (r, _, _) = Self.record(Self.fourBy500(summary: false))
        #expect(r.summary == nil && r.endedAt != nil && r.live.workoutState == .workoutEnd)
        let first = StrokeData(elapsed: 2.5, distance: 11, driveLength: 1.4, driveTime: 0.8, recoveryTime: 1.7, strokeDistance: 11,
                               peakDriveForce: 180, averageDriveForce: 110, workPerStroke: 600, strokeCount: 1)
        #expect(r.beginsNewPiece(first))
        // The zeroed stroke data of a rest's end never begins one.
        let zero = StrokeData(elapsed: 0, distance: 0, driveLength: 0, driveTime: 0, recoveryTime: 0, strokeDistance: 0,
                              peakDriveForce: 0, averageDriveForce: 0, workPerStroke: 0, strokeCount: 0)
        #expect(zero.zeroed && !r.beginsNewPiece(zero))
        // The hub's own figures: each interval's time and distance from its data.
        let s = try #require(r.recordedSummary())
        #expect(abs(s.elapsed - 440) < 0.01 && s.distance == 2000 && abs(s.averagePace - 110) < 0.01)
        #expect(s.averageStrokeRate == 24 && s.averageDragFactor == 120 && s.averageHeartRate == 150 && s.workoutType == 7)
    }

    @Test("a steady piece without its summary: the hub's figures are its last status's")
    func steadyRecordedSummary() throws {
        var p = PM5Piece()
        p.distance = 1000
        p.sendsSummary = false
        let (r, _, _) = Self.record(p)
        let s = try #require(r.recordedSummary())
        #expect(abs(s.elapsed - 220) < 0.01 && abs(s.distance - 1000) < 0.01 && s.averageStrokeRate == 24 && s.workoutType == 3)
        #expect(ErgRecorder().recordedSummary() == nil)
    }

    @Test("outside a workout of intervals a stroke count that starts again is a new piece, as before")
    func steadyRestart() {
        var p = PM5Piece()
        p.distance = 500
        p.sendsSummary = false
        var (r, _, _) = Self.record(p)
        let first = StrokeData(elapsed: 3, distance: 11, driveLength: 1.4, driveTime: 0.8, recoveryTime: 1.7, strokeDistance: 11,
                               peakDriveForce: 180, averageDriveForce: 110, workPerStroke: 600, strokeCount: 1)
        #expect(!r.intervals && r.beginsNewPiece(first))
        r.receive(.strokeData(first), at: 1000)
        #expect(r.restarts == 1 && r.strokes.last?.interval == 1)
    }
}
