// SPDX-License-Identifier: Apache-2.0
// The page over the SQLite store: runs committed by the writer, PR flags, delete, athletes, photos.

import Foundation
import GateCore
import Hummingbird
import HTTPTypes
import Logging
import SQLiteStore
import Synchronization
import Testing
@testable import WebUI

/// A web server over a `SQLiteResultsBook` on a fresh database in a temporary directory,
/// with a `StoreWriter` feeding it as the daemon's storage thread does.
final class StoreFixture: Sendable {
    let directory: String
    let store: RunStore
    let book: SQLiteResultsBook
    let writer: StoreWriter
    let bridge: GateBridge
    let server: WebServer

    init() throws {
        directory = NSTemporaryDirectory() + "sprintgate-webui-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        store = try RunStore(directory: directory, logger: Logger(label: "test.store"))
        let book = SQLiteResultsBook(store: store)
        self.book = book
        writer = StoreWriter(store: store, logger: Logger(label: "test.store"), onCommit: { book.committed($0) })
        writer.start()
        bridge = GateBridge(wake: {})
        let hub = LiveHub(bridge: bridge, book: book, settings: Fixture.settings, logger: Logger(label: "test.web"))
        server = WebServer(hub: hub, pin: GatePIN(value: Fixture.pin), logger: Logger(label: "test.web"), now: { 1_000_000 })
    }

