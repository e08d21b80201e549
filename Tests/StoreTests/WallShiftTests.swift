// SPDX-License-Identifier: Apache-2.0
// Stored dates moved by a step of the wall clock (a gate that ran on an unset clock, then
// took the time from a phone).

import Foundation
import SQLiteStore
import Testing

@Suite("Dates moved by a step of the wall clock")
struct WallShiftTests {
    @Test("what this boot stored on the unset clock moves by the step (seasons and bests follow); what an earlier boot stored, and what the corrected clock stamps, stay")
    func thisBootsRecordsMove() throws {
        let dir = TempDir()
        let boot = wallMs(2025, 11, 1, 9, 0)
        // An earlier boot (an earlier process): a run on a right clock in June 2025, and one
        // in the hour after the clock's last save before a power cut, so that its time falls
        // in this boot's window too.
        let (a, earlier, lastHour) = try { () throws -> (Int64, CommittedRun, CommittedRun) in
            let previous = try openStore(dir)
            let a = try previous.addAthlete(StoredAthlete(name: "Ana")).id!
            return (a, try previous.write(sampleRun(seconds: 3.60, athlete: a, wall: wallMs(2025, 6, 1))),
                    try previous.write(sampleRun(seconds: 3.70, athlete: a, wall: boot + 5 * 60_000)))
        }()
        // This boot: the clock came up at what it last saved (1 November 2025, 09:00) and
        // ran on from there; the coach's phone says it is 6 December 2026, 09:30.
        let store = try openStore(dir)
        let runs = try [3.50, 3.40].enumerated().map { i, s in
            try store.write(sampleRun(seconds: s, athlete: a, wall: boot + Int64(10 + i) * 60_000))
        }
        let ski = try store.startSkiTrack(name: "", sport: .ski, wallTime: Double(boot + 20 * 60_000) / 1000)
        let before = boot + 30 * 60_000
        let step = wallMs(2026, 12, 6, 9, 30) - before
        // Before: both runs fall in the 2025 season, the 3.40 its best.
        #expect(try store.bests(athleteID: a).contains { $0.season == 2025 && $0.runID == runs[1].run.id })

        #expect(runs[0].run.sessionID == lastHour.run.sessionID, "grouped by the unset clock")
        let moved = try store.shiftWallTimes(in: boot...before, by: step)
        #expect(moved.runs == 2 && moved.sessions == 1 && moved.skiTracks == 1 && moved.gpsRuns == 0 && moved.ergSessions == 0)
        for (i, r) in runs.enumerated() {
            #expect(try store.run(id: r.run.id!).run.wallStartMs == boot + Int64(10 + i) * 60_000 + step)
        }
        #expect(try store.run(id: earlier.run.id!).run.wallStartMs == wallMs(2025, 6, 1), "an earlier boot's run keeps its date")
        #expect(try store.run(id: lastHour.run.id!).run.wallStartMs == boot + 5 * 60_000, "so does one inside the window")
        // This boot's runs had joined the earlier boot's session (minutes apart on the unset
        // clock); they now have one of their own, starting at their first run.
        let moved0 = try store.run(id: runs[0].run.id!).run.sessionID
        let moved1 = try store.run(id: runs[1].run.id!).run.sessionID
        #expect(moved0 != lastHour.run.sessionID && moved0 == moved1)
        #expect(try store.skiTrack(id: ski.id).startedWall == Double(boot + 20 * 60_000 + step) / 1000)
        let sessions = try store.sessions(sort: .newest)
        #expect(sessions.map(\.startedWallMs).contains(boot + 10 * 60_000 + step))
        // The bests follow the new season: 3.40 s is 2026's best, 2025 keeps the June run.
        let bests = try store.bests(athleteID: a)
        #expect(bests.contains { $0.season == 2026 && $0.runID == runs[1].run.id })
        #expect(bests.contains { $0.season == 2025 && $0.runID == earlier.run.id })
        #expect(bests.contains { $0.season == nil && $0.runID == runs[1].run.id })
        // A run stamped by the corrected clock joins the moved session (they are now minutes apart).
        let next = try store.write(sampleRun(seconds: 3.45, athlete: a, wall: before + step + 60_000))
        #expect(next.run.sessionID == moved0)
        // A second shift over a window that no longer holds them moves nothing.
        #expect(try store.shiftWallTimes(in: boot...before, by: step) == WallShift())
    }
}
