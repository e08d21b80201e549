// SPDX-License-Identifier: Apache-2.0
// History filters, sorts and search; CSV and JSON export; the v1 to v2 migration.

import Foundation
import GateCore
@testable import SQLiteStore
import Testing

@Suite struct HistoryTests {
    /// Two athletes, three days, mixed distances and start types, one false start.
    func seeded() throws -> (TempDir, RunStore, ada: Int64, bo: Int64) {
        let dir = TempDir()
        let store = try openStore(dir)
        let ada = try store.addAthlete(StoredAthlete(name: "Ada Lovelace", nickname: "Rocket", colour: .red)).id!
        let bo = try store.addAthlete(StoredAthlete(name: "Bo Diddley", colour: .blue)).id!
        try store.write(sampleRun(seconds: 3.50, athlete: ada, wall: wallMs(2026, 6, 1, 10, 0), preset: "flying-30m"),
                        preset: StoredPreset(id: "flying-30m", title: "Flying 30 m", distance: 30, startType: "flying"))
        try store.write(sampleRun(seconds: 3.30, athlete: ada, wall: wallMs(2026, 6, 1, 10, 5), preset: "flying-30m"))
        try store.write(sampleRun(seconds: 7.80, distance: 60, startType: "countdown", athlete: bo, wall: wallMs(2026, 6, 2, 10, 0),
                                  notes: "headwind 100% of the way"))
        try store.write(sampleRun(seconds: 3.90, athlete: bo, wall: wallMs(2026, 6, 3, 10, 0), gateCount: 2))
        var fs = sampleRun(seconds: 0, startType: "voice", athlete: ada, wall: wallMs(2026, 6, 3, 11, 0))
        fs.totalNs = nil
        fs.splits = []
        fs.falseStart = true
        try store.write(fs)
        try store.write(sampleRun(seconds: 4.00, athlete: ada, wall: wallMs(2026, 6, 3, 12, 0)))
        return (dir, store, ada, bo)
    }

    func seconds(_ rows: [HistoryRow]) -> [Double?] { rows.map { $0.run.seconds.map { ($0 * 100).rounded() / 100 } } }

    @Test func sortsNewestOldestFastestMostRuns() throws {
        let seed = try seeded()
        defer { withExtendedLifetime(seed) {} }
        let store = seed.1, ada = seed.ada, bo = seed.bo
        #expect(seconds(try store.history(RunFilter(sort: .newest))) == [4.0, nil, 3.9, 7.8, 3.3, 3.5])
        #expect(seconds(try store.history(RunFilter(sort: .oldest))) == [3.5, 3.3, 7.8, 3.9, nil, 4.0])
        #expect(seconds(try store.history(RunFilter(sort: .fastest))) == [3.3, 3.5, 3.9, 4.0, 7.8, nil])
        let most = try store.history(RunFilter(sort: .mostRuns))
        #expect(most.map(\.run.athleteID) == [ada, ada, ada, ada, bo, bo])
        #expect(try store.athleteTallies().map { $0.athlete?.name } == ["Ada Lovelace", "Bo Diddley"])
        #expect(try store.athleteTallies().map(\.runCount) == [4, 2])
        // "Most runs" counts within the filter: flying runs only, Ada 3, Bo 1.
        #expect(try store.athleteTallies(RunFilter(startType: "flying")).map(\.runCount) == [3, 1])
    }

    @Test func filters() throws {
        let seed = try seeded()
        defer { withExtendedLifetime(seed) {} }
        let store = seed.1, ada = seed.ada, bo = seed.bo
        #expect(try store.count(RunFilter(fromWallMs: wallMs(2026, 6, 2, 0), toWallMs: wallMs(2026, 6, 3, 0))) == 1)
        #expect(seconds(try store.history(RunFilter(distance: 60))) == [7.8])
        #expect(try store.count(RunFilter(startType: "flying")) == 4)
        #expect(seconds(try store.history(RunFilter(gateCount: 2))) == [3.9])
        #expect(try store.count(RunFilter(athleteID: bo)) == 2)
        #expect(try store.count(RunFilter(athleteID: ada, includeFalseStarts: false)) == 3)
        let page = try store.history(RunFilter(sort: .oldest, limit: 2, offset: 2))
        #expect(seconds(page) == [7.8, 3.9])
        let first = try #require(try store.history(RunFilter(sort: .oldest)).first)
        #expect(try store.count(RunFilter(sessionID: first.run.sessionID)) == 2)
    }

    @Test func textSearchCoversNamesNicknamePresetAndNotes() throws {
        let seed = try seeded()
        defer { withExtendedLifetime(seed) {} }
        let store = seed.1
        #expect(try store.count(RunFilter(search: "lovelace")) == 4)
        #expect(try store.count(RunFilter(search: "ROCKET")) == 4)
        #expect(try store.count(RunFilter(search: "Flying 30")) == 2)
        #expect(try store.count(RunFilter(search: "headwind")) == 1)
        // LIKE wildcards in the text are literal.
        #expect(try store.count(RunFilter(search: "100%")) == 1)
        #expect(try store.count(RunFilter(search: "1_0")) == 0)
        #expect(try store.count(RunFilter(search: "nobody")) == 0)
        #expect(try store.count(RunFilter(search: "   ")) == 6)
    }

