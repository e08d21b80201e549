// SPDX-License-Identifier: Apache-2.0
// The results database: runs, sessions, athletes, next-run assignment, bests, photos, deletes.

import Foundation
import GateCore
import SQLiteStore
import Testing

@Suite struct RunStoreTests {
    @Test func opensInWALModeWithAllMigrations() throws {
        let dir = TempDir()
        let store = try openStore(dir)
        #expect(try store.appliedMigrations() == ["v1-sessions-runs-athletes", "v2-photos-bests-presets", "v3-gate-photos", "v4-gate-frames", "v5-athlete-colours",
                                                    "v6-photo-scale-corrections", "v7-gps-garage", "v8-ski-tracks", "v9-vehicle-photos",
                                                    "v10-erg-sessions", "v11-erg-intervals"])
        #expect(try store.integrityCheck() == ["ok"])
        // WAL mode leaves a -wal file beside the database once something is written.
        _ = try store.write(sampleRun(seconds: 3.5, wall: wallMs(2026, 6, 1)))
        #expect(FileManager.default.fileExists(atPath: dir.dbPath + "-wal"))
    }

    @Test func unwritableDirectoryIsAClearError() {
        #expect(throws: StoreError.self) { try RunStore(directory: "/proc/sprintgate-cannot-exist", logger: quietLog) }
        do {
            _ = try RunStore(path: "/proc/nope/x.sqlite", logger: quietLog)
            Issue.record("opened a database under /proc")
        } catch {
            #expect(error.kind == .open)
            #expect(error.description.contains("/proc/nope/x.sqlite"))
        }
    }

    @Test func writeAndReadBackEveryField() throws {
        let dir = TempDir()
        let store = try openStore(dir)
        let athlete = try store.addAthlete(StoredAthlete(name: " Ada Runner ", nickname: "Ada", colour: .gray,
                                                         birthdate: CalendarDate("2008-02-29"), gender: .female))
        #expect(athlete.name == "Ada Runner")
        var run = sampleRun(seconds: 3.456, athlete: athlete.id, wall: wallMs(2026, 5, 2), preset: "flying-30m", notes: "windy")
        run.splits = [
            StoredSplit(gateIndex: 1, distance: 10, timeNs: 1_300_000_000, segmentNs: 1_300_000_000, segmentSpeed: 7.69, syncUncertaintyNs: 900_000),
            StoredSplit(gateIndex: 2, distance: 30, timeNs: 3_456_000_000, segmentNs: 2_156_000_000, segmentSpeed: 9.28, syncUncertaintyNs: 2_100_000),
        ]
        run.gateCount = 2
        let c = try store.write(run, preset: StoredPreset(id: "flying-30m", title: "Flying 30 m", distance: 30, startType: "flying"))
        let id = try #require(c.run.id)
        #expect(c.bests == BestsSet(personal: true, season: true))
        let back = try store.run(id: id)
        #expect(back.run.splits == run.splits)
        #expect(back.run.crossings == run.crossings)
        #expect(back.run.totalNs == 3_456_000_000)
        #expect(back.run.notes == "windy")
        #expect(back.run.gateCount == 2)
        #expect(back.run.sessionID == c.run.sessionID)
        #expect(back.athleteName == "Ada Runner")
        #expect(back.athleteNickname == "Ada")
        #expect(back.athleteColour == .gray)
        #expect(back.bests.personal)
        #expect(!back.hasPhoto)
        #expect(try store.presets() == [StoredPreset(id: "flying-30m", title: "Flying 30 m", distance: 30, startType: "flying")])
        #expect(try store.athlete(id: athlete.id!).birthdate == CalendarDate(year: 2008, month: 2, day: 29))
    }

    @Test func invalidInputIsRefusedWithTheFieldNamed() throws {
        let dir = TempDir()
        let store = try openStore(dir)
        func refused(_ run: StoredRun, _ field: String) {
            do {
                _ = try store.write(run)
                Issue.record("accepted a run with a bad \(field)")
            } catch {
                #expect(error.kind == .invalid)
                #expect(error.message.contains(field), "\(error.message)")
            }
        }
        var r = sampleRun(seconds: 3, wall: 0)
        r.distance = -5
        refused(r, "distance")
        r = sampleRun(seconds: 3, wall: 0)
        r.totalNs = -1
        refused(r, "totalNs")
        r = sampleRun(seconds: 3, wall: 0)
        r.gateCount = 0
        refused(r, "gateCount")
        r = sampleRun(seconds: 3, wall: 0)
        r.splits.append(r.splits[0])
        refused(r, "splits")
        r = sampleRun(seconds: 3, athlete: 999, wall: 0)
        #expect(throws: StoreError.self) { try store.write(r) }
        #expect(throws: StoreError.self) { try store.addAthlete(StoredAthlete(name: "   ")) }
        #expect(throws: StoreError.self) { try store.addAthlete(StoredAthlete(name: String(repeating: "a", count: 81))) }
        #expect(CalendarDate("2007-02-29") == nil)
        #expect(CalendarDate("2008-13-01") == nil)
        #expect(CalendarDate("08-01-01") == nil)
        #expect(try store.history().isEmpty)
        #expect(throws: StoreError.self) { try store.history(RunFilter(limit: 0)) }
        #expect(throws: StoreError.self) { try store.run(id: 12345) }
    }

    @Test func runsJoinASessionUntilAGap() throws {
        let dir = TempDir()
        let store = try openStore(dir)
        let t0 = wallMs(2026, 6, 1, 9, 0)
        let a = try store.write(sampleRun(seconds: 4, wall: t0))
        let b = try store.write(sampleRun(seconds: 4, wall: t0 + 60 * 60 * 1000))
        let c = try store.write(sampleRun(seconds: 4, wall: t0 + 5 * 60 * 60 * 1000))
        #expect(a.run.sessionID == b.run.sessionID)
        #expect(c.run.sessionID != b.run.sessionID)
        let explicit = try store.startSession(name: "Tuesday squad", wallMs: t0 + 5 * 60 * 60 * 1000 + 1000)
        let d = try store.write(sampleRun(seconds: 4, wall: t0 + 5 * 60 * 60 * 1000 + 2000))
        #expect(d.run.sessionID == explicit.id)
        let sessions = try store.sessions(sort: .mostRuns)
        #expect(sessions.map(\.runCount) == [2, 1, 1])
        #expect(try store.sessions(sort: .newest).first?.name == "Tuesday squad")
    }

    @Test func nextRunAssignmentSurvivesARestartAndIsConsumedByATimedRun() throws {
        let dir = TempDir()
        var store = try openStore(dir)
        let bo = try store.addAthlete(StoredAthlete(name: "Bo", colour: .green))
        try store.assignNextRun(athleteID: bo.id)
        store = try openStore(dir)
        #expect(try store.nextRunAthlete()?.name == "Bo")
        // A false start keeps the assignment: the athlete goes again.
        var fs = sampleRun(seconds: 0, wall: wallMs(2026, 6, 1))
        fs.totalNs = nil
        fs.splits = []
        fs.falseStart = true
        fs.falseStartReason = "movement after Set before the start sound"
        let f = try store.write(fs)
        #expect(f.run.athleteID == bo.id)
        #expect(f.bests == .none)
        #expect(try store.nextRunAthlete()?.id == bo.id)
        let timed = try store.write(sampleRun(seconds: 4.2, wall: wallMs(2026, 6, 1, 12, 1)))
        #expect(timed.run.athleteID == bo.id)
        #expect(try store.nextRunAthlete() == nil)
        let after = try store.write(sampleRun(seconds: 4.1, wall: wallMs(2026, 6, 1, 12, 2)))
        #expect(after.run.athleteID == nil)
        #expect(throws: StoreError.self) { try store.assignNextRun(athleteID: 777) }
        // Deleting the athlete clears a pending assignment.
        try store.assignNextRun(athleteID: bo.id)
        try store.deleteAthlete(id: bo.id!)
        #expect(try store.nextRunAthlete() == nil)
        #expect(try store.run(id: timed.run.id!).run.athleteID == nil)
    }

    @Test func personalAndSeasonBests() throws {
        let dir = TempDir()
        let store = try openStore(dir)
        let a = try store.addAthlete(StoredAthlete(name: "Cy")).id!
        func run(_ s: Double, _ wall: Int64, distance: Double = 30, type: String = "flying") throws -> CommittedRun {
            try store.write(sampleRun(seconds: s, distance: distance, startType: type, athlete: a, wall: wall))
        }
        #expect(try run(3.50, wallMs(2025, 6, 1)).bests == BestsSet(personal: true, season: true))
        #expect(try run(3.60, wallMs(2025, 6, 2)).bests == .none)
        #expect(try run(3.40, wallMs(2025, 6, 3)).bests == BestsSet(personal: true, season: true))
        // New season: the first run is a season best but not a personal best.
        #expect(try run(3.55, wallMs(2026, 6, 1)).bests == BestsSet(personal: false, season: true))
        #expect(try run(3.45, wallMs(2026, 6, 2)).bests == BestsSet(personal: false, season: true))
        // A tie does not take the best from the earlier run.
        #expect(try run(3.45, wallMs(2026, 6, 3)).bests == .none)
        #expect(try run(3.39, wallMs(2026, 6, 4)).bests == BestsSet(personal: true, season: true))
        // Another key is filed apart.
        #expect(try run(7.9, wallMs(2026, 6, 5), distance: 60, type: "countdown").bests == BestsSet(personal: true, season: true))
        let bests = try store.bests(athleteID: a)
        let keys = Set(bests.map { "\($0.key)/\($0.season.map(String.init) ?? "pb")/\(CSVCheck.ms($0.totalNs))" })
        #expect(keys == ["flying_30m/pb/3390", "flying_30m/2025/3400", "flying_30m/2026/3390",
                         "countdown_60m/pb/7900", "countdown_60m/2026/7900"])
        // A run without an athlete files no bests.
        #expect(try store.write(sampleRun(seconds: 1, wall: wallMs(2026, 6, 6))).bests == .none)
        // The bests view: per course, the personal best, the asked season's best, and the
        // best before the personal best (3.40 s in 2025, beaten by 3.39 s).
        let lines = try store.bestLines(athleteID: a, season: 2025)
        #expect(lines.map(\.key) == ["countdown_60m", "flying_30m"])
        let flying = try #require(lines.last)
        #expect(flying.personal.totalNs == 3_390_000_000)
        #expect(flying.season?.totalNs == 3_400_000_000)
        #expect(flying.previousNs == 3_400_000_000)
        #expect(flying.improvementNs == 10_000_000)
        #expect(flying.runCount == 7)
        #expect(flying.startType == "flying" && flying.distance == 30)
        let countdown = try #require(lines.first)
        #expect(countdown.season == nil, "not run in 2025")
        #expect(countdown.previousNs == nil, "the first time is the best")
        #expect(try store.bestBefore(runID: flying.personal.runID) == 3_400_000_000)
    }

    /// Clear all empties every area: GPS runs, ended ski tracks and erg sessions go with the
    /// sprint results; a track and a session still being recorded stay and go on.
    @Test func clearAllClearsEveryAreaButWhatIsBeingRecorded() throws {
        let dir = TempDir()
        let store = try openStore(dir)
        let vehicle = try store.addVehicle(Vehicle(name: "Van"))
        for i in 0 ..< 3 {
            _ = try store.addGPSRun(GPSRunRecord(vehicleID: vehicle.id, wallTime: 1_800_000_000 + Double(i),
                                                 milestones: [GPSMilestoneRecord(name: "0-60 mph", seconds: 5, uncertainty: 0.02, speed: 26.8)],
                                                 topSpeed: 30, topSpeedSeconds: 8, distance: 200, voided: nil, fixRate: 10, rollout: false,
                                                 accuracyGate: 10))
        }
        let ended = try store.startSkiTrack(name: "Morning", sport: .ski, wallTime: 1_768_467_000)
        _ = try store.appendSkiPoints(trackID: ended.id, (0 ..< 10).map { SkiTrackStoreTests.point($0) })
        try store.stopSkiTrack(id: ended.id, wallTime: 1_768_468_000)
        let recording = try store.startSkiTrack(name: "Afternoon", sport: .ski, wallTime: 1_768_470_000)
        _ = try store.appendSkiPoints(trackID: recording.id, (20 ..< 25).map { SkiTrackStoreTests.point($0) })
        let rowed = try store.startErgSession(erg: "PM5 1", athlete: "Ada", workout: "2000 m", wallTime: 1_800_000_000)
        try store.finishErgSession(id: rowed.id, summary: nil, more: nil, wallTime: 1_800_000_500)
        let rowing = try store.startErgSession(erg: "PM5 2", athlete: "Grace", workout: "2000 m", wallTime: 1_800_000_100)
        _ = try store.write(sampleRun(seconds: 3, athlete: nil, wall: wallMs(2026, 6, 1, 12, 0)))

        #expect(try store.clearAll() == 1)
        #expect(try store.gpsRuns(GPSRunQuery()).isEmpty)
        #expect(try store.skiTracks().map(\.id) == [recording.id])
        #expect(try store.ergSessions().map(\.id) == [rowing.id])
        // The garage stays; the track being recorded takes more fixes.
        #expect(try store.garage().vehicles.map(\.vehicle.id) == [vehicle.id])
        #expect(try store.appendSkiPoints(trackID: recording.id, [SkiTrackStoreTests.point(30)]) == 1)
    }

    @Test func usageCountsAndClearAllEmptiesTheFile() throws {
        let dir = TempDir()
        let store = try openStore(dir)
        let a = try store.addAthlete(StoredAthlete(name: "Di")).id!
        let big = [UInt8]([0xFF, 0xD8]) + [UInt8](repeating: 0x55, count: 200_000) + [0xFF, 0xD9]
        for i in 0..<20 {
            let c = try store.write(sampleRun(seconds: 3 + Double(i) / 100, athlete: a, wall: wallMs(2026, 6, 1, 12, i)))
            try store.savePhoto(runID: c.run.id!, jpeg: big, thumbnails: [])
        }
        let full = try store.usage()
        #expect(full.runs == 20 && full.sessions == 1 && full.athletes == 1 && full.images == 20)
        #expect(full.bytes > 20 * 200_000)
        #expect(try store.clearAll() == 20)
        let empty = try store.usage()
        #expect(empty.runs == 0 && empty.sessions == 0 && empty.athletes == 0 && empty.images == 0)
        // The space goes back: under a tenth of what the images took.
        #expect(empty.bytes < full.bytes / 10)
        #expect(try store.bests().isEmpty)
        #expect(try store.integrityCheck() == ["ok"])
    }

    @Test func bestKeysLikeTheReferenceApp() {
        #expect(BestKey.make(startType: "flying", distance: 30) == "flying_30m")
        #expect(BestKey.make(startType: "countdown", distance: 60) == "countdown_60m")
        #expect(BestKey.make(startType: "button-release", distance: 36.576) == "button_release_36.576m")
        #expect(BestKey.make(startType: "in-frame", distance: 18.5) == "in_frame_18.5m")
    }

    @Test func deletingARunOrSessionRebuildsBests() throws {
        let dir = TempDir()
        let store = try openStore(dir)
        let a = try store.addAthlete(StoredAthlete(name: "Di")).id!
        let t = wallMs(2026, 7, 1, 10)
        let slow = try store.write(sampleRun(seconds: 3.6, athlete: a, wall: t))
        let fast = try store.write(sampleRun(seconds: 3.4, athlete: a, wall: t + 60_000))
        try store.deleteRun(id: fast.run.id!)
        #expect(try store.bests(athleteID: a).allSatisfy { $0.runID == slow.run.id })
        #expect(try store.run(id: slow.run.id!).bests == BestsSet(personal: true, season: true))
        #expect(throws: StoreError.self) { try store.deleteRun(id: fast.run.id!) }
        // A later session with a faster run, then delete that session.
        let later = try store.startSession(name: "later", wallMs: t + 10 * 3_600_000)
        let r = try store.write(sampleRun(seconds: 3.3, athlete: a, wall: t + 10 * 3_600_000 + 1000))
        #expect(r.run.sessionID == later.id)
        #expect(try store.deleteSession(id: later.id) == 1)
        #expect(try store.count() == 1)
        #expect(try store.bests(athleteID: a).map(\.runID) == [slow.run.id!, slow.run.id!])
        #expect(throws: StoreError.self) { try store.deleteSession(id: later.id) }
        // Reassigning moves the bests.
        let b = try store.addAthlete(StoredAthlete(name: "Ed")).id!
        #expect(try store.assignRun(id: slow.run.id!, athleteID: b) == BestsSet(personal: true, season: true))
        #expect(try store.bests(athleteID: a).isEmpty)
        #expect(try store.bests(athleteID: b).count == 2)
    }

    @Test func photosRoundTripAndAreCheckedAndDeletedWithTheRun() throws {
        let dir = TempDir()
        let store = try openStore(dir)
        let id = try store.write(sampleRun(seconds: 3, wall: wallMs(2026, 6, 1))).run.id!
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 7, count: 5000) + [0xFF, 0xD9]
        let thumbs: [[UInt8]] = [[0xFF, 0xD8, 1, 2, 0xFF, 0xD9], [0xFF, 0xD8, 3, 4, 5, 0xFF, 0xD9]]
        try store.savePhoto(runID: id, jpeg: jpeg, thumbnails: thumbs)
        #expect(try store.photo(runID: id) == StoredPhoto(runID: id, jpeg: jpeg, thumbnails: thumbs))
        #expect(try store.thumbnail(runID: id, index: 1) == thumbs[1])
        #expect(try store.thumbnail(runID: id, index: 2) == nil)
        #expect(try store.run(id: id).hasPhoto)
        // Replacing keeps one photo.
        try store.savePhoto(runID: id, jpeg: jpeg, thumbnails: [])
        #expect(try store.photo(runID: id)?.thumbnails == [])
        #expect(throws: StoreError.self) { try store.savePhoto(runID: id, jpeg: [1, 2, 3, 4], thumbnails: []) }
        #expect(throws: StoreError.self) { try store.savePhoto(runID: 999, jpeg: jpeg, thumbnails: []) }
        #expect(throws: StoreError.self) {
            try store.savePhoto(runID: id, jpeg: [0xFF, 0xD8] + [UInt8](repeating: 0, count: RunStore.maxPhotoBytes), thumbnails: [])
        }
        try store.deleteRun(id: id)
        #expect(try store.photo(runID: id) == nil)
    }

    @Test func notesAndSessionsUpdate() throws {
        let dir = TempDir()
        let store = try openStore(dir)
        let c = try store.write(sampleRun(seconds: 3, wall: wallMs(2026, 6, 1)))
        try store.setNotes(runID: c.run.id!, notes: "spikes")
        #expect(try store.run(id: c.run.id!).run.notes == "spikes")
        #expect(throws: StoreError.self) { try store.setNotes(runID: 42, notes: "x") }
        try store.updateSession(id: c.run.sessionID!, name: "Morning", notes: "cold")
        #expect(try store.sessions().first?.name == "Morning")
        var ath = try store.addAthlete(StoredAthlete(name: "Flo"))
        ath.nickname = "F"
        ath.colour = .pink
        try store.updateAthlete(ath)
        #expect(try store.athlete(id: ath.id!).colour == .pink)
        #expect(throws: StoreError.self) { try store.updateAthlete(StoredAthlete(id: 99, name: "Nobody")) }
    }
}

