// SPDX-License-Identifier: Apache-2.0
// The ski track logger on the page: tracking on and off, each day's track with its runs
// and lifts, a run's charts and route, GPX out and in.

import Foundation
public import GPSTiming
public import SkiRuns
public import SQLiteStore
import Hummingbird
import NIOCore
import Synchronization

/// The logger now: `GET /api/ski`.
public struct SkiLive: Sendable, Hashable, Codable {
    public var recording: Bool
    /// The track being recorded, with the fixes stored so far.
    public var track: SkiTrack?
    /// Fixes taken and not yet written (written about once a second).
    public var pending: Int
    /// The receiver: `fix`, `no-fix`, `no-receiver`, `no-gpsd`, and what to do.
    public var link: String
    public var linkDetail: String
    /// The last fix's speed (m/s) and altitude (m); nil without a 3D fix.
    public var speed: Double?
    public var altitude: Double?
    /// Why fixes are not being stored, when they are not (the database failed).
    public var storeError: String?

    public init(recording: Bool, track: SkiTrack?, pending: Int, link: String, linkDetail: String, speed: Double?, altitude: Double?,
                storeError: String?) {
        self.recording = recording
        self.track = track
        self.pending = pending
        self.link = link
        self.linkDetail = linkDetail
        self.speed = speed
        self.altitude = altitude
        self.storeError = storeError
    }
}

/// A run of a day as the page shows it. Times are Unix seconds (UTC), speeds m/s, lengths m.
public struct SkiRunView: Sendable, Hashable, Codable {
    public var n: Int
    public var start: Double
    public var end: Double
    public var seconds: Double
    public var distance: Double
    public var vertical: Double
    /// Degrees.
    public var slope: Double
    public var topSpeed: Double
    public var averageSpeed: Double
    /// Where the top speed was: degrees, metres, and seconds into the run.
    public var topLatitude: Double
    public var topLongitude: Double
    public var topAltitude: Double
    public var topAt: Double

    init(_ n: Int, _ r: SkiRun) {
        self.n = n
        start = r.start.seconds
        end = r.end.seconds
        seconds = r.seconds
        distance = r.distance
        vertical = r.vertical
        slope = r.slope
        topSpeed = r.topSpeed
        averageSpeed = r.averageSpeed
        topLatitude = r.topSpeedAt.latitude
        topLongitude = r.topSpeedAt.longitude
        topAltitude = r.topSpeedAt.altitude
        topAt = r.topSpeedAt.time - r.start
    }
}

public struct SkiLiftView: Sendable, Hashable, Codable {
    public var n: Int
    public var start: Double
    public var end: Double
    public var seconds: Double
    public var vertical: Double
}

/// A day's dashboard: `GET /api/ski/tracks/:id`.
public struct SkiDayView: Sendable, Hashable, Codable {
    public var track: SkiTrack
    /// The settings its runs were found with (its sport's).
    public var minimumRunSeconds: Double
    public var minimumRunVertical: Double
    public var longestPause: Double
    public var runs: [SkiRunView]
    public var lifts: [SkiLiftView]
    public var vertical: Double
    public var distance: Double
    public var topSpeed: Double
    public var secondsOnRuns: Double
    public var secondsOnLifts: Double
    /// From the first fix to the last.
    public var seconds: Double
}

/// One point of a run's charts and route: seconds into the run, m/s, metres above sea
/// level, and metres east and north of where the run began.
public struct SkiSample: Sendable, Hashable, Codable {
    public var t: Double
    public var speed: Double
    public var altitude: Double
    public var x: Double
    public var y: Double
}

/// A run's detail: `GET /api/ski/tracks/:id/runs/:n`.
public struct SkiRunDetail: Sendable, Hashable, Codable {
    public var trackID: Int64
    public var trackName: String
    public var sport: String
    public var run: SkiRunView
    /// At most `maxSamples`, evenly spread, with the first, the last and the fastest.
    public var samples: [SkiSample]
    public static let maxSamples = 600
}

/// What an import made: the track, and what was left out.
public struct SkiImport: Sendable, Hashable, Codable {
    public var track: SkiTrack
    public var skipped: Int
    public var speedsFromPositions: Bool
}

