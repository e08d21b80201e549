// SPDX-License-Identifier: Apache-2.0
// Rowing replays (the gpsd model): PM5 notification logs under Tests/RowingReplays played
// through the hub into SQLite, the stored sessions checked against golden files. A change
// to a .chk must say why in its commit. The logs are PM5Piece's synthetic pieces with
// exact truth (no real PM5's log is at hand yet), steady pieces and workouts of intervals;
// SPRINTGATE_REBUILD_CHK=1 writes both the logs and the golden files anew.

import Foundation
import GateDaemon
import Logging
import Rowing
import SQLiteStore
import Testing
import WebUI

@Suite("Rowing replays", .serialized)
struct RowingReplayTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("RowingReplays")
    static var rebuild: Bool { ProcessInfo.processInfo.environment["SPRINTGATE_REBUILD_CHK"] == "1" }

    /// Each case: its pieces, one per erg, played together.
    static let cases: [(name: String, notes: String, pieces: [PM5Piece])] = [
        ("two-ergs-outage", "erg 1 rows 1000 m at 1:50/500 m, out of reach 100-120 s, every 23rd stroke cut short; erg 2 rows 2000 m at 30/min and 1:40/500 m", {
            var a = PM5Piece()
            a.distance = 1000
            a.outOfReach = 100...120
            a.malformedEvery = 23
            var b = PM5Piece()
            b.erg = 2
            b.strokeRate = 30
            b.pace = 100
            return [a, b]
        }()),
        ("steady-500m-tenth-second", "erg 1 rows 500 m at 28/min and 1:45/500 m, status ten times a second", {
            var a = PM5Piece()
            a.distance = 500
            a.strokeRate = 28
            a.pace = 105
            a.sampleRate = .tenthSecond
            return [a]
        }()),
        ("intervals", "erg 1 rows 4 × 500 m with 1:00 rest at 1:50/500 m, out of reach 260-350 s (across the end of interval 2 and its rest), every 29th stroke cut short; erg 2 rows 2 × 3:00 with 1:00 rest at 26/min and 1:55/500 m, and its PM5 sends no summary", {
            var a = PM5Piece()
            a.intervals = Array(repeating: PM5Workout.Interval(.metres(500), restSeconds: 60), count: 4)
            a.outOfReach = 260...350
            a.malformedEvery = 29
            var b = PM5Piece()
            b.erg = 2
            b.strokeRate = 26
            b.pace = 115
            b.intervals = Array(repeating: PM5Workout.Interval(.seconds(180), restSeconds: 60), count: 2)
            b.sendsSummary = false
            return [a, b]
        }()),
    ]

    /// What the database holds after the replay, without anything volatile: each session's
    /// record, its strokes as the CSV export has them, its splits and its gaps.
    static func golden(_ store: RunStore) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var out = ""
        // Why not by id: the hub's writer stores the ergs' pieces in no fixed order, so the
        // ids of pieces begun together differ from run to run.
        for s in try store.ergSessions().sorted(by: { ($0.erg, $0.startedWall) < ($1.erg, $1.startedWall) }) {
            var record = s
            record.id = 0
            out += "session " + String(decoding: try encoder.encode(record), as: UTF8.self) + "\n"
            out += try store.exportErgSession(id: s.id, .csv)
            for p in try store.ergSplits(sessionID: s.id) { out += "split \(p.number) \(p.time) \(p.distance) \(p.rest)\n" }
            for g in try store.ergGaps(sessionID: s.id) { out += "gap " + String(decoding: try encoder.encode(g), as: UTF8.self) + "\n" }
        }
        return out
    }

    @Test("each log through the hub into SQLite: the sessions match their golden file, every stroke that arrived is stored once",
          arguments: cases.map(\.name))
    func replay(name: String) throws {
        let c = try #require(Self.cases.first { $0.name == name })
        let logURL = Self.folder.appendingPathComponent(name + ".log")
        let truths = c.pieces.map { $0.events() }
        if Self.rebuild {
            let events = truths.flatMap(\.events).enumerated().sorted { ($0.element.t, $0.offset) < ($1.element.t, $1.offset) }.map(\.element)
            try PM5Log.write(events, header: ["Name: \(name)", "Submitter: synthetic (PM5Piece, exact truth)", "Notes: \(c.notes)"])
                .write(to: logURL, atomically: true, encoding: .utf8)
        }
        let events = try PM5Log.read(try String(contentsOf: logURL, encoding: .utf8))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sprintgate-rowing-replay-\(name)-\(getpid())").path
        try? FileManager.default.removeItem(atPath: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try RunStore(directory: directory, logger: Logger(label: "test"))
        let clock = RowingHubTests.TestClock()
        let hub = RowingHub(store: store, control: nil, source: "replay", logger: Logger(label: "test"), clock: { clock() },
                            wallClock: { 1_780_000_000 + clock() })
        for p in c.pieces {
            hub.add(erg: p.erg, name: "PM5 43000000\(p.erg)")
            try hub.assign(erg: p.erg, athlete: "Rower \(p.erg)")
        }
        RowingHubTests.feed(events, to: hub, clock: clock)
        for (p, truth) in zip(c.pieces, truths) {
            // One session per erg: a workout of intervals is one piece.
            let mine = try store.ergSessions().filter { $0.athlete == "Rower \(p.erg)" }
            #expect(mine.count == 1)
            let s = try #require(mine.first)
            let strokes = try store.ergStrokes(sessionID: s.id)
            #expect(strokes.map { UInt16($0.stroke) } == truth.strokesArrived)
            #expect(strokes.map(\.interval) == truth.intervalsArrived)
            // Every piece is finished: with its summary, or, where none came, after the wait
            // with the hub's figures.
            #expect(s.endedWall != nil && s.summary != nil && (s.summary?.fromRecord == true) == !p.sendsSummary)
        }
        let got = try Self.golden(store)
        let chk = Self.folder.appendingPathComponent(name + ".log.chk")
        if Self.rebuild {
            try got.write(to: chk, atomically: true, encoding: .utf8)
            return
        }
        let want = try #require(try? String(contentsOf: chk, encoding: .utf8), "no \(chk.path): run with SPRINTGATE_REBUILD_CHK=1 and review it")
        if got != want {
            let a = got.split(separator: "\n", omittingEmptySubsequences: false), b = want.split(separator: "\n", omittingEmptySubsequences: false)
            let first = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }
            Issue.record("\(name): differs from \(chk.lastPathComponent) at line \((first?.offset ?? min(a.count, b.count)) + 1): got \(first.map { String($0.element.0) } ?? "(end)"), want \(first.map { String($0.element.1) } ?? "(end)")")
        }
    }
}
