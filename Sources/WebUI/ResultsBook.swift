// SPDX-License-Identifier: Apache-2.0
// Run history, athletes and personal bests as the web page needs them, behind one protocol.

public import SQLiteStore
import Synchronization

/// One timed run in the history.
/// A gate's frames around its crossing of a run, as the page lists them: step through
/// `frames`, fetching each from `url`, with the gate line at `gateX`.
public struct GateFrames: Sendable, Hashable, Codable {
    public struct Frame: Sendable, Hashable, Codable {
        public var position: Int
        /// The frame's time minus the gate's crossing instant, milliseconds.
        public var offsetMs: Double
        public var url: String
    }
    public var runID: Int64
    public var gateIndex: Int
    /// The gate line's column in the frames, pixels.
    public var gateX: Double
    public var frames: [Frame]

    public init(runID: Int64, gateIndex: Int, gateX: Double, offsetsMicroseconds: [Int]) {
        self.runID = runID
        self.gateIndex = gateIndex
        self.gateX = gateX
        frames = offsetsMicroseconds.enumerated().map { i, us in
            Frame(position: i, offsetMs: Double(us) / 1000, url: "/api/results/\(runID)/gates/\(gateIndex)/frames/\(i).jpg")
        }
    }
}

/// One gate's place in a stored run: its time from the start and the segment before it.
public struct RunLeg: Sendable, Hashable, Codable {
    /// The gate's place on the course (0: the start; a lone gate's finish: 1).
    public var gateIndex: Int
    public var distanceMetres: Double?
    /// From the start to this gate, seconds.
    public var seconds: Double
    /// From the previous gate (or the start), seconds.
    public var segmentSeconds: Double
    /// Average over the segment, metres per second; nil without distances.
    public var segmentSpeed: Double?
    /// One standard deviation of `seconds` (detection and clock sync), milliseconds.
    public var uncertaintyMs: Double
    public init(gateIndex: Int, distanceMetres: Double?, seconds: Double, segmentSeconds: Double, segmentSpeed: Double?,
                uncertaintyMs: Double) {
        self.gateIndex = gateIndex
        self.distanceMetres = distanceMetres
        self.seconds = seconds
        self.segmentSeconds = segmentSeconds
        self.segmentSpeed = segmentSpeed
        self.uncertaintyMs = uncertaintyMs
    }
}

public struct RunRecord: Sendable, Hashable, Codable {
    public var id: Int64
    /// Final (or lap) time, seconds.
    public var seconds: Double
    /// Split times since the start, seconds, oldest first.
    public var splits: [Double]
    public var startType: String
    public var preset: String?
    public var distanceMetres: Double?
    public var athleteID: Int64?
    public var athleteName: String?
    /// The athlete's best for this preset when it was run.
    public var personalBest: Bool
    /// Finish time, Unix seconds (display only).
    public var wallTime: Double
    /// Whether a photo-finish image is stored for this run.
    public var hasPhoto: Bool
    /// Multi-gate runs: the gates (0: the start) whose image of their crossing is stored.
    public var photoGates: [Int]
    /// The gates (a lone gate: 0) whose frames around their crossing are stored.
    public var frameGates: [Int]
    /// Gates that timed the run (1: a lone gate).
    public var gateCount: Int = 1
    /// Every gate's time and segment, in course order (empty when none were stored).
    public var legs: [RunLeg] = []
    /// Whether this run is the athlete's best of its season over its course.
    public var seasonBest = false
    /// The training session the run belongs to (nil in a book without sessions).
    public var sessionID: Int64?
    /// The athlete's colour, one of `Athlete.colours`.
    public var athleteColour: String?
    /// The time the gate measured, when a coach corrected the run by hand on its photo
    /// finish (`seconds` is then the corrected time).
    public var measuredSeconds: Double?
    public var corrected: Bool { measuredSeconds != nil }
    /// The photo finish's time scale (run details only): where the timed crossing is.
    public var photoScale: PhotoScaleView?

