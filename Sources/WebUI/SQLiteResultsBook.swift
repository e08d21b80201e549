// SPDX-License-Identifier: Apache-2.0
// The page's history, athletes, bests and photos read from (and edited in) the SQLite store.

import Foundation
import GateCore
public import SQLiteStore
import Synchronization

/// A `ResultsBook` over the daemon's `RunStore`. The storage thread is the only writer of
/// timed runs (journal first, then `StoreWriter`); the page learns of each committed run
/// through `committed(_:)`, called from the writer's `onCommit`, which moves `changeCount`
/// so the live board re-reads the history with the run's PR flag. Deletes, athletes and
/// the next-run assignment go straight to the store from the web threads.
public final class SQLiteResultsBook: ResultsBook {
    public let store: RunStore
    private let changes = Atomic<UInt64>(0)
    /// The latest committed runs' ids and best flags, newest last (diagnostics and tests).
    private let recent = Mutex<[CommittedRun]>([])
    /// Why 32: the board shows ten runs; the rest only serves a look back in tests and logs.
    static let recentLimit = 32
    /// Why: sorting by athlete name is done here (the store sorts by time and date); a
    /// training group's history fits in memory many times over.
    static let athleteSortLimit = 10_000

    public init(store: RunStore) {
        self.store = store
    }

    /// The storage side stores runs itself: the loop's finished runs must not be recorded again.
    public var storesRunsItself: Bool { true }

    public var changeCount: UInt64 { changes.load(ordering: .relaxed) }

    /// Called on the store's writer thread after each committed run (its `onCommit`).
    public func committed(_ run: CommittedRun) {
        recent.withLock { r in
            r.append(run)
            if r.count > Self.recentLimit { r.removeFirst(r.count - Self.recentLimit) }
        }
        changes.add(1, ordering: .relaxed)
    }

    /// Called after a photo finish was stored for `runID` (by another thread than the web's).
    public func photoSaved(runID: Int64) {
        changes.add(1, ordering: .relaxed)
    }

    /// Runs committed through `committed(_:)`, oldest first (at most `recentLimit`).
    public func recentlyCommitted() -> [CommittedRun] { recent.withLock { $0 } }

    /// Stores a run that did not come through the storage thread (a page or a test that
    /// feeds `GateBridge.results`); the daemon never calls this for loop runs.
    public func record(_ run: TimedRun) throws(ResultsBookError) -> RunRecord {
        let totalNs = Int64((run.seconds * 1e9).rounded())
        let finishMs = Int64((run.wallTime * 1000).rounded())
        var splits: [StoredSplit] = []
        var previous: Int64 = 0
        for (i, s) in (run.splits + [run.seconds]).enumerated() {
            let ns = Int64((s * 1e9).rounded())
            guard ns > previous else { continue }
            let last = i == run.splits.count
            splits.append(StoredSplit(gateIndex: splits.count + 1, distance: last ? run.distanceMetres : nil, timeNs: ns,
                                      segmentNs: ns - previous, segmentSpeed: nil, syncUncertaintyNs: 0))
            previous = ns
        }
        let stored = StoredRun(startType: run.startType, presetID: run.preset, distance: run.distanceMetres,
                               wallStartMs: finishMs - totalNs / 1_000_000, totalNs: totalNs, splits: splits)
        let c = try map { () throws(StoreError) in try store.write(stored) }
        changes.add(1, ordering: .relaxed)
        return try self.run(id: c.run.id ?? 0)
    }

