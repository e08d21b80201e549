// SPDX-License-Identifier: Apache-2.0
// The stored record types: sessions, runs, splits, crossings, athletes, bests, photos.

public import GateCore

/// The eight colours an athlete can wear on the web page (chips, chart lines).
public enum AthleteColour: String, Sendable, Hashable, Codable, CaseIterable {
    case red, orange, yellow, green, blue, purple, pink, gray
}

/// An athlete's gender as the coach records it; `unspecified` when not given.
public enum AthleteGender: String, Sendable, Hashable, Codable, CaseIterable {
    case female, male, other, unspecified
}

/// A calendar date without a time of day or zone (a birthdate), stored as `YYYY-MM-DD`.
public struct CalendarDate: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int

    /// Fails (returns nil) unless the date exists in the Gregorian calendar, years 1900...2999.
    public init?(year: Int, month: Int, day: Int) {
        guard (1900...2999).contains(year), (1...12).contains(month), day >= 1,
              day <= CalendarDate.daysIn(month: month, year: year) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses `YYYY-MM-DD`; nil for anything else or a date that does not exist.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]) else { return nil }
        self.init(year: y, month: m, day: d)
    }

    public var description: String {
        func pad(_ v: Int, _ w: Int) -> String { String(repeating: "0", count: max(0, w - String(v).count)) + String(v) }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    public static func < (a: Self, b: Self) -> Bool { (a.year, a.month, a.day) < (b.year, b.month, b.day) }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let d = CalendarDate(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "\(text) is not a YYYY-MM-DD date"))
        }
        self = d
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

/// An athlete. `id` is nil until stored.
public struct StoredAthlete: Sendable, Hashable, Codable, Identifiable {
    public var id: Int64?
    public var name: String
    public var nickname: String?
    public var colour: AthleteColour
    public var birthdate: CalendarDate?
    public var gender: AthleteGender

    public init(id: Int64? = nil, name: String, nickname: String? = nil, colour: AthleteColour = .blue,
                birthdate: CalendarDate? = nil, gender: AthleteGender = .unspecified) {
        self.id = id
        self.name = name
        self.nickname = nickname
        self.colour = colour
        self.birthdate = birthdate
        self.gender = gender
    }
}

/// A training session: the runs of one visit to the track. A run opens a new session when
/// the previous run is more than `RunStore.sessionGap` old, or when one is started explicitly.
public struct StoredSession: Sendable, Hashable, Codable, Identifiable {
    public var id: Int64
    /// When the session began, wall clock, milliseconds since the Unix epoch (display only).
    public var startedWallMs: Int64
    public var name: String
    public var notes: String
    /// Runs stored in the session (false starts included).
    public var runCount: Int

    public init(id: Int64, startedWallMs: Int64, name: String, notes: String, runCount: Int) {
        self.id = id
        self.startedWallMs = startedWallMs
        self.name = name
        self.notes = notes
        self.runCount = runCount
    }
}

/// One timing gate's result within a run.
public struct StoredSplit: Sendable, Hashable, Codable {
    /// 1-based index of the gate (or lap) along the course, in the order crossed.
    public var gateIndex: Int
    /// Distance of this gate from the start line, metres; nil when the course has no distances.
    public var distance: Double?
    /// Time from the start to this gate, nanoseconds.
    public var timeNs: Int64
    /// Time from the previous gate (or the start) to this gate, nanoseconds.
    public var segmentNs: Int64
    /// Average speed over the segment, metres per second; nil without distances.
    public var segmentSpeed: Double?
    /// One standard deviation of `timeNs`: detection plus, between gates, clock sync, nanoseconds.
    public var syncUncertaintyNs: Int64

    public init(gateIndex: Int, distance: Double?, timeNs: Int64, segmentNs: Int64, segmentSpeed: Double?,
                syncUncertaintyNs: Int64) {
        self.gateIndex = gateIndex
        self.distance = distance
        self.timeNs = timeNs
        self.segmentNs = segmentNs
        self.segmentSpeed = segmentSpeed
        self.syncUncertaintyNs = syncUncertaintyNs
    }

    public var seconds: Double { Double(timeNs) * 1e-9 }
    public var segmentSeconds: Double { Double(segmentNs) * 1e-9 }
}

