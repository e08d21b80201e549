// SPDX-License-Identifier: Apache-2.0
// Writes runs into a results database until killed; the power-loss test SIGKILLs it mid-write.
//
// Usage: StoreCrashWriter [--ski | --erg] DB_PATH [FIRST_WALL_MS]
// Prints `committed ID` on stdout (flushed) after each run the store has committed. Every
// run has `splitsPerRun` splits and `crossingsPerRun` crossings, so a reader can tell a
// half-written run from a whole one.

#if canImport(Glibc)
import Glibc
#endif
import GateCore
import Logging
import Rowing
import SQLiteStore

/// Shape of every run written; the test checks each stored run has exactly these.
let splitsPerRun = 3
let crossingsPerRun = 5

/// Writes a line with one unbuffered `write`, so a SIGKILL never leaves it in a buffer.
func say(_ text: String, fd: Int32) {
    var line = text + "\n"
    _ = line.withUTF8 { write(fd, $0.baseAddress, $0.count) }
}

var args = CommandLine.arguments
// `--ski`: the ski logger's writes instead: the track being recorded (taken up if one is),
// fixes added `skiBatch` at a time; `committed N` is the number of fixes stored so far.
let skiBatch = 10
if args.count >= 3, args[1] == "--ski" {
    args.remove(at: 1)
    let store: RunStore
    do { store = try RunStore(path: args[1], logger: Logger(label: "sprintgate.store")) } catch {
        say("\(error)", fd: 2)
        exit(1)
    }
    do {
        let track = try store.recordingSkiTrack() ?? store.startSkiTrack(name: "crash", sport: .ski, wallTime: 1_780_000_000)
        var stored = try store.skiTrack(id: track.id).points
        while true {
            let points = (0 ..< skiBatch).map { i in
                let k = Int64(stored + i)
                return SkiTrackPoint(timeNs: 1_780_000_000_000_000_000 + k * 100_000_000, latitude: 46 + Double(k) * 1e-6, longitude: 7,
                                     altitude: 2000 - Double(k) * 0.01, speed: 10)
            }
            try store.appendSkiPoints(trackID: track.id, points)
            stored += skiBatch
            say("committed \(stored)", fd: 1)
        }
    } catch {
        say("\(error)", fd: 2)
        exit(1)
    }
}
// `--erg`: the rowing hub's writes instead: a new session (as the hub starts one after a
// restart) for a workout of intervals (`ergWorkout`) recorded from its PM5, its strokes,
// status samples and interval data stored `ergBatch` strokes at a time; `committed N` is
// the number of this session's strokes stored so far.
let ergBatch = 5
/// Matches `ergWorkout` in Tests/StoreTests/PowerLossTests.swift.
func ergWorkout() -> PM5Piece {
    var p = PM5Piece()
    p.intervals = Array(repeating: PM5Workout.Interval(.metres(500), restSeconds: 60), count: 20)
    return p
}
if args.count >= 3, args[1] == "--erg" {
    args.remove(at: 1)
    do {
        let store = try RunStore(path: args[1], logger: Logger(label: "sprintgate.store"))
        let session = try store.startErgSession(erg: "PM5 crash", athlete: "", workout: "20 × 500 m", wallTime: 1_780_000_000)
        var recorder = ErgRecorder()
        var stored = 0, samples = 0, splits = 0
        for e in ergWorkout().events().events {
            switch e {
            case .connected(let t, _): recorder.connected(at: t)
            case .disconnected(let t, _): recorder.disconnected(at: t)
            case .notification(let t, _, let c, let bytes): recorder.receive(characteristic: c, bytes, at: t)
            }
            guard recorder.strokes.count >= stored + ergBatch else { continue }
            try store.recordErg(sessionID: session.id, strokes: Array(recorder.strokes[stored ..< stored + ergBatch]),
                                samples: Array(recorder.samples[samples...]), splits: Array(recorder.splits[splits...]), gaps: recorder.gaps,
                                wallOffset: 1_780_000_000)
            stored += ergBatch
            samples = recorder.samples.count
            splits = recorder.splits.count
            say("committed \(stored)", fd: 1)
        }
        // The workout is over: wait for the kill.
        while true { sleep(1) }
    } catch {
        say("\(error)", fd: 2)
        exit(1)
    }
}
guard args.count >= 2 else {
    say("usage: StoreCrashWriter [--ski | --erg] DB_PATH [FIRST_WALL_MS]", fd: 2)
    exit(2)
}
let firstWall = args.count >= 3 ? Int64(args[2]) ?? 1_780_000_000_000 : 1_780_000_000_000
let log = Logger(label: "sprintgate.store")
let store: RunStore
do { store = try RunStore(path: args[1], logger: log) } catch {
    say("\(error)", fd: 2)
    exit(1)
}
let athlete: StoredAthlete
do { athlete = try store.addAthlete(StoredAthlete(name: "Crash Test", colour: .red)) } catch {
    say("\(error)", fd: 2)
    exit(1)
}
let writer = StoreWriter(store: store, capacity: 64, logger: log) { c in
    say("committed \(c.run.id ?? -1)", fd: 1)
}
writer.start()
var n: Int64 = 0
while true {
    n += 1
    let total: Int64 = 4_000_000_000 + (n % 97) * 10_000_000
    let splits = (1...splitsPerRun).map { i in
        StoredSplit(gateIndex: i, distance: Double(10 * i), timeNs: total * Int64(i) / Int64(splitsPerRun),
                    segmentNs: total / Int64(splitsPerRun), segmentSpeed: 7.5, syncUncertaintyNs: 1_000_000)
    }
    let crossings = (0..<crossingsPerRun).map { i in
        StoredCrossing(monoNs: n * 10_000_000_000 + Int64(i), uncertaintyNs: 500_000, direction: "left_to_right",
                       blobHeight: 0.5, speedPixelsPerSecond: 800)
    }
    let run = StoredRun(startType: "flying", presetID: "flying-30m", distance: 30, athleteID: athlete.id,
                        wallStartMs: firstWall + n * 1000, startMonoNs: n * 10_000_000_000, totalNs: total,
                        gateCount: splitsPerRun, splits: splits, crossings: crossings,
                        notes: String(repeating: "x", count: Int(n % 200)))
    // Keep the queue fed without spinning: the writer commits a few hundred runs a second.
    while !writer.submit(run) { usleep(1000) }
}
