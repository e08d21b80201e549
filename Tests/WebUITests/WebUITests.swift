// SPDX-License-Identifier: Apache-2.0
// Routes, validation, PIN and rate limiting, history, export and the static page.

import Foundation
import GateCore
import Hummingbird
import HTTPTypes
import Logging
import SQLiteStore
import Synchronization
import Testing
@testable import WebUI

@Suite struct StaticPageTests {
    @Test func pageIsServedWithETagAndRevalidates() async throws {
        let f = Fixture()
        try await f.test { client in
            let etag = try await client.execute(uri: "/", method: .get) { r in
                #expect(r.status == .ok)
                #expect(r.headers[.contentType] == "text/html; charset=utf-8")
                #expect(r.text.contains("<title>SprintGate</title>"))
                #expect(r.headers[.cacheControl] == "no-cache")
                return try #require(r.headers[.eTag])
            }
            try await client.execute(uri: "/", method: .get, headers: [.ifNoneMatch: etag]) { r in
                #expect(r.status == .notModified)
                #expect(r.body.readableBytes == 0)
            }
            try await client.execute(uri: "/", method: .get, headers: [.ifNoneMatch: "\"stale\""]) { r in
                #expect(r.status == .ok)
            }
            for (path, type) in [("/app.js", "text/javascript; charset=utf-8"), ("/app.css", "text/css; charset=utf-8"), ("/index.html", "text/html; charset=utf-8")] {
                try await client.execute(uri: path, method: .get) { r in
                    #expect(r.status == .ok)
                    #expect(r.headers[.contentType] == type)
                    #expect(r.headers[HTTPField.Name("Content-Security-Policy")!]?.contains("default-src 'self'") == true)
                }
            }
        }
    }

    @Test func pageLoadsNothingFromOutside() {
        for a in WebAssets.all {
            let text = String(decoding: a.bytes, as: UTF8.self)
            #expect(!text.contains("http://") && !text.contains("https://"), "\(a.path) refers to an outside address")
        }
    }

