// SPDX-License-Identifier: Apache-2.0
// Power loss mid-write: SIGKILL a writer process during writes, reopen, check nothing was lost or torn.

import Foundation
import GateCore
import Rowing
import SQLiteStore
import Testing

@Suite struct PowerLossTests {
    /// Matches `splitsPerRun` and `crossingsPerRun` in Sources/StoreCrashWriter.
    static let splitsPerRun = 3
    static let crossingsPerRun = 5

    /// The crash writer built beside the test bundle (`swift build` builds it with the tests),
    /// or the path in `SPRINTGATE_CRASH_WRITER`.
    static func writerPath() -> String? {
        if let p = ProcessInfo.processInfo.environment["SPRINTGATE_CRASH_WRITER"] { return p }
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("StoreCrashWriter").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return nil
    }

    /// Runs the writer until it has reported `atLeast` commits plus a random extra delay,
    /// SIGKILLs it, and returns the ids it reported as committed.
    static func runAndKill(writer: String, db: String, firstWall: Int64, atLeast: Int, extraMs: Int, ski: Bool = false,
                           erg: Bool = false) throws -> [Int64] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: writer)
        p.arguments = ski ? ["--ski", db] : erg ? ["--erg", db] : [db, String(firstWall)]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        var text = ""
        let deadline = Date().addingTimeInterval(60)
        var killed = false
        while Date() < deadline {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
            if !killed, text.components(separatedBy: "committed").count - 1 >= atLeast {
                usleep(useconds_t(extraMs * 1000))
                kill(p.processIdentifier, SIGKILL)
                killed = true
            }
        }
        if !killed { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        // After the kill the pipe holds whatever the writer managed to report before it died.
        let rest = out.fileHandleForReading.readDataToEndOfFile()
        text += String(decoding: rest, as: UTF8.self)
        #expect(p.terminationReason == .uncaughtSignal, "the writer ended on its own: \(p.terminationStatus)")
        // Only whole lines count: a line torn by the kill was never fully reported.
        return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().compactMap { line in
            line.hasPrefix("committed ") ? Int64(line.dropFirst("committed ".count)) : nil
        }
    }

    @Test(.timeLimit(.minutes(3))) func killedWriterLosesNoCommittedRunAndTearsNone() throws {
        guard let writer = Self.writerPath() else {
            Issue.record("StoreCrashWriter is not built: run `swift build --product StoreCrashWriter` or set SPRINTGATE_CRASH_WRITER")
            return
        }
        let dir = TempDir()
        var reported: [Int64] = []
        var seed = UInt64(ProcessInfo.processInfo.environment["SPRINTGATE_TEST_SEED"].flatMap(UInt64.init) ?? UInt64(Date().timeIntervalSince1970))
        print("power-loss test seed \(seed) (SPRINTGATE_TEST_SEED to reproduce)")
        for round in 0..<4 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            let extra = Int((seed >> 33) % 40)
            let ids = try Self.runAndKill(writer: writer, db: dir.dbPath, firstWall: 1_780_000_000_000 + Int64(round) * 10_000_000,
                                          atLeast: 20, extraMs: extra)
            #expect(ids.count >= 20, "round \(round): the writer reported only \(ids.count) commits")
            reported += ids
            let store = try RunStore(path: dir.dbPath, logger: quietLog)
            #expect(try store.integrityCheck() == ["ok"], "round \(round)")
            let rows = try store.history(RunFilter(sort: .oldest, limit: 10_000))
            let present = Set(rows.compactMap(\.run.id))
            let missing = reported.filter { !present.contains($0) }
            #expect(missing.isEmpty, "round \(round): committed runs missing after the kill: \(missing.prefix(10))")
            for r in rows {
                #expect(r.run.splits.count == Self.splitsPerRun, "run \(r.run.id ?? -1) has \(r.run.splits.count) splits")
                #expect(r.run.crossings.count == Self.crossingsPerRun, "run \(r.run.id ?? -1) has \(r.run.crossings.count) crossings")
                #expect(r.run.totalNs == r.run.splits.last?.timeNs)
            }
            // Bests stay consistent with the runs that survived.
            for b in try store.bests() { #expect(present.contains(b.runID)) }
        }
    }

    @Test(.timeLimit(.minutes(3))) func killedSkiLoggerLosesNoCommittedFixAndTakesItsTrackUpAgain() throws {
        guard let writer = Self.writerPath() else {
            Issue.record("StoreCrashWriter is not built: run `swift build --product StoreCrashWriter` or set SPRINTGATE_CRASH_WRITER")
            return
        }
        let dir = TempDir()
        var seed = UInt64(ProcessInfo.processInfo.environment["SPRINTGATE_TEST_SEED"].flatMap(UInt64.init) ?? UInt64(Date().timeIntervalSince1970))
        print("ski power-loss test seed \(seed) (SPRINTGATE_TEST_SEED to reproduce)")
        for round in 0..<4 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            let counts = try Self.runAndKill(writer: writer, db: dir.dbPath, firstWall: 0, atLeast: 20, extraMs: Int((seed >> 33) % 40), ski: true)
            #expect(counts.count >= 20, "round \(round): the writer reported only \(counts.count) commits")
            let store = try RunStore(path: dir.dbPath, logger: quietLog)
            #expect(try store.integrityCheck() == ["ok"], "round \(round)")
            // One track, still being recorded, with every fix reported and whole batches only.
            let tracks = try store.skiTracks()
            #expect(tracks.count == 1 && tracks.first?.recording == true, "round \(round): \(tracks)")
            let stored = tracks.first?.points ?? 0
            print("ski power-loss round \(round): \(stored) fixes stored, \(counts.last ?? 0) reported before the kill")
            #expect(stored >= Int(counts.last ?? 0), "round \(round): \(stored) fixes stored, \(counts.last ?? 0) reported")
            #expect(stored % 10 == 0, "round \(round): \(stored) fixes: a batch was torn")
            let times = try store.skiPoints(trackID: tracks.first?.id ?? 0).map(\.timeNs)
            #expect(times == (0 ..< Int64(stored)).map { 1_780_000_000_000_000_000 + $0 * 100_000_000 }, "round \(round): fixes missing or doubled")
        }
    }

    /// Matches `ergWorkout` and `ergBatch` in Sources/StoreCrashWriter.
    static func ergWorkout() -> PM5Piece {
        var p = PM5Piece()
        p.intervals = Array(repeating: PM5Workout.Interval(.metres(500), restSeconds: 60), count: 20)
        return p
    }
    static let ergBatch = 5

    @Test(.timeLimit(.minutes(3))) func killedErgHubLosesNoCommittedStrokeAndTearsNone() throws {
        guard let writer = Self.writerPath() else {
            Issue.record("StoreCrashWriter is not built: run `swift build --product StoreCrashWriter` or set SPRINTGATE_CRASH_WRITER")
            return
        }
        let dir = TempDir()
        var seed = UInt64(ProcessInfo.processInfo.environment["SPRINTGATE_TEST_SEED"].flatMap(UInt64.init) ?? UInt64(Date().timeIntervalSince1970))
        print("erg power-loss test seed \(seed) (SPRINTGATE_TEST_SEED to reproduce)")
        // The workout's strokes in order, as (interval, stroke count).
        let truth = Self.ergWorkout().events()
        let sequence = zip(truth.intervalsArrived, truth.strokesArrived).map { [$0, Int($1)] }
        var before: [Int64: Int] = [:]
        for round in 0..<4 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            let counts = try Self.runAndKill(writer: writer, db: dir.dbPath, firstWall: 0, atLeast: 20, extraMs: Int((seed >> 33) % 40), erg: true)
            #expect(counts.count >= 20, "round \(round): the writer reported only \(counts.count) commits")
            let store = try RunStore(path: dir.dbPath, logger: quietLog)
            #expect(try store.integrityCheck() == ["ok"], "round \(round)")
            let sessions = try store.ergSessions()
            #expect(sessions.count == round + 1, "round \(round): \(sessions.count) sessions")
            // The earlier rounds' sessions are as they were.
            for s in sessions where before[s.id] != nil { #expect(s.strokes == before[s.id], "round \(round): session \(s.id) changed") }
            let newest = try #require(sessions.first)
            let strokes = try store.ergStrokes(sessionID: newest.id).map { [$0.interval, $0.stroke] }
            print("erg power-loss round \(round): \(strokes.count) strokes stored, \(counts.last ?? 0) reported before the kill")
            // Every stroke reported is there, once, in order; whole batches only.
            #expect(strokes.count >= Int(counts.last ?? 0), "round \(round): \(strokes.count) strokes stored, \(counts.last ?? 0) reported")
            #expect(strokes.count % Self.ergBatch == 0, "round \(round): \(strokes.count) strokes: a batch was torn")
            #expect(strokes == Array(sequence.prefix(strokes.count)), "round \(round): strokes missing, doubled or out of order")
            #expect(Set(strokes.map { $0[0] }).count > 1, "round \(round): the kill came before a second interval")
            before = Dictionary(uniqueKeysWithValues: sessions.map { ($0.id, $0.strokes) })
        }
    }
}
