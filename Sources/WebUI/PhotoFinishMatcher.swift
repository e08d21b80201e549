// SPDX-License-Identifier: Apache-2.0
// Pairs rendered photo-finish images with committed runs by their crossings' times.

public import SQLiteStore

/// Pairs photos with runs, whichever arrives first. A photo is keyed by its crossing's
/// time (local monotonic clock, ns; `Crossing.time`); a run by the instants a photo of
/// it may show, on the same clock:
/// - a lone gate's run: its finish, start plus total time, which is the finishing
///   crossing's time (a flying start's photo belongs to no run);
/// - a race (more than one gate, with splits): its start and every split, each with its
///   gate index; the last split is the finish.
///
/// Photos of crossings that match nothing (a runner passing an idle gate) wait until
/// pushed out by newer ones, as do instants no photo came for. Not thread-safe: one
/// owner thread.
public struct PhotoFinishMatcher<Photo> {
    /// Why 8: a photo arrives within a second of its crossing and a run commits within
    /// milliseconds of its finish, so only the last few of either can still find a partner.
    public static var defaultCapacity: Int { 8 }
    /// Why 1 µs: both sides carry the same crossing instant; the slack only absorbs
    /// rounding, while crossings of two athletes are at least one frame (≥ 1 ms) apart.
    public static var toleranceNs: Int64 { 1_000 }

    /// Where a photo belongs.
    public struct Match: Sendable, Hashable {
        public var runID: Int64
        /// The gate's place on the course (0: start; a lone gate's run: 0).
        public var gateIndex: Int
        /// The photo shows the run's finish: it is the run's photo finish.
        public var finish: Bool
        /// The run is a race over several gates: the photo is also one gate's of it.
        public var race: Bool
        public init(runID: Int64, gateIndex: Int, finish: Bool, race: Bool = false) {
            self.runID = runID
            self.gateIndex = gateIndex
            self.finish = finish
            self.race = race
        }
    }

    /// An instant of a committed run a photo may show.
    public struct Instant: Sendable, Hashable {
        public var ns: Int64
        public var gateIndex: Int
        public var finish: Bool
        public var race = false
    }

    private var photos: [(crossingNs: Int64, gateIndex: Int?, toleranceNs: Int64, photo: Photo)] = []
    private var instants: [(instant: Instant, runID: Int64)] = []
    public let capacity: Int
    /// Photos pushed out without a run.
    public private(set) var unmatchedPhotos: UInt64 = 0

    /// - Parameter capacity: photos kept waiting (`defaultCapacity`, 8); instants kept
    ///   waiting: four times as many.
    public init(capacity: Int = 8) {
        self.capacity = max(1, capacity)
    }

    /// The local monotonic instant (ns) a committed run finished, or nil for a run
    /// without a time (false start) or without an id.
    public static func finishNs(of run: StoredRun) -> Int64? {
        guard run.id != nil, !run.falseStart, let total = run.totalNs, total > 0 else { return nil }
        return run.startMonoNs + total
    }

    /// The instants of `run` a photo may show (see the type's description).
    public static func instants(of run: StoredRun) -> [Instant] {
        guard let finish = finishNs(of: run), let total = run.totalNs else { return [] }
        guard run.gateCount > 1, !run.splits.isEmpty else { return [Instant(ns: finish, gateIndex: 0, finish: true)] }
        return [Instant(ns: run.startMonoNs, gateIndex: 0, finish: false, race: true)]
            + run.splits.map { Instant(ns: run.startMonoNs + $0.timeNs, gateIndex: $0.gateIndex, finish: $0.timeNs == total, race: true) }
    }

    /// A photo of the crossing at `crossingNs`: returns where it belongs, or keeps it.
    /// - Parameters:
    ///   - gateIndex: the gate's place on the course when known (another gate's photo);
    ///     nil: this gate's own, which matches an instant of any place.
    ///   - toleranceNs: how far the instants may differ (`toleranceNs` for this gate's
    ///     own photos; a few hundred µs for another gate's, mapped through its clock).
    public mutating func photo(_ photo: Photo, crossingNs: Int64, gateIndex: Int? = nil,
                               toleranceNs: Int64 = Self.toleranceNs) -> Match? {
        if let i = instants.firstIndex(where: { Self.matches($0.instant, crossingNs, gateIndex, toleranceNs) }) {
            let (instant, runID) = instants.remove(at: i)
            return Match(runID: runID, gateIndex: instant.gateIndex, finish: instant.finish, race: instant.race)
        }
        photos.append((crossingNs, gateIndex, toleranceNs, photo))
        if photos.count > capacity {
            photos.removeFirst()
            unmatchedPhotos += 1
        }
        return nil
    }

    /// A committed run: returns the photos that came first for its instants, and keeps
    /// the other instants waiting.
    public mutating func run(_ run: StoredRun) -> [(photo: Photo, match: Match)] {
        guard let id = run.id else { return [] }
        var out: [(photo: Photo, match: Match)] = []
        for instant in Self.instants(of: run) {
            if let i = photos.firstIndex(where: { Self.matches(instant, $0.crossingNs, $0.gateIndex, $0.toleranceNs) }) {
                out.append((photos.remove(at: i).photo, Match(runID: id, gateIndex: instant.gateIndex, finish: instant.finish, race: instant.race)))
            } else {
                instants.append((instant, id))
            }
        }
        if instants.count > capacity * 4 { instants.removeFirst(instants.count - capacity * 4) }
        return out
    }

    private static func matches(_ instant: Instant, _ ns: Int64, _ gateIndex: Int?, _ tolerance: Int64) -> Bool {
        abs(instant.ns - ns) <= tolerance && (gateIndex == nil || gateIndex == instant.gateIndex)
    }

    /// Photos waiting for a run.
    public var pendingPhotos: Int { photos.count }
    /// Run instants waiting for a photo.
    public var pendingRuns: Int { instants.count }
}