    public init(id: Int64, seconds: Double, splits: [Double], startType: String, preset: String?,
                distanceMetres: Double?, athleteID: Int64?, athleteName: String?, personalBest: Bool,
                wallTime: Double, hasPhoto: Bool, photoGates: [Int] = [], frameGates: [Int] = []) {
        self.photoGates = photoGates
        self.frameGates = frameGates
        self.id = id
        self.seconds = seconds
        self.splits = splits
        self.startType = startType
        self.preset = preset
        self.distanceMetres = distanceMetres
        self.athleteID = athleteID
        self.athleteName = athleteName
        self.personalBest = personalBest
        self.wallTime = wallTime
        self.hasPhoto = hasPhoto
    }
}

public struct Athlete: Sendable, Hashable, Codable {
    /// The reference app's eight colours.
    public static let colours = ["red", "orange", "yellow", "green", "blue", "purple", "pink", "gray"]
    public static let genders = ["female", "male", "other", "unspecified"]

    public var id: Int64
    public var name: String
    public var nickname: String?
    /// One of `colours`.
    public var colour: String
    /// `YYYY-MM-DD`, or nil.
    public var birthdate: String?
    /// One of `genders`.
    public var gender: String
    public init(id: Int64, name: String, nickname: String? = nil, colour: String = "blue", birthdate: String? = nil,
                gender: String = "unspecified") {
        self.id = id
        self.name = name
        self.nickname = nickname
        self.colour = colour
        self.birthdate = birthdate
        self.gender = gender
    }

    /// Whether `q` (already lowercased) is in the name or nickname.
    public func matches(_ q: String) -> Bool {
        q.isEmpty || name.lowercased().contains(q) || (nickname?.lowercased().contains(q) ?? false)
    }
}

/// Where time runs in a run's photo-finish image, for placing the crossing by hand: image
/// column `x` is `(x − crossingX) × millisecondsPerColumn` from the crossing the gate timed.
public struct PhotoScaleView: Sendable, Hashable, Codable {
    public var crossingX: Double
    public var millisecondsPerColumn: Double
    /// The slit-scan composite's first image column and its width.
    public var compositeX: Int
    public var compositeWidth: Int
    public init(crossingX: Double, millisecondsPerColumn: Double, compositeX: Int, compositeWidth: Int) {
        self.crossingX = crossingX
        self.millisecondsPerColumn = millisecondsPerColumn
        self.compositeX = compositeX
        self.compositeWidth = compositeWidth
    }
}

/// A training session: runs close together in time (or started on the page).
public struct SessionSummary: Sendable, Hashable, Codable {
    public var id: Int64
    /// Unix seconds.
    public var startedAt: Double
    public var name: String
    public var runCount: Int
    public init(id: Int64, startedAt: Double, name: String, runCount: Int) {
        self.id = id
        self.startedAt = startedAt
        self.name = name
        self.runCount = runCount
    }
}

/// An athlete's best over one course (start type and distance): the bests view's row.
public struct BestView: Sendable, Hashable, Codable {
    public struct Time: Sendable, Hashable, Codable {
        public var runID: Int64
        public var seconds: Double
        /// When the run started, Unix seconds.
        public var startedAt: Double
        public init(runID: Int64, seconds: Double, startedAt: Double) {
            self.runID = runID
            self.seconds = seconds
            self.startedAt = startedAt
        }
    }
    public var athleteID: Int64
    public var athleteName: String
    public var athleteColour: String
    public var startType: String
    public var distanceMetres: Double
    public var personalBest: Time
    /// The best of the current season, if the course was run in it.
    public var seasonBest: Time?
    public var season: Int
    /// The best before the personal best; nil when the personal best was the first time.
    public var previousBestSeconds: Double?
    public var improvementSeconds: Double?
    public var runCount: Int
}

/// The newest run when it set a personal best: what the page's toast says on every phone.
public struct BestNews: Sendable, Hashable, Codable {
    public var runID: Int64
    public var athleteName: String
    public var seconds: Double
    public var startType: String
    public var distanceMetres: Double?
    /// The best it beat; nil for the athlete's first time over the course.
    public var previousBestSeconds: Double?
    public var improvementSeconds: Double?
}