/// A crossing the detector reported during a run (kept for audit and re-timing).
public struct StoredCrossing: Sendable, Hashable, Codable {
    /// Local CLOCK_MONOTONIC instant of the crossing, nanoseconds (valid within one boot only).
    public var monoNs: Int64
    public var uncertaintyNs: Int64
    /// `CrossingDirection` as text.
    public var direction: String
    /// Blob height as a fraction of the frame height, 0...1.
    public var blobHeight: Double
    /// Torso speed in work-image pixels per second.
    public var speedPixelsPerSecond: Double

    public init(monoNs: Int64, uncertaintyNs: Int64, direction: String, blobHeight: Double, speedPixelsPerSecond: Double) {
        self.monoNs = monoNs
        self.uncertaintyNs = uncertaintyNs
        self.direction = direction
        self.blobHeight = blobHeight
        self.speedPixelsPerSecond = speedPixelsPerSecond
    }

    public init(_ c: Crossing) {
        self.init(monoNs: c.time.nanoseconds, uncertaintyNs: c.uncertainty.nanoseconds, direction: "\(c.direction)",
                  blobHeight: c.blobHeight, speedPixelsPerSecond: c.speedWorkPixelsPerSecond)
    }
}

/// The preset a run was timed with (the engine's `Preset`, flattened for storage).
public struct StoredPreset: Sendable, Hashable, Codable {
    public var id: String
    public var title: String
    /// Metres; nil for drills without a distance (solo laps).
    public var distance: Double?
    public var startType: String

    public init(id: String, title: String, distance: Double?, startType: String) {
        self.id = id
        self.title = title
        self.distance = distance
        self.startType = startType
    }
}

/// A run: written by the assembler (id nil), read back with its id, session and bests.
public struct StoredRun: Sendable, Hashable, Codable, Identifiable {
    public var id: Int64?
    public var sessionID: Int64?
    /// The engine's `StartType` raw value: `flying`, `button-release`, `countdown`, `voice`, `in-frame`.
    public var startType: String
    /// Preset identifier (e.g. `flying-30m`), nil when timed without one.
    public var presetID: String?
    /// Distance timed, metres; nil when unknown.
    public var distance: Double?
    public var athleteID: Int64?
    /// When the clock started, wall clock, milliseconds since the Unix epoch (display only).
    public var wallStartMs: Int64
    /// Local monotonic start instant, nanoseconds (for matching photos and journal lines in one boot).
    public var startMonoNs: Int64
    /// Total time from the start to the last gate, nanoseconds; nil for a false start or a
    /// run stopped before any gate.
    public var totalNs: Int64?
    public var falseStart: Bool
    /// Why the start was false (the engine's `FalseStartReason` text); nil otherwise.
    public var falseStartReason: String?
    /// Timing gates that took part (1 for a lone gate).
    public var gateCount: Int
    public var splits: [StoredSplit]
    public var crossings: [StoredCrossing]
    public var notes: String
    /// The total the gate measured, when a coach has corrected the run by hand on its
    /// photo finish (`totalNs` is then the corrected time); nil for an uncorrected run.
    public var originalTotalNs: Int64?

    public init(id: Int64? = nil, sessionID: Int64? = nil, startType: String, presetID: String? = nil,
                distance: Double? = nil, athleteID: Int64? = nil, wallStartMs: Int64, startMonoNs: Int64 = 0,
                totalNs: Int64?, falseStart: Bool = false, falseStartReason: String? = nil, gateCount: Int = 1,
                splits: [StoredSplit] = [], crossings: [StoredCrossing] = [], notes: String = "", originalTotalNs: Int64? = nil) {
        self.originalTotalNs = originalTotalNs
        self.id = id
        self.sessionID = sessionID
        self.startType = startType
        self.presetID = presetID
        self.distance = distance
        self.athleteID = athleteID
        self.wallStartMs = wallStartMs
        self.startMonoNs = startMonoNs
        self.totalNs = totalNs
        self.falseStart = falseStart
        self.falseStartReason = falseStartReason
        self.gateCount = gateCount
        self.splits = splits
        self.crossings = crossings
        self.notes = notes
    }

    /// Total time in seconds, nil when there is none.
    public var seconds: Double? { totalNs.map { Double($0) * 1e-9 } }

