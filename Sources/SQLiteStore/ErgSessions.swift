// SPDX-License-Identifier: Apache-2.0
// The rowing hub's record in the results database: a session per erg and athlete, its
// strokes, status samples, splits and gaps, and its export as CSV, JSON and TCX.

import Foundation
import GateCore
import GRDB
public import Rowing

/// One erg's session: an athlete's piece on one PM5.
public struct ErgSession: Sendable, Hashable, Codable {
    public var id: Int64
    /// The erg's name as it advertises it ("PM5 430123456").
    public var erg: String
    public var athlete: String
    /// What was set on the erg ("2000 m", "4 × 500 m / 1:00"), or empty for free rowing.
    public var workout: String
    /// Unix seconds.
    public var startedWall: Double
    public var endedWall: Double?
    public var strokes: Int
    /// Metres, from the strokes stored: the furthest of each interval, added up.
    public var distance: Double
    /// The PM5's end-of-workout summary with what the strokes add; nil until finished.
    public var summary: ErgSummary?
}

/// A finished session's figures: the PM5's own summary, and the watts from its strokes.
public struct ErgSummary: Sendable, Hashable, Codable {
    /// Seconds.
    public var elapsed: Double
    /// Metres.
    public var distance: Double
    /// Seconds per 500 m.
    public var averagePace: Double
    public var averageStrokeRate: Int
    public var averageDragFactor: Int
    public var averageHeartRate: Int?
    public var maximumHeartRate: Int?
    public var recoveryHeartRate: Int?
    public var totalCalories: Int?
    /// Watts: the mean and the most of the strokes stored (nil without power).
    public var averagePower: Double?
    public var maximumPower: Int?
    /// True when the PM5's summary never came and these figures are the hub's, from the
    /// strokes and status it recorded; absent for the PM5's own.
    public var fromRecord: Bool?
}

/// A stroke as stored.
public struct StoredErgStroke: Sendable, Hashable, Codable {
    /// The interval it was rowed in, from 1 (1 throughout a piece without intervals).
    public var interval: Int
    /// Counted from 1 in each interval, as the PM5 counts.
    public var stroke: Int
    /// Seconds on the PM5's clock, from the interval's start.
    public var elapsed: Double
    /// Unix seconds of its arrival.
    public var wall: Double
    public var distance: Double
    public var driveLength: Double
    public var driveTime: Double
    public var recoveryTime: Double
    public var strokeDistance: Double
    public var peakForce: Double
    public var averageForce: Double
    public var work: Double
    public var power: Int?
    public var caloriesPerHour: Int?
    public var forceCurve: [Double]
    /// Metres from the start of the workout: the interval's distance after those of the
    /// intervals before it.
    public var workoutDistance: Double
}

/// The formats a session exports to.
public enum ErgExportFormat: String, Sendable, CaseIterable {
    /// One row per stroke, with its interval.
    case csv
    /// The session, its strokes, splits and gaps.
    case json
    /// Garmin's Training Center XML: a lap per interval (one for a piece without), a
    /// track point per stroke with the distance from the workout's start, heart rate,
    /// cadence (stroke rate) and watts; read by Strava and others.
    case tcx
}

extension RunStore {
    /// Starts a session for `athlete` on `erg`.
    public func startErgSession(erg: String, athlete: String, workout: String, wallTime: Double) throws(StoreError) -> ErgSession {
        let erg = erg.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !erg.isEmpty, erg.count <= Self.maxNameLength else { throw StoreError(.invalid, "erg: a name of 1 to \(Self.maxNameLength) characters") }
        let athlete = try Self.trackName(athlete)
        let workout = try Self.trackName(workout)
        return try writeTransaction("start an erg session") { db in
            try db.execute(sql: "INSERT INTO erg_sessions (erg, athlete, workout, started_wall_ms) VALUES (?, ?, ?, ?)",
                           arguments: [erg, athlete, workout, Self.ms(wallTime)])
            return try Self.ergSession(db.lastInsertedRowID, db)!
        }
    }