/// What the results database holds and its size on disk: the settings' Data section.
public struct StorageSummary: Sendable, Hashable, Codable {
    public var bytes: Int64
    public var runs: Int
    public var sessions: Int
    public var athletes: Int
    public var images: Int
}

/// A history query. All filters are optional and combine with AND.
public struct HistoryQuery: Sendable, Hashable {
    /// `runs`: the athlete with the most runs (within the filter) first, newest first within one.
    public enum Sort: String, Sendable, CaseIterable { case date, time, athlete, runs }
    public var athleteID: Int64?
    public var preset: String?
    public var startType: String?
    /// Metres.
    public var distance: Double?
    /// Gates that timed the run (1: a lone gate).
    public var gateCount: Int?
    public var sessionID: Int64?
    /// Unix seconds, inclusive.
    public var from: Double?
    public var to: Double?
    /// Case-insensitive substring of the athlete's name or the preset id.
    public var search: String?
    public var sort: Sort = .date
    public var descending = true
    public var limit = 50
    public var offset = 0
    public init() {}
}

public struct ResultsBookError: Error, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable { case notFound, conflict, invalid, unavailable }
    public var kind: Kind
    public var field: String
    public var reason: String
    public init(_ kind: Kind, field: String, reason: String) {
        self.kind = kind
        self.field = field
        self.reason = reason
    }
    public var description: String { "\(field): \(reason)" }
}

/// Where the page's history lives. The daemon passes the SQLite-backed book; tests and
/// the demo use `MemoryResultsBook`. Called from web threads; implementations must not
/// block for long (a database call is fine, a network is not).
public protocol ResultsBook: Sendable {
    /// Stores a finished run for the athlete assigned to the next run (then clears the
    /// assignment) and returns the record with its id and PR flag.
    func record(_ run: TimedRun) throws(ResultsBookError) -> RunRecord
    func history(_ query: HistoryQuery) throws(ResultsBookError) -> [RunRecord]
    func run(id: Int64) throws(ResultsBookError) -> RunRecord
    func delete(id: Int64) throws(ResultsBookError)
    func athletes() throws(ResultsBookError) -> [Athlete]
    /// Adds `athlete` (its id is ignored); a name already taken (any case) is a conflict.
    func addAthlete(_ athlete: Athlete) throws(ResultsBookError) -> Athlete
    /// Replaces the details of the athlete with `athlete.id`.
    func updateAthlete(_ athlete: Athlete) throws(ResultsBookError)
    /// Deletes an athlete; their runs stay, without an athlete.
    func deleteAthlete(id: Int64) throws(ResultsBookError)
    /// The athlete the next finished run is credited to, or nil to clear.
    func assignNextRun(athleteID: Int64?) throws(ResultsBookError)
    func nextRunAthlete() -> Athlete?
    /// Best time per athlete and preset.
    func bests(athleteID: Int64?) throws(ResultsBookError) -> [RunRecord]
    /// Training sessions, newest first.
    func sessions() throws(ResultsBookError) -> [SessionSummary]
    /// Deletes a session with all its runs; returns how many runs went.
    func deleteSession(id: Int64) throws(ResultsBookError) -> Int
    /// Each athlete's (or one athlete's) personal and season best per course.
    func bestLines(athleteID: Int64?) throws(ResultsBookError) -> [BestView]
    /// The athlete's best over a run's course before that run, seconds.
    func bestBefore(runID: Int64) throws(ResultsBookError) -> Double?
    /// What is stored and the space it takes.
    func storage() throws(ResultsBookError) -> StorageSummary
    /// Deletes every run, session, image, athlete and best; returns how many runs went.
    func clearAll() throws(ResultsBookError) -> Int
    /// Moves every stored wall time within `window` by `stepMs` (the wall clock was stepped;
    /// see `RunStore.shiftWallTimes`); returns what moved.
    func shiftWallTimes(in window: ClosedRange<Int64>, by stepMs: Int64) throws(ResultsBookError) -> WallShift
    /// The rotating roster in running order (empty: none).
    func roster() throws(ResultsBookError) -> [Athlete]
    /// Sets the roster (empty stops it); the next run goes to its first athlete.
    func setRoster(_ athleteIDs: [Int64]) throws(ResultsBookError)
    /// The athletes of the latest session, in the order they first ran.
    func sessionAthletes() throws(ResultsBookError) -> [Athlete]
    /// Re-times a run from its finish placed by hand `offsetMs` from the crossing the gate
    /// timed on its photo finish; nil puts the measured time back.
    func correctFinish(id: Int64, offsetMs: Double?) throws(ResultsBookError) -> RunRecord
    /// The JPEG photo-finish image of a run, if stored.
    func photo(id: Int64) throws(ResultsBookError) -> [UInt8]?
    func storePhoto(id: Int64, jpeg: [UInt8]) throws(ResultsBookError)
    /// Thumbnail `index` (0 = first, oldest frame) of a run's photo finish, if stored.
    func thumbnail(id: Int64, index: Int) throws(ResultsBookError) -> [UInt8]?
    /// Gate `gateIndex`'s image of its crossing in a multi-gate run, if stored.
    func gatePhoto(id: Int64, gateIndex: Int) throws(ResultsBookError) -> [UInt8]?
    /// The frames gate `gateIndex` (a lone gate: 0) saw around its crossing of a run,
    /// without the images, if stored.
    func gateFrames(id: Int64, gateIndex: Int) throws(ResultsBookError) -> GateFrames?
    /// Frame `position` (0 = oldest) of those, a JPEG, if stored.
    func gateFrame(id: Int64, gateIndex: Int, position: Int) throws(ResultsBookError) -> [UInt8]?
    /// True when finished runs reach the book on another path (the storage thread), so
    /// the loop's results lane must not record them a second time.
    var storesRunsItself: Bool { get }
    /// Moves whenever the book changes outside the web requests (a run committed by the
    /// storage thread); the live board re-reads the history when it moves.
    var changeCount: UInt64 { get }
}

