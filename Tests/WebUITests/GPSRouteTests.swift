// SPDX-License-Identifier: Apache-2.0
// The GPS timer's routes: the live view as JSON and over its WebSocket, and the answer on
// a gate without [gps]. The timer behind them is tested through a real gpsd in
// GPSTimingTests (GPSGateTests); here a desk holds a view built from the timer's types.

import Foundation
import GPSTiming
import HTTPTypes
import Hummingbird
import Logging
import Synchronization
import SQLiteStore
import Testing
@testable import WebUI

final class StandInGPSDesk: GPSDesk {
    let state: Mutex<GPSLive>
    let garageStore: RunStore?
    let isRunning = Atomic<Bool>(false)
    let changes = Atomic<Int>(0)
    init(_ live: GPSLive, store: RunStore? = nil) {
        state = Mutex(live)
        garageStore = store
    }
    func live() -> GPSLive { state.withLock { $0 } }
    func update(_ body: (inout GPSLive) -> Void) { state.withLock { body(&$0); $0.version += 1 } }
    var running: Bool { isRunning.load(ordering: .relaxed) }
    func garageChanged() { changes.add(1, ordering: .relaxed) }

    static func sample() -> GPSLive {
        var status = ReceiverStatus(wantedRate: 10)
        status.link = .fix
        status.detail = "3D fix, ±3 m"
        status.mode = .threeD
        status.satellitesUsed = 11
        status.satellitesSeen = 14
        status.horizontalError = 2.9
        status.rate = 5
        status.speed = 0.1
        var v = GPSLive(status: status, settings: AccelerationSettings(accuracy: 10), state: .armed, stateDetail: "standing still")
        v.version = 1
        let result = AccelerationResult(launch: GPSTime(seconds: 10), start: GPSTime(seconds: 10),
                                        times: [MilestoneTime(milestone: .zeroTo60mph, seconds: 4.21, uncertainty: 0.02, speed: 26.8)],
                                        topSpeed: 40, topSpeedSeconds: 9.5, distance: 300, voided: nil, fixRate: 10)
        v.last = GPSRunRecord(result, settings: AccelerationSettings(), wallTime: 1_800_000_000)
        v.runs = [v.last!]
        return v
    }
}

@Suite("GPS routes")
struct GPSRouteTests {
    @Test("without [gps]: 404 naming gps and how to add it; with it: the receiver, the timer's state, the rate warning and the last run as JSON")
    func live() async throws {
        let f = Fixture()
        try await f.test { client in
            try await client.execute(uri: "/api/gps", method: .get) { r in
                #expect(r.status == .notFound && r.errorField == "gps" && r.text.contains("[gps]"))
            }
            f.bridge.gps.connect(StandInGPSDesk(StandInGPSDesk.sample()))
            try await client.execute(uri: "/api/gps", method: .get) { r in
                #expect(r.status == .ok)
                let j = r.json
                #expect(j["link"] as? String == "fix" && j["mode"] as? Int == 3 && j["satellitesUsed"] as? Int == 11)
                #expect(j["state"] as? String == "armed" && j["stateDetail"] as? String == "standing still")
                #expect((j["rateWarning"] as? String)?.hasPrefix("the receiver sends 5 fixes a second, not 10") == true)
                let last = try #require(j["last"] as? [String: Any])
                let m = try #require((last["milestones"] as? [[String: Any]])?.first)
                #expect(m["name"] as? String == "0-60 mph" && m["seconds"] as? Double == 4.21)
            }
            // The page's script is served.
            try await client.execute(uri: "/gps.js", method: .get) { r in
                #expect(r.status == .ok && r.text.contains("/api/gps/ws"))
            }
        }
    }

