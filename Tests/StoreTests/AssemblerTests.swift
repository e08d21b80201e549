// SPDX-License-Identifier: Apache-2.0
// The run assembler over event sequences as the loop reports them; the writer thread and its queue.

import Foundation
import GateCore
import SQLiteStore
import Synchronization
import Testing

func mono(_ s: Double) -> MonotonicInstant { MonotonicInstant(seconds: s) }

func crossing(_ s: Double, sigmaMs: Double = 1.2) -> Crossing {
    Crossing(time: mono(s), uncertainty: .milliseconds(sigmaMs), direction: .leftToRight, blobHeight: 0.55,
             speedWorkPixelsPerSecond: 700, reportedAtSequence: 1)
}

@Suite struct AssemblerTests {
    let flying30 = StoredPreset(id: "flying-30m", title: "Flying 30 m", distance: 30, startType: "flying")

    func feed(_ a: inout RunAssembler, _ events: [RunEvent]) -> [StoredRun] {
        events.compactMap { a.consume($0) }
    }

    @Test func normalRunLapThenFinishGivesOneRun() throws {
        var a = RunAssembler(context: RunContext(preset: StoredPreset(id: "30m", title: "30 m", distance: 30, startType: "button-release")))
        let runs = feed(&a, [
            .crossing(crossing(99)),  // before the start: not part of the run
            .started(at: mono(100), startType: "button-release", wallMs: 1_000_000),
            .crossing(crossing(104.25, sigmaMs: 0.8)),
            .lap(number: 1, at: mono(104.25), split: .seconds(4.25), lap: .seconds(4.25)),
            .finished(at: mono(104.25), time: .seconds(4.25)),
            .stopped,
        ])
        let run = try #require(runs.first)
        #expect(runs.count == 1)
        #expect(run.totalNs == 4_250_000_000)
        #expect(run.startType == "button-release")
        #expect(run.presetID == "30m")
        #expect(run.distance == 30)
        #expect(run.wallStartMs == 1_000_000)
        #expect(run.startMonoNs == 100_000_000_000)
        #expect(run.crossings.count == 1)
        #expect(run.splits == [StoredSplit(gateIndex: 1, distance: 30, timeNs: 4_250_000_000, segmentNs: 4_250_000_000,
                                           segmentSpeed: 30 / 4.25, syncUncertaintyNs: 800_000)])
        #expect(!a.inProgress)
    }

    @Test func flyingStartKeepsTheStartingCrossing() throws {
        var a = RunAssembler(context: RunContext(preset: flying30))
        let runs = feed(&a, [
            .crossing(crossing(10)),
            .started(at: mono(10), startType: "flying", wallMs: 5000),
            .crossing(crossing(13.4)),
            .lap(number: 1, at: mono(13.4), split: .seconds(3.4), lap: .seconds(3.4)),
            .finished(at: mono(13.4), time: .seconds(3.4)),
        ])
        #expect(runs.first?.crossings.map(\.monoNs) == [10_000_000_000, 13_400_000_000])
        #expect(runs.first?.bestKey == "flying_30m")
    }

    @Test func falseStartIsARecordAndDropsTheDraft() throws {
        var a = RunAssembler(context: RunContext(preset: StoredPreset(id: "60m", title: "60 m", distance: 60, startType: "voice")))
        let runs = feed(&a, [
            .falseStart(reason: "movement after Set before the start sound", at: mono(50), wallMs: 77),
            .lap(number: 1, at: mono(51), split: .seconds(1), lap: .seconds(1)),  // no start: ignored
            .finished(at: mono(51), time: .seconds(1)),
        ])
        #expect(runs.count == 1)
        #expect(runs[0].falseStart)
        #expect(runs[0].totalNs == nil)
        #expect(runs[0].startType == "voice")
        #expect(runs[0].falseStartReason == "movement after Set before the start sound")
    }

    @Test func falseStartTakesTheEnginesStartType() {
        var a = RunAssembler(context: RunContext(preset: flying30, startType: "countdown"))
        let run = a.consume(.falseStart(reason: "button released before the start sound", at: mono(1), wallMs: 1))
        #expect(run?.startType == "countdown")
        #expect(run?.presetID == "flying-30m")
        var bare = RunAssembler(context: RunContext())
        #expect(bare.consume(.falseStart(reason: "x", at: mono(1), wallMs: 1))?.startType == "unknown")
    }

    @Test func soloLapsEndWhenStoppedOrRestarted() throws {
        var a = RunAssembler(context: RunContext(preset: StoredPreset(id: "solo", title: "Solo laps", distance: nil, startType: "flying")))
        var runs = feed(&a, [
            .started(at: mono(0), startType: "flying", wallMs: 0),
            .lap(number: 1, at: mono(30), split: .seconds(30), lap: .seconds(30)),
            .lap(number: 2, at: mono(61), split: .seconds(61), lap: .seconds(31)),
            .lap(number: 3, at: mono(90.5), split: .seconds(90.5), lap: .seconds(29.5)),
            .started(at: mono(200), startType: "flying", wallMs: 200_000),
        ])
        #expect(runs.count == 1)
        #expect(runs[0].splits.map(\.segmentNs) == [30_000_000_000, 31_000_000_000, 29_500_000_000])
        #expect(runs[0].splits.allSatisfy { $0.distance == nil && $0.segmentSpeed == nil })
        #expect(runs[0].totalNs == 90_500_000_000)
        #expect(a.inProgress)
        // Stopped with no laps: nothing to store.
        runs = feed(&a, [.stopped])
        #expect(runs.isEmpty)
        #expect(!a.inProgress)
        // Stopped after a lap: stored.
        runs = feed(&a, [.started(at: mono(300), startType: "flying", wallMs: 1),
                         .lap(number: 1, at: mono(330), split: .seconds(30), lap: .seconds(30)), .stopped])
        #expect(runs.map(\.totalNs) == [30_000_000_000])
    }

    @Test func multiGateSplitsCarryDistancesAndSpeeds() throws {
        var a = RunAssembler(context: RunContext(preset: flying30, gateCount: 3, splitDistances: [10, 20, 30]))
        let runs = feed(&a, [
            .started(at: mono(0), startType: "flying", wallMs: 0),
            .lap(number: 1, at: mono(1.25), split: .seconds(1.25), lap: .seconds(1.25)),
            .lap(number: 2, at: mono(2.4), split: .seconds(2.4), lap: .seconds(1.15)),
            .lap(number: 2, at: mono(2.4), split: .seconds(2.4), lap: .seconds(1.15)),  // repeated: ignored
            .lap(number: 3, at: mono(3.5), split: .seconds(3.5), lap: .seconds(1.1)),
            .finished(at: mono(3.5), time: .seconds(3.5)),
        ])
        let run = try #require(runs.first)
        #expect(run.gateCount == 3)
        #expect(run.splits.map(\.gateIndex) == [1, 2, 3])
        #expect(run.splits.map(\.distance) == [10, 20, 30])
        let speeds = run.splits.compactMap(\.segmentSpeed)
        #expect(speeds.count == 3)
        #expect(abs(speeds[0] - 8) < 1e-9 && abs(speeds[1] - 10 / 1.15) < 1e-9 && abs(speeds[2] - 10 / 1.1) < 1e-9)
    }

    @Test func finishWithoutLapStillGetsASplitAndCorrectionMovesTheStart() throws {
        var a = RunAssembler(context: RunContext(preset: flying30))
        let runs = feed(&a, [
            .started(at: mono(10), startType: "countdown", wallMs: 10_000),
            .startCorrected(at: mono(10.012)),
            .finished(at: mono(14), time: .seconds(3.988)),
        ])
        let run = try #require(runs.first)
        #expect(run.startMonoNs == 10_012_000_000)
        #expect(run.wallStartMs == 10_012)
        #expect(run.splits.count == 1)
        #expect(run.splits[0].timeNs == 3_988_000_000)
        #expect(run.splits[0].distance == 30)
    }

    @Test func assembledRunsStoreAndSetBests() throws {
        let dir = TempDir()
        let store = try openStore(dir)
        let id = try store.addAthlete(StoredAthlete(name: "Gus")).id!
        try store.assignNextRun(athleteID: id)
        var a = RunAssembler(context: RunContext(preset: flying30))
        let runs = feed(&a, [
            .started(at: mono(0), startType: "flying", wallMs: wallMs(2026, 6, 1)),
            .lap(number: 1, at: mono(3.3), split: .seconds(3.3), lap: .seconds(3.3)),
            .finished(at: mono(3.3), time: .seconds(3.3)),
        ])
        let c = try store.write(try #require(runs.first), preset: flying30)
        #expect(c.run.athleteID == id)
        #expect(c.bests.personal)
        #expect(try store.bests(athleteID: id).first?.key == "flying_30m")
    }
}

