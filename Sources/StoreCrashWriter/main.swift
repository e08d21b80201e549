// SPDX-License-Identifier: Apache-2.0
// Writes runs into a results database until killed; the power-loss test SIGKILLs it mid-write.
//
// Usage: StoreCrashWriter DB_PATH [FIRST_WALL_MS]
// Prints `committed ID` on stdout (flushed) after each run the store has committed. Every
// run has `splitsPerRun` splits and `crossingsPerRun` crossings, so a reader can tell a
// half-written run from a whole one.

#if canImport(Glibc)
import Glibc
#endif
import GateCore
import Logging
import SQLiteStore

/// Shape of every run written; the test checks each stored run has exactly these.
let splitsPerRun = 3
let crossingsPerRun = 5

/// Writes a line with one unbuffered `write`, so a SIGKILL never leaves it in a buffer.
func say(_ text: String, fd: Int32) {
    var line = text + "\n"
    _ = line.withUTF8 { write(fd, $0.baseAddress, $0.count) }
}

let args = CommandLine.arguments
guard args.count >= 2 else {
    say("usage: StoreCrashWriter DB_PATH [FIRST_WALL_MS]", fd: 2)
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
