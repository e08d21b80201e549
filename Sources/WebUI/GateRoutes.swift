// SPDX-License-Identifier: Apache-2.0
// The sprint gate's own routes: the live board, the settings, the camera view, and the
// controls (PIN, arm, reset, start, the gate line, the course, a race's gates).

import Foundation
import GateCore
import HTTPTypes
import Hummingbird

extension WebServer {
    /// The gate: reading needs no PIN; control does (`PINRequired`).
    func addGateRoutes(to router: Router<WebContext>) {
        let s = self
        // Reading: no PIN.
        router.get("/api/live") { _, _ in
            s.hub.refresh()
            return s.json(raw: s.hub.framed(now: monotonicNowNs()).text)
        }
        router.get("/api/settings") { _, _ in
            var v = s.settings
            v.editable = s.bridge.settings.current
            v.runningFPS = s.bridge.settings.runningFPS
            v.frameRates = s.bridge.settings.frameRates
            return try s.json(v)
        }
        // The camera view: each request keeps pictures coming for two seconds; the page
        // polls a few times a second while it shows the view.
        router.get("/api/camera.jpg") { _, _ in
            let feed = try s.watchedCamera()
            // Why 3 s: an older picture is a stalled camera, not a view to aim by.
            guard let p = feed.picture, monotonicNowNs() - p.time.nanoseconds < 3_000_000_000 else {
                throw APIError(.serviceUnavailable, field: "camera",
                               reason: "no picture from the camera yet; it comes within a second of asking while frames arrive")
            }
            // The overlay travels with its picture: `left,top,right,bottom,kind;…` in camera pixels.
            let bodies = p.bodies.map { "\($0.left),\($0.top),\($0.right),\($0.bottom),\($0.kind)" }.joined(separator: ";")
            return Response(status: .ok, headers: [.contentType: "image/jpeg", .cacheControl: "no-store",
                                                   HTTPField.Name("X-Frame-Sequence")!: String(p.sequence),
                                                   HTTPField.Name("X-Bodies")!: bodies],
                            body: .init(byteBuffer: ByteBuffer(bytes: p.jpeg)))
        }
        router.get("/api/camera") { _, _ in
            let feed = try s.watchedCamera()
            guard let p = feed.picture else {
                throw APIError(.serviceUnavailable, field: "camera", reason: "no picture from the camera yet")
            }
            return try s.json(CameraInfo(width: p.width, height: p.height, frameWidth: p.frameWidth, frameHeight: p.frameHeight,
                                         gateX: p.gateX, sequence: p.sequence))
        }

        // Control: PIN.
        router.post("/api/pin") { request, context in
            let body = try await s.body(request, context)
            guard let candidate = body["pin"] as? String else { throw APIError.invalid("pin", "a string of \(GatePIN.digits) digits is required") }
            try s.checkPIN(candidate, context)
            return Response(status: .noContent)
        }
        for (path, command) in [("/api/arm", GateCommand.arm), ("/api/reset", .reset),
                                ("/api/pause", .pauseDetection), ("/api/resume", .resumeDetection)] {
            router.post(RouterPath(path)) { request, context in
                return try s.enqueue(command)
            }
        }
        // Start begins a countdown or a voice start; other start types start themselves
        // (the athlete, the button), so it is refused rather than accepted and ignored.
        router.post("/api/start") { request, context in
            let type = s.bridge.snapshot.read().snapshot.startType
            guard WebSettings.startedFromThePage.contains(type) else {
                throw APIError(.conflict, field: "startType",
                               reason: "Start begins a countdown or voice start; this gate is set to \(type): arm it and the athlete starts the clock, or choose countdown or voice")
            }
            return try s.enqueue(.start)
        }
        // The gate line, dragged on the camera view: camera pixels, within the frame.
        router.put("/api/gate-line") { request, context in
            let body = try await s.body(request, context)
            guard let x = body["x"] as? Double, x.isFinite else { throw APIError.invalid("x", "the gate line's column in camera pixels is required") }
            guard let picture = s.bridge.camera.picture else {
                throw APIError(.serviceUnavailable, field: "camera", reason: "the camera view has no picture yet: open it, then move the line")
            }
            guard x >= 0, x < Double(picture.frameWidth) else {
                throw APIError.invalid("x", "must be within the frame, 0 to \(picture.frameWidth - 1) camera pixels")
            }
            try s.requireBetweenRuns("move the line between runs")
            return try s.enqueue(.setGateLine(x))
        }
        // The settings form: any of the editable settings, checked here, applied by the
        // loop between runs and kept for the next start.
        router.put("/api/settings") { request, context in
            let change = try EditableSettings.decode(try await s.body(request, context))
            if let p = change.problem(startTypes: s.settings.startTypes, presets: s.settings.presets.map(\.id),
                                      distances: Dictionary(uniqueKeysWithValues: s.settings.presets.map { ($0.id, $0.distances) }),
                                      currentPreset: s.bridge.settings.current.preset, frameRates: s.bridge.settings.acceptedRates) {
                throw APIError.invalid(p.field, p.reason)
            }
            try s.requireBetweenRuns("change the settings after it")
            _ = try s.enqueue(.applySettings(change))
            return try s.json(["queued": true], status: .accepted)
        }
        router.put("/api/config") { request, context in
            let body = try await s.body(request, context)
            let startType = try s.optionalString(body, "startType")
            let preset = try s.optionalString(body, "preset")
            guard startType != nil || preset != nil else {
                throw APIError.invalid("startType", "give startType or preset")
            }
            if let t = startType, !s.settings.startTypes.contains(t) {
                throw APIError.invalid("startType", "unknown start type '\(t)'; one of \(s.settings.startTypes.joined(separator: ", "))")
            }
            if let p = preset, !s.settings.presets.contains(where: { $0.id == p }) {
                throw APIError.invalid("preset", "unknown preset '\(p)'")
            }
            try s.requireBetweenRuns("reset first")
            if let p = preset { _ = try s.enqueue(.setPreset(p)) }
            if let t = startType { _ = try s.enqueue(.setStartType(t)) }
            return try s.json(["queued": [preset.map { "preset \($0)" }, startType.map { "start type \($0)" }].compactMap { $0 }],
                              status: .accepted)
        }
        // Race host: change a gate's role and distance (the host assigns them at first in
        // join order). Only gates listed on the live board can be changed.
        router.put("/api/peers/:gate") { request, context in
            guard let text = context.parameters.get("gate"), let gate = UInt32(text), gate != 0 else {
                throw APIError.invalid("gate", "a gate id from the live board's gate list")
            }
            guard s.bridge.snapshot.read().snapshot.peers.contains(where: { $0.gateID == gate }) else {
                throw APIError(.notFound, field: "gate", reason: "gate \(gate) is not in this race (only a race host changes roles)")
            }
            let body = try await s.body(request, context)
            guard let role = body["role"] as? String, peerRoles.contains(role) else {
                throw APIError.invalid("role", "one of \(peerRoles.joined(separator: ", "))")
            }
            guard let distance = Self.number(body["distance"]) else {
                throw APIError.invalid("distance", "metres from the start line, a number")
            }
            guard (0...10_000).contains(distance) else {
                throw APIError.invalid("distance", "metres from the start line, 0...10000")
            }
            try s.requireBetweenRuns("reset first")
            return try s.enqueue(.assignPeer(gate: gate, role: role, distanceMetres: distance))
        }
    }
}
