// SPDX-License-Identifier: Apache-2.0
// The ski track logger's routes over SQLite: tracking on and off with the PIN, a day's runs
// and lifts, a run's charts and route, GPX out and back in, and bad requests. The logger
// itself (fed by a real gpsd) is tested in GPSTimingTests (SkiTrackerTests).

import Foundation
import GPSTiming
import Hummingbird
import Logging
import SkiRuns
import SQLiteStore
import Synchronization
import Testing
@testable import WebUI

/// A logger over a real database: tracking starts and stops in the store; the test adds
/// the fixes a receiver would have given.
final class StandInSkiDesk: SkiDesk {
    let skiStore: RunStore?
    let skiCache = SkiDayCache()
    let recording = Mutex<SkiTrack?>(nil)
    init(_ store: RunStore) { skiStore = store }
    func skiLive() -> SkiLive {
        SkiLive(recording: recording.withLock { $0 != nil }, track: recording.withLock { $0 }, pending: 0, link: "fix", linkDetail: "3D fix",
                speed: 3, altitude: 2000, storeError: nil)
    }
    func startTracking(sport: SkiTrack.Sport, name: String) throws(ResultsBookError) -> SkiTrack {
        if recording.withLock({ $0 != nil }) { throw ResultsBookError(.conflict, field: "tracking", reason: "already recording") }
        do throws(StoreError) {
            let t = try skiStore!.startSkiTrack(name: name, sport: sport, wallTime: 1_800_000_000)
            recording.withLock { $0 = t }
            return t
        } catch { throw SQLiteResultsBook.bookError(error) }
    }
    func stopTracking() throws(ResultsBookError) -> SkiTrack? {
        guard let t = recording.withLock({ $0 }) else { return nil }
        do throws(StoreError) {
            try skiStore!.stopSkiTrack(id: t.id, wallTime: 1_800_003_600)
            recording.withLock { $0 = nil }
            return try skiStore!.skiTrack(id: t.id)
        } catch { throw SQLiteResultsBook.bookError(error) }
    }
    func skiSettings(_ sport: SkiTrack.Sport) -> SkiSettings { sport == .ski ? .ski : .snowboard }
}

/// A short day with exact truth: a minute standing, a chairlift north for 200 s (3 m/s,
/// climbing 2 m/s: 400 m up), a minute at the top, a run south for 250 s (9 m/s, dropping
/// 1.6 m/s: 400 m down, 2250 m), a minute at the bottom; 1 Hz, altitude wobbling ±1.5 m.
func skiLineDay() -> [SkiTrackPoint] {
    var out: [SkiTrackPoint] = []
    var t = 0.0, north = 0.0, z = 1500.0
    func leg(_ seconds: Int, v: Double, vz: Double) {
        for _ in 0 ..< seconds {
            t += 1
            north += v
            z += vz
            let wobble = 1.5 * sin(t * 0.7)
            out.append(SkiTrackPoint(timeNs: Int64((1_800_000_000 + t) * 1e9), latitude: 46 + north / 111_194.9, longitude: 7,
                                     altitude: z + wobble, speed: abs(v)))
        }
    }
    leg(60, v: 0, vz: 0)
    leg(200, v: 3, vz: 2)
    leg(60, v: 0, vz: 0)
    leg(250, v: -9, vz: -1.6)
    leg(60, v: 0, vz: 0)
    return out
}