    public func history(_ q: HistoryQuery) throws(ResultsBookError) -> [RunRecord] {
        guard q.limit >= 0, q.offset >= 0 else { throw ResultsBookError(.invalid, field: "limit", reason: "must not be negative") }
        if q.limit == 0 { return [] }
        var f = RunFilter(includeFalseStarts: false)
        f.athleteID = q.athleteID
        f.startType = q.startType
        f.fromWallMs = q.from.map { Int64(($0 * 1000).rounded(.down)) }
        // HistoryQuery's `to` is inclusive, the filter's exclusive.
        f.toWallMs = q.to.map { Int64(($0 * 1000).rounded(.down)) + 1 }
        f.search = q.search
        f.distance = q.distance
        f.gateCount = q.gateCount
        f.sessionID = q.sessionID
        if let p = q.preset {
            // A preset is its course: runs timed over the same distance with the same start.
            let known = try map { () throws(StoreError) in try store.presets() }
            guard let preset = known.first(where: { $0.id == p }) else { return [] }
            if let d = q.distance, let pd = preset.distance, abs(d - pd) > 0.0005 { return [] }
            f.distance = preset.distance
            f.startType = f.startType ?? preset.startType
            if preset.distance == nil { f.search = f.search ?? p }
        }
        let rows: [HistoryRow]
        switch q.sort {
        case .runs:
            f.sort = .mostRuns
            f.limit = min(max(q.limit, 1), 10_000)
            f.offset = q.offset
            rows = try map { () throws(StoreError) in try store.history(f) }
        case .date, .time:
            f.sort = q.sort == .date ? (q.descending ? .newest : .oldest) : .fastest
            f.limit = min(max(q.limit, 1), 10_000)
            f.offset = q.offset
            var r = try map { () throws(StoreError) in try store.history(f) }
            if q.sort == .time && q.descending {
                // The store sorts fastest first only; slowest first reads the whole filter.
                f.limit = Self.athleteSortLimit
                f.offset = 0
                r = try map { () throws(StoreError) in try store.history(f) }
                r.reverse()
                r = Array(r.dropFirst(q.offset).prefix(q.limit))
            }
            rows = r
        case .athlete:
            f.limit = Self.athleteSortLimit
            f.offset = 0
            var r = try map { () throws(StoreError) in try store.history(f) }
            r.sort { a, b in
                let asc = ((a.athleteName ?? "").lowercased(), a.run.id ?? 0) < ((b.athleteName ?? "").lowercased(), b.run.id ?? 0)
                return q.descending ? !asc : asc
            }
            rows = Array(r.dropFirst(q.offset).prefix(q.limit))
        }
        return rows.map(Self.record(from:))
    }

    public func run(id: Int64) throws(ResultsBookError) -> RunRecord {
        let row = try map { () throws(StoreError) in try store.run(id: id) }
        var r = Self.record(from: row)
        r.photoScale = try map { () throws(StoreError) in try store.photoScale(runID: id) }.map(Self.view)
        return r
    }

    static func view(_ s: PhotoScale) -> PhotoScaleView {
        PhotoScaleView(crossingX: s.crossingX, millisecondsPerColumn: s.nanosecondsPerColumn / 1e6, compositeX: s.compositeX,
                       compositeWidth: s.compositeWidth)
    }

    public func correctFinish(id: Int64, offsetMs: Double?) throws(ResultsBookError) -> RunRecord {
        if let ms = offsetMs, !(ms.isFinite && abs(ms) < 10_000) {
            throw ResultsBookError(.invalid, field: "offsetMs", reason: "milliseconds from the timed crossing, within the photo finish")
        }
        let offsetNs = offsetMs.map { Int64(($0 * 1e6).rounded()) }
        do throws(StoreError) { _ = try store.correctFinish(runID: id, offsetNs: offsetNs) } catch {
            throw error.kind == .invalid ? ResultsBookError(.invalid, field: "offsetMs", reason: error.message) : Self.bookError(error)
        }
        changes.add(1, ordering: .relaxed)
        return try run(id: id)
    }

    public func delete(id: Int64) throws(ResultsBookError) {
        try map { () throws(StoreError) in try store.deleteRun(id: id) }
        changes.add(1, ordering: .relaxed)
    }

    public func athletes() throws(ResultsBookError) -> [Athlete] {
        try map { () throws(StoreError) in try store.athletes() }.compactMap(Self.athlete)
    }