enum CSVCheck {
    static func ms(_ ns: Int64) -> Int64 { (ns + 500_000) / 1_000_000 }
}

@Suite struct CorrectionTests {
    /// A photo finish 1 ms per column, the timed crossing at image column 100 of a
    /// composite from column 6, 600 columns wide: it shows −94 ms … +505 ms.
    static let scale = PhotoScale(crossingX: 100, nanosecondsPerColumn: 1_000_000, compositeX: 6, compositeWidth: 600)
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xD9]

    @Test func aFinishPlacedByHandRetimesTheRunAndItsBests() throws {
        let dir = TempDir()
        let store = try openStore(dir)
        let a = try store.addAthlete(StoredAthlete(name: "Eve")).id!
        let slow = try store.write(sampleRun(seconds: 3.50, athlete: a, wall: wallMs(2026, 6, 1, 12, 0))).run.id!
        let fast = try store.write(sampleRun(seconds: 3.45, athlete: a, wall: wallMs(2026, 6, 1, 12, 5))).run.id!
        try store.savePhoto(runID: slow, jpeg: Self.jpeg, thumbnails: [], scale: Self.scale)
        #expect(try store.photo(runID: slow)?.scale == Self.scale)
        #expect(try store.photoScale(runID: slow)?.offsetRange == -94_000_000...505_000_000)
        // The detector was late by 60 ms: placed by hand, the run is 3.44 s and the PB.
        let corrected = try store.correctFinish(runID: slow, offsetNs: -60_000_000)
        #expect(corrected.run.totalNs == 3_440_000_000)
        #expect(corrected.run.originalTotalNs == 3_500_000_000)
        #expect(corrected.run.splits.last?.timeNs == 3_440_000_000)
        #expect(corrected.run.splits.last?.segmentNs == 3_440_000_000)
        #expect(abs((corrected.run.splits.last?.segmentSpeed ?? 0) - 30 / 3.44) < 1e-9)
        #expect(corrected.bests.personal)
        #expect(try store.run(id: fast).bests == .none)
        #expect(try store.bestLines(athleteID: a, season: 2026).first?.personal.totalNs == 3_440_000_000)
        // Placed again: relative to what the gate measured, not to the last placement.
        #expect(try store.correctFinish(runID: slow, offsetNs: 10_000_000).run.totalNs == 3_510_000_000)
        #expect(try store.run(id: fast).bests.personal)
        // The export says both times.
        let csv = try store.export(.csv).split(separator: "\r\n").map(String.init)
        let header = csv[0].split(separator: ",").map(String.init)
        let row = try #require(csv.first { $0.hasPrefix("\(slow),") }).split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        #expect(row[try #require(header.firstIndex(of: "time_s"))] == "3.510")
        #expect(row[try #require(header.firstIndex(of: "measured_time_s"))] == "3.500")
        // Undone: as measured, unmarked.
        let undone = try store.correctFinish(runID: slow, offsetNs: nil)
        #expect(undone.run.totalNs == 3_500_000_000 && undone.run.originalTotalNs == nil)
        #expect(undone.run.splits.last?.timeNs == 3_500_000_000)
    }

    /// A 60 m over three gates (start, 30 m, finish at 60 m): the finish gate's photo,
    /// with the scale that came in its bundle, re-times the finish split only.
    @Test func aRaceIsCorrectedOnItsFinishGatesPhoto() throws {
        let dir = TempDir()
        let store = try openStore(dir)
        let a = try store.addAthlete(StoredAthlete(name: "Ria")).id!
        let splits = [StoredSplit(gateIndex: 1, distance: 30, timeNs: 4_000_000_000, segmentNs: 4_000_000_000, segmentSpeed: 7.5,
                                  syncUncertaintyNs: 900_000),
                      StoredSplit(gateIndex: 2, distance: 60, timeNs: 7_000_000_000, segmentNs: 3_000_000_000, segmentSpeed: 10,
                                  syncUncertaintyNs: 1_100_000)]
        let race = try store.write(StoredRun(startType: "button-release", presetID: nil, distance: 60, athleteID: a,
                                             wallStartMs: wallMs(2026, 6, 2), startMonoNs: 1_000_000_000, totalNs: 7_000_000_000,
                                             gateCount: 3, splits: splits, crossings: [], notes: "")).run.id!
        #expect(throws: StoreError.self, "no photo yet") { try store.correctFinish(runID: race, offsetNs: 1_000_000) }
        try store.savePhoto(runID: race, jpeg: Self.jpeg, thumbnails: [], scale: Self.scale)
        // The finish gate fired 50 ms early: placed by hand, 7.05 s; the last 30 m took
        // 3.05 s at 30 / 3.05 m/s; the 30 m split is untouched.
        let r = try store.correctFinish(runID: race, offsetNs: 50_000_000).run
        #expect(r.totalNs == 7_050_000_000 && r.originalTotalNs == 7_000_000_000)
        #expect(r.splits.map(\.timeNs) == [4_000_000_000, 7_050_000_000])
        #expect(r.splits.map(\.segmentNs) == [4_000_000_000, 3_050_000_000])
        #expect(r.splits.first?.segmentSpeed == 7.5)
        #expect(abs((r.splits.last?.segmentSpeed ?? 0) - 30 / 3.05) < 1e-9)
        #expect(try store.bestLines(athleteID: a, season: 2026).first?.personal.totalNs == 7_050_000_000)
        // Put back: as measured, the last segment's speed again 10 m/s.
        let back = try store.correctFinish(runID: race, offsetNs: nil).run
        #expect(back.totalNs == 7_000_000_000 && back.originalTotalNs == nil)
        #expect(back.splits.map(\.segmentNs) == [4_000_000_000, 3_000_000_000])
        #expect(abs((back.splits.last?.segmentSpeed ?? 0) - 10) < 1e-9)
    }

    @Test func correctionsOutsideThePictureOrWithoutOneAreRefused() throws {
        let dir = TempDir()
        let store = try openStore(dir)
        let run = try store.write(sampleRun(seconds: 3.5, wall: wallMs(2026, 6, 1))).run.id!
        #expect(throws: StoreError.self) { try store.correctFinish(runID: run, offsetNs: 1_000_000) }
        try store.savePhoto(runID: run, jpeg: Self.jpeg, thumbnails: [], scale: Self.scale)
        for offset: Int64 in [-95_000_000, 506_000_000] {
            #expect(throws: StoreError.self, "\(offset)") { try store.correctFinish(runID: run, offsetNs: offset) }
        }
        #expect(try store.run(id: run).run.totalNs == 3_500_000_000, "a refused correction changes nothing")
        #expect(throws: StoreError.self) { try store.correctFinish(runID: 999, offsetNs: 0) }
        #expect(throws: StoreError.self) {
            try store.savePhoto(runID: run, jpeg: Self.jpeg, thumbnails: [],
                                scale: PhotoScale(crossingX: .nan, nanosecondsPerColumn: 1, compositeX: 0, compositeWidth: 9))
        }
    }
}