extension ResultsBook {
    /// Sessions, bests lines, storage and clearing all need the results database; a book
    /// without one (the state directory could not be opened) says so.
    static var needsDatabase: ResultsBookError {
        ResultsBookError(.unavailable, field: "database",
                         reason: "the results database is not open (see the gate's log for why); results are kept in memory only")
    }
    public func sessions() throws(ResultsBookError) -> [SessionSummary] { throw Self.needsDatabase }
    public func deleteSession(id: Int64) throws(ResultsBookError) -> Int { throw Self.needsDatabase }
    public func bestLines(athleteID: Int64?) throws(ResultsBookError) -> [BestView] { throw Self.needsDatabase }
    public func bestBefore(runID: Int64) throws(ResultsBookError) -> Double? { throw Self.needsDatabase }
    public func storage() throws(ResultsBookError) -> StorageSummary { throw Self.needsDatabase }
    public func clearAll() throws(ResultsBookError) -> Int { throw Self.needsDatabase }
    public func shiftWallTimes(in window: ClosedRange<Int64>, by stepMs: Int64) throws(ResultsBookError) -> WallShift {
        throw Self.needsDatabase
    }
    public func correctFinish(id: Int64, offsetMs: Double?) throws(ResultsBookError) -> RunRecord { throw Self.needsDatabase }
    public func roster() throws(ResultsBookError) -> [Athlete] { [] }
    public func setRoster(_ athleteIDs: [Int64]) throws(ResultsBookError) { throw Self.needsDatabase }
    public func sessionAthletes() throws(ResultsBookError) -> [Athlete] { throw Self.needsDatabase }
    public func thumbnail(id: Int64, index: Int) throws(ResultsBookError) -> [UInt8]? {
        _ = try run(id: id)
        return nil
    }
    public func gatePhoto(id: Int64, gateIndex: Int) throws(ResultsBookError) -> [UInt8]? {
        _ = try run(id: id)
        return nil
    }
    public func gateFrames(id: Int64, gateIndex: Int) throws(ResultsBookError) -> GateFrames? {
        _ = try run(id: id)
        return nil
    }
    public func gateFrame(id: Int64, gateIndex: Int, position: Int) throws(ResultsBookError) -> [UInt8]? {
        _ = try run(id: id)
        return nil
    }
    public var storesRunsItself: Bool { false }
    public var changeCount: UInt64 { 0 }
}

