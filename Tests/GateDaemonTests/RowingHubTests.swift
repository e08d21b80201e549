// SPDX-License-Identifier: Apache-2.0
// The rowing hub as the daemon runs it: every stroke that arrived stored once in SQLite
// across an erg out of reach, the gap marked; a new workout on the erg is a new session;
// a workout set from the page reaches every erg as CSAFE frames and each rows it.

import Foundation
import GateDaemon
import Logging
import Rowing
import SQLiteStore
import Synchronization
import Testing
import WebUI

@Suite struct RowingHubTests {
    final class TestClock: Sendable {
        let t = Mutex(0.0)
        func callAsFunction() -> Double { t.withLock { $0 } }
        func set(_ v: Double) { t.withLock { $0 = v } }
    }

    /// Events into the hub on their own times, written once a second as they come (as the
    /// hub's writer does), and everything written at the end.
    static func feed(_ events: [PM5LogEvent], to hub: RowingHub, clock: TestClock) {
        var next = 1.0
        for e in events {
            while e.t >= next {
                clock.set(next)
                hub.flush()
                next += 1
            }
            clock.set(e.t)
            hub.apply(e)
        }
        hub.flush()
        hub.flush()
    }

    static func store(_ name: String) throws -> (RunStore, String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sprintgate-rowing-\(name)-\(getpid())").path
        try? FileManager.default.removeItem(atPath: directory)
        return (try RunStore(directory: directory, logger: Logger(label: "test")), directory)
    }

    @Test("a 2000 m piece with a stretch out of reach and malformed strokes: every stroke that arrived is stored once, the gap with its strokes, the summary; writing again doubles nothing")
    func pieceStored() throws {
        let (store, directory) = try Self.store("piece")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = TestClock()
        let hub = RowingHub(store: store, control: nil, source: "test", logger: Logger(label: "test"), clock: { clock() },
                            wallClock: { 1_780_000_000 + clock() })
        hub.add(erg: 1, name: "PM5 430123456")
        try hub.assign(erg: 1, athlete: "Ada")
        var piece = PM5Piece()
        piece.outOfReach = 200...220
        piece.malformedEvery = 37
        let truth = piece.events()
        Self.feed(truth.events, to: hub, clock: clock)
        let sessions = try store.ergSessions()
        #expect(sessions.count == 1)
        let s = try #require(sessions.first)
        #expect(s.athlete == "Ada" && s.erg == "PM5 430123456" && s.summary?.distance == 2000)
        let strokes = try store.ergStrokes(sessionID: s.id)
        #expect(strokes.map { UInt16($0.stroke) } == truth.strokesArrived)
        #expect(strokes.allSatisfy { $0.power != nil && $0.forceCurve.count == piece.forceCurvePoints })
        let gaps = try store.ergGaps(sessionID: s.id)
        #expect(gaps.count == 1 && gaps[0].missedStrokes == 9)
        // The 1000 m split came at 220 s, out of reach: the other three.
        let splits = try store.ergSplits(sessionID: s.id).map(\.number)
        #expect(splits == [1, 3, 4])
        let live = hub.rowingLive()
        #expect(live.pending == 0 && live.sessions.map(\.id) == [s.id] && live.storeError == nil)
        #expect(live.board.tiles.first?.finished == true && live.board.tiles.first?.dropped == truth.malformed)
    }

    @Test("a stroke count that starts again, or strokes after the summary, begin a new session; the piece cut short is kept unfinished")
    func newPieces() throws {
        let (store, directory) = try Self.store("pieces")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = TestClock()
        let hub = RowingHub(store: store, control: nil, source: "test", logger: Logger(label: "test"), clock: { clock() })
        func row(_ metres: Double, from start: Double, upTo end: Double = .infinity) {
            var p = PM5Piece()
            p.distance = metres
            p.start = start
            for e in p.events().events where e.t < end {
                clock.set(e.t)
                hub.apply(e)
            }
        }
        row(2000, from: 0, upTo: 100)   // stopped on the erg after 100 s
        row(500, from: 110)             // a new piece begun on the erg: counts start again
        row(500, from: 300)             // and another after its summary
        hub.flush()
        let sessions = try store.ergSessions().reversed().map { $0 }
        #expect(sessions.count == 3)
        #expect(sessions[0].summary == nil && sessions[0].endedWall != nil)
        #expect(sessions[1].summary?.distance == 500 && sessions[2].summary?.distance == 500)
        for s in sessions {
            let counts = try store.ergStrokes(sessionID: s.id).map(\.stroke)
            #expect(counts == Array(1...counts.count))
        }
    }