/// The last days analysed, so opening a run does not analyse its day again.
public final class SkiDayCache: Sendable {
    private struct Key: Hashable {
        var id: Int64, points: Int, last: Int64?, settings: SkiSettings
    }
    private let days = Mutex<[(Key, SkiDay)]>([])
    static let kept = 2
    public init() {}

    func day(_ track: SkiTrack, _ settings: SkiSettings, _ make: () throws(ResultsBookError) -> SkiDay) throws(ResultsBookError) -> SkiDay {
        let key = Key(id: track.id, points: track.points, last: track.lastNs, settings: settings)
        if let d = days.withLock({ $0.first { $0.0 == key }?.1 }) { return d }
        let d = try make()
        days.withLock { list in
            list.removeAll { $0.0.id == key.id }
            list.insert((key, d), at: 0)
            if list.count > Self.kept { list.removeLast() }
        }
        return d
    }
}

/// The page's view of the ski track logger (the daemon's, fed by the GPS receiver).
public protocol SkiDesk: Sendable {
    func skiLive() -> SkiLive
    /// Tracks and their fixes; nil when the database could not be opened.
    var skiStore: RunStore? { get }
    /// Starts recording a new track (refused while one is recorded).
    func startTracking(sport: SkiTrack.Sport, name: String) throws(ResultsBookError) -> SkiTrack
    /// Stops recording, with every fix taken written first; nil when none was recorded.
    func stopTracking() throws(ResultsBookError) -> SkiTrack?
    /// How runs are told apart for a sport.
    func skiSettings(_ sport: SkiTrack.Sport) -> SkiSettings
    var skiCache: SkiDayCache { get }
}

extension SkiDesk {
    private func withStore<T>(_ body: (RunStore) throws(StoreError) -> T) throws(ResultsBookError) -> T {
        guard let store = skiStore else {
            throw ResultsBookError(.unavailable, field: "tracks", reason: "the results database is not open: check the state directory (see the log)")
        }
        do throws(StoreError) { return try body(store) } catch { throw SQLiteResultsBook.bookError(error) }
    }

    public func tracks() throws(ResultsBookError) -> [SkiTrack] { try withStore { s throws(StoreError) in try s.skiTracks() } }

    public func points(_ id: Int64) throws(ResultsBookError) -> (SkiTrack, [TrackPoint]) {
        try withStore { s throws(StoreError) in
            let t = try s.skiTrack(id: id)
            let p = try s.skiPoints(trackID: id).map {
                TrackPoint(time: GPSTime(nanoseconds: $0.timeNs), latitude: $0.latitude, longitude: $0.longitude, altitude: $0.altitude,
                           speed: $0.speed)
            }
            return (t, p)
        }
    }

    /// A track's runs and lifts, found with its sport's settings.
    public func analysis(_ id: Int64) throws(ResultsBookError) -> (SkiTrack, SkiDay) {
        let track = try withStore { s throws(StoreError) in try s.skiTrack(id: id) }
        let settings = skiSettings(track.sport)
        let day = try skiCache.day(track, settings) { () throws(ResultsBookError) in
            SkiDayAnalysis.analyse(try points(id).1, settings: settings)
        }
        return (track, day)
    }

    public func day(_ id: Int64) throws(ResultsBookError) -> SkiDayView {
        let (track, day) = try analysis(id)
        let s = skiSettings(track.sport)
        let span = day.points.count > 1 ? day.points[day.points.count - 1].time - day.points[0].time : 0
        return SkiDayView(track: track, minimumRunSeconds: s.minimumRunSeconds, minimumRunVertical: s.minimumRunVertical,
                          longestPause: s.longestPause, runs: day.runs.enumerated().map { SkiRunView($0.offset + 1, $0.element) },
                          lifts: day.lifts.enumerated().map {
                              SkiLiftView(n: $0.offset + 1, start: $0.element.start.seconds, end: $0.element.end.seconds,
                                          seconds: $0.element.seconds, vertical: $0.element.vertical)
                          },
                          vertical: day.totalVertical, distance: day.totalDistance, topSpeed: day.topSpeed,
                          secondsOnRuns: day.secondsOnRuns, secondsOnLifts: day.secondsOnLifts, seconds: span)
    }

    private func run(_ day: SkiDay, _ n: Int) throws(ResultsBookError) -> SkiRun {
        guard n >= 1, n <= day.runs.count else {
            throw ResultsBookError(.notFound, field: "run", reason: "the track has \(day.runs.count) runs; there is no run \(n)")
        }
        return day.runs[n - 1]
    }