    static func athlete(_ a: StoredAthlete) -> Athlete? {
        a.id.map { Athlete(id: $0, name: a.name, nickname: a.nickname, colour: a.colour.rawValue, birthdate: a.birthdate?.description,
                           gender: a.gender.rawValue) }
    }

    /// The store's form of `a`; the route has checked colour, date and gender already.
    static func stored(_ a: Athlete, id: Int64?) throws(ResultsBookError) -> StoredAthlete {
        guard let colour = AthleteColour(rawValue: a.colour) else {
            throw ResultsBookError(.invalid, field: "colour", reason: "one of \(Athlete.colours.joined(separator: ", "))")
        }
        guard let gender = AthleteGender(rawValue: a.gender) else {
            throw ResultsBookError(.invalid, field: "gender", reason: "one of \(Athlete.genders.joined(separator: ", "))")
        }
        var birth: CalendarDate?
        if let b = a.birthdate {
            guard let d = CalendarDate(b) else { throw ResultsBookError(.invalid, field: "birthdate", reason: "a date YYYY-MM-DD") }
            birth = d
        }
        return StoredAthlete(id: id, name: a.name, nickname: a.nickname, colour: colour, birthdate: birth, gender: gender)
    }

    private func nameTaken(_ name: String, by other: Int64?) throws(ResultsBookError) {
        let existing = try map { () throws(StoreError) in try store.athletes() }
        if existing.contains(where: { $0.id != other && $0.name.lowercased() == name.lowercased() }) {
            throw ResultsBookError(.conflict, field: "name", reason: "an athlete named \(name) exists")
        }
    }

    public func addAthlete(_ athlete: Athlete) throws(ResultsBookError) -> Athlete {
        try nameTaken(athlete.name, by: nil)
        let s = try Self.stored(athlete, id: nil)
        let a = try map { () throws(StoreError) in try store.addAthlete(s) }
        changes.add(1, ordering: .relaxed)
        return Self.athlete(a) ?? athlete
    }

    public func updateAthlete(_ athlete: Athlete) throws(ResultsBookError) {
        try nameTaken(athlete.name, by: athlete.id)
        let s = try Self.stored(athlete, id: athlete.id)
        try map { () throws(StoreError) in try store.updateAthlete(s) }
        changes.add(1, ordering: .relaxed)
    }

    public func deleteAthlete(id: Int64) throws(ResultsBookError) {
        try map { () throws(StoreError) in try store.deleteAthlete(id: id) }
        changes.add(1, ordering: .relaxed)
    }

    public func assignNextRun(athleteID: Int64?) throws(ResultsBookError) {
        do throws(StoreError) { try store.assignNextRun(athleteID: athleteID) } catch {
            throw error.kind == .notFound ? ResultsBookError(.notFound, field: "athleteId", reason: error.message) : Self.bookError(error)
        }
        changes.add(1, ordering: .relaxed)
    }

    public func nextRunAthlete() -> Athlete? {
        guard let a = try? store.nextRunAthlete() else { return nil }
        return Self.athlete(a)
    }

    /// Personal bests (all seasons) per athlete and course, as their runs.
    public func bests(athleteID: Int64?) throws(ResultsBookError) -> [RunRecord] {
        let bests = try map { () throws(StoreError) in try store.bests(athleteID: athleteID) }.filter { $0.season == nil }
        var out: [RunRecord] = []
        for b in bests {
            guard let row = try? store.run(id: b.runID) else { continue }
            out.append(Self.record(from: row))
        }
        return out.sorted { ($0.athleteName ?? "", $0.preset ?? "", $0.seconds) < ($1.athleteName ?? "", $1.preset ?? "", $1.seconds) }
    }

    public func sessions() throws(ResultsBookError) -> [SessionSummary] {
        try map { () throws(StoreError) in try store.sessions(sort: .newest, limit: 10_000) }.map {
            SessionSummary(id: $0.id, startedAt: Double($0.startedWallMs) / 1000, name: $0.name, runCount: $0.runCount)
        }
    }