extension AssemblerTests {
    @Test("a course changed between runs reaches the runs after it, through the SQLite store")
    func courseChangeReachesTheStore() throws {
        let dir = TempDir()
        let store = try openStore(dir)
        let yards40 = StoredPreset(id: "40yd", title: "40 yd", distance: 36.576, startType: "button-release")
        var a = RunAssembler(context: RunContext(preset: flying30, startType: "flying"))
        var written: [CommittedRun] = []
        // As the storage thread does: each run with the assembler's preset when it completes.
        func consume(_ events: [RunEvent]) throws {
            for e in events { if let run = a.consume(e) { written.append(try store.write(run, preset: a.context.preset)) } }
        }
        try consume([
            .crossing(crossing(10)),
            .started(at: mono(10), startType: "flying", wallMs: wallMs(2026, 6, 1)),
            .lap(number: 1, at: mono(13.4), split: .seconds(3.4), lap: .seconds(3.4)),
            .finished(at: mono(13.4), time: .seconds(3.4)),
            .course(RunContext(preset: yards40, startType: "button-release")),
            .started(at: mono(20), startType: "button-release", wallMs: wallMs(2026, 6, 1) + 10_000),
            .lap(number: 1, at: mono(25.1), split: .seconds(5.1), lap: .seconds(5.1)),
            .finished(at: mono(25.1), time: .seconds(5.1)),
            .falseStart(reason: "button", at: mono(30), wallMs: wallMs(2026, 6, 1) + 20_000),
            .course(RunContext(preset: nil, startType: "voice")),
            .falseStart(reason: "movement", at: mono(40), wallMs: wallMs(2026, 6, 1) + 30_000),
        ])
        #expect(written.count == 4)
        let rows = try store.history().sorted { $0.run.startMonoNs < $1.run.startMonoNs }
        #expect(rows.map(\.run.presetID) == ["flying-30m", "40yd", "40yd", nil])
        #expect(rows.map(\.run.distance) == [30, 36.576, 36.576, nil])
        #expect(rows.map(\.run.startType) == ["flying", "button-release", "button-release", "voice"])
        let key40 = BestKey.make(startType: "button-release", distance: 36.576)
        #expect(rows.map(\.run.bestKey) == ["flying_30m", key40, key40, nil])
        #expect(rows.map(\.run.falseStart) == [false, false, true, true])
    }
}