    /// Stores what an erg's recorder holds, in one transaction (durable when this
    /// returns), and says how many strokes were new. Everything is keyed, so the hub can
    /// hand the same records again (after a write failed, or all of them at the end):
    /// nothing is doubled. `wallOffset` turns the recorder's clock into Unix seconds.
    @discardableResult
    public func recordErg(sessionID: Int64, strokes: [StrokeRecord], samples: [(at: Double, data: PM5Data, interval: Int)] = [],
                          splits: [SplitData] = [], gaps: [ErgGap] = [], wallOffset: Double) throws(StoreError) -> Int {
        try writeTransaction("store an erg's strokes") { db in
            guard try Self.ergSession(sessionID, db) != nil else { throw StoreError(.notFound, "erg session \(sessionID) does not exist") }
            let stroke = try db.cachedStatement(sql: """
                INSERT INTO erg_strokes (session_id, interval, stroke, elapsed_cs, wall_ms, distance_m, drive_length_m, drive_time_s,
                    recovery_time_s, stroke_distance_m, peak_force_lbf, average_force_lbf, work_j, power_w, calories_per_hour, force_curve)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT DO UPDATE SET power_w = COALESCE(excluded.power_w, power_w),
                    calories_per_hour = COALESCE(excluded.calories_per_hour, calories_per_hour),
                    force_curve = CASE WHEN excluded.force_curve = '' THEN force_curve ELSE excluded.force_curve END
                """)
            let before = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM erg_strokes WHERE session_id = ?", arguments: [sessionID]) ?? 0
            for s in strokes {
                let d = s.data
                try stroke.execute(arguments: [sessionID, s.interval, Int(d.strokeCount), Self.cs(d.elapsed), Self.ms(s.receivedAt + wallOffset),
                                               d.distance, d.driveLength, d.driveTime, d.recoveryTime, d.strokeDistance,
                                               d.peakDriveForce, d.averageDriveForce, d.workPerStroke, s.power.map { Int($0) },
                                               s.caloriesPerHour.map { Int($0) }, s.forceCurve.map { String(Int($0)) }.joined(separator: " ")])
            }
            let added = (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM erg_strokes WHERE session_id = ?", arguments: [sessionID]) ?? 0) - before
            let sample = try db.cachedStatement(sql: """
                INSERT INTO erg_samples (session_id, interval, elapsed_cs, wall_ms, distance_m, pace_s, stroke_rate, heart_rate, drag_factor)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT DO UPDATE SET distance_m = COALESCE(excluded.distance_m, distance_m),
                    pace_s = COALESCE(excluded.pace_s, pace_s), stroke_rate = COALESCE(excluded.stroke_rate, stroke_rate),
                    heart_rate = COALESCE(excluded.heart_rate, heart_rate), drag_factor = COALESCE(excluded.drag_factor, drag_factor)
                """)
            // Why one row per elapsed time: the general and additional status of one instant
            // make one sample. In a rest the elapsed time stands still, so a rest keeps one
            // sample, its last.
            for (at, data, interval) in samples {
                switch data {
                case .generalStatus(let g):
                    try sample.execute(arguments: [sessionID, interval, Self.cs(g.elapsed), Self.ms(at + wallOffset), g.distance, nil, nil, nil,
                                                   Int(g.dragFactor)])
                case .additionalStatus(let a):
                    try sample.execute(arguments: [sessionID, interval, Self.cs(a.elapsed), Self.ms(at + wallOffset), nil,
                                                   a.currentPace > 0 ? a.currentPace : nil, Int(a.strokeRate), a.heartRate.map { Int($0) }, nil])
                default:
                    continue
                }
            }
            for s in splits {
                try db.execute(sql: """
                    INSERT OR IGNORE INTO erg_splits (session_id, number, elapsed_cs, time_s, distance_m, rest_time_s, rest_distance_m)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [sessionID, Int(s.splitNumber), Self.cs(s.elapsed), s.splitTime, s.splitDistance, s.restTime, s.restDistance])
            }
            for g in gaps {
                try db.execute(sql: """
                    INSERT INTO erg_gaps (session_id, from_wall_ms, to_wall_ms, last_stroke, next_stroke, last_interval, next_interval)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT DO UPDATE SET to_wall_ms = COALESCE(excluded.to_wall_ms, to_wall_ms),
                        next_stroke = COALESCE(excluded.next_stroke, next_stroke), next_interval = COALESCE(excluded.next_interval, next_interval)
                    """, arguments: [sessionID, Self.ms(g.from + wallOffset), g.to.map { Self.ms($0 + wallOffset) },
                                     g.lastStroke.map { Int($0) }, g.nextStroke.map { Int($0) }, g.lastInterval, g.nextInterval])
            }
            return added
        }
    }

    /// Ends a session with the PM5's summary (nil when the piece was stopped before its
    /// end), adding the watts of its strokes. `fromRecord`: the summary is the hub's own,
    /// made from what it recorded (`ErgRecorder.recordedSummary`).
    public func finishErgSession(id: Int64, summary: WorkoutSummary?, more: AdditionalWorkoutSummary?, wallTime: Double,
                                 fromRecord: Bool = false) throws(StoreError) {
        try writeTransaction("finish an erg session") { db in
            guard try Self.ergSession(id, db) != nil else { throw StoreError(.notFound, "erg session \(id) does not exist") }
            var json: String?
            if let s = summary {
                let power = try Row.fetchOne(db, sql: "SELECT AVG(power_w) AS a, MAX(power_w) AS m FROM erg_strokes WHERE session_id = ?",
                                             arguments: [id])
                let figures = ErgSummary(elapsed: s.elapsed, distance: s.distance, averagePace: s.averagePace,
                                         averageStrokeRate: Int(s.averageStrokeRate), averageDragFactor: Int(s.averageDragFactor),
                                         averageHeartRate: s.averageHeartRate.map(Int.init), maximumHeartRate: s.maximumHeartRate.map(Int.init),
                                         recoveryHeartRate: s.recoveryHeartRate.map(Int.init), totalCalories: more.map { Int($0.totalCalories) },
                                         averagePower: power?["a"], maximumPower: power?["m"], fromRecord: fromRecord ? true : nil)
                json = String(decoding: try JSONEncoder().encode(figures), as: UTF8.self)
            }
            try db.execute(sql: "UPDATE erg_sessions SET ended_wall_ms = ?, summary_json = COALESCE(?, summary_json) WHERE id = ?",
                           arguments: [Self.ms(wallTime), json, id])
        }
    }

    /// Sessions, newest first, of one athlete (any when nil) and started within `from...to`
    /// (Unix seconds; any when nil).
    public func ergSessions(athlete: String? = nil, workout: String? = nil, from: Double? = nil, to: Double? = nil,
                            limit: Int = Int.max) throws(StoreError) -> [ErgSession] {
        try read("read erg sessions") { db in
            try Row.fetchAll(db, sql: Self.ergSQL + """
                 WHERE (? IS NULL OR s.athlete = ?) AND (? IS NULL OR s.workout = ?) AND (? IS NULL OR s.started_wall_ms >= ?)
                    AND (? IS NULL OR s.started_wall_ms <= ?)
                 GROUP BY s.id ORDER BY s.started_wall_ms DESC, s.id DESC LIMIT ?
                """, arguments: [athlete, athlete, workout, workout, from.map(Self.ms), from.map(Self.ms), to.map(Self.ms), to.map(Self.ms),
                                 Int64(clamping: limit)])
                .map(Self.ergSession(from:))
        }
    }

    public func ergSession(id: Int64) throws(StoreError) -> ErgSession {
        let s = try read("read an erg session") { db in try Self.ergSession(id, db) }
        guard let s else { throw StoreError(.notFound, "erg session \(id) does not exist") }
        return s
    }

    /// A session's strokes in order.
    public func ergStrokes(sessionID: Int64) throws(StoreError) -> [StoredErgStroke] {
        try read("read an erg session's strokes") { db in
            // The distance from the workout's start: the furthest of each interval before.
            var before = 0.0, interval = 1, furthest = 0.0
            return try Row.fetchAll(db, sql: "SELECT * FROM erg_strokes WHERE session_id = ? ORDER BY interval, wall_ms, elapsed_cs",
                                    arguments: [sessionID]).map {
                let curve: String = $0["force_curve"]
                let i: Int = $0["interval"], d: Double = $0["distance_m"]
                if i != interval {
                    before += furthest
                    (interval, furthest) = (i, 0)
                }
                furthest = max(furthest, d)
                return StoredErgStroke(interval: i, stroke: $0["stroke"], elapsed: Double($0["elapsed_cs"] as Int64) / 100, wall: Double($0["wall_ms"] as Int64) / 1000,
                                       distance: $0["distance_m"], driveLength: $0["drive_length_m"], driveTime: $0["drive_time_s"],
                                       recoveryTime: $0["recovery_time_s"], strokeDistance: $0["stroke_distance_m"],
                                       peakForce: $0["peak_force_lbf"], averageForce: $0["average_force_lbf"], work: $0["work_j"],
                                       power: $0["power_w"], caloriesPerHour: $0["calories_per_hour"],
                                       forceCurve: curve.split(separator: " ").compactMap { Double($0) }, workoutDistance: before + d)
            }
        }
    }

    /// A session's gaps in order, their times in Unix seconds.
    public func ergGaps(sessionID: Int64) throws(StoreError) -> [ErgGap] {
        try read("read an erg session's gaps") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM erg_gaps WHERE session_id = ? ORDER BY from_wall_ms", arguments: [sessionID]).map {
                ErgGap(from: Double($0["from_wall_ms"] as Int64) / 1000, to: ($0["to_wall_ms"] as Int64?).map { Double($0) / 1000 },
                       lastStroke: $0["last_stroke"], nextStroke: $0["next_stroke"], lastInterval: $0["last_interval"],
                       nextInterval: $0["next_interval"])
            }
        }
    }

    /// A session's splits in order: (number, seconds, metres, rest seconds).
    public func ergSplits(sessionID: Int64) throws(StoreError) -> [(number: Int, time: Double, distance: Double, rest: Double)] {
        try read("read an erg session's splits") { db in
            // Why by number first: each interval's data has the interval's own elapsed time.
            try Row.fetchAll(db, sql: "SELECT * FROM erg_splits WHERE session_id = ? ORDER BY number, elapsed_cs", arguments: [sessionID]).map {
                ($0["number"], $0["time_s"], $0["distance_m"], $0["rest_time_s"])
            }
        }
    }

    /// Deletes a session and all it holds.
    public func deleteErgSession(id: Int64) throws(StoreError) {
        try writeTransaction("delete an erg session") { db in
            try db.execute(sql: "DELETE FROM erg_sessions WHERE id = ?", arguments: [id])
            if db.changesCount == 0 { throw StoreError(.notFound, "erg session \(id) does not exist") }
        }
    }

    /// A session as CSV (one row per stroke), JSON (the session, strokes, splits and
    /// gaps) or TCX.
    public func exportErgSession(id: Int64, _ format: ErgExportFormat) throws(StoreError) -> String {
        let session = try ergSession(id: id)
        let strokes = try ergStrokes(sessionID: id)
        let gaps = try ergGaps(sessionID: id)
        let splits = try ergSplits(sessionID: id)
        let rates = try read("read an erg session's samples") { db in
            try Row.fetchAll(db, sql: "SELECT wall_ms, stroke_rate, heart_rate FROM erg_samples WHERE session_id = ? ORDER BY wall_ms",
                             arguments: [id]).map { (Double($0["wall_ms"] as Int64) / 1000, $0["stroke_rate"] as Int?, $0["heart_rate"] as Int?) }
        }
        switch format {
        case .csv:
            var out = "interval,stroke,elapsed_s,distance_m,drive_length_m,drive_time_s,recovery_time_s,stroke_distance_m,peak_force_lbf,average_force_lbf,work_j,power_w,calories_per_hour\n"
            for s in strokes {
                let fields: [String] = [String(s.interval), String(s.stroke), Self.fixed(s.elapsed, 2), Self.fixed(s.distance, 1), Self.fixed(s.driveLength, 2),
                                        Self.fixed(s.driveTime, 2), Self.fixed(s.recoveryTime, 2), Self.fixed(s.strokeDistance, 2),
                                        Self.fixed(s.peakForce, 1), Self.fixed(s.averageForce, 1), Self.fixed(s.work, 1),
                                        s.power.map(String.init) ?? "", s.caloriesPerHour.map(String.init) ?? ""]
                out += fields.joined(separator: ",") + "\n"
            }
            return out
        case .json:
            struct Doc: Encodable {
                struct Split: Encodable { var number: Int; var time: Double; var distance: Double; var rest: Double }
                var format = "sprintgate-erg-session"
                var version = 1
                var session: ErgSession
                var strokes: [StoredErgStroke]
                var splits: [Split]
                var gaps: [ErgGap]
            }
            let doc = Doc(session: session, strokes: strokes, splits: splits.map { .init(number: $0.number, time: $0.time, distance: $0.distance, rest: $0.rest) },
                          gaps: gaps)
            let enc = JSONEncoder()
            enc.outputFormatting = [.prettyPrinted, .sortedKeys]
            do { return String(decoding: try enc.encode(doc), as: UTF8.self) } catch { throw StoreError(.invalid, "export: \(error)") }
        case .tcx:
            return Self.tcx(session, strokes: strokes, rates: rates, splits: splits)
        }
    }

    /// Training Center XML of a session: a track point per stroke, in one lap, or a lap
    /// per interval with the interval's time and distance (its data from the PM5 where it
    /// came, else its strokes'). Distances run from the workout's start.
    static func tcx(_ s: ErgSession, strokes: [StoredErgStroke], rates: [(Double, Int?, Int?)],
                    splits: [(number: Int, time: Double, distance: Double, rest: Double)]) -> String {
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        func time(_ wall: Double) -> String { iso.string(from: Date(timeIntervalSince1970: wall)) }
        // The stroke rate and heart rate in force when a stroke came (the last sample before it).
        var k = 0
        var rate: Int?, heart: Int?
        func points(_ strokes: ArraySlice<StoredErgStroke>) -> String {
            var points = ""
            for st in strokes {
                while k < rates.count, rates[k].0 <= st.wall {
                    if let r = rates[k].1 { rate = r }
                    if let h = rates[k].2 { heart = h }
                    k += 1
                }
                points += "          <Trackpoint>\n            <Time>\(time(st.wall))</Time>\n"
                points += "            <DistanceMeters>\(fixed(st.workoutDistance, 1))</DistanceMeters>\n"
                if let heart { points += "            <HeartRateBpm><Value>\(heart)</Value></HeartRateBpm>\n" }
                if let rate { points += "            <Cadence>\(rate)</Cadence>\n" }
                if let p = st.power {
                    points += "            <Extensions><ns3:TPX><ns3:Watts>\(p)</ns3:Watts></ns3:TPX></Extensions>\n"
                }
                points += "          </Trackpoint>\n"
            }
            return points
        }
        func lap(start: Double, total: Double, distance: Double, calories: Int, _ strokes: ArraySlice<StoredErgStroke>) -> String {
            """
                  <Lap StartTime="\(time(start))">
                    <TotalTimeSeconds>\(fixed(total, 1))</TotalTimeSeconds>
                    <DistanceMeters>\(fixed(distance, 1))</DistanceMeters>
                    <Calories>\(calories)</Calories>
                    <Intensity>Active</Intensity>
                    <TriggerMethod>Manual</TriggerMethod>
                    <Track>
            \(points(strokes))        </Track>
                  </Lap>

            """
        }
        let intervals = Set(strokes.map(\.interval)).sorted()
        var laps = ""
        if intervals.count <= 1 {
            laps = lap(start: s.startedWall, total: s.summary?.elapsed ?? strokes.last?.elapsed ?? 0, distance: s.summary?.distance ?? s.distance,
                       calories: s.summary?.totalCalories ?? 0, strokes[...])
        } else {
            for (n, i) in intervals.enumerated() {
                let mine = strokes[strokes.firstIndex { $0.interval == i }!...strokes.lastIndex { $0.interval == i }!]
                let data = splits.last { $0.number == i }
                laps += lap(start: n == 0 ? s.startedWall : mine.first!.wall - mine.first!.elapsed, total: data?.time ?? mine.last!.elapsed,
                            distance: data?.distance ?? mine.map(\.distance).max()!, calories: n == 0 ? s.summary?.totalCalories ?? 0 : 0, mine)
            }
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2" \
            xmlns:ns3="http://www.garmin.com/xmlschemas/ActivityExtension/v2">
              <Activities>
                <Activity Sport="Other">
                  <Id>\(time(s.startedWall))</Id>
            \(laps)      <Notes>\(XMLText.escape("Rowing: \(s.erg), \(s.athlete.isEmpty ? "no athlete" : s.athlete)\(s.workout.isEmpty ? "" : ", " + s.workout)"))</Notes>
                </Activity>
              </Activities>
            </TrainingCenterDatabase>

            """
    }

    // MARK: rows

    /// A session with its strokes counted and its distance: the furthest stroke of each
    /// interval, added up.
    static let ergSQL = """
        SELECT s.*, (SELECT COUNT(*) FROM erg_strokes WHERE session_id = s.id) AS n,
            (SELECT SUM(m) FROM (SELECT MAX(distance_m) AS m FROM erg_strokes WHERE session_id = s.id GROUP BY interval)) AS dist
        FROM erg_sessions s
        """

    static func ergSession(_ id: Int64, _ db: Database) throws -> ErgSession? {
        try Row.fetchOne(db, sql: ergSQL + " WHERE s.id = ? GROUP BY s.id", arguments: [id]).map(ergSession(from:))
    }

    static func ergSession(from row: Row) -> ErgSession {
        let summary = (row["summary_json"] as String?).flatMap { try? JSONDecoder().decode(ErgSummary.self, from: Data($0.utf8)) }
        return ErgSession(id: row["id"], erg: row["erg"], athlete: row["athlete"], workout: row["workout"],
                          startedWall: Double(row["started_wall_ms"] as Int64) / 1000,
                          endedWall: (row["ended_wall_ms"] as Int64?).map { Double($0) / 1000 }, strokes: row["n"],
                          distance: row["dist"] ?? 0, summary: summary)
    }

    static func cs(_ seconds: Double) -> Int64 { Int64((seconds * 100).rounded()) }

    static func fixed(_ v: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", v) }
}
