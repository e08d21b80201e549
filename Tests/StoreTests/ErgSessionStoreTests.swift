// SPDX-License-Identifier: Apache-2.0
// The rowing hub's sessions in SQLite: every stroke once across a reconnect and a restart,
// the gap kept, the summary's watts, history by athlete, and CSV, JSON and TCX export.

import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Rowing
import SQLiteStore
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
        #expect(csv.count == 16 && csv[0].hasPrefix("stroke,elapsed_s,distance_m"))
        #expect(csv[1] == "1,2.50,10.0,1.40,0.80,1.70,10.00,180.0,110.0,600.0,201,900")
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

    @Test func whatIsRefused() throws {
        let dir = TempDir()
        let store = try openStore(dir)
        #expect(throws: StoreError.self) { try store.startErgSession(erg: "  ", athlete: "", workout: "", wallTime: Self.start) }
        #expect(throws: StoreError.self) { try store.recordErg(sessionID: 99, strokes: [], wallOffset: 0) }
        #expect(throws: StoreError.self) { try store.finishErgSession(id: 99, summary: nil, more: nil, wallTime: 0) }
        #expect(throws: StoreError.self) { try store.exportErgSession(id: 99, .csv) }
    }
}