    public func deleteSession(id: Int64) throws(ResultsBookError) -> Int {
        let n = try map { () throws(StoreError) in try store.deleteSession(id: id) }
        changes.add(1, ordering: .relaxed)
        return n
    }

    public func bestLines(athleteID: Int64?) throws(ResultsBookError) -> [BestView] {
        let season = RunStore.season(wallMs: Int64(Date().timeIntervalSince1970 * 1000))
        let lines = try map { () throws(StoreError) in try store.bestLines(athleteID: athleteID, season: season) }
        let athletes = Dictionary(try map { () throws(StoreError) in try store.athletes() }.compactMap { a in a.id.map { ($0, a) } },
                                  uniquingKeysWith: { a, _ in a })
        func time(_ b: StoredBest) -> BestView.Time {
            .init(runID: b.runID, seconds: Double(b.totalNs) / 1e9, startedAt: Double(b.wallStartMs) / 1000)
        }
        return lines.compactMap { l in
            guard let a = athletes[l.athleteID] else { return nil }
            return BestView(athleteID: l.athleteID, athleteName: a.name, athleteColour: a.colour.rawValue, startType: l.startType,
                            distanceMetres: l.distance, personalBest: time(l.personal), seasonBest: l.season.map(time), season: season,
                            previousBestSeconds: l.previousNs.map { Double($0) / 1e9 },
                            improvementSeconds: l.improvementNs.map { Double($0) / 1e9 }, runCount: l.runCount)
        }.sorted { ($0.athleteName.lowercased(), $0.startType, $0.distanceMetres) < ($1.athleteName.lowercased(), $1.startType, $1.distanceMetres) }
    }

    public func roster() throws(ResultsBookError) -> [Athlete] {
        try map { () throws(StoreError) in try store.roster() }.compactMap(Self.athlete)
    }

    public func setRoster(_ athleteIDs: [Int64]) throws(ResultsBookError) {
        do throws(StoreError) { try store.setRoster(athleteIDs) } catch {
            throw error.kind == .notFound || error.kind == .invalid
                ? ResultsBookError(error.kind == .notFound ? .notFound : .invalid, field: "athleteIds", reason: error.message) : Self.bookError(error)
        }
        changes.add(1, ordering: .relaxed)
    }

    public func sessionAthletes() throws(ResultsBookError) -> [Athlete] {
        try map { () throws(StoreError) in try store.latestSessionAthletes() }.compactMap(Self.athlete)
    }

    public func bestBefore(runID: Int64) throws(ResultsBookError) -> Double? {
        try map { () throws(StoreError) in try store.bestBefore(runID: runID) }.map { Double($0) / 1e9 }
    }

    public func storage() throws(ResultsBookError) -> StorageSummary {
        let u = try map { () throws(StoreError) in try store.usage() }
        return StorageSummary(bytes: u.bytes, runs: u.runs, sessions: u.sessions, athletes: u.athletes, images: u.images)
    }

    public func clearAll() throws(ResultsBookError) -> Int {
        let n = try map { () throws(StoreError) in try store.clearAll() }
        changes.add(1, ordering: .relaxed)
        return n
    }

    public func shiftWallTimes(in window: ClosedRange<Int64>, by stepMs: Int64) throws(ResultsBookError) -> WallShift {
        let moved = try map { () throws(StoreError) in try store.shiftWallTimes(in: window, by: stepMs) }
        changes.add(1, ordering: .relaxed)
        return moved
    }

    public func photo(id: Int64) throws(ResultsBookError) -> [UInt8]? {
        _ = try run(id: id)
        return try map { () throws(StoreError) in try store.photo(runID: id) }?.jpeg
    }

    public func thumbnail(id: Int64, index: Int) throws(ResultsBookError) -> [UInt8]? {
        _ = try run(id: id)
        guard index >= 0 else { throw ResultsBookError(.invalid, field: "index", reason: "must not be negative") }
        return try map { () throws(StoreError) in try store.thumbnail(runID: id, index: index) }
    }