    public func runDetail(_ id: Int64, _ n: Int) throws(ResultsBookError) -> SkiRunDetail {
        let (track, day) = try analysis(id)
        let r = try run(day, n)
        let pts = day.points[r.points]
        let origin = pts[pts.startIndex]
        let rad = Double.pi / 180, earth = 6_371_008.8
        let east = cos(origin.latitude * rad) * earth * rad, north = earth * rad
        let stride = max(1, (pts.count + SkiRunDetail.maxSamples - 3) / (SkiRunDetail.maxSamples - 2))
        var keep: [Int] = Array(Swift.stride(from: pts.startIndex, to: pts.endIndex, by: stride))
        if keep.last != pts.endIndex - 1 { keep.append(pts.endIndex - 1) }
        if let top = pts.indices.first(where: { pts[$0].time == r.topSpeedAt.time }), !keep.contains(top) {
            keep.append(top)
            keep.sort()
        }
        let samples = keep.map { i in
            let p = pts[i]
            return SkiSample(t: p.time - r.start, speed: p.speed, altitude: p.altitude, x: (p.longitude - origin.longitude) * east,
                             y: (p.latitude - origin.latitude) * north)
        }
        return SkiRunDetail(trackID: id, trackName: track.name, sport: track.sport.rawValue, run: SkiRunView(n, r), samples: samples)
    }

    /// A track, or one of its runs, as a GPX file: its name and text.
    public func gpx(_ id: Int64, run n: Int?) throws(ResultsBookError) -> (String, String) {
        if let n {
            let (track, day) = try analysis(id)
            let r = try run(day, n)
            let name = (track.name.isEmpty ? "Track \(id)" : track.name) + " run \(n)"
            return (name, GPX.write(name: name, points: Array(day.points[r.points])))
        }
        let (track, points) = try points(id)
        let name = track.name.isEmpty ? "Track \(id)" : track.name
        return (name, GPX.write(name: name, points: points))
    }

    /// A GPX file from any device as a new track (its name from the file unless given).
    public func importGPX(_ bytes: [UInt8], name: String?, sport: SkiTrack.Sport, wallTime: Double) throws(ResultsBookError) -> SkiImport {
        let file: GPXTrack
        do throws(GPXError) { file = try GPX.read(bytes) } catch {
            throw ResultsBookError(.invalid, field: "file", reason: "not a GPX track the gate can read: \(error.message)")
        }
        let points = file.points.map {
            SkiTrackPoint(timeNs: $0.time.nanoseconds, latitude: $0.latitude, longitude: $0.longitude, altitude: $0.altitude, speed: $0.speed)
        }
        let title = String((name ?? file.name).prefix(RunStore.maxNameLength))
        let track = try withStore { s throws(StoreError) in try s.importSkiTrack(name: title, sport: sport, wallTime: wallTime, points: points) }
        return SkiImport(track: track, skipped: file.skipped, speedsFromPositions: file.speedsFromPositions)
    }

    public func updateTrack(_ id: Int64, name: String?, sport: SkiTrack.Sport?) throws(ResultsBookError) {
        try withStore { s throws(StoreError) in try s.updateSkiTrack(id: id, name: name, sport: sport) }
    }

    public func deleteTrack(_ id: Int64) throws(ResultsBookError) {
        try withStore { s throws(StoreError) in try s.deleteSkiTrack(id: id) }
    }
}

/// Where the daemon plugs its ski track logger in; empty on a gate without `[gps]`.
public final class SkiDeskSlot: Sendable {
    private let desk = Mutex<(any SkiDesk)?>(nil)
    public init() {}
    public func connect(_ d: any SkiDesk) { desk.withLock { $0 = d } }
    public var current: (any SkiDesk)? { desk.withLock { $0 } }
}

extension WebServer {
    func skiDesk() throws -> any SkiDesk {
        guard let d = bridge.ski.current else {
            throw APIError(.notFound, field: "ski", reason: "this gate has no GPS receiver: add a [gps] table to its settings (see selftest)")
        }
        return d
    }