    @Test("a workout of intervals is one session; when its summary never comes it is finished after the wait, and strokes after it, going on or starting again, are new sessions")
    func intervalsWithoutSummary() throws {
        let (store, directory) = try Self.store("intervals")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = TestClock()
        let hub = RowingHub(store: store, control: nil, source: "test", logger: Logger(label: "test"), clock: { clock() })
        var intervals = PM5Piece()
        intervals.intervals = [PM5Workout.Interval(.metres(500), restSeconds: 30), PM5Workout.Interval(.seconds(60), restSeconds: 30),
                               PM5Workout.Interval(.metres(300), restSeconds: 0)]
        intervals.sendsSummary = false
        let truth = intervals.events()
        Self.feed(truth.events, to: hub, clock: clock)
        // Not yet: the summary may still come.
        var sessions = try store.ergSessions()
        #expect(sessions.count == 1 && sessions[0].endedWall == nil)
        clock.set(truth.elapsed + RowingHub.summaryWait + 0.1)
        hub.flush()
        sessions = try store.ergSessions()
        #expect(sessions.count == 1 && sessions[0].endedWall != nil && sessions[0].summary?.fromRecord == true)
        // 500 m, a minute at 1:50/500 m, and 300 m, from the intervals' data.
        #expect(abs((sessions[0].summary?.distance ?? 0) - (800 + 60 * 500 / 110)) < 1 && sessions[0].summary?.averageStrokeRate == 24)
        #expect(try store.ergStrokes(sessionID: sessions[0].id).map(\.interval) == truth.intervalsArrived)
        #expect(Set(truth.intervalsArrived) == [1, 2, 3])
        // Strokes going on from the last one after the piece was finished are not lost:
        // they begin a session of their own.
        let last = try #require(store.ergStrokes(sessionID: sessions[0].id).last)
        for k in 1...3 {
            let t = truth.elapsed + RowingHub.summaryWait + 2 * Double(k)
            clock.set(t)
            let more = StrokeData(elapsed: last.elapsed + 2.5 * Double(k), distance: last.distance + 11 * Double(k), driveLength: 1.4,
                                  driveTime: 0.8, recoveryTime: 1.7, strokeDistance: 11, peakDriveForce: 180, averageDriveForce: 110,
                                  workPerStroke: 600, strokeCount: UInt16(last.stroke + k))
            let (c, bytes) = PM5Data.strokeData(more).encoded
            hub.apply(.notification(t: t, erg: 1, characteristic: c, bytes: bytes))
        }
        hub.flush()
        sessions = try store.ergSessions()
        #expect(sessions.count == 2 && sessions[0].strokes == 3)
        var next = PM5Piece()
        next.distance = 500
        next.start = truth.elapsed + 30 + RowingHub.summaryWait
        Self.feed(next.events().events.filter { if case .connected = $0 { false } else { true } }, to: hub, clock: clock)
        sessions = try store.ergSessions()
        #expect(sessions.count == 3 && sessions[0].summary?.distance == 500)
    }

    @Test("a workout set from the page goes to every connected erg as CSAFE frames; each reads it back and rows it, and its session carries the workout's name")
    func workoutReachesTheErgs() async throws {
        let (store, directory) = try Self.store("workout")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let t0 = Date().timeIntervalSince1970
        let clock: @Sendable () -> Double = { Date().timeIntervalSince1970 - t0 }
        let hub = RowingHub(store: store, control: nil, source: "test", logger: Logger(label: "test"), clock: clock)
        let ergs = SyntheticErgs(count: 3, speed: 20, clock: clock) { hub.apply($0) }
        hub.setControl(ergs)
        for e in 1...3 { hub.add(erg: e, name: SyntheticErgs.name(e)) }
        ergs.start()
        defer { ergs.stop() }
        // Connected once their first notification came.
        while hub.rowingLive().board.tiles.filter(\.connected).count < 3 { try await Task.sleep(for: .milliseconds(20)) }
        #expect(throws: ResultsBookError.self) { try hub.assign(erg: 9, athlete: "Nobody") }
        let results = try hub.program(.distance(metres: 300, split: 100))
        #expect(results.map(\.erg) == [1, 2, 3] && results.allSatisfy(\.accepted))
        #expect(hub.rowingLive().workout == "300 m")
        // 300 m at 1:40 to 1:45 is about 63 s of rowing: 3 s at 20 times real time, after a 3 s countdown.
        let deadline = Date().addingTimeInterval(60)
        var done: [ErgSession] = []
        while Date() < deadline {
            hub.flush()
            done = try store.ergSessions(workout: "300 m").filter { $0.summary != nil }
            if done.count == 3 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(done.count == 3 && done.allSatisfy { $0.summary?.distance == 300 })
        // The 2000 m pieces under way when the workout came are kept, cut short (or whole,
        // on a machine so loaded that a piece ended before the workout was set).
        #expect(try store.ergSessions(workout: "").allSatisfy { $0.summary == nil ? $0.distance < 2000 : $0.summary?.distance == 2000 })
        // Intervals with rests: one session per erg, its strokes in both intervals.
        let twice = try hub.program(.intervals(Array(repeating: PM5Workout.Interval(.metres(100), restSeconds: 20), count: 2)))
        #expect(twice.allSatisfy { $0.accepted })
        let name = try #require(hub.rowingLive().workout)
        let later = Date().addingTimeInterval(60)
        while Date() < later {
            hub.flush()
            done = try store.ergSessions(workout: name).filter { $0.summary != nil }
            if done.count == 3 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(done.count == 3 && done.allSatisfy { $0.summary?.distance == 200 })
        #expect(try store.ergSessions(workout: name).count == 3)
        for s in done {
            let intervals = Set(try store.ergStrokes(sessionID: s.id).map(\.interval))
            #expect(intervals == [1, 2], "\(s.erg)")
        }
    }
}
