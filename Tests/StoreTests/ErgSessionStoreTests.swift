// SPDX-License-Identifier: Apache-2.0
// The rowing hub's sessions in SQLite: every stroke once across a reconnect and a restart,
// the gap kept, the summary's watts, history by athlete, and CSV, JSON and TCX export.

import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Rowing
import GRDB
@testable import SQLiteStore
import Testing

@Suite struct ErgSessionStoreTests {
    static let start = 1_780_000_000.0

    /// Stroke `n` of a piece at 24 strokes a minute, its power 200 + n W.
    static func stroke(_ n: UInt16) -> [PM5Data] {
        let t = 2.5 * Double(n)
        return [.strokeData(StrokeData(elapsed: t, distance: 10 * Double(n), driveLength: 1.4, driveTime: 0.8, recoveryTime: 1.7,
                                       strokeDistance: 10, peakDriveForce: 180, averageDriveForce: 110, workPerStroke: 600, strokeCount: n)),
                .additionalStrokeData(AdditionalStrokeData(elapsed: t, strokePower: 200 + n, strokeCaloriesPerHour: 900, strokeCount: n,
                                                           projectedWorkTime: 420, projectedWorkDistance: 2000))]
    }

    /// A recorder holding strokes 1–10, a gap, and strokes 16–20, with status samples and a split.
    static func recorded() -> ErgRecorder {
        var r = ErgRecorder()
        r.connected(at: 0)
        for n in 1...10 {
            for d in stroke(UInt16(n)) { r.receive(d, at: 2.5 * Double(n)) }
            r.receive(.additionalStatus(AdditionalStatus(elapsed: 2.5 * Double(n) + 0.1, speed: 4, strokeRate: 24, heartRate: 140,
                                                         currentPace: 125, averagePace: 125, restDistance: 0, restTime: 0, ergMachineType: 0)),
                      at: 2.5 * Double(n) + 0.1)
        }
        r.disconnected(at: 26)
        r.connected(at: 40)
        for n in 16...20 { for d in stroke(UInt16(n)) { r.receive(d, at: 2.5 * Double(n)) } }
        r.receive(.splitData(SplitData(elapsed: 50, distance: 200, splitTime: 50, splitDistance: 200, restTime: 0, restDistance: 0,
                                       splitType: 1, splitNumber: 1)), at: 50.1)
        return r
    }