@Suite("Ski routes")
struct SkiRouteTests {
    @Test("tracking on and off with the PIN; the day's dashboard finds its one lift and one run (vertical within 2 %); a run's detail has its charts' samples and its route to scale; GPX out reads back and imports as a new track; bad requests are named")
    func skiDay() async throws {
        let f = Fixture()
        let store = try RunStore(directory: f.directory.path + "/ski", logger: Logger(label: "test"))
        let desk = StandInSkiDesk(store)
        let points = skiLineDay()
        try await f.test { client in
            try await client.execute(uri: "/api/ski", method: .get) { r in
                #expect(r.status == .notFound && r.errorField == "ski" && r.text.contains("[gps]"))
            }
            f.bridge.ski.connect(desk)
            try await client.execute(uri: "/api/ski", method: .get) { r in
                #expect(r.status == .ok && r.json["recording"] as? Bool == false && r.json["link"] as? String == "fix")
            }
            try await client.execute(uri: "/api/ski/tracking", method: .post, body: body("{\"on\": true}")) { r in
                #expect(r.status == .unauthorized)
            }
            try await client.execute(uri: "/api/ski/tracking", method: .post, headers: pinHeader, body: body("{\"on\": true, \"sport\": \"skate\"}")) { r in
                #expect(r.status == .badRequest && r.errorField == "sport")
            }
            try await client.execute(uri: "/api/ski/tracking", method: .post, headers: pinHeader, body: body("{\"on\": \"yes\"}")) { r in
                #expect(r.status == .badRequest && r.errorField == "on")
            }
            var id: Int64 = 0
            try await client.execute(uri: "/api/ski/tracking", method: .post, headers: pinHeader,
                                     body: body("{\"on\": true, \"sport\": \"ski\", \"name\": \"Verbier\"}")) { r in
                #expect(r.status == .created && r.json["name"] as? String == "Verbier")
                id = Int64(r.json["id"] as? Int ?? 0)
            }
            try await client.execute(uri: "/api/ski/tracking", method: .post, headers: pinHeader, body: body("{\"on\": true}")) { r in
                #expect(r.status == .conflict)
            }
            try store.appendSkiPoints(trackID: id, points)
            try await client.execute(uri: "/api/ski/tracking", method: .post, headers: pinHeader, body: body("{\"on\": false}")) { r in
                #expect(r.status == .ok && r.json["points"] as? Int == points.count && r.json["recording"] == nil)
            }
            try await client.execute(uri: "/api/ski/tracking", method: .post, headers: pinHeader, body: body("{\"on\": false}")) { r in
                #expect(r.status == .noContent)
            }
            try await client.execute(uri: "/api/ski/tracks", method: .get) { r in
                #expect(r.jsonArray.count == 1 && r.jsonArray.first?["points"] as? Int == points.count)
            }
            try await client.execute(uri: "/api/ski/tracks/\(id)", method: .get) { r in
                #expect(r.status == .ok)
                let j = r.json
                let runs = j["runs"] as? [[String: Any]] ?? [], lifts = j["lifts"] as? [[String: Any]] ?? []
                #expect(runs.count == 1 && lifts.count == 1, "\(runs.count) runs, \(lifts.count) lifts")
                let vertical = runs.first?["vertical"] as? Double ?? 0
                #expect(abs(vertical - 400) <= 8, "vertical \(vertical)")
                #expect(abs((runs.first?["topSpeed"] as? Double ?? 0) - 9) < 0.01)
                #expect(abs((lifts.first?["vertical"] as? Double ?? 0) - 400) <= 8)
                #expect(abs((j["secondsOnLifts"] as? Double ?? 0) - 200) <= 20 && abs((j["secondsOnRuns"] as? Double ?? 0) - 250) <= 30)
                #expect(j["minimumRunSeconds"] as? Double == 30 && j["longestPause"] as? Double == 90)
            }
            try await client.execute(uri: "/api/ski/tracks/\(id)/runs/1", method: .get) { r in
                #expect(r.status == .ok)
                let samples = r.json["samples"] as? [[String: Any]] ?? []
                #expect(samples.count >= 200 && samples.count <= SkiRunDetail.maxSamples)
                #expect(samples.first?["x"] as? Double == 0 && samples.first?["y"] as? Double == 0)
                // Metres to scale: the run goes 2250 m south.
                let south = samples.compactMap { $0["y"] as? Double }.min() ?? 0
                #expect(abs(south + 2250) <= 60, "south \(south)")
            }
            try await client.execute(uri: "/api/ski/tracks/\(id)/runs/2", method: .get) { r in
                #expect(r.status == .notFound && r.text.contains("1 runs"))
            }
            try await client.execute(uri: "/api/ski/tracks/\(id)/runs/x", method: .get) { r in
                #expect(r.status == .badRequest && r.errorField == "n")
            }
            var gpx = ""
            try await client.execute(uri: "/api/ski/tracks/\(id)/gpx", method: .get) { r in
                #expect(r.status == .ok && r.headers[.contentType] == "application/gpx+xml")
                #expect(r.headers[.contentDisposition]?.contains("Verbier.gpx") == true)
                gpx = r.text
            }
            #expect(try GPX.read(Array(gpx.utf8)).points.count == points.count)
            try await client.execute(uri: "/api/ski/tracks/\(id)/runs/1/gpx", method: .get) { r in
                let run = try? GPX.read(Array(r.text.utf8))
                #expect(r.status == .ok && (run?.points.count ?? 0) > 200 && run?.name == "Verbier run 1")
            }
            // The file back in, as another device's day.
            try await client.execute(uri: "/api/ski/import?sport=snowboard&name=From%20a%20watch", method: .post, body: body(gpx)) { r in
                #expect(r.status == .unauthorized)
            }
            var imported: Int64 = 0
            try await client.execute(uri: "/api/ski/import?sport=snowboard&name=From%20a%20watch", method: .post, headers: pinHeader, body: body(gpx)) { r in
                #expect(r.status == .created)
                let t = r.json["track"] as? [String: Any] ?? [:]
                #expect(t["name"] as? String == "From a watch" && t["sport"] as? String == "snowboard" && t["source"] as? String == "gpx")
                #expect(t["points"] as? Int == points.count && r.json["skipped"] as? Int == 0)
                imported = Int64(t["id"] as? Int ?? 0)
            }
            try await client.execute(uri: "/api/ski/tracks/\(imported)", method: .get) { r in
                #expect((r.json["runs"] as? [Any])?.count == 1 && r.json["longestPause"] as? Double == 180)
            }
            try await client.execute(uri: "/api/ski/import", method: .post, headers: pinHeader, body: body("{\"not\": \"gpx\"}")) { r in
                #expect(r.status == .badRequest && r.errorField == "file" && r.text.contains("not a GPX track the gate can read"))
            }
            try await client.execute(uri: "/api/ski/import", method: .post, headers: pinHeader, body: body("<kml></kml>")) { r in
                #expect(r.status == .badRequest && r.text.contains("<kml>"))
            }
            try await client.execute(uri: "/api/ski/tracks/\(imported)", method: .put, headers: pinHeader, body: body("{\"sport\": \"ski\", \"name\": \"Watch\"}")) { r in
                #expect(r.status == .noContent)
            }
            #expect(try store.skiTrack(id: imported).sport == .ski)
            try await client.execute(uri: "/api/ski/tracks/\(imported)", method: .delete, headers: pinHeader) { r in
                #expect(r.status == .noContent)
            }
            try await client.execute(uri: "/api/ski/tracks/\(imported)", method: .get) { r in
                #expect(r.status == .notFound)
            }
            // The page's script is served.
            try await client.execute(uri: "/ski.js", method: .get) { r in
                #expect(r.status == .ok && r.text.contains("/api/ski/tracking"))
            }
        }
    }
}
