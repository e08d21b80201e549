// SPDX-License-Identifier: Apache-2.0
// Pairs rendered photo-finish images with committed runs by the finishing crossing's time.

public import SQLiteStore

/// Pairs photos with runs, whichever arrives first. A photo is keyed by its crossing's
/// time (local monotonic clock, ns; `Crossing.time`); a run by its finish, start plus
/// total time on the same clock, which is the finishing crossing's time. Photos of
/// crossings that finish no run (a flying start, a runner passing an idle gate) wait
/// until pushed out by newer ones. Not thread-safe: one owner thread.
public struct PhotoFinishMatcher<Photo> {
    /// Why 8: a photo arrives within a second of its crossing and a run commits within
    /// milliseconds of its finish, so only the last few of either can still find a partner.
    public static var defaultCapacity: Int { 8 }
    /// Why 1 µs: both sides carry the same crossing instant; the slack only absorbs
    /// rounding, while crossings of two athletes are at least one frame (≥ 1 ms) apart.
    public static var toleranceNs: Int64 { 1_000 }

    private var photos: [(crossingNs: Int64, photo: Photo)] = []
    private var runs: [(finishNs: Int64, runID: Int64)] = []
    public let capacity: Int
    /// Photos pushed out without a run.
    public private(set) var unmatchedPhotos: UInt64 = 0

    /// - Parameter capacity: photos and runs kept waiting each (`defaultCapacity`, 8).
    public init(capacity: Int = 8) {
        self.capacity = max(1, capacity)
    }

    /// The local monotonic instant (ns) a committed run finished, or nil for a run
    /// without a time (false start) or without an id.
    public static func finishNs(of run: StoredRun) -> Int64? {
        guard run.id != nil, !run.falseStart, let total = run.totalNs, total > 0 else { return nil }
        return run.startMonoNs + total
    }

    /// A photo of the crossing at `crossingNs`: returns the run it belongs to, or keeps it.
    public mutating func photo(_ photo: Photo, crossingNs: Int64) -> Int64? {
        if let i = runs.firstIndex(where: { abs($0.finishNs - crossingNs) <= Self.toleranceNs }) {
            return runs.remove(at: i).runID
        }
        photos.append((crossingNs, photo))
        if photos.count > capacity {
            photos.removeFirst()
            unmatchedPhotos += 1
        }
        return nil
    }

    /// A committed run: returns its photo if that came first, or keeps the run waiting.
    public mutating func run(_ run: StoredRun) -> Photo? {
        guard let id = run.id, let finish = Self.finishNs(of: run) else { return nil }
        if let i = photos.firstIndex(where: { abs($0.crossingNs - finish) <= Self.toleranceNs }) {
            return photos.remove(at: i).photo
        }
        runs.append((finish, id))
        if runs.count > capacity { runs.removeFirst() }
        return nil
    }

    /// Photos waiting for a run.
    public var pendingPhotos: Int { photos.count }
    /// Runs waiting for a photo.
    public var pendingRuns: Int { runs.count }
}