    deinit {
        writer.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    func app() -> some ApplicationProtocol { Application(router: server.router()) }

    /// A flying 30 m run as the storage thread assembles it: start at `startNs`, finish
    /// `seconds` later, both crossings recorded.
    static func run(_ seconds: Double, startNs: Int64 = 5_000_000_000, wallMs: Int64 = 1_700_000_000_000) -> StoredRun {
        let total = Int64((seconds * 1e9).rounded())
        let crossing = { (ns: Int64) in StoredCrossing(monoNs: ns, uncertaintyNs: 500_000, direction: "leftToRight", blobHeight: 80, speedPixelsPerSecond: 900) }
        return StoredRun(startType: "flying", presetID: "flying-30m", distance: 30, wallStartMs: wallMs, startMonoNs: startNs, totalNs: total,
                         splits: [StoredSplit(gateIndex: 1, distance: 30, timeNs: total, segmentNs: total, segmentSpeed: 30 / seconds, syncUncertaintyNs: 0)],
                         crossings: [crossing(startNs), crossing(startNs + total)])
    }

    static let preset = StoredPreset(id: "flying-30m", title: "Flying 30 m", distance: 30, startType: "flying")

    /// Submits `run` through the writer and waits (up to 5 s) until it is committed.
    func commit(_ run: StoredRun) throws {
        let before = writer.committed
        #expect(writer.submit(run, preset: Self.preset))
        let deadline = Date().addingTimeInterval(5)
        while writer.committed == before {
            guard Date() < deadline else { throw StoreFixtureError.timeout }
            usleep(2_000)
        }
    }
}

enum StoreFixtureError: Error { case timeout }

/// JPEG-shaped bytes (start and end markers around a 1×1 frame): what the store and the routes check.
let tinyJPEG: [UInt8] = [
    0xFF, 0xD8, 0xFF, 0xDB, 0x00, 0x43, 0x00, 0x08, 0x06, 0x06, 0x07, 0x06, 0x05, 0x08, 0x07, 0x07, 0x07, 0x09, 0x09,
    0x08, 0x0A, 0x0C, 0x14, 0x0D, 0x0C, 0x0B, 0x0B, 0x0C, 0x19, 0x12, 0x13, 0x0F, 0x14, 0x1D, 0x1A, 0x1F, 0x1E, 0x1D,
    0x1A, 0x1C, 0x1C, 0x20, 0x24, 0x2E, 0x27, 0x20, 0x22, 0x2C, 0x23, 0x1C, 0x1C, 0x28, 0x37, 0x29, 0x2C, 0x30, 0x31,
    0x34, 0x34, 0x34, 0x1F, 0x27, 0x39, 0x3D, 0x38, 0x32, 0x3C, 0x2E, 0x33, 0x34, 0x32, 0xFF, 0xC0, 0x00, 0x0B, 0x08,
    0x00, 0x01, 0x00, 0x01, 0x01, 0x01, 0x11, 0x00, 0xFF, 0xC4, 0x00, 0x14, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, 0xFF, 0xC4, 0x00, 0x14, 0x10, 0x01,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF,
    0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00, 0x2A, 0x9F, 0xFF, 0xD9,
]

@Suite struct SQLiteBookTests {
    @Test func committedRunAppearsInResultsWithItsPRFlag() async throws {
        let f = try StoreFixture()
        let ana = try f.book.addAthlete(Athlete(id: 0, name: "Ana"))
        let hub = f.server.hub
        let v0 = hub.refresh()
        try await f.app().test(.router) { client in
            try await client.execute(uri: "/api/next-athlete", method: .put, headers: pinHeader,
                                     body: body("{\"athleteId\":\(ana.id)}")) { r in #expect(r.status == .ok) }
        }
        try f.commit(StoreFixture.run(3.10))
        // The board learns of the committed run without anything on the results lane.
        let v1 = hub.refresh()
        #expect(v1 > v0)
        let board = try #require(try JSONSerialization.jsonObject(with: Data(hub.message().json.utf8)) as? [String: Any])
        let boardRuns = try #require(board["results"] as? [[String: Any]])
        #expect(boardRuns.count == 1)
        try f.book.assignNextRun(athleteID: ana.id)
        try f.commit(StoreFixture.run(3.30, startNs: 20_000_000_000, wallMs: 1_700_000_060_000))
        try f.book.assignNextRun(athleteID: ana.id)
        try f.commit(StoreFixture.run(3.00, startNs: 40_000_000_000, wallMs: 1_700_000_120_000))
        #expect(f.book.recentlyCommitted().map(\.bests.personal) == [true, false, true])
        // Every phone's board carries the new personal best with the best it beat.
        hub.refresh()
        let after = try #require(try JSONSerialization.jsonObject(with: Data(hub.message().json.utf8)) as? [String: Any])
        let news = try #require(after["newBest"] as? [String: Any])
        #expect(news["athleteName"] as? String == "Ana")
        #expect(news["seconds"] as? Double == 3.0)
        #expect(news["previousBestSeconds"] as? Double == 3.1)
        #expect(abs((news["improvementSeconds"] as? Double ?? 0) - 0.1) < 1e-9)
        try await f.app().test(.router) { client in
            try await client.execute(uri: "/api/results", method: .get) { r in
                #expect(r.status == .ok)
                let rows = r.jsonArray
                #expect(rows.count == 3)
                let runs = rows.compactMap { $0["run"] as? [String: Any] }
                // Newest first: 3.00 s (the PR now), 3.30 s, 3.10 s (no longer the PR).
                #expect(runs.map { $0["seconds"] as? Double } == [3.0, 3.3, 3.1])
                #expect(runs.map { $0["personalBest"] as? Bool } == [true, false, false])
                #expect(runs.allSatisfy { $0["athleteName"] as? String == "Ana" })
                #expect(rows.first?["speed"] as? Double == 10)
            }
            try await client.execute(uri: "/api/results?sort=time&order=asc&limit=1", method: .get) { r in
                #expect((r.jsonArray.first?["run"] as? [String: Any])?["seconds"] as? Double == 3.0)
            }
            try await client.execute(uri: "/api/bests?athlete=\(ana.id)", method: .get) { r in
                // One course, flying 30 m: 3.00 s beat the 3.10 s run before it.
                let lines = r.jsonArray
                #expect(lines.count == 1)
                #expect((lines.first?["personalBest"] as? [String: Any])?["seconds"] as? Double == 3.0)
                #expect(lines.first?["previousBestSeconds"] as? Double == 3.1)
                #expect(abs((lines.first?["improvementSeconds"] as? Double ?? 0) - 0.1) < 1e-9)
                #expect(lines.first?["runCount"] as? Int == 3)
            }
            try await client.execute(uri: "/api/export.csv", method: .get) { r in
                #expect(r.status == .ok)
                #expect(r.text.components(separatedBy: "\r\n").filter { !$0.isEmpty }.count == 4, "header and three runs")
            }
        }
    }

    @Test func loopResultsAreNotStoredTwice() throws {
        let f = try StoreFixture()
        #expect(f.book.storesRunsItself)
        #expect(f.bridge.results.push(TimedRun(seconds: 3, startType: "flying", preset: "flying-30m", distanceMetres: 30, wallTime: 1_700_000_000)))
        f.server.hub.refresh()
        #expect(try f.store.count() == 0, "the storage thread writes runs; the results lane must not")
        try f.commit(StoreFixture.run(3.0))
        #expect(try f.store.count() == 1)
    }

    @Test func deleteAndAssignGoToTheStore() async throws {
        let f = try StoreFixture()
        try f.commit(StoreFixture.run(3.2))
        let id = try #require(try f.store.history().first?.run.id)
        try await f.app().test(.router) { client in
            try await client.execute(uri: "/api/athletes", method: .post, headers: pinHeader, body: body("{\"name\":\"Ben\"}")) { r in
                #expect(r.status == .created)
            }
            try await client.execute(uri: "/api/athletes", method: .post, headers: pinHeader, body: body("{\"name\":\"ben\"}")) { r in
                #expect(r.status == .conflict)
            }
            let ben = try #require(try f.store.athletes().first?.id)
            try await client.execute(uri: "/api/next-athlete", method: .put, headers: pinHeader, body: body("{\"athleteId\":\(ben)}")) { r in
                #expect(r.status == .ok)
                #expect((r.json["nextAthlete"] as? [String: Any])?["name"] as? String == "Ben")
            }
            try await client.execute(uri: "/api/next-athlete", method: .put, headers: pinHeader, body: body("{\"athleteId\":999}")) { r in
                #expect(r.status == .notFound)
                #expect(r.errorField == "athleteId")
            }
            #expect(try f.store.nextRunAthlete()?.name == "Ben")
            try await client.execute(uri: "/api/results/\(id)", method: .delete) { r in #expect(r.status == .unauthorized) }
            try await client.execute(uri: "/api/results/\(id)", method: .delete, headers: pinHeader) { r in #expect(r.status == .noContent) }
            try await client.execute(uri: "/api/results/\(id)", method: .get) { r in #expect(r.status == .notFound) }
            try await client.execute(uri: "/api/results/\(id)", method: .delete, headers: pinHeader) { r in #expect(r.status == .notFound) }
        }
        #expect(try f.store.count() == 0)
        // The assignment survives until the next timed run, which takes it.
        try f.commit(StoreFixture.run(3.4))
        #expect(try f.store.history().first?.athleteName == "Ben")
        #expect(f.book.nextRunAthlete() == nil)
    }

    @Test func photoAndThumbnailRoutesServeTheStoredJPEG() async throws {
        let f = try StoreFixture()
        try f.commit(StoreFixture.run(3.2))
        let id = try #require(try f.store.history().first?.run.id)
        try await f.app().test(.router) { client in
            try await client.execute(uri: "/api/results/\(id)/photo.jpg", method: .get) { r in #expect(r.status == .notFound) }
            var thumb = tinyJPEG
            thumb.append(0)
            try f.store.savePhoto(runID: id, jpeg: tinyJPEG, thumbnails: [thumb])
            f.book.photoSaved(runID: id)
            try await client.execute(uri: "/api/results/\(id)/photo.jpg", method: .get) { r in
                #expect(r.status == .ok)
                #expect(r.headers[.contentType] == "image/jpeg")
                #expect(Array(r.body.readableBytesView) == tinyJPEG)
            }
            try await client.execute(uri: "/api/results/\(id)/thumb/0.jpg", method: .get) { r in
                #expect(r.status == .ok)
                #expect(Array(r.body.readableBytesView) == thumb)
            }
            try await client.execute(uri: "/api/results/\(id)/thumb/1.jpg", method: .get) { r in #expect(r.status == .notFound) }
            try await client.execute(uri: "/api/results/\(id)/thumb/x.jpg", method: .get) { r in
                #expect(r.status == .badRequest)
                #expect(r.errorField == "file")
            }
            try await client.execute(uri: "/api/results/\(id + 1)/photo.jpg", method: .get) { r in #expect(r.status == .notFound) }
            try await client.execute(uri: "/api/results/\(id)", method: .get) { r in
                #expect((r.json["run"] as? [String: Any])?["hasPhoto"] as? Bool == true)
            }
        }
    }

    /// Athletes through the API on the SQLite book: created with every detail, found by
    /// name or nickname, edited, refused when wrong, deleted (their runs stay).
    @Test func athletesAreCreatedSearchedEditedAndDeleted() async throws {
        let f = try StoreFixture()
        try await f.app().test(.router) { client in
            func send(_ method: HTTPRequest.Method, _ uri: String, _ json: String) async throws -> (HTTPResponse.Status, [String: Any], String?) {
                try await client.execute(uri: uri, method: method, headers: pinHeader, body: ByteBuffer(string: json)) { r in
                    (r.status, r.json, r.errorField)
                }
            }
            let (status, ada, _) = try await send(.post, "/api/athletes",
                #"{"name": " Ada Lovelace ", "nickname": "Countess", "colour": "gray", "birthdate": "2009-12-10", "gender": "female"}"#)
            #expect(status == .created)
            #expect(ada["name"] as? String == "Ada Lovelace" && ada["nickname"] as? String == "Countess")
            #expect(ada["colour"] as? String == "gray" && ada["birthdate"] as? String == "2009-12-10" && ada["gender"] as? String == "female")
            let id = try #require(ada["id"] as? Int)
            _ = try await send(.post, "/api/athletes", #"{"name": "Bo"}"#)
            for (json, field) in [(#"{"name": "ada lovelace"}"#, "name"), (#"{"name": ""}"#, "name"), (#"{"nickname": "x"}"#, "name"),
                                  (#"{"name": "C", "colour": "teal"}"#, "colour"), (#"{"name": "C", "gender": "x"}"#, "gender"),
                                  (#"{"name": "C", "birthdate": "2009-02-30"}"#, "birthdate"),
                                  (#"{"name": "C", "birthdate": "2999-01-01"}"#, "birthdate"),
                                  (#"{"name": "C", "nickname": "\#(String(repeating: "n", count: 31))"}"#, "nickname")] {
                let (st, _, f) = try await send(.post, "/api/athletes", json)
                #expect((st == .badRequest || st == .conflict) && f == field, "\(json): \(st) \(f ?? "")")
            }
            try await client.execute(uri: "/api/athletes?q=COUNT", method: .get) { r in
                let list = (try? JSONSerialization.jsonObject(with: Data(r.body.readableBytesView))) as? [[String: Any]] ?? []
                #expect(list.map { $0["name"] as? String } == ["Ada Lovelace"], "search by nickname, any case")
            }
            try await client.execute(uri: "/api/athletes?q=", method: .get) { r in
                let list = (try? JSONSerialization.jsonObject(with: Data(r.body.readableBytesView))) as? [[String: Any]] ?? []
                #expect(list.count == 2)
            }
            let (edited, body, _) = try await send(.put, "/api/athletes/\(id)", #"{"name": "Ada King", "colour": "purple"}"#)
            #expect(edited == .ok && body["nickname"] == nil && body["colour"] as? String == "purple")
            let stored = try #require(try f.store.athletes().first { $0.id == Int64(id) })
            #expect(stored.name == "Ada King" && stored.colour == .purple && stored.nickname == nil && stored.birthdate == nil)
            let (clash, _, clashField) = try await send(.put, "/api/athletes/\(id)", #"{"name": "bo"}"#)
            #expect(clash == .conflict && clashField == "name")
            let (missing, _, _) = try await send(.put, "/api/athletes/999", #"{"name": "Zed"}"#)
            #expect(missing == .notFound)
            try await client.execute(uri: "/api/athletes/\(id)", method: .delete) { r in #expect(r.status == .unauthorized) }
            try await client.execute(uri: "/api/athletes/\(id)", method: .delete, headers: pinHeader) { r in #expect(r.status == .noContent) }
            try await client.execute(uri: "/api/athletes/\(id)", method: .delete, headers: pinHeader) { r in #expect(r.status == .notFound) }
        }
        #expect(try f.store.athletes().map(\.name) == ["Bo"])
    }

    /// A race's gates' images, stored through SQLite (migration v3), listed with the run
    /// and served per gate.
    @Test func gatePhotosOfARaceAreListedAndServed() async throws {
        let f = try StoreFixture()
        try f.commit(StoreFixture.run(6.8))
        let id = try #require(try f.store.history().first?.run.id)
        let lap = tinyJPEG + [7]
        try f.store.saveGatePhoto(runID: id, gateIndex: 2, jpeg: tinyJPEG)
        try f.store.saveGatePhoto(runID: id, gateIndex: 1, jpeg: lap)
        #expect(throws: StoreError.self) { try f.store.saveGatePhoto(runID: id, gateIndex: 16, jpeg: tinyJPEG) }
        #expect(throws: StoreError.self) { try f.store.saveGatePhoto(runID: id, gateIndex: 1, jpeg: [1, 2, 3]) }
        #expect(throws: StoreError.self) { try f.store.saveGatePhoto(runID: id + 1, gateIndex: 1, jpeg: tinyJPEG) }
        #expect(try f.store.history().first?.photoGates == [1, 2])
        try await f.app().test(.router) { client in
            try await client.execute(uri: "/api/results/\(id)", method: .get) { r in
                #expect((r.json["run"] as? [String: Any])?["photoGates"] as? [Int] == [1, 2])
            }
            try await client.execute(uri: "/api/results/\(id)/gates/1.jpg", method: .get) { r in
                #expect(r.status == .ok && r.headers[.contentType] == "image/jpeg")
                #expect(Array(r.body.readableBytesView) == lap)
            }
            try await client.execute(uri: "/api/results/\(id)/gates/0.jpg", method: .get) { r in #expect(r.status == .notFound) }
            try await client.execute(uri: "/api/results/\(id)/gates/16.jpg", method: .get) { r in
                #expect(r.status == .badRequest && r.errorField == "file")
            }
            try await client.execute(uri: "/api/results/\(id + 1)/gates/1.jpg", method: .get) { r in #expect(r.status == .notFound) }
        }
        // Deleting the run deletes its gates' images.
        try f.store.deleteRun(id: id)
        #expect(try f.store.gatePhoto(runID: id, gateIndex: 1) == nil)
    }

    /// A run's detail for the page: every gate's leg with its distance, times, segment
    /// speed and uncertainty, in course order, and the number of gates.
    @Test func aRunsLegsAreServedForItsDetail() async throws {
        let f = try StoreFixture()
        var run = StoreFixture.run(7.2)
        run.gateCount = 3
        run.splits = [StoredSplit(gateIndex: 1, distance: 30, timeNs: 4_100_000_000, segmentNs: 4_100_000_000, segmentSpeed: 30 / 4.1,
                                  syncUncertaintyNs: 310_000),
                      StoredSplit(gateIndex: 2, distance: 60, timeNs: 7_200_000_000, segmentNs: 3_100_000_000, segmentSpeed: 30 / 3.1,
                                  syncUncertaintyNs: 420_000)]
        try f.commit(run)
        let id = try #require(try f.store.history().first?.run.id)
        try await f.app().test(.router) { client in
            try await client.execute(uri: "/api/results/\(id)", method: .get) { r in
                let run = try #require(r.json["run"] as? [String: Any])
                #expect(run["gateCount"] as? Int == 3)
                let legs = try #require(run["legs"] as? [[String: Any]])
                #expect(legs.map { $0["gateIndex"] as? Int } == [1, 2])
                #expect(legs.map { $0["distanceMetres"] as? Double } == [30, 60])
                #expect(legs.map { $0["seconds"] as? Double } == [4.1, 7.2])
                #expect(legs.map { $0["segmentSeconds"] as? Double } == [4.1, 3.1])
                #expect(legs.map { $0["uncertaintyMs"] as? Double } == [0.31, 0.42])
                #expect(abs((legs[1]["segmentSpeed"] as? Double ?? 0) - 30 / 3.1) < 1e-9)
            }
        }
    }

    /// A gate's frames around its crossing (migration v4): stored in order, listed with
    /// the run, described and served frame by frame; replaced whole; refused when wrong.
    @Test func gateFramesAreListedDescribedAndServed() async throws {
        let f = try StoreFixture()
        try f.commit(StoreFixture.run(6.8))
        let id = try #require(try f.store.history().first?.run.id)
        let frames = (0..<4).map { StoredFrame(offsetMicroseconds: -12_500 + $0 * 8_333, jpeg: tinyJPEG + [UInt8($0)]) }
        try f.store.saveGateFrames(runID: id, gateIndex: 1, gateX: 79.5, frames: Array(frames.prefix(2)))
        try f.store.saveGateFrames(runID: id, gateIndex: 1, gateX: 80.25, frames: frames)  // Replaces the first.
        try f.store.saveGateFrames(runID: id, gateIndex: 3, gateX: 10, frames: [frames[0]])
        func refused(_ gate: Int, _ x: Double, _ fr: [StoredFrame], run: Int64? = nil) -> Bool {
            (try? f.store.saveGateFrames(runID: run ?? id, gateIndex: gate, gateX: x, frames: fr)) == nil
        }
        #expect(refused(16, 1, frames))
        #expect(refused(1, .nan, frames))
        #expect(refused(1, 1, []))
        #expect(refused(1, 1, Array(repeating: frames[0], count: 33)))
        #expect(refused(1, 1, [frames[1], frames[0]]), "offsets must increase")
        #expect(refused(1, 1, [StoredFrame(offsetMicroseconds: 0, jpeg: [1, 2, 3])]), "not a JPEG")
        #expect(refused(1, 1, frames, run: id + 1), "no such run")
        #expect(try f.store.history().first?.frameGates == [1, 3])
        let strip = try #require(try f.store.gateFrames(runID: id, gateIndex: 1))
        #expect(strip.gateX == 80.25 && strip.offsetsMicroseconds == frames.map(\.offsetMicroseconds))
        try await f.app().test(.router) { client in
            try await client.execute(uri: "/api/results/\(id)", method: .get) { r in
                #expect((r.json["run"] as? [String: Any])?["frameGates"] as? [Int] == [1, 3])
            }
            try await client.execute(uri: "/api/results/\(id)/gates/1/frames", method: .get) { r in
                #expect(r.status == .ok)
                #expect(r.json["gateX"] as? Double == 80.25)
                let list = r.json["frames"] as? [[String: Any]] ?? []
                #expect(list.count == 4)
                #expect(list.first?["offsetMs"] as? Double == -12.5)
                #expect(list.last?["url"] as? String == "/api/results/\(id)/gates/1/frames/3.jpg")
            }
            try await client.execute(uri: "/api/results/\(id)/gates/1/frames/2.jpg", method: .get) { r in
                #expect(r.status == .ok && r.headers[.contentType] == "image/jpeg")
                #expect(Array(r.body.readableBytesView) == frames[2].jpeg)
            }
            try await client.execute(uri: "/api/results/\(id)/gates/1/frames/4.jpg", method: .get) { r in #expect(r.status == .notFound) }
            try await client.execute(uri: "/api/results/\(id)/gates/2/frames", method: .get) { r in #expect(r.status == .notFound) }
            try await client.execute(uri: "/api/results/\(id)/gates/16/frames", method: .get) { r in
                #expect(r.status == .badRequest && r.errorField == "gate")
            }
            try await client.execute(uri: "/api/results/\(id)/gates/1/frames/x.jpg", method: .get) { r in
                #expect(r.status == .badRequest && r.errorField == "file")
            }
            try await client.execute(uri: "/api/results/\(id + 1)/gates/1/frames", method: .get) { r in #expect(r.status == .notFound) }
        }
        try f.store.deleteRun(id: id)
        #expect(try f.store.gateFrames(runID: id, gateIndex: 1) == nil)
    }
}

@Suite struct PhotoFinishMatcherTests {
    static func committed(_ id: Int64, startNs: Int64, seconds: Double) -> StoredRun {
        var r = StoreFixture.run(seconds, startNs: startNs)
        r.id = id
        return r
    }

    @Test func photoBeforeItsRunAndRunBeforeItsPhoto() {
        var m = PhotoFinishMatcher<String>()
        let run1 = Self.committed(1, startNs: 10_000_000_000, seconds: 3.1)
        // The flying start's photo belongs to no run; the finish's does.
        #expect(m.photo("start", crossingNs: 10_000_000_000) == nil)
        #expect(m.photo("finish", crossingNs: 13_100_000_000) == nil)
        let first = m.run(run1)
        #expect(first.map(\.photo) == ["finish"])
        #expect(first.first?.match == .init(runID: 1, gateIndex: 0, finish: true))
        let run2 = Self.committed(2, startNs: 20_000_000_000, seconds: 2.9)
        #expect(m.run(run2).isEmpty)
        #expect(m.pendingRuns == 1)
        #expect(m.photo("late", crossingNs: 22_900_000_000)?.runID == 2)
        #expect(m.pendingRuns == 0)
        // A photo 1 ms off is another crossing.
        #expect(m.photo("other", crossingNs: 22_901_000_000) == nil)
    }

    @Test func falseStartsTakeNoPhotoAndOldPhotosAreDropped() {
        var m = PhotoFinishMatcher<Int>(capacity: 2)
        var fs = Self.committed(3, startNs: 1_000, seconds: 1)
        fs.falseStart = true
        fs.totalNs = nil
        #expect(m.run(fs).isEmpty)
        #expect(m.pendingRuns == 0)
        for i in 0..<3 { #expect(m.photo(i, crossingNs: Int64(i) * 1_000_000_000) == nil) }
        #expect(m.pendingPhotos == 2)
        #expect(m.unmatchedPhotos == 1)
        // Photo 0 was pushed out: a run finishing then finds nothing.
        #expect(m.run(Self.committed(4, startNs: -3_000_000_000, seconds: 3)).isEmpty)
        #expect(m.run(Self.committed(5, startNs: 0, seconds: 2)).map(\.photo) == [2])
    }

    /// A race's run: the start and every split are instants a photo may show, each at its
    /// gate's place; another gate's photo matches only its own place, within its tolerance.
    @Test func everyGateOfARaceFindsItsPhoto() {
        var m = PhotoFinishMatcher<String>()
        var race = Self.committed(9, startNs: 50_000_000_000, seconds: 6.8)
        race.gateCount = 3
        race.splits = [StoredSplit(gateIndex: 1, distance: 30, timeNs: 3_600_000_000, segmentNs: 3_600_000_000, segmentSpeed: nil,
                                   syncUncertaintyNs: 100_000),
                       StoredSplit(gateIndex: 2, distance: 60, timeNs: 6_800_000_000, segmentNs: 3_200_000_000, segmentSpeed: nil,
                                   syncUncertaintyNs: 100_000)]
        // The host's own photo of the start came first; the lap gate's is 300 µs off.
        #expect(m.photo("start", crossingNs: 50_000_000_000) == nil)
        let early = m.run(race)
        #expect(early.map(\.photo) == ["start"])
        #expect(early.first?.match == .init(runID: 9, gateIndex: 0, finish: false, race: true))
        // The right instant at the wrong place is not a match; nor is one past the tolerance.
        #expect(m.photo("wrong place", crossingNs: 53_600_000_000, gateIndex: 2, toleranceNs: 500_000) == nil)
        #expect(m.photo("too far", crossingNs: 53_600_600_000, gateIndex: 1, toleranceNs: 500_000) == nil)
        #expect(m.photo("lap", crossingNs: 53_600_300_000, gateIndex: 1, toleranceNs: 500_000)
            == .init(runID: 9, gateIndex: 1, finish: false, race: true))
        #expect(m.photo("finish", crossingNs: 56_799_800_000, gateIndex: 2, toleranceNs: 500_000)
            == .init(runID: 9, gateIndex: 2, finish: true, race: true))
        #expect(m.pendingRuns == 0)
    }
}