    @Test func everyStrokeIsStoredOnceAcrossAReconnectAndARestart() throws {
        let dir = TempDir()
        var store = try openStore(dir)
        let s = try store.startErgSession(erg: " PM5 430123456 ", athlete: "Ada", workout: "2000 m", wallTime: Self.start)
        #expect(s.erg == "PM5 430123456" && s.strokes == 0 && s.summary == nil)
        let r = Self.recorded()
        #expect(try store.recordErg(sessionID: s.id, strokes: r.strokes, samples: r.samples, splits: r.splits, gaps: r.gaps,
                                    wallOffset: Self.start) == 15)
        // The hub writes the same records again (a retry, or everything at the end): nothing doubles.
        store = try openStore(dir)
        #expect(try store.recordErg(sessionID: s.id, strokes: r.strokes, samples: r.samples, splits: r.splits, gaps: r.gaps,
                                    wallOffset: Self.start) == 0)
        let strokes = try store.ergStrokes(sessionID: s.id)
        #expect(strokes.map(\.stroke) == Array(1...10) + Array(16...20))
        #expect(strokes.allSatisfy { $0.power == 200 + $0.stroke && $0.wall == Self.start + 2.5 * Double($0.stroke) })
        let gaps = try store.ergGaps(sessionID: s.id)
        #expect(gaps.count == 1 && gaps[0].from == Self.start + 26 && gaps[0].to == Self.start + 40 && gaps[0].missedStrokes == 5)
        #expect(try store.ergSplits(sessionID: s.id).map(\.distance) == [200])
        #expect(try store.integrityCheck() == ["ok"])
    }

    @Test func aStrokesPowerArrivingLaterIsAddedNotDoubled() throws {
        let dir = TempDir()
        let store = try openStore(dir)
        let s = try store.startErgSession(erg: "PM5 1", athlete: "", workout: "", wallTime: Self.start)
        var r = ErgRecorder()
        r.connected(at: 0)
        r.receive(Self.stroke(1)[0], at: 2.5)
        try store.recordErg(sessionID: s.id, strokes: r.strokes, wallOffset: Self.start)
        #expect(try store.ergStrokes(sessionID: s.id).first?.power == nil)
        r.receive(Self.stroke(1)[1], at: 2.6)
        #expect(try store.recordErg(sessionID: s.id, strokes: r.strokes, wallOffset: Self.start) == 0)
        #expect(try store.ergStrokes(sessionID: s.id).map(\.power) == [201])
    }

    @Test func aFinishedSessionCarriesThePM5sSummaryAndTheWattsOfItsStrokes() throws {
        let dir = TempDir()
        let store = try openStore(dir)
        let a = try store.startErgSession(erg: "PM5 1", athlete: "Ada", workout: "2000 m", wallTime: Self.start)
        let b = try store.startErgSession(erg: "PM5 2", athlete: "Grace", workout: "2000 m", wallTime: Self.start + 1)
        let r = Self.recorded()
        try store.recordErg(sessionID: a.id, strokes: r.strokes, wallOffset: Self.start)
        let summary = WorkoutSummary(logDate: 0, logTime: 0, elapsed: 50, distance: 200, averageStrokeRate: 24, endingHeartRate: 150,
                                     averageHeartRate: 140, minimumHeartRate: 100, maximumHeartRate: 160, averageDragFactor: 120,
                                     recoveryHeartRate: nil, workoutType: 3, averagePace: 125)
        let more = AdditionalWorkoutSummary(logDate: 0, logTime: 0, splitType: 1, splitSize: 200, splitCount: 1, totalCalories: 12,
                                            power: 205, totalRestDistance: 0, intervalRestTime: 0, averageCaloriesPerHour: 900)
        try store.finishErgSession(id: a.id, summary: summary, more: more, wallTime: Self.start + 60)
        let done = try store.ergSession(id: a.id)
        let f = try #require(done.summary)
        #expect(done.endedWall == Self.start + 60 && done.strokes == 15 && done.distance == 200)
        #expect(f.averagePace == 125 && f.averageStrokeRate == 24 && f.averageDragFactor == 120 && f.maximumHeartRate == 160)
        #expect(f.totalCalories == 12 && f.maximumPower == 220)
        let watts: [Int] = Array(1...10) + Array(16...20)
        let mean = Double(watts.reduce(0) { $0 + 200 + $1 }) / 15
        #expect(abs((f.averagePower ?? 0) - mean) < 1e-9)
        // History by athlete and date.
        #expect(try store.ergSessions().map(\.id) == [b.id, a.id])
        #expect(try store.ergSessions(athlete: "Ada").map(\.id) == [a.id])
        #expect(try store.ergSessions(from: Self.start + 0.5).map(\.id) == [b.id])
        try store.deleteErgSession(id: b.id)
        #expect(throws: StoreError.self) { try store.ergSession(id: b.id) }
    }

    @Test func aSessionExportsAsCSVJSONAndTCX() throws {
        let dir = TempDir()
        let store = try openStore(dir)
        let s = try store.startErgSession(erg: "PM5 1", athlete: "Ada <A&B>", workout: "", wallTime: Self.start)
        let r = Self.recorded()
        try store.recordErg(sessionID: s.id, strokes: r.strokes, samples: r.samples, splits: r.splits, gaps: r.gaps, wallOffset: Self.start)
        let csv = try store.exportErgSession(id: s.id, .csv).split(separator: "\n")
        #expect(csv.count == 16 && csv[0].hasPrefix("interval,stroke,elapsed_s,distance_m"))
        #expect(csv[1] == "1,1,2.50,10.0,1.40,0.80,1.70,10.00,180.0,110.0,600.0,201,900")
        let json = try store.exportErgSession(id: s.id, .json)
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(doc["format"] as? String == "sprintgate-erg-session")
        #expect((doc["strokes"] as? [Any])?.count == 15 && (doc["gaps"] as? [Any])?.count == 1 && (doc["splits"] as? [Any])?.count == 1)
        let tcx = try store.exportErgSession(id: s.id, .tcx)
        let xml = try XMLDocument(data: Data(tcx.utf8))
        let points = try xml.nodes(forXPath: "//*[local-name()='Trackpoint']")
        #expect(points.count == 15)
        let watts = try xml.nodes(forXPath: "//*[local-name()='Watts']").compactMap(\.stringValue)
        #expect(watts.first == "201" && watts.count == 15)
        let cadence = try xml.nodes(forXPath: "//*[local-name()='Cadence']").compactMap(\.stringValue)
        #expect(cadence.first == "24")
        #expect(tcx.contains("Ada &lt;A&amp;B&gt;"))
    }

    /// A recorder that took a workout of 4 × 500 m with a minute's rest from its PM5.
    static func intervals() -> ErgRecorder {
        var p = PM5Piece()
        p.intervals = Array(repeating: PM5Workout.Interval(.metres(500), restSeconds: 60), count: 4)
        var r = ErgRecorder()
        for e in p.events().events {
            switch e {
            case .connected(let t, _): r.connected(at: t)
            case .disconnected(let t, _): r.disconnected(at: t)
            case .notification(let t, _, let c, let bytes): r.receive(characteristic: c, bytes, at: t)
            }
        }
        return r
    }

    @Test func aWorkoutOfIntervalsIsOneSessionWithEachStrokeInItsInterval() throws {
        let dir = TempDir()
        let store = try openStore(dir)
        let s = try store.startErgSession(erg: "PM5 1", athlete: "Ada", workout: "4 × 500 m / 1:00", wallTime: Self.start)
        let r = Self.intervals()
        // Each interval counts its strokes from 1 at the same pace: the same stroke count and
        // elapsed time come four times, one in each interval.
        #expect(try store.recordErg(sessionID: s.id, strokes: r.strokes, samples: r.samples, splits: r.splits, gaps: r.gaps,
                                    wallOffset: Self.start) == r.strokes.count)
        #expect(try store.recordErg(sessionID: s.id, strokes: r.strokes, samples: r.samples, splits: r.splits, gaps: r.gaps,
                                    wallOffset: Self.start) == 0)
        try store.finishErgSession(id: s.id, summary: r.summary, more: r.summaryMore, wallTime: Self.start + 700)
        let strokes = try store.ergStrokes(sessionID: s.id)
        #expect(strokes.map(\.interval) == r.strokes.map(\.interval) && Set(strokes.map(\.interval)) == [1, 2, 3, 4])
        // The session's distance is each interval's furthest stroke, added up.
        let furthest = Dictionary(grouping: r.strokes, by: \.interval).values.map { $0.map(\.data.distance).max()! }.reduce(0, +)
        let done = try store.ergSession(id: s.id)
        #expect(abs(done.distance - furthest) < 0.01 && done.distance > 1900 && done.distance < 2000)
        #expect(done.strokes == r.strokes.count && done.summary?.distance == 2000)
        // Distances from the workout's start run on across the intervals.
        #expect(zip(strokes, strokes.dropFirst()).allSatisfy { $0.workoutDistance < $1.workoutDistance })
        #expect(try store.ergSplits(sessionID: s.id).map(\.number) == [1, 2, 3, 4])
        // Samples: one per elapsed time in each interval; a rest keeps its last.
        let samples = try store.read("count") { db in try Int.fetchOne(db, sql: "SELECT COUNT(DISTINCT interval) FROM erg_samples WHERE session_id = ?", arguments: [s.id]) }
        #expect(samples == 4)
        let csv = try store.exportErgSession(id: s.id, .csv).split(separator: "\n")
        #expect(csv.dropFirst().filter { $0.hasPrefix("3,1,") }.count == 1)
        let xml = try XMLDocument(data: Data(try store.exportErgSession(id: s.id, .tcx).utf8))
        let laps = try xml.nodes(forXPath: "//*[local-name()='Lap']")
        #expect(laps.count == 4)
        let lapDistances = try xml.nodes(forXPath: "//*[local-name()='Lap']/*[local-name()='DistanceMeters']").compactMap(\.stringValue)
        #expect(lapDistances == ["500.0", "500.0", "500.0", "500.0"])
        let along = try xml.nodes(forXPath: "//*[local-name()='Trackpoint']/*[local-name()='DistanceMeters']").compactMap { Double($0.stringValue ?? "") }
        #expect(along.count == strokes.count && zip(along, along.dropFirst()).allSatisfy { $0 < $1 } && along.last! > 1900)
    }

    @Test func aDatabaseOfTheFirstRowingReleaseMigrates() throws {
        let dir = TempDir()
        try RunStore.createDatabase(path: dir.dbPath, upTo: "v10-erg-sessions", sql: """
            INSERT INTO erg_sessions (id, erg, athlete, workout, started_wall_ms) VALUES (1, 'PM5 1', 'Ada', '2000 m', 1780000000000);
            INSERT INTO erg_strokes (session_id, stroke, elapsed_cs, wall_ms, distance_m, drive_length_m, drive_time_s, recovery_time_s,
                stroke_distance_m, peak_force_lbf, average_force_lbf, work_j, power_w) VALUES
                (1, 1, 250, 1780000002500, 10, 1.4, 0.8, 1.7, 10, 180, 110, 600, 201),
                (1, 2, 500, 1780000005000, 20, 1.4, 0.8, 1.7, 10, 180, 110, 600, 202);
            INSERT INTO erg_samples (session_id, elapsed_cs, wall_ms, stroke_rate) VALUES (1, 260, 1780000002600, 24);
            INSERT INTO erg_gaps (session_id, from_wall_ms, to_wall_ms, last_stroke, next_stroke) VALUES (1, 1780000006000, 1780000010000, 2, 5);
            """)
        let store = try RunStore(path: dir.dbPath, logger: quietLog)
        #expect(try store.integrityCheck() == ["ok"])
        let strokes = try store.ergStrokes(sessionID: 1)
        #expect(strokes.map(\.interval) == [1, 1] && strokes.map(\.power) == [201, 202] && strokes.map(\.workoutDistance) == [10, 20])
        #expect(try store.ergSession(id: 1).distance == 20 && store.ergSession(id: 1).strokes == 2)
        let gaps = try store.ergGaps(sessionID: 1)
        #expect(gaps.count == 1 && gaps[0].missedStrokes == 2 && gaps[0].lastInterval == nil)
        // Strokes of a second interval with the same counts go in beside them.
        var r = ErgRecorder()
        r.receive(.generalStatus(GeneralStatus(elapsed: 0, distance: 0, workoutType: 7, intervalType: 1, workoutState: 5, rowingState: 1,
                                               strokeState: 1, totalWorkDistance: 0, workoutDuration: 500, workoutDurationType: 0x80,
                                               dragFactor: 120)), at: 0)
        #expect(r.intervals)
        #expect(try store.recordErg(sessionID: 1, strokes: [], samples: r.samples, wallOffset: Self.start) == 0)
        #expect(try store.read("rows") { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM erg_samples") } == 2)
    }

    @Test func whatIsRefused() throws {
        let dir = TempDir()
        let store = try openStore(dir)
        #expect(throws: StoreError.self) { try store.startErgSession(erg: "  ", athlete: "", workout: "", wallTime: Self.start) }
        #expect(throws: StoreError.self) { try store.recordErg(sessionID: 99, strokes: [], wallOffset: 0) }
        #expect(throws: StoreError.self) { try store.finishErgSession(id: 99, summary: nil, more: nil, wallTime: 0) }
        #expect(throws: StoreError.self) { try store.exportErgSession(id: 99, .csv) }
    }
}
