// SPDX-License-Identifier: Apache-2.0
// The delay mode's routes: the delayed picture, settings, marks, sessions and clips.

import Foundation
import GateCore
import HTTPTypes
import Hummingbird
import NIOCore
import VideoDelay

extension WebServer {
    /// The gate's delay mode; 404 saying how to turn it on when the gate runs without it.
    func videoDesk() throws -> any VideoDesk {
        guard let d = bridge.video.current else {
            throw APIError(.notFound, field: "video",
                           reason: "delayed video is off on this gate: set [video] enabled = true in the settings file and restart it")
        }
        return d
    }

    func addVideoRoutes(to router: Router<WebContext>) {
        let s = self
        router.get("/api/video") { _, _ in
            try s.json(try s.videoDesk().status())
        }
        // The delayed view. `after=T` waits up to a second for a picture captured after T
        // (the `X-Frame-Time-Ns` of the last one shown), so a page that asks again as soon
        // as it has one always gets the newest due picture and never a queue of old ones.
        // Why time, not the frame number: a camera's numbering restarts when it reopens.
        router.get("/api/video/delayed.jpg") { request, _ in
            let desk = try s.videoDesk()
            desk.watch()
            let after = request.uri.queryParameters["after"].flatMap { Int64($0) }
            var picture = desk.latest()
            if let after {
                var waited = 0
                // Why 2 ms: a picture is sent within 2 ms of being ready, far below a frame.
                while (picture?.time.nanoseconds ?? .min) <= after && waited < 500 {
                    try await Task.sleep(for: .milliseconds(2))
                    waited += 1
                    if waited % 100 == 0 { desk.watch() }
                    picture = desk.latest()
                }
            }
            guard let p = picture else {
                throw APIError(.serviceUnavailable, field: "video",
                               reason: "no delayed picture yet: the view starts once the delay has passed since the camera started")
            }
            return Response(status: .ok, headers: [.contentType: "image/jpeg", .cacheControl: "no-store",
                                                   HTTPField.Name("X-Frame-Sequence")!: String(p.sequence),
                                                   HTTPField.Name("X-Frame-Time-Ns")!: String(p.time.nanoseconds)],
                            body: .init(byteBuffer: ByteBuffer(bytes: p.jpeg)))
        }
        router.put("/api/video/settings") { request, context in
            let body = try await s.body(request, context)
            func seconds(_ key: String) throws -> Double? {
                guard let v = body[key], !(v is NSNull) else { return nil }
                guard let n = Self.number(v) else { throw APIError.invalid(key, "must be a number of seconds") }
                return n
            }
            let (delay, pre, post) = (try seconds("delay"), try seconds("preRoll"), try seconds("postRoll"))
            guard delay != nil || pre != nil || post != nil else {
                throw APIError.invalid("body", "give delay, preRoll or postRoll in seconds")
            }
            do { try s.videoDesk().set(delaySeconds: delay, preRollSeconds: pre, postRollSeconds: post) } catch let e as VideoDeskError {
                throw e.api
            }
            return try s.json(try s.videoDesk().status())
        }
        router.post("/api/video/mark") { request, context in
            let t = try s.videoDesk().mark()
            return try s.json(["markNs": t], status: .accepted)
        }
        // `closes`: the answer carries the session the action closes (the page opens its
        // scorer from it), which the video thread may have ended before the status is read.
        let actions: [(path: String, closes: Bool, action: @Sendable (any VideoDesk) -> Void)] = [
            ("/api/video/session/start", false, { $0.startSession() }),
            ("/api/video/session/stop", true, { $0.endSession() }),
            ("/api/video/quick-save", false, { $0.quickSave() }),
        ]
        for (path, closes, action) in actions {
            router.post(RouterPath(path)) { request, context in
                let desk = try s.videoDesk()
                var open = closes ? desk.status().session : nil
                // A mark taken with no session open opens one on the video thread, within
                // a few ms: Stop pressed right after Mark closes that session, and says so.
                var waited = 0
                while closes, open == nil, desk.status().marksPending > 0, waited < 100 {
                    try await Task.sleep(for: .milliseconds(20))
                    waited += 1
                    open = desk.status().session
                }
                action(desk)
                var status = desk.status()
                if status.session == nil { status.session = open }
                return try s.json(status, status: .accepted)
            }
        }
        router.get("/api/video/sessions") { _, _ in
            try s.json(try s.videoDesk().sessions().map(SessionListing.init))
        }
        // A clip: `ID.mp4` (byte ranges for the player's seeking; `?download=1` saves it) or
        // `ID.jpg`, its thumbnail.
        router.get("/api/video/clips/:file") { request, context in
            let desk = try s.videoDesk()
            let file = context.parameters.get("file") ?? ""
            let isVideo = file.hasSuffix(".mp4")
            guard isVideo || file.hasSuffix(".jpg") else { throw APIError.invalid("file", "must be a clip id followed by .mp4 or .jpg") }
            let id = String(file.dropLast(4))
            guard let paths = desk.files(clip: id) else { throw APIError(.notFound, field: "file", reason: "no clip \(id)") }
            return try await s.serveFile(isVideo ? paths.video : paths.thumbnail, type: isVideo ? "video/mp4" : "image/jpeg",
                                         request: request, context: context,
                                         download: request.uri.queryParameters["download"] != nil ? "sprintgate-\(id).\(isVideo ? "mp4" : "jpg")" : nil,
                                         missing: "clip \(id) has no \(isVideo ? "video" : "thumbnail") file")
        }
        // Trim and export: the part of a clip from `from` to `to` seconds saved as a new
        // clip (cut without re-encoding, on a thread of its own), downloaded from its URL.
        router.post("/api/video/clips/:id/trim") { request, context in
            let body = try await s.body(request, context)
            guard let from = WebServer.number(body["from"]), from >= 0 else {
                throw APIError.invalid("from", "where the part starts, in seconds from the clip's start, is required")
            }
            guard let to = WebServer.number(body["to"]), to > from else {
                throw APIError.invalid("to", "where the part ends, in seconds after its start, is required")
            }
            let desk = try s.videoDesk()
            let id = context.parameters.get("id") ?? ""
            let record = try await Self.offload { () throws(APIError) -> ClipRecord in
                do throws(VideoDeskError) { return try desk.trim(clip: id, from: from, to: to) } catch { throw error.api }
            }
            return try s.json(record, status: .created)
        }
        router.delete("/api/video/clips") { request, context in
            let body = try await s.body(request, context)
            guard let ids = body["ids"] as? [String], !ids.isEmpty, ids.count <= 1000 else {
                throw APIError.invalid("ids", "a list of 1 to 1000 clip ids is required")
            }
            let desk = try s.videoDesk()
            return try s.json(["deleted": desk.delete(clips: ids), "storageBytes": desk.status().storageBytes])
        }
    }

    /// Runs blocking work (file copies with FFmpeg) on a thread of its own, so it never holds
    /// an event-loop thread.
    static func offload<T: Sendable>(_ body: @escaping @Sendable () throws(APIError) -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, any Error>) in
            let t = Thread {
                do throws(APIError) { c.resume(returning: try body()) } catch { c.resume(throwing: error) }
            }
            t.name = "sprintgate.web-work"
            t.start()
        }
    }

    /// The one range of a `Range: bytes=a-b` header (`a-`, `-n` too) within a file of
    /// `size` bytes; nil for anything else (the whole file is sent).
    static func byteRange(_ header: String, size: Int) -> ClosedRange<Int>? {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let spec = header.dropFirst(6).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard spec.count == 2 else { return nil }
        let (a, b) = (Int(spec[0]), Int(spec[1]))
        switch (a, b) {
        case let (a?, b?) where a <= b && a < size: return a...min(b, size - 1)
        case let (a?, nil) where spec[1].isEmpty && a < size: return a...(size - 1)
        case let (nil, n?) where spec[0].isEmpty && n > 0: return max(0, size - n)...(size - 1)
        default: return nil
        }
    }
}