    func addSkiRoutes(to router: Router<WebContext>) {
        let s = self
        @Sendable func call<T>(_ body: (any SkiDesk) throws(ResultsBookError) -> T) throws -> T {
            let desk = try s.skiDesk()
            do { return try body(desk) } catch { throw error.api }
        }
        @Sendable func sport(_ raw: Any?) throws -> SkiTrack.Sport? {
            guard let raw, !(raw is NSNull) else { return nil }
            guard let t = raw as? String, let v = SkiTrack.Sport(rawValue: t) else {
                throw APIError.invalid("sport", "must be ski or snowboard")
            }
            return v
        }
        @Sendable func text(_ raw: Any?, _ key: String) throws -> String? {
            guard let raw, !(raw is NSNull) else { return nil }
            guard let t = raw as? String else { throw APIError.invalid(key, "must be text") }
            return t
        }
        @Sendable func runNumber(_ context: WebContext) throws -> Int {
            guard let raw = context.parameters.get("n"), let n = Int(raw), n >= 1 else {
                throw APIError.invalid("n", "a run's number on its day, from 1")
            }
            return n
        }
        @Sendable func gpxResponse(_ file: (String, String)) -> Response {
            let safe = String(file.0.map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "-" })
            return Response(status: .ok, headers: [.contentType: "application/gpx+xml",
                                                   .contentDisposition: "attachment; filename=\"\(safe).gpx\""],
                            body: .init(byteBuffer: ByteBuffer(string: file.1)))
        }

        router.get("/api/ski") { _, _ in try s.json(try s.skiDesk().skiLive()) }
        router.get("/api/ski/tracks") { _, _ in try s.json(try call { d throws(ResultsBookError) in try d.tracks() }) }
        router.get("/api/ski/tracks/:id") { _, context in
            let id = try s.runID(context)
            return try s.json(try call { d throws(ResultsBookError) in try d.day(id) })
        }
        router.get("/api/ski/tracks/:id/gpx") { _, context in
            let id = try s.runID(context)
            return gpxResponse(try call { d throws(ResultsBookError) in try d.gpx(id, run: nil) })
        }
        router.get("/api/ski/tracks/:id/runs/:n") { _, context in
            let id = try s.runID(context), n = try runNumber(context)
            return try s.json(try call { d throws(ResultsBookError) in try d.runDetail(id, n) })
        }
        router.get("/api/ski/tracks/:id/runs/:n/gpx") { _, context in
            let id = try s.runID(context), n = try runNumber(context)
            return gpxResponse(try call { d throws(ResultsBookError) in try d.gpx(id, run: n) })
        }
        // Control: PIN.
        router.post("/api/ski/tracking") { request, context in
            let body = try await s.body(request, context)
            guard let on = body["on"] as? Bool else { throw APIError.invalid("on", "true to start tracking, false to stop") }
            if on {
                let sp = try sport(body["sport"]) ?? .ski, name = try text(body["name"], "name") ?? ""
                return try s.json(try call { d throws(ResultsBookError) in try d.startTracking(sport: sp, name: name) }, status: .created)
            }
            guard let t = try call({ d throws(ResultsBookError) in try d.stopTracking() }) else { return Response(status: .noContent) }
            return try s.json(t)
        }
        router.put("/api/ski/tracks/:id") { request, context in
            let id = try s.runID(context)
            let body = try await s.body(request, context)
            let name = try text(body["name"], "name"), sp = try sport(body["sport"])
            try call { d throws(ResultsBookError) in try d.updateTrack(id, name: name, sport: sp) }
            return Response(status: .noContent)
        }
        router.delete("/api/ski/tracks/:id") { request, context in
            let id = try s.runID(context)
            try call { d throws(ResultsBookError) in try d.deleteTrack(id) }
            return Response(status: .noContent)
        }
        // The file is the body: `POST /api/ski/import?sport=ski&name=…`.
        router.post("/api/ski/import") { request, context in
            let q = request.uri.queryParameters
            let sp = try sport(q["sport"].map(String.init)) ?? .ski
            let name = q["name"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
            let bytes = try await s.fileBody(request, upTo: GPX.maxBytes, field: "file", advice: "a GPX file that large is more than a day")
            return try s.json(try call { d throws(ResultsBookError) in
                try d.importGPX(bytes, name: name, sport: sp, wallTime: WebServer.wallSeconds())
            }, status: .created)
        }
    }
}