/// An in-memory book: the demo gate and tests.
public final class MemoryResultsBook: ResultsBook {
    private struct State {
        var runs: [RunRecord] = []
        var athletes: [Athlete] = []
        var photos: [Int64: [UInt8]] = [:]
        var nextID: Int64 = 1
        var nextAthleteID: Int64 = 1
        var nextRun: Int64?
    }
    private let state = Mutex(State())

    public init() {}

    public func record(_ run: TimedRun) throws(ResultsBookError) -> RunRecord {
        state.withLock { s in
            let athlete = s.nextRun.flatMap { id in s.athletes.first { $0.id == id } }
            s.nextRun = nil
            var pb = false
            if let a = athlete {
                let previous = s.runs.filter { $0.athleteID == a.id && $0.preset == run.preset }.map(\.seconds).min()
                pb = previous.map { run.seconds < $0 } ?? true
            }
            let r = RunRecord(id: s.nextID, seconds: run.seconds, splits: run.splits, startType: run.startType,
                              preset: run.preset, distanceMetres: run.distanceMetres, athleteID: athlete?.id,
                              athleteName: athlete?.name, personalBest: pb, wallTime: run.wallTime, hasPhoto: false)
            s.nextID += 1
            s.runs.append(r)
            return r
        }
    }

    public func history(_ q: HistoryQuery) throws(ResultsBookError) -> [RunRecord] {
        let all = state.withLock { $0.runs }
        let needle = q.search?.lowercased()
        var rows = all.filter { r in
            if let a = q.athleteID, r.athleteID != a { return false }
            if let p = q.preset, r.preset != p { return false }
            if let t = q.startType, r.startType != t { return false }
            if let d = q.distance, abs((r.distanceMetres ?? -1) - d) > 0.0005 { return false }
            if let g = q.gateCount, r.gateCount != g { return false }
            if let sid = q.sessionID, r.sessionID != sid { return false }
            if let f = q.from, r.wallTime < f { return false }
            if let t = q.to, r.wallTime > t { return false }
            if let n = needle, !n.isEmpty {
                let hay = ((r.athleteName ?? "") + " " + (r.preset ?? "")).lowercased()
                if !hay.contains(n) { return false }
            }
            return true
        }
        var groups: [Int64: Int] = [:]
        for r in rows { groups[r.athleteID ?? 0, default: 0] += 1 }
        rows.sort { a, b in
            let asc: Bool
            switch q.sort {
            case .runs:
                // Most runs first, newest first within one athlete, whatever the order.
                let ga = groups[a.athleteID ?? 0] ?? 0, gb = groups[b.athleteID ?? 0] ?? 0
                if ga != gb { return ga > gb }
                if a.athleteID != b.athleteID { return (a.athleteID ?? Int64.max) < (b.athleteID ?? Int64.max) }
                return (a.wallTime, a.id) > (b.wallTime, b.id)
            case .date: asc = (a.wallTime, a.id) < (b.wallTime, b.id)
            case .time: asc = (a.seconds, a.id) < (b.seconds, b.id)
            case .athlete: asc = ((a.athleteName ?? "").lowercased(), a.id) < ((b.athleteName ?? "").lowercased(), b.id)
            }
            return q.descending ? !asc : asc
        }
        return Array(rows.dropFirst(q.offset).prefix(q.limit))
    }

    public func run(id: Int64) throws(ResultsBookError) -> RunRecord {
        guard let r = state.withLock({ s in s.runs.first { $0.id == id } }) else {
            throw ResultsBookError(.notFound, field: "id", reason: "no run \(id)")
        }
        return r
    }