    /// The page's own policy (`style-src 'self'; script-src 'self'`) blocks inline styles
    /// and scripts: the page must have none.
    @Test func pageHasNothingItsPolicyBlocks() throws {
        let html = String(decoding: try #require(WebAssets.all.first { $0.path == "/index.html" }).bytes, as: UTF8.self)
        #expect(!html.contains("style="), "an inline style attribute")
        #expect(!html.contains("<style"), "an inline style element")
        #expect(html.components(separatedBy: "<script").dropFirst().allSatisfy { $0.hasPrefix(" src=") }, "an inline script")
        #expect(html.range(of: #"\son[a-z]+="#, options: .regularExpression) == nil, "an inline event handler")
    }

    /// The camera view: no view without a camera; a viewer's request reaches the gate's
    /// tap; the newest picture is served with its sequence, and its geometry as JSON.
    @Test func cameraViewServesTheNewestPicture() async throws {
        let f = Fixture()
        let asked = Atomic<Int>(0)
        try await f.test { client in
            try await client.execute(uri: "/api/camera.jpg", method: .get) { r in
                #expect(r.status == .notFound && r.errorField == "camera")
            }
            f.bridge.camera.connect { asked.add(1, ordering: .relaxed) }
            try await client.execute(uri: "/api/camera.jpg", method: .get) { r in
                #expect(r.status == .serviceUnavailable && r.errorField == "camera")
            }
            #expect(asked.load(ordering: .relaxed) == 1, "the request asked the gate for pictures")
            let now = MonotonicInstant(nanoseconds: monotonicNowNs())
            f.bridge.camera.publish(CameraPicture(jpeg: tinyJPEG, width: 320, height: 180, frameWidth: 1280, frameHeight: 720,
                                                  gateX: 640.5, sequence: 77, time: now,
                                                  bodies: [CameraBody(left: 100, top: 50, right: 180, bottom: 400, kind: "person"),
                                                           CameraBody(left: 900, top: 300, right: 930, bottom: 360, kind: "small")]))
            try await client.execute(uri: "/api/camera.jpg", method: .get) { r in
                #expect(r.status == .ok && r.headers[.contentType] == "image/jpeg")
                #expect(r.headers[HTTPField.Name("X-Frame-Sequence")!] == "77")
                #expect(r.headers[HTTPField.Name("X-Bodies")!] == "100,50,180,400,person;900,300,930,360,small")
                #expect(r.headers[.cacheControl] == "no-store")
                #expect(Array(r.body.readableBytesView) == tinyJPEG)
            }
            try await client.execute(uri: "/api/camera", method: .get) { r in
                #expect(r.status == .ok)
                #expect(r.json["gateX"] as? Double == 640.5 && r.json["frameWidth"] as? Int == 1280 && r.json["width"] as? Int == 320)
            }
            #expect(asked.load(ordering: .relaxed) == 3)
            // A picture older than 3 s is a stalled camera: not served.
            f.bridge.camera.publish(CameraPicture(jpeg: tinyJPEG, width: 320, height: 180, frameWidth: 1280, frameHeight: 720,
                                                  gateX: 640.5, sequence: 78, time: now - .seconds(4)))
            try await client.execute(uri: "/api/camera.jpg", method: .get) { r in #expect(r.status == .serviceUnavailable) }
        }
    }

    /// Moving the gate line: with the PIN, a column within the camera's frame, between runs.
    @Test func theGateLineMovesWithinTheFrameBetweenRuns() async throws {
        let f = Fixture()
        try await f.test { client in
            let body = { (x: Double) in ByteBuffer(string: "{\"x\": \(x)}") }
            try await client.execute(uri: "/api/gate-line", method: .put, body: body(100)) { r in #expect(r.status == .unauthorized) }
            try await client.execute(uri: "/api/gate-line", method: .put, headers: pinHeader, body: body(100)) { r in
                #expect(r.status == .serviceUnavailable && r.errorField == "camera")
            }
            f.bridge.camera.connect {}
            f.bridge.camera.publish(CameraPicture(jpeg: tinyJPEG, width: 320, height: 180, frameWidth: 1280, frameHeight: 720,
                                                  gateX: 640, sequence: 1, time: MonotonicInstant(nanoseconds: monotonicNowNs())))
            for bad in ["{\"x\": 1280}", "{\"x\": -1}", "{\"x\": \"left\"}", "{}"] {
                try await client.execute(uri: "/api/gate-line", method: .put, headers: pinHeader, body: ByteBuffer(string: bad)) { r in
                    #expect(r.status == .badRequest && r.errorField == "x", "\(bad)")
                }
            }
            f.bridge.snapshot.update { $0.phase = "running" }
            try await client.execute(uri: "/api/gate-line", method: .put, headers: pinHeader, body: body(300)) { r in
                #expect(r.status == .conflict && r.errorField == "phase")
            }
            f.bridge.snapshot.update { $0.phase = "armed" }
            try await client.execute(uri: "/api/gate-line", method: .put, headers: pinHeader, body: body(412.5)) { r in
                #expect(r.status == .accepted)
            }
        }
        #expect(f.bridge.commands.pop() == .setGateLine(412.5))
        #expect(f.bridge.commands.pop() == nil)
    }

    @Test func unknownRouteIsJSON404() async throws {
        try await Fixture().test { client in
            try await client.execute(uri: "/api/nope", method: .get) { r in
                #expect(r.status == .notFound)
                #expect(r.errorField == "path")
            }
        }
    }
}

@Suite struct LiveStateTests {
    @Test func liveAndSettingsReflectTheSnapshot() async throws {
        let f = Fixture()
        f.bridge.snapshot.update {
            $0.phase = "running"
            $0.runStartMonoNs = 5_000_000_000
            $0.peers = [.init(name: "start", role: "start", state: "synced", offsetMicroseconds: -120, uncertaintyMicroseconds: 35, lastSeenSecondsAgo: 0.4)]
        }
        try await f.test { client in
            try await client.execute(uri: "/api/live", method: .get) { r in
                #expect(r.status == .ok)
                let board = try #require(r.json["board"] as? [String: Any])
                let gate = try #require(board["gate"] as? [String: Any])
                #expect(gate["phase"] as? String == "running")
                #expect(gate["runStartMonoNs"] as? Int == 5_000_000_000)
                let peers = try #require(gate["peers"] as? [[String: Any]])
                #expect(peers.first?["offsetMicroseconds"] as? Double == -120)
                #expect((r.json["nowMonoNs"] as? Int ?? 0) > 0)
            }
            try await client.execute(uri: "/api/settings", method: .get) { r in
                #expect(r.status == .ok)
                #expect(r.json["gateName"] as? String == "Test gate")
                #expect((r.json["presets"] as? [Any])?.count == 3)
            }
        }
    }

    @Test func snapshotVersionMovesOnlyOnChange() {
        let cell = SnapshotCell()
        let v0 = cell.version
        cell.update { $0.phase = "idle" }
        #expect(cell.version == v0)
        cell.update { $0.phase = "armed" }
        #expect(cell.version == v0 + 1)
    }

    @Test func finishedRunsReachTheBoardWithSpeed() throws {
        // A gate whose database could not be opened keeps its runs in a memory book: the
        // hub records what the loop finished (with the database, the storage thread does).
        let f = Fixture()
        let hub = LiveHub(bridge: f.bridge, book: MemoryResultsBook(), settings: Fixture.settings, logger: Logger(label: "test.web"))
        let v0 = hub.refresh()
        #expect(f.bridge.results.push(f.run(3.0)))
        let v1 = hub.refresh()
        #expect(v1 == v0 + 1)
        let json = hub.message().json
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let results = try #require(obj["results"] as? [[String: Any]])
        #expect(results.count == 1)
        #expect(results.first?["speed"] as? Double == 10)
        #expect(hub.refresh() == v1, "nothing changed, no new message")
    }
}

@Suite struct ControlTests {
    @Test func controlNeedsThePIN() async throws {
        let f = Fixture()
        try await f.test { client in
            for path in ["/api/arm", "/api/start", "/api/reset", "/api/pause", "/api/resume"] {
                try await client.execute(uri: path, method: .post) { r in
                    #expect(r.status == .unauthorized)
                    #expect(r.errorField == "X-Gate-PIN")
                }
            }
            #expect(f.bridge.commands.count == 0)
            try await client.execute(uri: "/api/arm", method: .post, headers: pinHeader) { r in #expect(r.status == .accepted) }
            // A flying start starts itself: Start is refused, saying why, and nothing is queued.
            try await client.execute(uri: "/api/start", method: .post, headers: pinHeader) { r in
                #expect(r.status == .conflict && r.errorField == "startType")
                #expect(r.text.contains("countdown or voice"))
            }
            f.bridge.snapshot.update { $0.startType = "countdown" }
            try await client.execute(uri: "/api/start", method: .post, headers: pinHeader) { r in #expect(r.status == .accepted) }
            try await client.execute(uri: "/api/reset", method: .post, headers: pinHeader) { r in #expect(r.status == .accepted) }
            try await client.execute(uri: "/api/pause", method: .post, headers: pinHeader) { r in #expect(r.status == .accepted) }
            try await client.execute(uri: "/api/resume", method: .post, headers: pinHeader) { r in #expect(r.status == .accepted) }
        }
        #expect(f.bridge.commands.pop() == .arm)
        #expect(f.bridge.commands.pop() == .start)
        #expect(f.bridge.commands.pop() == .reset)
        #expect(f.bridge.commands.pop() == .pauseDetection)
        #expect(f.bridge.commands.pop() == .resumeDetection)
        #expect(f.wakes.count.load(ordering: .relaxed) == 5)
    }

    @Test func raceHostChangesAGatesRoleAndDistance() async throws {
        let f = Fixture()
        f.bridge.snapshot.update {
            $0.peers = [LiveSnapshot.PeerView(name: "gate 11", role: "lap", state: "synced", offsetMicroseconds: 3,
                                              uncertaintyMicroseconds: 1, lastSeenSecondsAgo: 0.2, gateID: 11, distanceMetres: 10)]
        }
        try await f.test { client in
            try await client.execute(uri: "/api/peers/11", method: .put, body: body(#"{"role":"finish","distance":30}"#)) { r in
                #expect(r.status == .unauthorized)
            }
            let cases: [(String, String, String)] = [
                ("/api/peers/x", #"{"role":"finish","distance":30}"#, "gate"),
                ("/api/peers/0", #"{"role":"finish","distance":30}"#, "gate"),
                ("/api/peers/11", #"{"role":"anchor","distance":30}"#, "role"),
                ("/api/peers/11", #"{"distance":30}"#, "role"),
                ("/api/peers/11", #"{"role":"finish"}"#, "distance"),
                ("/api/peers/11", #"{"role":"finish","distance":"30"}"#, "distance"),
                ("/api/peers/11", #"{"role":"finish","distance":true}"#, "distance"),
                ("/api/peers/11", #"{"role":"finish","distance":-1}"#, "distance"),
                ("/api/peers/11", #"{"role":"finish","distance":1e9}"#, "distance"),
            ]
            for (uri, b, field) in cases {
                try await client.execute(uri: uri, method: .put, headers: pinHeader, body: body(b)) { r in
                    #expect(r.status == .badRequest, "\(uri) \(b)")
                    #expect(r.errorField == field, "\(uri) \(b)")
                }
            }
            try await client.execute(uri: "/api/peers/12", method: .put, headers: pinHeader, body: body(#"{"role":"finish","distance":30}"#)) { r in
                #expect(r.status == .notFound)
                #expect(r.errorField == "gate")
            }
            try await client.execute(uri: "/api/peers/11", method: .put, headers: pinHeader, body: body(#"{"role":"finish","distance":30}"#)) { r in
                #expect(r.status == .accepted)
            }
            // The start line itself, and one metre: numbers, not booleans.
            for d in ["0", "1", "0.0"] {
                try await client.execute(uri: "/api/peers/11", method: .put, headers: pinHeader,
                                         body: body(#"{"role":"start","distance":"# + d + "}")) { r in
                    #expect(r.status == .accepted, "distance \(d)")
                }
            }
            f.bridge.snapshot.update { $0.phase = "running" }
            try await client.execute(uri: "/api/peers/11", method: .put, headers: pinHeader, body: body(#"{"role":"lap","distance":10}"#)) { r in
                #expect(r.status == .conflict)
            }
        }
        #expect(f.bridge.commands.pop() == .assignPeer(gate: 11, role: "finish", distanceMetres: 30))
        for d in [0.0, 1, 0] { #expect(f.bridge.commands.pop() == .assignPeer(gate: 11, role: "start", distanceMetres: d)) }
        #expect(f.bridge.commands.pop() == nil)
    }

    /// Every route that changes something, as the router lists them (the areas' too), is
    /// refused without the PIN by the one check in front of them all: no route can forget it.
    @Test func everyRouteThatChangesSomethingNeedsThePIN() async throws {
        let f = Fixture()
        let changing = f.server.router().routes.filter { $0.method != .get && $0.method != .head }
            .map { (path: $0.path.description, method: $0.method) }
        // The gate's, the delay video's and archery's, run videos', GPS's, ski's and rowing's.
        #expect(changing.count >= 40, "\(changing.count) routes")
        try await f.test { client in
            for route in changing {
                let path = route.path.split(separator: "/", omittingEmptySubsequences: false)
                    .map { $0.hasPrefix(":") ? "1" : $0.hasPrefix("*") ? "x" : String($0) }.joined(separator: "/")
                try await client.execute(uri: path, method: route.method, body: ByteBuffer(string: "{}")) { r in
                    if path == "/api/pin" {
                        #expect(r.status == .badRequest || r.status == .unauthorized, "\(route)")
                    } else {
                        #expect(r.status == .unauthorized, "\(route) answered \(r.status) without the PIN")
                        #expect(r.text.contains("X-Gate-PIN"), "\(route): \(r.text)")
                    }
                }
            }
        }
        #expect(f.bridge.commands.count == 0)
    }

    @Test func readingNeedsNoPIN() async throws {
        try await Fixture().test { client in
            for path in ["/api/live", "/api/settings", "/api/athletes", "/api/results", "/api/bests", "/api/export.csv", "/api/export.json"] {
                try await client.execute(uri: path, method: .get) { r in #expect(r.status == .ok, "\(path): \(r.text)") }
            }
        }
    }

    @Test func wrongPINsAreRateLimitedPerClientWithBackOff() async throws {
        let f = Fixture()
        try await f.test { client in
            for _ in 0..<f.server.attempts.freeFailures {
                try await client.execute(uri: "/api/arm", method: .post, headers: wrongPIN()) { r in
                    #expect(r.status == .unauthorized)
                    #expect(r.errorField == "pin")
                }
            }
            try await client.execute(uri: "/api/arm", method: .post, headers: wrongPIN()) { r in
                #expect(r.status == .tooManyRequests)
                #expect(r.headers[.retryAfter] == "2")
            }
            // Blocked: even the right PIN waits.
            try await client.execute(uri: "/api/arm", method: .post, headers: pinHeader) { r in
                #expect(r.status == .tooManyRequests)
            }
            f.clock.advance(2.5)
            try await client.execute(uri: "/api/arm", method: .post, headers: wrongPIN()) { r in
                #expect(r.status == .tooManyRequests)
                #expect(r.headers[.retryAfter] == "4", "the wait doubles")
            }
            f.clock.advance(4.5)
            try await client.execute(uri: "/api/pin", method: .post, headers: jsonHeader, body: body(#"{"pin":"\#(Fixture.pin)"}"#)) { r in
                #expect(r.status == .noContent)
            }
            // A correct PIN clears the record: three free tries again.
            try await client.execute(uri: "/api/arm", method: .post, headers: wrongPIN()) { r in #expect(r.status == .unauthorized) }
        }
        #expect(f.bridge.commands.count == 0)
    }

    @Test func limiterCapsTheWait() {
        let a = PINAttempts(freeFailures: 0, baseDelay: 2, maxDelay: 300)
        var last = 0.0
        for _ in 0..<40 { last = a.failed(client: "x", now: 0) ?? 0 }
        #expect(last == 300)
        #expect(a.retryAfter(client: "y", now: 0) == nil, "other clients are not affected")
    }

    @Test func pinRouteValidates() async throws {
        try await Fixture().test { client in
            try await client.execute(uri: "/api/pin", method: .post, headers: jsonHeader, body: body(#"{"pin":123456}"#)) { r in
                #expect(r.status == .badRequest)
                #expect(r.errorField == "pin")
            }
            try await client.execute(uri: "/api/pin", method: .post, headers: jsonHeader, body: body("not json")) { r in
                #expect(r.status == .badRequest)
                #expect(r.errorField == "body")
            }
        }
    }

    @Test func configValidatesAndQueues() async throws {
        let f = Fixture()
        try await f.test { client in
            let cases: [(String, String)] = [
                (#"{}"#, "startType"),
                (#"{"startType":"rocket"}"#, "startType"),
                (#"{"startType":7}"#, "startType"),
                (#"{"preset":"marathon"}"#, "preset"),
                (#"[1,2]"#, "body"),
                ("", "body"),
            ]
            for (b, field) in cases {
                try await client.execute(uri: "/api/config", method: .put, headers: pinHeader, body: body(b)) { r in
                    #expect(r.status == .badRequest, "\(b)")
                    #expect(r.errorField == field, "\(b)")
                }
            }
            try await client.execute(uri: "/api/config", method: .put, headers: pinHeader, body: body(#"{"preset":"60m","startType":"countdown"}"#)) { r in
                #expect(r.status == .accepted)
            }
            f.bridge.snapshot.update { $0.phase = "running" }
            try await client.execute(uri: "/api/config", method: .put, headers: pinHeader, body: body(#"{"startType":"flying"}"#)) { r in
                #expect(r.status == .conflict)
                #expect(r.errorField == "phase")
            }
        }
        #expect(f.bridge.commands.pop() == .setPreset("60m"))
        #expect(f.bridge.commands.pop() == .setStartType("countdown"))
        #expect(f.bridge.commands.pop() == nil)
    }

    @Test func settingsAreCheckedQueuedAndReadBack() async throws {
        let f = Fixture()
        f.bridge.settings.publish(EditableSettings(startType: "flying", speedUnit: "m/s", fps: 120, minHeight: 0.33), runningFPS: 120)
        try await f.test { client in
            try await client.execute(uri: "/api/settings", method: .get) { r in
                #expect((r.json["editable"] as? [String: Any])?["fps"] as? Int == 120)
                #expect(r.json["runningFPS"] as? Int == 120)
            }
            try await client.execute(uri: "/api/settings", method: .put, headers: jsonHeader, body: body(#"{"buzzer":false}"#)) { r in
                #expect(r.status == .unauthorized)
            }
            let bad: [(String, String)] = [
                (#"{}"#, "body"), (#"{"colour":"red"}"#, "colour"), (#"{"preset":"marathon"}"#, "preset"),
                (#"{"startType":"rocket"}"#, "startType"), (#"{"marksPause":{"min":2,"max":5}}"#, "marksPause"),
                (#"{"marksPause":{"min":9,"max":5}}"#, "marksPause"), (#"{"marksPause":7}"#, "marksPause"),
                (#"{"setPause":{"min":1,"max":6}}"#, "setPause"), (#"{"startSound":"bell"}"#, "startSound"),
                (#"{"buzzer":1}"#, "buzzer"), (#"{"spokenTime":"yes"}"#, "spokenTime"), (#"{"speedUnit":"knots"}"#, "speedUnit"),
                (#"{"fps":45}"#, "fps"), (#"{"fps":60.5}"#, "fps"), (#"{"minHeight":0.05}"#, "minHeight"), (#"{"minHeight":true}"#, "minHeight"),
                (#"{"delayedVideo":"on"}"#, "delayedVideo"), (#"{"delayedVideo":1}"#, "delayedVideo"),
                // A distance only for a preset that offers it, and only one it offers.
                (#"{"distance":20}"#, "distance"), (#"{"preset":"60m","distance":60}"#, "distance"),
                (#"{"preset":"flying","distance":25}"#, "distance"), (#"{"preset":"flying","distance":"20"}"#, "distance"),
            ]
            for (b, field) in bad {
                try await client.execute(uri: "/api/settings", method: .put, headers: pinHeader, body: body(b)) { r in
                    #expect(r.status == .badRequest, "\(b)")
                    #expect(r.errorField == field, "\(b): \(r.text)")
                }
            }
            #expect(f.bridge.commands.pop() == nil, "nothing refused reached the loop")
            f.bridge.snapshot.update { $0.phase = "running" }
            try await client.execute(uri: "/api/settings", method: .put, headers: pinHeader, body: body(#"{"buzzer":false}"#)) { r in
                #expect(r.status == .conflict)
            }
            f.bridge.snapshot.update { $0.phase = "armed" }
            try await client.execute(uri: "/api/settings", method: .put, headers: pinHeader,
                                     body: body(#"{"startType":"countdown","marksPause":{"min":4,"max":6},"buzzer":false,"speedUnit":"km/h","fps":60}"#)) { r in
                #expect(r.status == .accepted)
                #expect(r.json["queued"] as? Bool == true)
            }
            let queued = f.bridge.commands.pop()
            #expect(queued == .applySettings(EditableSettings(startType: "countdown", marksPause: .init(min: 4, max: 6), buzzer: false,
                                                              speedUnit: "km/h", fps: 60)))
            try await client.execute(uri: "/api/settings", method: .put, headers: pinHeader, body: body(#"{"preset":"flying","distance":20}"#)) { r in
                #expect(r.status == .accepted, "\(r.text)")
            }
            #expect(f.bridge.commands.pop() == .applySettings(EditableSettings(preset: "flying", distance: 20)))
            // A distance alone is for the preset the gate runs.
            f.bridge.settings.publish(EditableSettings(preset: "flying", distance: 20, startType: "flying"))
            try await client.execute(uri: "/api/settings", method: .put, headers: pinHeader, body: body(#"{"distance":30}"#)) { r in
                #expect(r.status == .accepted, "\(r.text)")
            }
            #expect(f.bridge.commands.pop() == .applySettings(EditableSettings(distance: 30)))
            // Until the camera says, the menu offers 30, 60, 90 and 120; then its own rates.
            try await client.execute(uri: "/api/settings", method: .get) { r in
                #expect(r.json["frameRates"] as? [Int] == [30, 60, 90, 120])
            }
            f.bridge.settings.publish(f.bridge.settings.current, runningFPS: 30, cameraRates: [15, 25, 30])
            try await client.execute(uri: "/api/settings", method: .get) { r in
                #expect(r.json["frameRates"] as? [Int] == [15, 25, 30])
            }
            try await client.execute(uri: "/api/settings", method: .put, headers: pinHeader, body: body(#"{"fps":25}"#)) { r in
                #expect(r.status == .accepted, "\(r.text)")
            }
            #expect(f.bridge.commands.pop() == .applySettings(EditableSettings(fps: 25)))
            try await client.execute(uri: "/api/settings", method: .put, headers: pinHeader, body: body(#"{"fps":45}"#)) { r in
                #expect(r.status == .badRequest && r.errorField == "fps" && r.text.contains("15, 25, 30, 60, 90, 120"), "\(r.text)")
            }
        }
    }

    @Test func fullCommandQueueAnswers503() async throws {
        let f = Fixture()
        for _ in 0..<GateBridge.commandCapacity { _ = f.bridge.send(.arm) }
        try await f.test { client in
            try await client.execute(uri: "/api/reset", method: .post, headers: pinHeader) { r in
                #expect(r.status == .serviceUnavailable)
                #expect(r.errorField == "command")
            }
        }
    }
}

@Suite struct HistoryTests {
    @Test func athletesAssignmentAndPersonalBests() async throws {
        let f = Fixture()
        try await f.test { client in
            for (b, field) in [(#"{}"#, "name"), (#"{"name":"   "}"#, "name"), (#"{"name":"a\u0007b"}"#, "name"),
                               (#"{"name":"\#(String(repeating: "x", count: 61))"}"#, "name")] {
                try await client.execute(uri: "/api/athletes", method: .post, headers: pinHeader, body: body(b)) { r in
                    #expect(r.status == .badRequest, "\(b)")
                    #expect(r.errorField == field)
                }
            }
            try await client.execute(uri: "/api/athletes", method: .post, headers: jsonHeader, body: body(#"{"name":"Ada"}"#)) { r in
                #expect(r.status == .unauthorized)
            }
            let ada = try await client.execute(uri: "/api/athletes", method: .post, headers: pinHeader, body: body(#"{"name":"Ada"}"#)) { r in
                #expect(r.status == .created)
                return try #require(r.json["id"] as? Int)
            }
            try await client.execute(uri: "/api/athletes", method: .post, headers: pinHeader, body: body(#"{"name":"ada"}"#)) { r in
                #expect(r.status == .conflict)
            }
            for (b, status) in [(#"{}"#, HTTPResponse.Status.badRequest), (#"{"athleteId":"1"}"#, .badRequest), (#"{"athleteId":1.5}"#, .badRequest),
                                (#"{"athleteId":true}"#, .badRequest), (#"{"athleteId":0}"#, .badRequest), (#"{"athleteId":999}"#, .notFound)] {
                try await client.execute(uri: "/api/next-athlete", method: .put, headers: pinHeader, body: body(b)) { r in
                    #expect(r.status == status, "\(b)")
                    #expect(r.errorField == "athleteId", "\(b)")
                }
            }
            try await client.execute(uri: "/api/next-athlete", method: .put, headers: pinHeader, body: body(#"{"athleteId":\#(ada)}"#)) { r in
                #expect(r.status == .ok)
                #expect((r.json["nextAthlete"] as? [String: Any])?["name"] as? String == "Ada")
            }
            // The next finished run is Ada's and a PR; the assignment is used up.
            _ = try f.book.record(f.run(3.20))
            try await client.execute(uri: "/api/results", method: .get) { r in
                let row = try #require(r.jsonArray.first)
                let run = try #require(row["run"] as? [String: Any])
                #expect(run["athleteName"] as? String == "Ada")
                #expect(run["personalBest"] as? Bool == true)
            }
            #expect(f.book.nextRunAthlete() == nil)
            try await client.execute(uri: "/api/next-athlete", method: .put, headers: pinHeader, body: body(#"{"athleteId":\#(ada)}"#)) { _ in }
            _ = try f.book.record(f.run(3.40))
            try await client.execute(uri: "/api/next-athlete", method: .put, headers: pinHeader, body: body(#"{"athleteId":\#(ada)}"#)) { _ in }
            _ = try f.book.record(f.run(3.10))
            try await client.execute(uri: "/api/results?sort=date&order=asc", method: .get) { r in
                let pbs = r.jsonArray.compactMap { ($0["run"] as? [String: Any])?["personalBest"] as? Bool }
                // The badge marks the current personal best: 3.10 s took it from 3.20 s.
                #expect(pbs == [false, false, true])
            }
            try await client.execute(uri: "/api/bests", method: .get) { r in
                #expect(r.jsonArray.count == 1)
                #expect((r.jsonArray.first?["personalBest"] as? [String: Any])?["seconds"] as? Double == 3.10)
                #expect(r.jsonArray.first?["previousBestSeconds"] as? Double == 3.20)
            }
            try await client.execute(uri: "/api/athletes", method: .get) { r in
                #expect(r.jsonArray.map { $0["name"] as? String } == ["Ada"])
            }
        }
    }

    @Test func historyFiltersSortsSearchesAndValidates() async throws {
        let f = Fixture()
        let bo = try f.book.addAthlete(Athlete(id: 0, name: "Bo"))
        for (i, t) in [3.5, 3.1, 3.3].enumerated() {
            if i == 1 { try f.book.assignNextRun(athleteID: bo.id) }
            _ = try f.book.record(f.run(t, at: 1_700_000_000 + Double(i) * 86_400))
        }
        _ = try f.book.record(f.run(7.4, preset: "60m", at: 1_700_000_000 + 3 * 86_400))
        try await f.test { client in
            func seconds(_ uri: String) async throws -> [Double] {
                try await client.execute(uri: uri, method: .get) { r in
                    #expect(r.status == .ok, "\(uri)")
                    return r.jsonArray.compactMap { ($0["run"] as? [String: Any])?["seconds"] as? Double }
                }
            }
            #expect(try await seconds("/api/results") == [7.4, 3.3, 3.1, 3.5])
            #expect(try await seconds("/api/results?sort=time") == [3.1, 3.3, 3.5, 7.4])
            #expect(try await seconds("/api/results?sort=time&order=desc&limit=2") == [7.4, 3.5])
            #expect(try await seconds("/api/results?sort=time&offset=3") == [7.4])
            #expect(try await seconds("/api/results?preset=60m") == [7.4])
            #expect(try await seconds("/api/results?athlete=\(bo.id)") == [3.1])
            #expect(try await seconds("/api/results?q=BO") == [3.1])
            #expect(try await seconds("/api/results?from=2023-11-15&to=2023-11-16") == [3.3, 3.1])
            // `from` and `to` are matched against the run's start.
            #expect(try await seconds("/api/results?from=1700086000") == [7.4, 3.3, 3.1])
            #expect(try await seconds("/api/results?distance=60") == [7.4])
            #expect(try await seconds("/api/results?gates=1") == [7.4, 3.3, 3.1, 3.5])
            #expect(try await seconds("/api/results?gates=2") == [])
            // Most runs first: the three runs without an athlete, then Bo's one; newest first in each.
            #expect(try await seconds("/api/results?sort=runs") == [7.4, 3.3, 3.5, 3.1])
            // The search box takes a distance or a day (the gate's time zone) as well as names.
            #expect(try await seconds("/api/results?q=60%20m") == [7.4])
            var cal = Calendar(identifier: .gregorian)
            cal.timeZone = TimeZone.current
            let day = cal.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: 1_700_086_400 - 3.1))
            let dayText = String(format: "%04d-%02d-%02d", day.year ?? 0, day.month ?? 0, day.day ?? 0)
            #expect(try await seconds("/api/results?q=\(dayText)") == [3.1])
            // Runs a day apart are four sessions; each lists its own runs.
            let sessions = try await client.execute(uri: "/api/sessions", method: .get) { r in r.jsonArray }
            #expect(sessions.map { $0["runCount"] as? Int } == [1, 1, 1, 1])
            let newest = try #require(sessions.first?["id"] as? Int)
            #expect(try await seconds("/api/results?session=\(newest)") == [7.4])
            let bad: [(String, String)] = [
                ("distance=-1", "distance"), ("distance=x", "distance"), ("gates=0", "gates"), ("session=x", "session"),
                ("sort=fastest", "sort"), ("order=up", "order"), ("limit=0", "limit"), ("limit=5000", "limit"),
                ("offset=-1", "offset"), ("athlete=x", "athlete"), ("preset=marathon", "preset"), ("startType=rocket", "startType"),
                ("from=yesterday", "from"), ("from=2024-01-02&to=2024-01-01", "from"), ("colour=red", "colour"),
                ("q=\(String(repeating: "z", count: 65))", "q"),
            ]
            for (query, field) in bad {
                try await client.execute(uri: "/api/results?\(query)", method: .get) { r in
                    #expect(r.status == .badRequest, "\(query)")
                    #expect(r.errorField == field, "\(query)")
                }
            }
        }
    }

    @Test func sessionsDeleteAndClearAllNeedThePIN() async throws {
        let f = Fixture()
        let ana = try f.book.addAthlete(Athlete(id: 0, name: "Ana"))
        try f.book.assignNextRun(athleteID: ana.id)
        _ = try f.book.record(f.run(3.2, at: 1_700_000_000))
        _ = try f.book.record(f.run(3.4, at: 1_700_000_060))
        _ = try f.book.record(f.run(3.3, at: 1_700_100_000))
        try f.book.storePhoto(id: 3, jpeg: [0xFF, 0xD8, 0xFF, 0xD9])
        try await f.test { client in
            let sessions = try await client.execute(uri: "/api/sessions", method: .get) { r in r.jsonArray }
            #expect(sessions.map { $0["runCount"] as? Int } == [1, 2])
            let first = try #require(sessions.last?["id"] as? Int)
            try await client.execute(uri: "/api/sessions/\(first)", method: .delete) { r in #expect(r.status == .unauthorized) }
            try await client.execute(uri: "/api/sessions/999", method: .delete, headers: pinHeader) { r in #expect(r.status == .notFound) }
            try await client.execute(uri: "/api/sessions/\(first)", method: .delete, headers: pinHeader) { r in
                #expect(r.status == .ok)
                #expect(r.json["deletedRuns"] as? Int == 2)
            }
            // Ana's best went with the session.
            try await client.execute(uri: "/api/bests", method: .get) { r in #expect(r.jsonArray.isEmpty) }
            let before = try await client.execute(uri: "/api/storage", method: .get) { r in r.json }
            #expect(before["runs"] as? Int == 1)
            #expect(before["sessions"] as? Int == 1)
            #expect(before["athletes"] as? Int == 1)
            #expect(before["images"] as? Int == 1)
            #expect((before["bytes"] as? Int ?? 0) > 0)
            try await client.execute(uri: "/api/clear-all", method: .post, headers: jsonHeader, body: body(#"{"confirm":"clear all"}"#)) { r in
                #expect(r.status == .unauthorized)
            }
            try await client.execute(uri: "/api/clear-all", method: .post, headers: pinHeader, body: body(#"{"confirm":true}"#)) { r in
                #expect(r.status == .badRequest)
                #expect(r.errorField == "confirm")
            }
            f.bridge.snapshot.update { $0.phase = "running" }
            try await client.execute(uri: "/api/clear-all", method: .post, headers: pinHeader, body: body(#"{"confirm":"clear all"}"#)) { r in
                #expect(r.status == .conflict)
            }
            f.bridge.snapshot.update { $0.phase = "armed" }
            // The delay mode is off: the video sessions kept on the card go too.
            let videoClears = Mutex(0)
            f.bridge.video.whenOff { videoClears.withLock { $0 += 1 }; return 3 }
            try await client.execute(uri: "/api/clear-all", method: .post, headers: pinHeader, body: body(#"{"confirm":"clear all"}"#)) { r in
                #expect(r.status == .ok)
                #expect(r.json["deletedRuns"] as? Int == 1)
                #expect(r.json["deletedVideoSessions"] as? Int == 3)
            }
            #expect(videoClears.withLock { $0 } == 1)
            let after = try await client.execute(uri: "/api/storage", method: .get) { r in r.json }
            #expect([after["runs"], after["sessions"], after["athletes"], after["images"]].map { $0 as? Int } == [0, 0, 0, 0])
            try await client.execute(uri: "/api/results", method: .get) { r in #expect(r.jsonArray.isEmpty) }
        }
    }

    @Test func aFinishPlacedByHandOnThePhotoRetimesTheRun() async throws {
        let f = Fixture()
        let ana = try f.book.addAthlete(Athlete(id: 0, name: "Ana"))
        try f.book.assignNextRun(athleteID: ana.id)
        let run = try f.book.record(f.run(3.0))
        // 0.5 ms per column, the crossing at column 120.5 of a composite from 6, 400 wide.
        try f.book.store.savePhoto(runID: run.id, jpeg: [0xFF, 0xD8, 0xFF, 0xD9], thumbnails: [],
                                   scale: PhotoScale(crossingX: 120.5, nanosecondsPerColumn: 500_000, compositeX: 6, compositeWidth: 400))
        try await f.test { client in
            try await client.execute(uri: "/api/results/\(run.id)", method: .get) { r in
                let scale = try #require((r.json["run"] as? [String: Any])?["photoScale"] as? [String: Any])
                #expect(scale["crossingX"] as? Double == 120.5)
                #expect(scale["millisecondsPerColumn"] as? Double == 0.5)
            }
            let path = "/api/results/\(run.id)/correction"
            try await client.execute(uri: path, method: .put, headers: jsonHeader, body: body(#"{"offsetMs":-20}"#)) { r in
                #expect(r.status == .unauthorized)
            }
            for (b, field) in [(#"{}"#, "offsetMs"), (#"{"offsetMs":"x"}"#, "offsetMs"), (#"{"offsetMs":true}"#, "offsetMs"),
                               (#"{"offsetMs":-60}"#, "offsetMs"), (#"{"offsetMs":200}"#, "offsetMs")] {
                try await client.execute(uri: path, method: .put, headers: pinHeader, body: body(b)) { r in
                    #expect(r.status == .badRequest, "\(b)")
                    #expect(r.errorField == field, "\(b): \(r.text)")
                }
            }
            try await client.execute(uri: path, method: .put, headers: pinHeader, body: body(#"{"offsetMs":-20}"#)) { r in
                #expect(r.status == .ok, "\(r.text)")
                let v = try #require(r.json["run"] as? [String: Any])
                #expect(v["seconds"] as? Double == 2.98)
                #expect(v["measuredSeconds"] as? Double == 3.0)
                #expect(v["personalBest"] as? Bool == true)
            }
            // Bests and exports follow the corrected time.
            try await client.execute(uri: "/api/bests", method: .get) { r in
                #expect((r.jsonArray.first?["personalBest"] as? [String: Any])?["seconds"] as? Double == 2.98)
            }
            try await client.execute(uri: "/api/export.csv", method: .get) { r in
                let lines = r.text.components(separatedBy: "\r\n")
                let header = lines[0].components(separatedBy: ",")
                let row = lines[1].components(separatedBy: ",")
                #expect(row[header.firstIndex(of: "time_s") ?? 0] == "2.980")
                #expect(row[header.firstIndex(of: "measured_time_s") ?? 0] == "3.000")
            }
            try await client.execute(uri: "/api/export.json", method: .get) { r in
                #expect((r.jsonArray.first?["run"] as? [String: Any])?["measuredSeconds"] as? Double == 3.0)
            }
            try await client.execute(uri: path, method: .delete, headers: pinHeader) { r in
                #expect(r.status == .ok)
                let v = try #require(r.json["run"] as? [String: Any])
                #expect(v["seconds"] as? Double == 3.0)
                #expect(v["measuredSeconds"] == nil)
            }
            try await client.execute(uri: "/api/results/999/correction", method: .put, headers: pinHeader, body: body(#"{"offsetMs":1}"#)) { r in
                #expect(r.status == .notFound)
            }
        }
    }

    @Test func aRosterRotatesTheNextRunThroughItsAthletes() async throws {
        let f = Fixture()
        let ids = try ["Ann", "Bob"].map { try f.book.addAthlete(Athlete(id: 0, name: $0)).id }
        try await f.test { client in
            try await client.execute(uri: "/api/roster", method: .put, headers: jsonHeader, body: body(#"{"athleteIds":[1]}"#)) { r in
                #expect(r.status == .unauthorized)
            }
            for (b, status) in [(#"{}"#, HTTPResponse.Status.badRequest), (#"{"athleteIds":[0]}"#, .badRequest),
                                (#"{"athleteIds":["1"]}"#, .badRequest), (#"{"athleteIds":[1,1]}"#, .badRequest),
                                (#"{"athleteIds":[99]}"#, .notFound)] {
                try await client.execute(uri: "/api/roster", method: .put, headers: pinHeader, body: body(b)) { r in
                    #expect(r.status == status, "\(b)")
                    #expect(r.errorField == "athleteIds", "\(b): \(r.text)")
                }
            }
            try await client.execute(uri: "/api/roster", method: .put, headers: pinHeader, body: body(#"{"athleteIds":[\#(ids[1]),\#(ids[0])]}"#)) { r in
                #expect(r.status == .ok)
                #expect((r.json["athletes"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Bob", "Ann"])
            }
            var names: [String?] = []
            for i in 0..<3 { names.append(try f.book.record(f.run(3 + Double(i) / 10, at: 1_700_000_000 + Double(i) * 60)).athleteName) }
            #expect(names == ["Bob", "Ann", "Bob"])
            // Every phone's board shows the roster and who runs next.
            f.server.hub.refresh()
            let board = try #require(try JSONSerialization.jsonObject(with: Data(f.server.hub.message().json.utf8)) as? [String: Any])
            #expect((board["roster"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Bob", "Ann"])
            #expect((board["nextAthlete"] as? [String: Any])?["name"] as? String == "Ann")
            try await client.execute(uri: "/api/roster", method: .get) { r in
                #expect((r.json["sessionAthletes"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Bob", "Ann"])
            }
            try await client.execute(uri: "/api/roster", method: .put, headers: pinHeader, body: body(#"{"athleteIds":[]}"#)) { r in
                #expect((r.json["athletes"] as? [[String: Any]])?.isEmpty == true)
            }
        }
    }

    @Test func deleteNeedsPINAndValidID() async throws {
        let f = Fixture()
        let r1 = try f.book.record(f.run(3.0))
        try await f.test { client in
            try await client.execute(uri: "/api/results/\(r1.id)", method: .delete) { r in #expect(r.status == .unauthorized) }
            try await client.execute(uri: "/api/results/abc", method: .delete, headers: pinHeader) { r in
                #expect(r.status == .badRequest)
                #expect(r.errorField == "id")
            }
            try await client.execute(uri: "/api/results/99", method: .delete, headers: pinHeader) { r in #expect(r.status == .notFound) }
            try await client.execute(uri: "/api/results/\(r1.id)", method: .get) { r in #expect(r.status == .ok) }
            try await client.execute(uri: "/api/results/\(r1.id)", method: .delete, headers: pinHeader) { r in #expect(r.status == .noContent) }
            try await client.execute(uri: "/api/results/\(r1.id)", method: .get) { r in #expect(r.status == .notFound) }
        }
    }

    @Test func exportsAndPhoto() async throws {
        let f = Fixture()
        let ada = try f.book.addAthlete(Athlete(id: 0, name: "=Ada, \"the\" fast"))
        try f.book.assignNextRun(athleteID: ada.id)
        let r1 = try f.book.record(f.run(3.0))
        _ = try f.book.record(f.run(7.5, preset: "60m"))
        try await f.test { client in
            try await client.execute(uri: "/api/export.csv?preset=flying-30m", method: .get) { r in
                #expect(r.status == .ok)
                #expect(r.headers[.contentDisposition]?.contains("sprintgate-results.csv") == true)
                let lines = r.text.split(separator: "\r\n")
                #expect(lines.count == 2)
                #expect(lines[0] == Substring(ResultsExport.header))
                #expect(lines[1].contains(#""'=Ada, ""the"" fast""#), "quoted and defused: \(lines[1])")
                #expect(lines[1].contains(",3.000,"))
                #expect(lines[1].contains(",10.00,m/s,yes"))
            }
            try await client.execute(uri: "/api/export.json", method: .get) { r in
                #expect(r.status == .ok)
                #expect(r.jsonArray.count == 2)
            }
            try await client.execute(uri: "/api/export.csv?sort=bogus", method: .get) { r in #expect(r.status == .badRequest) }
            try await client.execute(uri: "/api/results/\(r1.id)/photo.jpg", method: .get) { r in
                #expect(r.status == .notFound)
                #expect(r.errorField == "id")
            }
            try f.book.storePhoto(id: r1.id, jpeg: [0xFF, 0xD8, 0xFF, 0xD9])
            try await client.execute(uri: "/api/results/\(r1.id)/photo.jpg", method: .get) { r in
                #expect(r.status == .ok)
                #expect(r.headers[.contentType] == "image/jpeg")
                #expect(Array(r.body.readableBytesView) == [0xFF, 0xD8, 0xFF, 0xD9])
            }
        }
    }
}

@Suite struct PINFileTests {
    @Test func createdOnceThenReadBack() throws {
        let dir = NSTemporaryDirectory() + "sg-pin-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(try GatePIN.load(directory: dir) == nil)
        let a = try GatePIN.loadOrCreate(directory: dir)
        #expect(GatePIN.isWellFormed(a.value))
        #expect(try GatePIN.loadOrCreate(directory: dir) == a)
        let mode = try FileManager.default.attributesOfItem(atPath: dir + "/web.pin")[.posixPermissions] as? Int
        #expect(mode == 0o600)
        try "12ab\n".write(toFile: dir + "/web.pin", atomically: true, encoding: .utf8)
        #expect(throws: PINFileError.self) { try GatePIN.load(directory: dir) }
    }

    @Test func matchingIsExact() {
        let p = GatePIN(value: "123456")
        #expect(p.matches("123456"))
        #expect(!p.matches("123457"))
        #expect(!p.matches("12345"))
        #expect(!p.matches("1234567"))
    }
}