    @Test("the WebSocket sends the view at once and again on each change; without [gps] one message says why")
    func socket() async throws {
        let f = Fixture()
        try await f.server.application(host: "127.0.0.1", port: 0).test(.live) { client in
            let port = try #require(client.port)
            let none = try await TinyWebSocket.connect(port: port, path: "/api/gps/ws")
            #expect(try await none.readText().contains("no GPS timer"))
            let desk = StandInGPSDesk(StandInGPSDesk.sample())
            f.bridge.gps.connect(desk)
            let ws = try await TinyWebSocket.connect(port: port, path: "/api/gps/ws")
            #expect(try await ws.readText().contains("\"state\":\"armed\""))
            desk.update { $0.state = "running"; $0.speed = 12.5; $0.elapsed = 1.5 }
            let second = try await ws.readText()
            #expect(second.contains("\"state\":\"running\"") && second.contains("\"speed\":12.5"))
        }
    }

    /// A 16 × 8 blue JPEG, written by FFmpeg (`ffmpeg -f lavfi -i color=c=blue:s=16x8 -frames:v 1 -q:v 8 tiny.jpg`).
    static let tinyJPEG = "/9j/4AAQSkZJRgABAgAAAQABAAD//gAQTGF2YzU5LjM3LjEwMAD/2wBDAAgQEBMQExYWFhYWFhoYGhsbGxoaGhobGxsdHR0iIiIdHR0bGx0dICAiIiUmJSMjIiMmJigoKDAwLi44ODpFRVP/xABMAAEBAAAAAAAAAAAAAAAAAAAABwEBAQAAAAAAAAAAAAAAAAAABQcQAQAAAAAAAAAAAAAAAAAAAAARAQAAAAAAAAAAAAAAAAAAAAD/wAARCAAIABADASIAAhEAAxEA/9oADAMBAAIRAxEAPwCOAL+Lf//Z"

