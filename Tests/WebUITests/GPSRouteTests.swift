// SPDX-License-Identifier: Apache-2.0
// The GPS timer's routes: the live view as JSON and over its WebSocket, and the answer on
// a gate without [gps]. The timer behind them is tested through a real gpsd in
// GPSTimingTests (GPSGateTests); here a desk holds a view built from the timer's types.

import Foundation
import GPSTiming
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
@testable import WebUI

final class StandInGPSDesk: GPSDesk {
    let state: Mutex<GPSLive>
    init(_ live: GPSLive) { state = Mutex(live) }
    func live() -> GPSLive { state.withLock { $0 } }
    func update(_ body: (inout GPSLive) -> Void) { state.withLock { body(&$0); $0.version += 1 } }

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
        v.last = GPSRunView(result, rollout: false, wallTime: 1_800_000_000)
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
}
