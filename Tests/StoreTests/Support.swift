// SPDX-License-Identifier: Apache-2.0
// Test helpers: temporary state directories, sample runs and wall-clock instants.

import Foundation
import GateCore
import Logging
import SQLiteStore

/// A fresh directory under the system temporary directory, removed when the value is released.
final class TempDir {
    let path: String

    init() {
        path = NSTemporaryDirectory() + "sprintgate-store-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    var dbPath: String { path + "/" + RunStore.fileName }
}

let quietLog: Logger = {
    var l = Logger(label: "sprintgate.store")
    l.logLevel = .critical
    return l
}()

/// Milliseconds since the Unix epoch of a UTC date-time (mid-year dates keep the season
/// the same in every time zone).
func wallMs(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 12, _ minute: Int = 0) -> Int64 {
    var cal = Calendar(identifier: .gregorian)
    cal.timeZone = TimeZone(identifier: "UTC")!
    let d = cal.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute))!
    return Int64(d.timeIntervalSince1970 * 1000)
}

/// A single-gate run of `seconds` over `distance` metres.
func sampleRun(seconds: Double, distance: Double? = 30, startType: String = "flying", athlete: Int64? = nil,
               wall: Int64, preset: String? = nil, notes: String = "", gateCount: Int = 1) -> StoredRun {
    let ns = Int64((seconds * 1e9).rounded())
    let split = StoredSplit(gateIndex: 1, distance: distance, timeNs: ns, segmentNs: ns,
                            segmentSpeed: distance.map { $0 / seconds }, syncUncertaintyNs: 1_500_000)
    return StoredRun(startType: startType, presetID: preset, distance: distance, athleteID: athlete, wallStartMs: wall,
                     startMonoNs: 1_000_000_000, totalNs: ns, gateCount: gateCount, splits: [split],
                     crossings: [StoredCrossing(monoNs: 1_000_000_000 + ns, uncertaintyNs: 1_500_000, direction: "left_to_right",
                                                blobHeight: 0.6, speedPixelsPerSecond: 900)],
                     notes: notes)
}

func openStore(_ dir: TempDir) throws -> RunStore {
    try RunStore(directory: dir.path, logger: quietLog)
}