@Suite struct RosterTests {
    @Test func eachTimedRunHandsTheNextRunOnAndAFalseStartDoesNot() throws {
        let dir = TempDir()
        let store = try openStore(dir)
        let ids = try ["Ann", "Bob", "Cat"].map { try store.addAthlete(StoredAthlete(name: $0)).id! }
        try store.setRoster(ids)
        #expect(try store.roster().map(\.name) == ["Ann", "Bob", "Cat"])
        #expect(try store.nextRunAthlete()?.name == "Ann")
        var ran: [Int64?] = []
        for i in 0..<4 {
            ran.append(try store.write(sampleRun(seconds: 3 + Double(i) / 10, wall: wallMs(2026, 6, 1, 12, i))).run.athleteID)
        }
        #expect(ran == [ids[0], ids[1], ids[2], ids[0]])
        // A false start keeps the athlete: Bob runs again.
        var fs = sampleRun(seconds: 3, wall: wallMs(2026, 6, 1, 12, 10))
        fs.falseStart = true
        fs.totalNs = nil
        #expect(try store.write(fs).run.athleteID == ids[1])
        #expect(try store.nextRunAthlete()?.name == "Bob")
        // Bob leaves the squad: the rotation goes on without him.
        try store.deleteAthlete(id: ids[1])
        #expect(try store.roster().map(\.name) == ["Ann", "Cat"])
        try store.assignNextRun(athleteID: ids[2])
        #expect(try store.write(sampleRun(seconds: 3, wall: wallMs(2026, 6, 1, 12, 20))).run.athleteID == ids[2])
        #expect(try store.nextRunAthlete()?.name == "Ann")
        #expect(try store.latestSessionAthletes().map(\.name) == ["Ann", "Cat"])
        // Stopped: the next run is the last one given, then nobody.
        try store.setRoster([])
        #expect(try store.roster().isEmpty)
        _ = try store.write(sampleRun(seconds: 3, wall: wallMs(2026, 6, 1, 12, 30)))
        #expect(try store.nextRunAthlete() == nil)
        #expect(throws: StoreError.self) { try store.setRoster([ids[0], ids[0]]) }
        #expect(throws: StoreError.self) { try store.setRoster([999]) }
        try store.setRoster([ids[0]])
        try store.clearAll()
        #expect(try store.roster().isEmpty && store.nextRunAthlete() == nil)
    }
}