    @Test func currentBestsAreFlaggedInHistory() throws {
        let seed = try seeded()
        defer { withExtendedLifetime(seed) {} }
        let store = seed.1, ada = seed.ada
        let rows = try store.history(RunFilter(athleteID: ada, sort: .fastest))
        #expect(rows.map(\.bests.personal) == [true, false, false, false])
    }

    @Test func jsonExportHoldsEverything() throws {
        let seed = try seeded()
        defer { withExtendedLifetime(seed) {} }
        let store = seed.1
        let text = try store.export(.json)
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(obj["format"] as? String == "sprintgate-results")
        #expect((obj["runs"] as? [Any])?.count == 6)
        #expect((obj["athletes"] as? [Any])?.count == 2)
        #expect((obj["sessions"] as? [Any])?.count == 3)
        #expect((obj["bests"] as? [Any])?.isEmpty == false)
        #expect((obj["presets"] as? [[String: Any]])?.first?["title"] as? String == "Flying 30 m")
        // It decodes back into the record types.
        let doc = try JSONDecoder().decode(ExportDocument.self, from: Data(text.utf8))
        #expect(doc.runs.first?.run.splits.first?.timeNs == 3_500_000_000)
        #expect(doc.runs.first?.athleteName == "Ada Lovelace")
    }

    @Test func csvExportOneRowPerRunQuoted() throws {
        let seed = try seeded()
        defer { withExtendedLifetime(seed) {} }
        let store = seed.1
        let csv = try store.export(.csv)
        let lines = csv.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(lines.count == 7)
        #expect(lines[0].hasPrefix("run_id,session_id,start_local,athlete,nickname,start_type,preset,distance_m,time_s"))
        #expect(lines[0].hasSuffix("gate1_distance_m,gate1_time_s,gate1_segment_s,gate1_speed_mps,gate1_uncertainty_ms"))
        #expect(lines[1].contains(",Ada Lovelace,Rocket,flying,flying-30m,30,3.500,0,,1,0,0,"))
        #expect(lines[3].contains("\"headwind 100% of the way\"") == false)
        #expect(lines[3].contains("headwind 100% of the way"))
        #expect(CSV.quoted("a,b") == "\"a,b\"")
        #expect(CSV.quoted("say \"hi\"") == "\"say \"\"hi\"\"\"")
        #expect(CSV.quoted("=cmd()") == "'=cmd()")
        #expect(CSV.quoted("-3.5") == "-3.5")
    }

    @Test func aVersionOneDatabaseMigrates() throws {
        let dir = TempDir()
        let wall = wallMs(2025, 8, 1)
        try RunStore.createV1Database(path: dir.dbPath, sql: """
            INSERT INTO sessions (id, started_wall_ms, name) VALUES (1, \(wall), 'old');
            INSERT INTO athletes (id, name, nickname, colour, birthdate, gender) VALUES (1, 'Old Timer', NULL, 'purple', '1990-01-31', 'male');
            INSERT INTO runs (id, session_id, athlete_id, start_type, preset_id, distance_m, wall_start_ms, start_mono_ns,
                              total_ns, false_start, gate_count) VALUES
                (1, 1, 1, 'flying', 'flying-30m', 30, \(wall), 5, 3600000000, 0, 1),
                (2, 1, 1, 'flying', 'flying-30m', 30, \(wall + 60000), 6, 3500000000, 0, 1);
            INSERT INTO splits (run_id, gate_index, distance_m, time_ns, segment_ns, speed_mps, sync_uncertainty_ns)
                VALUES (1, 1, 30, 3600000000, 3600000000, 8.33, 1000000);
            """)
        let store = try RunStore(path: dir.dbPath, logger: quietLog)
        #expect(try store.appliedMigrations().count == 11)
        #expect(try store.integrityCheck() == ["ok"])
        #expect(try store.history().allSatisfy { $0.photoGates.isEmpty })
        #expect(try store.count() == 2)
        #expect(try store.run(id: 1).run.splits.count == 1)
        #expect(try store.athlete(id: 1).birthdate == CalendarDate("1990-01-31"))
        // The migration filed the old runs' bests.
        let bests = try store.bests(athleteID: 1)
        #expect(bests.map(\.runID) == [2, 2])
        #expect(bests.map(\.key) == ["flying_30m", "flying_30m"])
        #expect(Set(bests.map(\.season)) == [nil, 2025])
        // And new runs compare against them.
        let c = try store.write(sampleRun(seconds: 3.55, athlete: 1, wall: wallMs(2026, 6, 1)))
        #expect(c.bests == BestsSet(personal: false, season: true))
    }
}