    /// The key bests are filed under, e.g. `flying_30m`; nil without a distance.
    public var bestKey: String? { distance.map { BestKey.make(startType: startType, distance: $0) } }
}

/// Best-key formatting, like the reference app: start type with `_` for `-`, then the distance.
public enum BestKey {
    /// `flying_30m`, `countdown_60m`, `button_release_36.576m`.
    public static func make(startType: String, distance: Double) -> String {
        let type = String(startType.map { $0 == "-" ? "_" : $0 })
        // Why: millimetre resolution keeps 40 yd (36.576 m) exact while 30.0 prints as 30.
        let mm = Int64((distance * 1000).rounded())
        var text = String(mm / 1000)
        var frac = mm % 1000
        if frac != 0 {
            var digits = String(frac)
            digits = String(repeating: "0", count: 3 - digits.count) + digits
            while digits.hasSuffix("0") { digits.removeLast() }
            text += "." + digits
            frac = 0
        }
        return "\(type)_\(text)m"
    }
}

/// Which bests a run set when it was stored.
public struct BestsSet: Sendable, Hashable, Codable {
    /// The athlete's fastest ever for the run's key.
    public var personal: Bool
    /// The athlete's fastest this calendar year for the run's key.
    public var season: Bool

    public init(personal: Bool, season: Bool) {
        self.personal = personal
        self.season = season
    }

    public static let none = BestsSet(personal: false, season: false)
}

/// One best of one athlete: `season` nil is the personal (all-time) best.
public struct StoredBest: Sendable, Hashable, Codable {
    public var athleteID: Int64
    /// e.g. `flying_30m`.
    public var key: String
    /// Calendar year of a season best; nil for the personal best.
    public var season: Int?
    public var runID: Int64
    public var totalNs: Int64
    /// Wall clock of the run, milliseconds since the Unix epoch.
    public var wallStartMs: Int64

    public init(athleteID: Int64, key: String, season: Int?, runID: Int64, totalNs: Int64, wallStartMs: Int64) {
        self.athleteID = athleteID
        self.key = key
        self.season = season
        self.runID = runID
        self.totalNs = totalNs
        self.wallStartMs = wallStartMs
    }

    public var seconds: Double { Double(totalNs) * 1e-9 }
}

/// The result of storing a run: the run with its id and session, and the bests it set.
public struct CommittedRun: Sendable, Hashable {
    public var run: StoredRun
    public var bests: BestsSet

    public init(run: StoredRun, bests: BestsSet) {
        self.run = run
        self.bests = bests
    }
}

/// A photo-finish image of a run: the full JPEG and its thumbnails (smallest first).
public struct StoredPhoto: Sendable, Hashable {
    public var runID: Int64
    public var jpeg: [UInt8]
    public var thumbnails: [[UInt8]]
    /// The image's time scale; nil for an image stored without one (a race gate's).
    public var scale: PhotoScale?

    public init(runID: Int64, jpeg: [UInt8], thumbnails: [[UInt8]], scale: PhotoScale? = nil) {
        self.runID = runID
        self.jpeg = jpeg
        self.thumbnails = thumbnails
        self.scale = scale
    }
}


/// One frame of a gate's strip around its crossing.
public struct StoredFrame: Sendable, Hashable {
    /// The frame's time minus the crossing instant, microseconds.
    public var offsetMicroseconds: Int
    public var jpeg: [UInt8]
    public init(offsetMicroseconds: Int, jpeg: [UInt8]) {
        self.offsetMicroseconds = offsetMicroseconds
        self.jpeg = jpeg
    }
}

/// What a gate's frame strip of a run holds, without the images.
public struct StoredFrameStrip: Sendable, Hashable {
    public var runID: Int64
    public var gateIndex: Int
    /// The gate line's column in the frames, pixels.
    public var gateX: Double
    /// Each frame's time minus the crossing instant, microseconds, oldest first; frame
    /// `i` is position `i`.
    public var offsetsMicroseconds: [Int]
    public init(runID: Int64, gateIndex: Int, gateX: Double, offsetsMicroseconds: [Int]) {
        self.runID = runID
        self.gateIndex = gateIndex
        self.gateX = gateX
        self.offsetsMicroseconds = offsetsMicroseconds
    }
}

