// SPDX-License-Identifier: Apache-2.0
// A crossing placed by hand on the photo finish: the run re-timed, the measured time kept.

import Foundation
import GRDB
public import GateCore

extension RunStore {
    static func scale(from row: Row) -> PhotoScale? {
        guard let x: Double = row["crossing_x"], let ns: Double = row["ns_per_column"],
              let cx: Int = row["composite_x"], let cw: Int = row["composite_width"] else { return nil }
        return PhotoScale(crossingX: x, nanosecondsPerColumn: ns, compositeX: cx, compositeWidth: cw)
    }

    /// The time scale of a run's photo finish; nil without a photo or without a scale.
    public func photoScale(runID: Int64) throws(StoreError) -> PhotoScale? {
        try read("read a photo's scale") { db in
            try Row.fetchOne(db, sql: "SELECT crossing_x, ns_per_column, composite_x, composite_width FROM photos WHERE run_id = ?",
                             arguments: [runID]).flatMap(Self.scale(from:))
        }
    }

    /// Re-times a run from its finish placed by hand on its photo finish: `offsetNs` after
    /// the crossing the gate timed (negative: before), within what the image shows. The
    /// time the gate measured stays in `originalTotalNs`; a later correction is again
    /// relative to it, and `offsetNs` nil puts it back. The finish split, its segment and
    /// speed follow (the earlier splits stay), and the athlete's bests are worked out again.
    /// A race's run is corrected on its finish gate's photo, whose scale came with it.
    @discardableResult
    public func correctFinish(runID: Int64, offsetNs: Int64?) throws(StoreError) -> HistoryRow {
        try writeTransaction("correct a run's finish") { db in
            guard let r = try Row.fetchOne(db, sql: "SELECT athlete_id, total_ns, original_total_ns, false_start FROM runs WHERE id = ?",
                                           arguments: [runID]) else {
                throw StoreError(.notFound, "run \(runID) does not exist")
            }
            let falseStart: Bool = r["false_start"]
            guard let total: Int64 = r["total_ns"], !falseStart else {
                throw StoreError(.invalid, "offset: run \(runID) has no time to correct (a false start)")
            }
            let measured: Int64 = r["original_total_ns"] ?? total
            let newTotal: Int64
            if let offset = offsetNs {
                guard let scale = try Row.fetchOne(db, sql: "SELECT * FROM photos WHERE run_id = ?", arguments: [runID]).flatMap(Self.scale(from:)) else {
                    throw StoreError(.invalid, "offset: run \(runID) has no photo finish with a time scale to place the crossing on")
                }
                let range = scale.offsetRange
                guard range.contains(offset) else {
                    throw StoreError(.invalid, "offset: \(Double(offset) / 1e6) ms is outside the photo finish (\(Double(range.lowerBound) / 1e6)...\(Double(range.upperBound) / 1e6) ms)")
                }
                newTotal = measured + offset
                guard newTotal > 0 else { throw StoreError(.invalid, "offset: the run would take no time") }
            } else {
                newTotal = measured
            }
            try db.execute(sql: "UPDATE runs SET total_ns = ?, original_total_ns = ? WHERE id = ?",
                           arguments: [newTotal, offsetNs == nil ? nil : measured, runID])
            // The finish is the last split; its segment ends there too, and its speed is
            // the segment's length (speed × time as stored) over the new time.
            if let last = try Row.fetchOne(db, sql: "SELECT gate_index, time_ns, segment_ns, speed_mps FROM splits WHERE run_id = ? ORDER BY gate_index DESC LIMIT 1",
                                           arguments: [runID]) {
                let time: Int64 = last["time_ns"], segment: Int64 = last["segment_ns"]
                let newSegment = segment + (newTotal - time)
                guard newSegment > 0 else { throw StoreError(.invalid, "offset: the finish would come before the split before it") }
                let oldSpeed: Double? = last["speed_mps"]
                let speed = oldSpeed.flatMap { v in segment > 0 ? v * (Double(segment) / 1e9) / (Double(newSegment) / 1e9) : nil }
                try db.execute(sql: "UPDATE splits SET time_ns = ?, segment_ns = ?, speed_mps = ? WHERE run_id = ? AND gate_index = ?",
                               arguments: [newTotal, newSegment, speed ?? oldSpeed, runID, last["gate_index"] as Int])
            }
            if let a: Int64 = r["athlete_id"] { try Bests.recompute(athleteID: a, in: db) }
            guard let row = try Query.rows(Row.fetchAll(db, sql: "\(Query.select) \(Query.from) WHERE r.id = ?", arguments: [runID]), db).first else {
                throw StoreError(.notFound, "run \(runID) does not exist")
            }
            return row
        }
    }
}
