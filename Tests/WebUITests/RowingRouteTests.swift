// SPDX-License-Identifier: Apache-2.0
// The rowing hub's routes: the board as JSON, athletes put on ergs and a workout set with
// the PIN, the workout form's checks, and the answer on a gate without a hub. The hub
// behind them is tested in GateDaemonTests (RowingHubTests) and the browser test.

import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Rowing
import SQLiteStore
import Synchronization
import Testing
@testable import WebUI

final class StandInRowingDesk: RowingDesk {
    let assigned = Mutex<[Int: String]>([:])
    let set = Mutex<[PM5Workout]>([])
    var rowingStore: RunStore? { nil }

    func rowingLive() -> RowingLive {
        var hub = ErgHub()
        for (erg, name) in assigned.withLock({ $0 }) { hub.assign(erg: erg, athlete: name) }
        return RowingLive(version: 1, source: "stand-in", sourceProblem: nil, board: hub.board(now: 0), workout: nil, programmed: [],
                          sessions: [], storeError: nil, pending: 0, wall: 0)
    }
    func assign(erg: Int, athlete: String) throws(ResultsBookError) {
        guard erg == 1 else { throw ResultsBookError(.notFound, field: "erg", reason: "there is no erg \(erg) on this hub") }
        assigned.withLock { $0[erg] = athlete }
    }
    func program(_ workout: PM5Workout) throws(ResultsBookError) -> [ErgProgramResult] {
        set.withLock { $0.append(workout) }
        return [ErgProgramResult(erg: 1, name: "PM5 1", accepted: true, problem: nil)]
    }
    let scans = Mutex(0)
    let picked = Mutex<[Int: String]>([:])
    func scanPM5s() throws(ResultsBookError) { scans.withLock { $0 += 1 } }
    func pickPM5(address: String) throws(ResultsBookError) -> Int {
        guard address.split(separator: ":").count == 6 else { throw ResultsBookError(.invalid, field: "address", reason: "not an address") }
        return picked.withLock { p in
            let erg = p.count + 2
            p[erg] = address
            return erg
        }
    }
    func letGo(erg: Int) throws(ResultsBookError) {
        guard picked.withLock({ $0.removeValue(forKey: erg) }) != nil else { throw ResultsBookError(.notFound, field: "erg", reason: "no erg \(erg)") }
    }
}

@Suite("Rowing routes")
struct RowingRouteTests {
    @Test("without a hub: 404 naming rowing; with one: the board, an athlete put on an erg and a workout set with the PIN, the sessions refused without a database")
    func routes() async throws {
        let f = Fixture()
        let desk = StandInRowingDesk()
        try await f.test { client in
            try await client.execute(uri: "/api/rowing", method: .get) { r in
                #expect(r.status == .notFound && r.errorField == "rowing" && r.text.contains("[rowing]"))
            }
            f.bridge.rowing.connect(desk)
            try await client.execute(uri: "/api/rowing/ergs/1", method: .put, body: ByteBuffer(string: #"{"athlete":"Ada"}"#)) { r in
                #expect(r.status == .unauthorized)
            }
            try await client.execute(uri: "/api/rowing/ergs/1", method: .put, headers: pinHeader, body: ByteBuffer(string: #"{"athlete":" Ada "}"#)) { r in
                #expect(r.status == .noContent)
            }
            try await client.execute(uri: "/api/rowing/ergs/7", method: .put, headers: pinHeader, body: ByteBuffer(string: #"{"athlete":"Bo"}"#)) { r in
                #expect(r.status == .notFound && r.errorField == "erg")
            }
            try await client.execute(uri: "/api/rowing", method: .get) { r in
                let tiles = r.json["board"].flatMap { ($0 as? [String: Any])?["tiles"] as? [[String: Any]] }
                #expect(r.status == .ok && tiles?.first?["athlete"] as? String == " Ada ")
            }
            try await client.execute(uri: "/api/rowing/workout", method: .post, headers: pinHeader,
                                     body: ByteBuffer(string: #"{"kind":"intervals","intervals":[{"metres":500,"rest":60},{"seconds":240}]}"#)) { r in
                #expect(r.status == .ok && r.jsonArray.first?["accepted"] as? Bool == true)
            }
            #expect(desk.set.withLock { $0 } == [.intervals([.init(.metres(500), restSeconds: 60), .init(.seconds(240), restSeconds: 0)])])
            try await client.execute(uri: "/api/rowing/sessions", method: .get) { r in
                #expect(r.status == .serviceUnavailable && r.errorField == "sessions")
            }
            try await client.execute(uri: "/api/rowing/ws", method: .get) { r in
                #expect(r.status != .ok)
            }
            // Finding and picking PM5s: with the PIN only.
            try await client.execute(uri: "/api/rowing/scan", method: .post) { r in #expect(r.status == .unauthorized) }
            try await client.execute(uri: "/api/rowing/scan", method: .post, headers: pinHeader) { r in #expect(r.status == .accepted) }
            #expect(desk.scans.withLock { $0 } == 1)
            try await client.execute(uri: "/api/rowing/pm5s", method: .post, headers: pinHeader, body: ByteBuffer(string: #"{"address":"C2:11:22:33:44:55"}"#)) { r in
                #expect(r.status == .ok && r.json["erg"] as? Int == 2)
            }
            try await client.execute(uri: "/api/rowing/pm5s", method: .post, headers: pinHeader, body: ByteBuffer(string: #"{"address":7}"#)) { r in
                #expect(r.status == .badRequest && r.errorField == "address")
            }
            try await client.execute(uri: "/api/rowing/pm5s", method: .post, headers: pinHeader, body: ByteBuffer(string: #"{"address":"C2:11"}"#)) { r in
                #expect(r.status == .badRequest && r.errorField == "address")
            }
            try await client.execute(uri: "/api/rowing/pm5s/2", method: .delete) { r in #expect(r.status == .unauthorized) }
            try await client.execute(uri: "/api/rowing/pm5s/2", method: .delete, headers: pinHeader) { r in #expect(r.status == .noContent) }
            try await client.execute(uri: "/api/rowing/pm5s/2", method: .delete, headers: pinHeader) { r in
                #expect(r.status == .notFound && r.errorField == "erg")
            }
            #expect(desk.picked.withLock { $0.isEmpty })
        }
    }

    @Test("the workout form: each kind read, and what the PM5 would refuse refused with the field and the reason")
    func workoutForm() throws {
        #expect(try WebServer.workout(["kind": "distance", "metres": 2000, "split": 500]) == .distance(metres: 2000, split: 500))
        #expect(try WebServer.workout(["kind": "time", "seconds": 1200.0]) == .time(seconds: 1200, split: nil))
        #expect(try WebServer.workout(["kind": "justRow"]) == .justRow)
        for (body, field) in [(["kind": "distance", "metres": 50], "workout"), (["kind": "sprint"], "kind"), (["kind": "distance"], "metres"),
                              (["kind": "distance", "metres": 2000, "laps": 3], "laps"), (["kind": "time", "seconds": "20 min"], "seconds"),
                              (["kind": "intervals", "intervals": [["metres": 500, "seconds": 60]]], "intervals[0]"),
                              (["kind": "intervals", "intervals": [[String: Any]]()], "workout")] as [([String: Any], String)] {
            #expect(throws: APIError.self) { try WebServer.workout(body) }
            do { _ = try WebServer.workout(body) } catch let e as APIError { #expect(e.field == field) }
        }
    }
}