    public func delete(id: Int64) throws(ResultsBookError) {
        let removed = state.withLock { s -> Bool in
            guard let i = s.runs.firstIndex(where: { $0.id == id }) else { return false }
            s.runs.remove(at: i)
            s.photos[id] = nil
            return true
        }
        if !removed { throw ResultsBookError(.notFound, field: "id", reason: "no run \(id)") }
    }

    public func athletes() throws(ResultsBookError) -> [Athlete] {
        state.withLock { $0.athletes }.sorted { $0.name.lowercased() < $1.name.lowercased() }
    }

    public func addAthlete(_ athlete: Athlete) throws(ResultsBookError) -> Athlete {
        let result: Result<Athlete, ResultsBookError> = state.withLock { s in
            if s.athletes.contains(where: { $0.name.lowercased() == athlete.name.lowercased() }) {
                return .failure(ResultsBookError(.conflict, field: "name", reason: "an athlete named \(athlete.name) exists"))
            }
            var a = athlete
            a.id = s.nextAthleteID
            s.nextAthleteID += 1
            s.athletes.append(a)
            return .success(a)
        }
        return try result.get()
    }

    public func updateAthlete(_ athlete: Athlete) throws(ResultsBookError) {
        let result: Result<Void, ResultsBookError> = state.withLock { s in
            guard let i = s.athletes.firstIndex(where: { $0.id == athlete.id }) else {
                return .failure(ResultsBookError(.notFound, field: "id", reason: "no athlete \(athlete.id)"))
            }
            if s.athletes.contains(where: { $0.id != athlete.id && $0.name.lowercased() == athlete.name.lowercased() }) {
                return .failure(ResultsBookError(.conflict, field: "name", reason: "an athlete named \(athlete.name) exists"))
            }
            s.athletes[i] = athlete
            return .success(())
        }
        try result.get()
    }

    public func deleteAthlete(id: Int64) throws(ResultsBookError) {
        let removed = state.withLock { s -> Bool in
            guard let i = s.athletes.firstIndex(where: { $0.id == id }) else { return false }
            s.athletes.remove(at: i)
            if s.nextRun == id { s.nextRun = nil }
            return true
        }
        if !removed { throw ResultsBookError(.notFound, field: "id", reason: "no athlete \(id)") }
    }

    public func assignNextRun(athleteID: Int64?) throws(ResultsBookError) {
        let ok = state.withLock { s -> Bool in
            if let id = athleteID, !s.athletes.contains(where: { $0.id == id }) { return false }
            s.nextRun = athleteID
            return true
        }
        if !ok { throw ResultsBookError(.notFound, field: "athleteId", reason: "no athlete \(athleteID ?? 0)") }
    }

    public func nextRunAthlete() -> Athlete? {
        state.withLock { s in s.nextRun.flatMap { id in s.athletes.first { $0.id == id } } }
    }

    public func bests(athleteID: Int64?) throws(ResultsBookError) -> [RunRecord] {
        let runs = state.withLock { $0.runs }.filter { $0.athleteID != nil && (athleteID == nil || $0.athleteID == athleteID) }
        var best: [String: RunRecord] = [:]
        for r in runs {
            let key = "\(r.athleteID ?? 0)|\(r.preset ?? "")"
            if let b = best[key], b.seconds <= r.seconds { continue }
            best[key] = r
        }
        return best.values.sorted { ($0.athleteName ?? "", $0.preset ?? "") < ($1.athleteName ?? "", $1.preset ?? "") }
    }

    public func photo(id: Int64) throws(ResultsBookError) -> [UInt8]? {
        _ = try run(id: id)
        return state.withLock { $0.photos[id] }
    }

    public func storePhoto(id: Int64, jpeg: [UInt8]) throws(ResultsBookError) {
        let ok = state.withLock { s -> Bool in
            guard let i = s.runs.firstIndex(where: { $0.id == id }) else { return false }
            s.photos[id] = jpeg
            s.runs[i].hasPhoto = true
            return true
        }
        if !ok { throw ResultsBookError(.notFound, field: "id", reason: "no run \(id)") }
    }
}