    public func gatePhoto(id: Int64, gateIndex: Int) throws(ResultsBookError) -> [UInt8]? {
        _ = try run(id: id)
        return try map { () throws(StoreError) in try store.gatePhoto(runID: id, gateIndex: gateIndex) }
    }

    public func gateFrames(id: Int64, gateIndex: Int) throws(ResultsBookError) -> GateFrames? {
        _ = try run(id: id)
        return try map { () throws(StoreError) in try store.gateFrames(runID: id, gateIndex: gateIndex) }.map {
            GateFrames(runID: id, gateIndex: gateIndex, gateX: $0.gateX, offsetsMicroseconds: $0.offsetsMicroseconds)
        }
    }

    public func gateFrame(id: Int64, gateIndex: Int, position: Int) throws(ResultsBookError) -> [UInt8]? {
        _ = try run(id: id)
        return try map { () throws(StoreError) in try store.gateFrame(runID: id, gateIndex: gateIndex, position: position) }
    }

    public func storePhoto(id: Int64, jpeg: [UInt8]) throws(ResultsBookError) {
        try map { () throws(StoreError) in try store.savePhoto(runID: id, jpeg: jpeg, thumbnails: []) }
        changes.add(1, ordering: .relaxed)
    }

    // MARK: - Mapping

    /// A stored run as the page shows it. `wallTime` is the finish (start plus total).
    /// Nanoseconds are divided (not multiplied by 1e-9) so 3.3 s reads back as 3.3.
    static func record(from row: HistoryRow) -> RunRecord {
        let r = row.run
        let total = r.totalNs ?? 0
        // The page lists intermediate splits; the last split is the result itself.
        let splits = r.splits.filter { $0.timeNs < total }.map { Double($0.timeNs) / 1e9 }
        var record = RunRecord(id: r.id ?? 0, seconds: Double(total) / 1e9, splits: splits, startType: r.startType, preset: r.presetID,
                           distanceMetres: r.distance, athleteID: r.athleteID, athleteName: row.athleteName,
                           personalBest: row.bests.personal, wallTime: Double(r.wallStartMs) / 1000 + Double(total) / 1e9,
                           hasPhoto: row.hasPhoto, photoGates: row.photoGates, frameGates: row.frameGates)
        record.gateCount = r.gateCount
        record.seasonBest = row.bests.season
        record.sessionID = r.sessionID
        record.athleteColour = row.athleteColour?.rawValue
        record.measuredSeconds = r.originalTotalNs.map { Double($0) / 1e9 }
        record.legs = r.splits.map {
            RunLeg(gateIndex: $0.gateIndex, distanceMetres: $0.distance, seconds: Double($0.timeNs) / 1e9,
                   segmentSeconds: Double($0.segmentNs) / 1e9, segmentSpeed: $0.segmentSpeed,
                   uncertaintyMs: Double($0.syncUncertaintyNs) / 1e6)
        }
        return record
    }

    /// A store error as the page's: the field from the message, what to do in the reason.
    public static func bookError(_ e: StoreError) -> ResultsBookError {
        switch e.kind {
        case .notFound: ResultsBookError(.notFound, field: "id", reason: e.message)
        case .invalid: ResultsBookError(.invalid, field: Self.field(of: e.message), reason: e.message)
        case .open, .database: ResultsBookError(.unavailable, field: "database", reason: e.message)
        }
    }

    /// The store's invalid-value messages start with the field name ("notes: too long").
    private static func field(of message: String) -> String {
        guard let colon = message.firstIndex(of: ":") else { return "value" }
        let f = message[..<colon]
        return f.isEmpty || f.contains(" ") ? "value" : String(f)
    }

    private func map<T>(_ body: () throws(StoreError) -> T) throws(ResultsBookError) -> T {
        do throws(StoreError) { return try body() } catch { throw Self.bookError(error) }
    }
}