/// How history lists are ordered.
public enum RunSort: String, Sendable, Hashable, Codable, CaseIterable {
    /// Newest start first.
    case newest
    case oldest
    /// Fastest total time first; runs without a time (false starts) last.
    case fastest
    /// Runs of the athlete with the most runs (within the filter) first, newest first
    /// within one athlete; unassigned runs count as one group.
    case mostRuns = "most-runs"
}

/// History filter. Every field is optional; nil means "any". Times are wall clock,
/// milliseconds since the Unix epoch, `from` inclusive and `to` exclusive.
public struct RunFilter: Sendable, Hashable {
    public var fromWallMs: Int64?
    public var toWallMs: Int64?
    /// Metres; matched to the millimetre.
    public var distance: Double?
    public var startType: String?
    public var gateCount: Int?
    public var athleteID: Int64?
    public var sessionID: Int64?
    /// Case-insensitive substring of the athlete's name or nickname, the preset, or the notes.
    public var search: String?
    public var includeFalseStarts: Bool
    public var sort: RunSort
    /// At most this many runs (1...10 000).
    public var limit: Int
    public var offset: Int

    public init(fromWallMs: Int64? = nil, toWallMs: Int64? = nil, distance: Double? = nil, startType: String? = nil,
                gateCount: Int? = nil, athleteID: Int64? = nil, sessionID: Int64? = nil, search: String? = nil,
                includeFalseStarts: Bool = true, sort: RunSort = .newest, limit: Int = 100, offset: Int = 0) {
        self.fromWallMs = fromWallMs
        self.toWallMs = toWallMs
        self.distance = distance
        self.startType = startType
        self.gateCount = gateCount
        self.athleteID = athleteID
        self.sessionID = sessionID
        self.search = search
        self.includeFalseStarts = includeFalseStarts
        self.sort = sort
        self.limit = limit
        self.offset = offset
    }
}

/// A run in a history list: the run, who ran it, and whether it was (when stored) a best.
public struct HistoryRow: Sendable, Hashable {
    public var run: StoredRun
    public var athleteName: String?
    public var athleteNickname: String?
    public var athleteColour: AthleteColour?
    /// Whether this run is the athlete's current personal / season best for its key.
    public var bests: BestsSet
    public var hasPhoto: Bool
    /// Gate indexes (0: the start) whose image of their crossing is stored (multi-gate runs).
    public var photoGates: [Int]
    /// Gate indexes whose frames around their crossing are stored (a lone gate's: 0).
    public var frameGates: [Int]

    public init(run: StoredRun, athleteName: String?, athleteNickname: String?, athleteColour: AthleteColour?,
                bests: BestsSet, hasPhoto: Bool, photoGates: [Int] = [], frameGates: [Int] = []) {
        self.photoGates = photoGates
        self.frameGates = frameGates
        self.run = run
        self.athleteName = athleteName
        self.athleteNickname = athleteNickname
        self.athleteColour = athleteColour
        self.bests = bests
        self.hasPhoto = hasPhoto
    }
}

/// Runs per athlete (for "most runs" lists); `athlete` nil gathers unassigned runs.
public struct AthleteTally: Sendable, Hashable {
    public var athlete: StoredAthlete?
    public var runCount: Int

    public init(athlete: StoredAthlete?, runCount: Int) {
        self.athlete = athlete
        self.runCount = runCount
    }
}

/// How session lists are ordered.
public enum SessionSort: String, Sendable, Hashable, Codable, CaseIterable {
    case newest, oldest
    /// Sessions with the most runs first.
    case mostRuns = "most-runs"
}

/// Export formats.
public enum ExportFormat: String, Sendable, Hashable, CaseIterable {
    /// One row per run, splits as column groups (RFC 4180 quoting).
    case csv
    /// Everything: sessions, athletes, presets, runs with splits and crossings, bests.
    case json
}

/// Errors from the store. Text names what was wrong and what to do.
public struct StoreError: Error, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// The database could not be opened or created.
        case open
        /// A value given to the store is invalid (`field` names it).
        case invalid
        /// The thing asked for does not exist.
        case notFound
        /// SQLite failed while reading or writing.
        case database
    }
    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