    @Test("the garage: vehicles added with the PIN (a name required, a bad year named), the first the default and active; runs filed under the active vehicle, sorted by a milestone, filtered, exported as CSV and JSON, deleted; the active vehicle locked during a run; a photo kept and given back (a file that is not a JPEG, a cut one or a big one refused); a vehicle deleted keeps its runs")
    func garage() async throws {
        let f = Fixture()
        let store = try RunStore(directory: f.directory.path + "/garage", logger: Logger(label: "test"))
        let desk = StandInGPSDesk(StandInGPSDesk.sample(), store: store)
        f.bridge.gps.connect(desk)
        try await f.test { client in
            try await client.execute(uri: "/api/gps/vehicles", method: .post, body: body("{\"name\": \"Golf\"}")) { r in
                #expect(r.status == .unauthorized)
            }
            try await client.execute(uri: "/api/gps/vehicles", method: .post, headers: pinHeader, body: body("{\"make\": \"VW\"}")) { r in
                #expect(r.status == .badRequest && r.errorField == "name")
            }
            try await client.execute(uri: "/api/gps/vehicles", method: .post, headers: pinHeader, body: body("{\"name\": \"Golf\", \"year\": 1700}")) { r in
                #expect(r.status == .badRequest && r.errorField == "year" && r.text.contains("1886 to 2100"))
            }
            var ids: [Int] = []
            for v in ["{\"name\": \"Blue Golf\", \"year\": 2019, \"make\": \"VW\", \"model\": \"Golf\", \"trim\": \"GTI\", \"colour\": \"blue\", \"notes\": \"stock\"}",
                      "{\"name\": \"Kart\"}"] {
                try await client.execute(uri: "/api/gps/vehicles", method: .post, headers: pinHeader, body: body(v)) { r in
                    #expect(r.status == .created)
                    ids.append(r.json["id"] as? Int ?? 0)
                }
            }
            let changes = desk.changes.load(ordering: .relaxed)
            #expect(changes == 2)
            try await client.execute(uri: "/api/gps/garage", method: .get) { r in
                #expect(r.json["defaultID"] as? Int == ids[0] && r.json["activeID"] as? Int == ids[0])
                let first = (r.json["vehicles"] as? [[String: Any]])?.first?["vehicle"] as? [String: Any]
                #expect(first?["trim"] as? String == "GTI" && first?["year"] as? Int == 2019)
            }
            // Two runs on the Golf, one on the kart.
            func run(_ sixty: Double, top: Double) -> GPSRunRecord {
                GPSRunRecord(wallTime: 1_800_000_000 + sixty, milestones: [GPSMilestoneRecord(name: "0-60 mph", seconds: sixty, uncertainty: 0.02, speed: 26.8),
                                                                            GPSMilestoneRecord(name: "1/4 mile", seconds: sixty * 3, uncertainty: 0.03, speed: 50, trapSpeed: 49.5)],
                             topSpeed: top, topSpeedSeconds: 10, distance: 420, voided: nil, fixRate: 10, rollout: false, accuracyGate: 10)
            }
            _ = try store.addGPSRun(run(5.1, top: 50))
            _ = try store.addGPSRun(run(4.8, top: 48))
            desk.isRunning.store(true, ordering: .relaxed)
            try await client.execute(uri: "/api/gps/active", method: .put, headers: pinHeader, body: body("{\"id\": \(ids[1])}")) { r in
                #expect(r.status == .conflict && r.text.contains("during a run"))
            }
            desk.isRunning.store(false, ordering: .relaxed)
            try await client.execute(uri: "/api/gps/active", method: .put, headers: pinHeader, body: body("{\"id\": \(ids[1])}")) { r in
                #expect(r.status == .noContent)
            }
            _ = try store.addGPSRun(run(6.5, top: 30))
            try await client.execute(uri: "/api/gps/runs?sort=0-60%20mph", method: .get) { r in
                let runs = r.jsonArray
                #expect(runs.map { $0["vehicleName"] as? String } == ["Blue Golf", "Blue Golf", "Kart"])
                #expect(((runs.first?["milestones"] as? [[String: Any]])?.first?["seconds"] as? Double) == 4.8)
            }
            try await client.execute(uri: "/api/gps/runs?vehicle=\(ids[0])&sort=top", method: .get) { r in
                #expect(r.jsonArray.map { $0["topSpeed"] as? Double } == [50, 48])
            }
            try await client.execute(uri: "/api/gps/runs?sort=fastest", method: .get) { r in
                #expect(r.status == .badRequest && r.errorField == "sort" && r.text.contains("0-60 mph"))
            }
            try await client.execute(uri: "/api/gps/export.csv?vehicle=\(ids[0])", method: .get) { r in
                let lines = r.text.split(separator: "\r\n")
                #expect(lines.count == 3 && lines[0].hasPrefix("id,finished_utc,vehicle,voided,0-60 mph s"))
                // Newest first: the 5.1 s run, then the 4.8 s one.
                #expect(lines[1].contains(",Blue Golf,,5.100,") && lines[2].contains(",4.800,") && lines[2].contains(",49.50,"))
            }
            try await client.execute(uri: "/api/gps/export.json", method: .get) { r in
                #expect(r.jsonArray.count == 3)
            }
            try await client.execute(uri: "/api/gps/garage", method: .get) { r in
                let vehicles = r.json["vehicles"] as? [[String: Any]] ?? []
                #expect(vehicles.map { $0["runs"] as? Int } == [2, 1])
                #expect((vehicles.first?["bests"] as? [String: Any])?["0-60 mph"] as? Double == 4.8)
                #expect(r.json["activeID"] as? Int == ids[1])
            }
            // A photo: a JPEG kept and given back; other files refused with the reason.
            let jpeg = try #require(Data(base64Encoded: Self.tinyJPEG))
            let photoHeaders: HTTPFields = [HTTPField.Name("X-Gate-PIN")!: Fixture.pin, .contentType: "image/jpeg"]
            try await client.execute(uri: "/api/gps/vehicles/\(ids[0])/photo", method: .get) { r in
                #expect(r.status == .notFound && r.errorField == "photo")
            }
            try await client.execute(uri: "/api/gps/vehicles/\(ids[0])/photo", method: .put, body: ByteBuffer(bytes: jpeg)) { r in
                #expect(r.status == .unauthorized)
            }
            try await client.execute(uri: "/api/gps/vehicles/\(ids[0])/photo", method: .put, headers: photoHeaders, body: body("GIF89a not a photo")) { r in
                #expect(r.status == .badRequest && r.errorField == "photo" && r.text.contains("not a JPEG picture"))
            }
            try await client.execute(uri: "/api/gps/vehicles/\(ids[0])/photo", method: .put, headers: photoHeaders,
                                     body: ByteBuffer(bytes: Array(jpeg.prefix(20)))) { r in
                #expect(r.status == .badRequest && r.text.contains("cut short or damaged"))
            }
            try await client.execute(uri: "/api/gps/vehicles/\(ids[0])/photo", method: .put, headers: photoHeaders,
                                     body: ByteBuffer(bytes: [UInt8](repeating: 0xFF, count: VehiclePhoto.maxBytes + 1))) { r in
                #expect(r.status == .contentTooLarge && r.errorField == "photo")
            }
            try await client.execute(uri: "/api/gps/vehicles/999/photo", method: .put, headers: photoHeaders, body: ByteBuffer(bytes: jpeg)) { r in
                #expect(r.status == .notFound)
            }
            try await client.execute(uri: "/api/gps/vehicles/\(ids[0])/photo", method: .put, headers: photoHeaders, body: ByteBuffer(bytes: jpeg)) { r in
                #expect(r.status == .noContent)
            }
            try await client.execute(uri: "/api/gps/vehicles/\(ids[0])/photo", method: .get) { r in
                #expect(r.status == .ok && r.headers[.contentType] == "image/jpeg" && Array(r.body.readableBytesView) == [UInt8](jpeg))
            }
            #expect(try store.vehiclePhoto(id: Int64(ids[0]))?.width == 16 && store.vehiclePhoto(id: Int64(ids[0]))?.height == 8)
            try await client.execute(uri: "/api/gps/garage", method: .get) { r in
                let vehicles = r.json["vehicles"] as? [[String: Any]] ?? []
                #expect(vehicles.map { $0["hasPhoto"] as? Bool } == [true, false])
            }
            try await client.execute(uri: "/api/gps/vehicles/\(ids[1])/photo", method: .put, headers: photoHeaders, body: ByteBuffer(bytes: jpeg)) { r in
                #expect(r.status == .noContent)
            }
            try await client.execute(uri: "/api/gps/vehicles/\(ids[1])/photo", method: .delete, headers: pinHeader) { r in #expect(r.status == .noContent) }
            try await client.execute(uri: "/api/gps/vehicles/\(ids[1])/photo", method: .delete, headers: pinHeader) { r in #expect(r.status == .notFound) }
            // Deleting the Golf keeps its runs under its name; its photo goes with it.
            try await client.execute(uri: "/api/gps/vehicles/\(ids[0])", method: .delete, headers: pinHeader) { r in #expect(r.status == .noContent) }
            #expect(try store.vehiclePhoto(id: Int64(ids[0])) == nil)
            try await client.execute(uri: "/api/gps/runs", method: .get) { r in
                #expect(r.jsonArray.count == 3 && r.jsonArray.filter { $0["vehicleName"] as? String == "Blue Golf" }.count == 2)
            }
            let newest = try #require(try store.gpsRuns(GPSRunQuery()).first?.id)
            try await client.execute(uri: "/api/gps/runs/\(newest)", method: .delete, headers: pinHeader) { r in #expect(r.status == .noContent) }
            try await client.execute(uri: "/api/gps/runs/\(newest)", method: .delete, headers: pinHeader) { r in #expect(r.status == .notFound) }
            #expect(try store.gpsRuns(GPSRunQuery()).count == 2)
        }
    }
}