@Suite struct WriterTests {
    @Test func writerCommitsInOrderAndReportsEach() throws {
        let dir = TempDir()
        let store = try openStore(dir)
        let seen = Mutex<[Int64]>([])
        let writer = StoreWriter(store: store, capacity: 64, logger: quietLog) { c in seen.withLock { $0.append(c.run.totalNs!) } }
        writer.start()
        for i in 1...50 { #expect(writer.submit(sampleRun(seconds: Double(i), wall: wallMs(2026, 6, 1) + Int64(i)))) }
        writer.stop()
        #expect(writer.committed == 50)
        #expect(writer.dropped == 0)
        #expect(seen.withLock { $0 } == (1...50).map { Int64($0) * 1_000_000_000 })
        #expect(try store.count() == 50)
    }

    @Test func fullQueueDropsAndCountsWithoutBlocking() throws {
        let dir = TempDir()
        let store = try openStore(dir)
        let writer = StoreWriter(store: store, capacity: 4, logger: quietLog)
        // Not started: nothing drains, so the fifth and later submissions are refused at once.
        for i in 0..<10 { writer.submit(sampleRun(seconds: 3 + Double(i) / 10, wall: Int64(i))) }
        #expect(writer.dropped == 6)
        #expect(writer.pending == 4)
        writer.start()
        writer.stop()
        #expect(writer.committed == 4)
        #expect(try store.count() == 4)
    }

    @Test func badRunsAreCountedAndDoNotStopTheThread() throws {
        let dir = TempDir()
        let store = try openStore(dir)
        let writer = StoreWriter(store: store, logger: quietLog)
        writer.start()
        writer.submit(sampleRun(seconds: 3, athlete: 404, wall: 0))  // no such athlete
        writer.submit(sampleRun(seconds: 3, wall: 0))
        writer.submitPhoto(StoredPhoto(runID: 1, jpeg: [0xFF, 0xD8, 0, 0], thumbnails: []))
        writer.stop()
        writer.stop()
        #expect(writer.failed == 1)
        #expect(writer.committed == 1)
        #expect(try store.photo(runID: 1) != nil)
    }
}
