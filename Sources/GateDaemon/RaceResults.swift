// SPDX-License-Identifier: Apache-2.0
// A finished multi-gate race as a stored run: splits, segment speeds, sync uncertainty.

public import Engine
import Foundation
public import GateCore
public import Race
public import SQLiteStore

public enum RaceResults {
    /// The run the host stores when a race finishes: started the way `startType` says (the
    /// start gate's crossing, button, sound or in-frame exit), one split per later gate in
    /// course order, the total to the last gate reached. Nil when no gate after the start
    /// was crossed.
    ///
    /// A gate whose first crossing came before an earlier gate's (someone walked through
    /// it, or the distances are set wrong) is not a split: its time would make a negative
    /// segment. It is named in the run's notes with its time, so nothing is hidden, and
    /// the segments and speeds are taken between the gates that are in order.
    ///
    /// - Parameters:
    ///   - localStart: the start crossing on this gate's CLOCK_MONOTONIC.
    ///   - wallStartMs: the same instant on the wall clock (display only).
    public static func storedRun(runID: UInt32, startType: StartType, splits: [RaceSplit], gateCount: Int, localStart: MonotonicInstant,
                                 wallStartMs: Int64) -> StoredRun? {
        var stored: [StoredSplit] = []
        var notes = ["race run \(runID)"]
        var previousTime = Span(nanoseconds: 0), previousDistance = 0.0
        for s in splits {
            guard s.time > previousTime else {
                notes.append("gate \(s.gateIndex) at \(fixedPoint(s.distanceMetres, digits: 1)) m crossed out of course order "
                    + "at \(fixedPoint(s.time.seconds, digits: 3)) s: not a split")
                continue
            }
            let segment = Span(nanoseconds: s.time.nanoseconds - previousTime.nanoseconds)
            let length = s.distanceMetres - previousDistance
            stored.append(StoredSplit(gateIndex: s.gateIndex, distance: s.distanceMetres > 0 ? s.distanceMetres : nil,
                                      timeNs: s.time.nanoseconds, segmentNs: segment.nanoseconds,
                                      segmentSpeed: length > 0 ? length / segment.seconds : nil,
                                      syncUncertaintyNs: s.uncertainty.nanoseconds))
            previousTime = s.time
            previousDistance = s.distanceMetres
        }
        guard let last = stored.last else { return nil }
        return StoredRun(startType: startType.rawValue, distance: last.distance, wallStartMs: wallStartMs,
                         startMonoNs: localStart.nanoseconds, totalNs: last.timeNs, gateCount: gateCount,
                         splits: stored, notes: notes.joined(separator: "; "))
    }

    /// The journal line of a stored race run: `{"race":…}` with the run as the store
    /// encodes it, so a run the database lost can be read back from the journal.
    public static func journalLine(_ run: StoredRun) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(run) else { return #"{"race":null}"# }
        return #"{"race":"# + String(decoding: data, as: UTF8.self) + "}"
    }
}

/// Number formatting for log lines.
public enum ClipCrossingFormat {
    public static func ms(_ s: Span) -> String { fixed(s.milliseconds, 2) }
    public static func seconds(_ s: Span) -> String { fixed(s.seconds, 3) }
    public static func fixed(_ v: Double, _ d: Int) -> String { fixedPoint(v, digits: d) }
}
