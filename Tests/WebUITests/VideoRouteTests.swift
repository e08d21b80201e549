// SPDX-License-Identifier: Apache-2.0
// The delay mode's routes over a stand-in desk: what needs the PIN, refusals by field, the
// delayed picture's wait for a newer one, clip files with byte ranges, and batch delete.

import Archery
import Foundation
import GateCore
import HTTPTypes
import Hummingbird
import Synchronization
import Testing
import VideoDelay
@testable import WebUI

/// A desk that records what the routes ask and serves files from a directory.
final class StandInVideoDesk: VideoDesk {
    struct State {
        var watched = 0
        var marks = 0
        var picture: DelayedPicture?
        var delay = 5.0, pre = 5.0, post = 2.0
        var calls: [String] = []
        var clips: [ClipRecord] = []
        var card: ScoreCard?
        var sessionDeleted = false
        /// The session open; a stop ends it at once, as the video thread may before the
        /// route reads the status.
        var open: String?
    }
    let state = Mutex(State())
    let directory: String
    init(directory: String) { self.directory = directory }

    func watch() { state.withLock { $0.watched += 1 } }
    func latest() -> DelayedPicture? { state.withLock { $0.picture } }
    func status() -> VideoStatus {
        state.withLock { s in
            VideoStatus(encoder: "libx264", width: 640, height: 480, fps: 60, delaySeconds: s.delay, preRollSeconds: s.pre,
                        postRollSeconds: s.post, framesIn: 10, framesDropped: 0, framesEncoded: 10, bufferSeconds: 1, bufferBytes: 1000,
                        bufferCapacityBytes: 1 << 20, bufferSummary: "about 9 min at these settings", session: s.open, marksPending: s.marks,
                        clipsSaved: s.clips.count, clipsLost: 0, clipSeconds: 0, storageBytes: 1234, problem: nil)
        }
    }
    func set(delaySeconds: Double?, preRollSeconds: Double?, postRollSeconds: Double?) throws(VideoDeskError) {
        if let d = delaySeconds, !(1...60).contains(d) { throw VideoDeskError(field: "delay", reason: "delay \(d) s is outside 1–60 s") }
        state.withLock { s in
            if let d = delaySeconds { s.delay = d }
            if let p = preRollSeconds { s.pre = p }
            if let p = postRollSeconds { s.post = p }
        }
    }
    func mark() -> Int64 { state.withLock { $0.marks += 1; return 42_000_000_000 } }
    func startSession() { state.withLock { $0.calls.append("start"); $0.open = "s1" } }
    func endSession() { state.withLock { $0.calls.append("stop"); $0.open = nil } }
    func quickSave() { state.withLock { $0.calls.append("quick") } }
    func sessions() -> [SessionRecord] {
        state.withLock { s in
            s.sessionDeleted ? [] : [SessionRecord(id: "s1", startedAt: 1, endedAt: nil, delaySeconds: 5, preRollSeconds: 5, postRollSeconds: 2,
                                                   clips: s.clips, archery: s.card?.sheet)]
        }
    }
    func files(clip id: String) -> (video: String, thumbnail: String)? {
        state.withLock { $0.clips.contains { $0.id == id } } ? (directory + "/\(id).mp4", directory + "/\(id).jpg") : nil
    }
    func delete(clips ids: [String]) -> Int {
        state.withLock { s in
            let before = s.clips.count
            s.clips.removeAll { ids.contains($0.id) }
            return before - s.clips.count
        }
    }
    func trim(clip id: String, from: Double, to: Double) throws(VideoDeskError) -> ClipRecord {
        try state.withLock { (s: inout State) throws(VideoDeskError) -> ClipRecord in
            guard let source = s.clips.first(where: { $0.id == id }) else {
                throw VideoDeskError(.notFound, field: "clip", reason: "there is no clip \(id)")
            }
            guard to <= source.seconds else { throw VideoDeskError(field: "from", reason: "there are no pictures there") }
            var c = source
            c.index = s.clips.count + 1
            c.id = "s1-\(c.index)"
            c.kind = "trim"
            c.startNs = source.startNs + Int64(from * 1e9)
            c.endNs = source.startNs + Int64(to * 1e9)
            s.clips.append(c)
            s.calls.append("trim \(id) \(from) \(to)")
            return c
        }
    }
    // The score calls keep one real card for session "s1", as the library does.
    private func session(_ id: String) throws(VideoDeskError) {
        guard id == "s1", !state.withLock({ $0.sessionDeleted }) else {
            throw VideoDeskError(.notFound, field: "session", reason: "there is no session \(id)")
        }
    }
    func delete(session id: String) throws(VideoDeskError) {
        try session(id)
        state.withLock { $0.sessionDeleted = true }
    }
    func deleteEndedSessions() -> Int {
        state.withLock { s in
            guard s.open == nil, !s.sessionDeleted else { return 0 }
            s.sessionDeleted = true
            return 1
        }
    }
    func scoreCard(session id: String) throws(VideoDeskError) -> ScoreCard? {
        try session(id)
        return state.withLock { $0.card }
    }
    func setUpScore(session id: String, face: TargetFace, bow: BowClass, arrowDiameter: Double,
                    arrowsPerEnd: Int) throws(VideoDeskError) -> ScoreCard {
        try session(id)
        do {
            let card = try ScoreCard(face: face, bow: bow, arrowDiameter: arrowDiameter, arrowsPerEnd: arrowsPerEnd)
            state.withLock { $0.card = card }
            return card
        } catch {
            throw VideoDeskError(field: "arrowDiameter", reason: error.description)
        }
    }
    func changeScore(session id: String, _ change: ScoreChange) throws(VideoDeskError) -> ScoreCard {
        try session(id)
        guard var card = state.withLock({ $0.card }) else {
            throw VideoDeskError(.conflict, field: "arrow", reason: "choose the target face first")
        }
        do { try card.apply(change) } catch {
            throw VideoDeskError(change == .undo ? .conflict : .invalid, field: "arrow", reason: error.description)
        }
        state.withLock { [card] in $0.card = card }
        return card
    }
}

@Suite("Video routes")
struct VideoRouteTests {
    @Test("without video every route says how to turn it on; with it, control needs the PIN and bad values are named")
    func controls() async throws {
        let f = Fixture()
        let desk = StandInVideoDesk(directory: f.directory.path)
        try await f.test { client in
            try await client.execute(uri: "/api/video", method: .get) { r in
                #expect(r.status == .notFound && r.errorField == "video")
                #expect(r.text.contains("[video] enabled = true"))
            }
            f.bridge.video.connect(desk)
            try await client.execute(uri: "/api/video", method: .get) { r in
                #expect(r.status == .ok && r.json["bufferSummary"] as? String == "about 9 min at these settings")
            }
            try await client.execute(uri: "/api/video/mark", method: .post) { r in #expect(r.status == .unauthorized) }
            try await client.execute(uri: "/api/video/mark", method: .post, headers: pinHeader) { r in
                #expect(r.status == .accepted && r.json["markNs"] as? Int == 42_000_000_000)
            }
            try await client.execute(uri: "/api/video/settings", method: .put, headers: pinHeader, body: body("{\"delay\": 0.5}")) { r in
                #expect(r.status == .badRequest && r.errorField == "delay")
            }
            try await client.execute(uri: "/api/video/settings", method: .put, headers: pinHeader, body: body("{\"preRoll\": \"five\"}")) { r in
                #expect(r.status == .badRequest && r.errorField == "preRoll")
            }
            try await client.execute(uri: "/api/video/settings", method: .put, headers: pinHeader, body: body("{}")) { r in
                #expect(r.status == .badRequest && r.errorField == "body")
            }
            try await client.execute(uri: "/api/video/settings", method: .put, headers: pinHeader, body: body("{\"delay\": 12, \"preRoll\": 5, \"postRoll\": 0}")) { r in
                #expect(r.status == .ok && r.json["delaySeconds"] as? Double == 12 && r.json["postRollSeconds"] as? Double == 0)
            }
            for path in ["/api/video/session/start", "/api/video/quick-save", "/api/video/session/stop"] {
                try await client.execute(uri: path, method: .post) { r in #expect(r.status == .unauthorized) }
                try await client.execute(uri: path, method: .post, headers: pinHeader) { r in
                    #expect(r.status == .accepted)
                    // A stop answers with the session it closed, even when it is already over.
                    if path.hasSuffix("stop") { #expect(r.json["session"] as? String == "s1") }
                }
            }
            #expect(desk.state.withLock { $0.calls } == ["start", "quick", "stop"])
            #expect(desk.state.withLock { $0.marks } == 1)
        }
    }

    @Test("Stop pressed right after a mark with no session open answers the session the mark opens on the video thread")
    func stopRightAfterAMark() async throws {
        let f = Fixture()
        let desk = StandInVideoDesk(directory: f.directory.path)
        f.bridge.video.connect(desk)
        try await f.test { client in
            // No session and no mark: the stop answers at once, with no session.
            try await client.execute(uri: "/api/video/session/stop", method: .post, headers: pinHeader) { r in
                #expect(r.status == .accepted && r.json["session"] == nil)
            }
            try await client.execute(uri: "/api/video/mark", method: .post, headers: pinHeader) { r in #expect(r.status == .accepted) }
            // The video thread opens the mark's session a little after the stop arrives.
            let thread = Task {
                try await Task.sleep(for: .milliseconds(120))
                desk.state.withLock { $0.open = "s7" }
            }
            try await client.execute(uri: "/api/video/session/stop", method: .post, headers: pinHeader) { r in
                #expect(r.status == .accepted && r.json["session"] as? String == "s7")
            }
            try await thread.value
            #expect(desk.state.withLock { ($0.calls, $0.open) } == (["stop", "stop"], nil))
        }
    }

    @Test("the delayed picture: none yet is 503; `after` waits for a newer picture and returns it as soon as it is published")
    func delayedPicture() async throws {
        let f = Fixture()
        let desk = StandInVideoDesk(directory: f.directory.path)
        f.bridge.video.connect(desk)
        try await f.test { client in
            try await client.execute(uri: "/api/video/delayed.jpg", method: .get) { r in #expect(r.status == .serviceUnavailable) }
            desk.state.withLock { $0.picture = DelayedPicture(jpeg: tinyJPEG, width: 4, height: 4, sequence: 7, time: .init(nanoseconds: 1_000), publishedAt: .init(nanoseconds: 0)) }
            try await client.execute(uri: "/api/video/delayed.jpg?after=0", method: .get) { r in
                #expect(r.status == .ok && r.headers[HTTPField.Name("X-Frame-Time-Ns")!] == "1000")
                #expect(Array(r.body.readableBytesView) == tinyJPEG)
            }
            // Asking for a picture after 1000 ns waits until one is published.
            let publisher = Task {
                try await Task.sleep(for: .milliseconds(150))
                desk.state.withLock { $0.picture = DelayedPicture(jpeg: tinyJPEG, width: 4, height: 4, sequence: 8, time: .init(nanoseconds: 2_000), publishedAt: .init(nanoseconds: 0)) }
            }
            try await client.execute(uri: "/api/video/delayed.jpg?after=1000", method: .get) { r in
                #expect(r.status == .ok && r.headers[HTTPField.Name("X-Frame-Time-Ns")!] == "2000")
            }
            try await publisher.value
            #expect(desk.state.withLock { $0.watched } >= 3)
        }
    }

    @Test("clip files: the MP4 whole, in byte ranges and as a download, the thumbnail, unknown ids; batch delete")
    func clipFiles() async throws {
        let f = Fixture()
        let desk = StandInVideoDesk(directory: f.directory.path)
        let mp4 = (0..<1000).map { UInt8(truncatingIfNeeded: $0) }
        try Data(mp4).write(to: URL(fileURLWithPath: f.directory.path + "/s1-1.mp4"))
        try Data(tinyJPEG).write(to: URL(fileURLWithPath: f.directory.path + "/s1-1.jpg"))
        desk.state.withLock {
            $0.clips = [ClipRecord(id: "s1-1", session: "s1", index: 1, kind: "mark", markNs: 1_000_000_000, markSequence: 30,
                                   startNs: 0, endNs: 2_000_000_000, frames: 60, bytes: 1000, truncatedStart: false, savedAt: 1),
                        ClipRecord(id: "s1-2", session: "s1", index: 2, kind: "mark", markNs: 1_000_000_000, markSequence: 30,
                                   startNs: 0, endNs: 2_000_000_000, frames: 60, bytes: 1000, truncatedStart: false, savedAt: 2)]
        }
        f.bridge.video.connect(desk)
        try await f.test { client in
            try await client.execute(uri: "/api/video/sessions", method: .get) { r in
                #expect(r.status == .ok && (r.jsonArray.first?["clips"] as? [Any])?.count == 2)
            }
            try await client.execute(uri: "/api/video/clips/s1-1.mp4", method: .get) { r in
                #expect(r.status == .ok && r.headers[.contentType] == "video/mp4" && Array(r.body.readableBytesView) == mp4)
                #expect(r.headers[.acceptRanges] == "bytes")
            }
            try await client.execute(uri: "/api/video/clips/s1-1.mp4", method: .get, headers: [.range: "bytes=100-199"]) { r in
                #expect(r.status == .partialContent && r.headers[.contentRange] == "bytes 100-199/1000")
                #expect(Array(r.body.readableBytesView) == Array(mp4[100...199]))
            }
            try await client.execute(uri: "/api/video/clips/s1-1.mp4", method: .get, headers: [.range: "bytes=-10"]) { r in
                #expect(r.status == .partialContent && Array(r.body.readableBytesView) == Array(mp4[990...]))
            }
            try await client.execute(uri: "/api/video/clips/s1-1.mp4?download=1", method: .get) { r in
                #expect(r.headers[.contentDisposition] == "attachment; filename=\"sprintgate-s1-1.mp4\"")
            }
            try await client.execute(uri: "/api/video/clips/s1-1.jpg", method: .get) { r in
                #expect(r.status == .ok && r.headers[.contentType] == "image/jpeg")
            }
            try await client.execute(uri: "/api/video/clips/s1-9.mp4", method: .get) { r in #expect(r.status == .notFound) }
            try await client.execute(uri: "/api/video/clips/s1-2.mp4", method: .get) { r in
                #expect(r.status == .notFound && r.text.contains("has no video file"))
            }
            try await client.execute(uri: "/api/video/clips/s1-1.avi", method: .get) { r in #expect(r.status == .badRequest) }
            // Trim: the PIN, both ends named when wrong, an unknown clip, then a new clip.
            try await client.execute(uri: "/api/video/clips/s1-1/trim", method: .post, body: body("{\"from\": 0.5, \"to\": 1.5}")) { r in
                #expect(r.status == .unauthorized)
            }
            for (json, field) in [("{\"to\": 1}", "from"), ("{\"from\": -1, \"to\": 1}", "from"), ("{\"from\": 1, \"to\": 1}", "to"),
                                  ("{\"from\": 1, \"to\": \"end\"}", "to"), ("{\"from\": 0.5, \"to\": 5}", "from")] {
                try await client.execute(uri: "/api/video/clips/s1-1/trim", method: .post, headers: pinHeader, body: body(json)) { r in
                    #expect(r.status == .badRequest && r.errorField == field, "\(json)")
                }
            }
            try await client.execute(uri: "/api/video/clips/s1-7/trim", method: .post, headers: pinHeader, body: body("{\"from\": 0.5, \"to\": 1.5}")) { r in
                #expect(r.status == .notFound && r.errorField == "clip")
            }
            try await client.execute(uri: "/api/video/clips/s1-1/trim", method: .post, headers: pinHeader, body: body("{\"from\": 0.5, \"to\": 1.5}")) { r in
                #expect(r.status == .created && r.json["kind"] as? String == "trim" && r.json["id"] as? String == "s1-3")
                #expect(r.json["startNs"] as? Int == 500_000_000 && r.json["endNs"] as? Int == 1_500_000_000)
            }
            #expect(desk.state.withLock { $0.calls }.contains("trim s1-1 0.5 1.5"))
            try await client.execute(uri: "/api/video/clips", method: .delete, headers: pinHeader, body: body("{\"ids\": []}")) { r in
                #expect(r.status == .badRequest && r.errorField == "ids")
            }
            try await client.execute(uri: "/api/video/clips", method: .delete, body: body("{\"ids\": [\"s1-1\"]}")) { r in
                #expect(r.status == .unauthorized)
            }
            try await client.execute(uri: "/api/video/clips", method: .delete, headers: pinHeader, body: body("{\"ids\": [\"s1-1\", \"s1-2\"]}")) { r in
                #expect(r.status == .ok && r.json["deleted"] as? Int == 2)
                #expect(desk.state.withLock { $0.clips.map(\.id) } == ["s1-3"])
            }
            // "Clear all" with the mode on: the desk deletes its ended sessions; the
            // library is not opened a second time behind its back.
            f.bridge.video.whenOff { Issue.record("the stored sessions were opened while the mode is on"); return 0 }
            try await client.execute(uri: "/api/clear-all", method: .post, headers: pinHeader, body: body(#"{"confirm":"clear all"}"#)) { r in
                #expect(r.status == .ok && r.json["deletedVideoSessions"] as? Int == 1)
            }
            try await client.execute(uri: "/api/video/sessions", method: .get) { r in #expect(r.status == .ok && r.jsonArray.isEmpty) }
        }
        #expect(WebServer.byteRange("bytes=5-", size: 10) == 5...9)
        #expect(WebServer.byteRange("bytes=5-100", size: 10) == 5...9)
        #expect(WebServer.byteRange("bytes=20-30", size: 10) == nil)
        #expect(WebServer.byteRange("bytes=1-2,4-5", size: 10) == nil)
        #expect(WebServer.byteRange("items=1-2", size: 10) == nil)
    }
}

extension VideoRouteTests {
    @Test("archery: the face from the engine, arrows placed and dragged with line-cutter scores, ends and totals, arrows linked to the marks' clips, undo, refusals by field")
    func archery() async throws {
        let f = Fixture()
        let desk = StandInVideoDesk(directory: f.directory.path)
        desk.state.withLock {
            $0.clips = ["mark", "buffer", "mark"].enumerated().map { i, kind in
                ClipRecord(id: "s1-\(i + 1)", session: "s1", index: i + 1, kind: kind, markNs: 0, markSequence: 0, startNs: 0,
                           endNs: 1, frames: 1, bytes: 1, truncatedStart: false, savedAt: 1)
            }
        }
        f.bridge.video.connect(desk)
        let score = "/api/video/sessions/s1/score"
        try await f.test { client in
            try await client.execute(uri: score, method: .get) { r in
                #expect(r.status == .notFound && r.errorField == "score" && r.text.contains("choose its target face"))
            }
            try await client.execute(uri: score + "/arrows", method: .post, headers: pinHeader, body: body("{\"x\": 0, \"y\": 0}")) { r in
                #expect(r.status == .conflict && r.errorField == "arrow")
            }
            try await client.execute(uri: score, method: .put, body: body("{\"face\": \"wa40\"}")) { r in #expect(r.status == .unauthorized) }
            for (json, field) in [("{\"face\": \"wa60\"}", "face"), ("{\"face\": \"wa40\", \"bow\": \"longbow\"}", "bow"),
                                  ("{\"face\": \"wa40\", \"arrowDiameter\": 12}", "arrowDiameter"),
                                  ("{\"face\": \"wa40\", \"arrowDiameter\": \"thick\"}", "arrowDiameter"),
                                  ("{\"face\": \"wa40\", \"arrowsPerEnd\": 4}", "arrowsPerEnd")] {
                try await client.execute(uri: score, method: .put, headers: pinHeader, body: body(json)) { r in
                    #expect(r.status == .badRequest && r.errorField == field, "\(json)")
                }
            }
            try await client.execute(uri: "/api/video/sessions/s9/score", method: .put, headers: pinHeader, body: body("{\"face\": \"wa40\"}")) { r in
                #expect(r.status == .notFound && r.errorField == "session")
            }
            try await client.execute(uri: score, method: .put, headers: pinHeader,
                                     body: body("{\"face\": \"wa40\", \"bow\": \"recurve\", \"arrowDiameter\": 5.5, \"arrowsPerEnd\": 3}")) { r in
                #expect(r.status == .ok)
                let face = r.json["face"] as? [String: Any]
                #expect(face?["ringWidth"] as? Double == 20 && face?["lowestRing"] as? Int == 1 && face?["xRadius"] as? Double == 10)
                #expect(r.json["shots"] as? [String] == ["s1-1", "s1-3"])
                #expect(r.json["canUndo"] as? Bool == false)
            }
            // 40 cm face, 5.5 mm shaft: the 10 ring's line is 20 mm out, so a shaft centred
            // 22.75 mm out touches it (scores 10) and one at 22.8 mm is clear of it (9).
            let shots: [(Double, Double, String)] = [(0, 0, "X"), (22.75, 0, "10"), (0, -22.8, "9"), (300, 300, "M")]
            for (i, (x, y, label)) in shots.enumerated() {
                try await client.execute(uri: score + "/arrows", method: .post, headers: pinHeader, body: body("{\"x\": \(x), \"y\": \(y)}")) { r in
                    #expect(r.status == .created)
                    let arrows = r.json["arrows"] as? [[String: Any]] ?? []
                    #expect(arrows.count == i + 1 && arrows.last?["score"] as? String == label, "arrow \(i + 1)")
                }
            }
            try await client.execute(uri: score + "/arrows", method: .post, headers: pinHeader, body: body("{\"x\": \"left\", \"y\": 0}")) { r in
                #expect(r.status == .badRequest && r.errorField == "x")
            }
            try await client.execute(uri: score, method: .get) { r in
                let arrows = r.json["arrows"] as? [[String: Any]] ?? []
                // Arrow i goes with the i-th clip cut at a mark; the quick save is no shot.
                #expect(arrows.map { $0["clip"] as? String } == ["s1-1", "s1-3", nil, nil])
                let ends = r.json["ends"] as? [[String: Any]] ?? []
                #expect(ends.map { $0["scores"] as? [String] ?? [] } == [["X", "10", "9"], ["M"]])
                #expect(ends.map { $0["running"] as? Int } == [29, 29])
                #expect(r.json["total"] as? Int == 29 && r.json["xCount"] as? Int == 1 && r.json["tenCount"] as? Int == 2)
                #expect(r.json["hitCount"] as? Int == 3 && r.json["maximum"] as? Int == 40 && r.json["canUndo"] as? Bool == true)
            }
            // Dragging arrow 3 onto the 9/10 line makes it a 10; undo puts it back.
            try await client.execute(uri: score + "/arrows/3", method: .put, headers: pinHeader, body: body("{\"x\": 0, \"y\": -22.7}")) { r in
                #expect(r.status == .ok && (r.json["arrows"] as? [[String: Any]])?[2]["score"] as? String == "10")
            }
            try await client.execute(uri: score + "/arrows/9", method: .put, headers: pinHeader, body: body("{\"x\": 0, \"y\": 0}")) { r in
                #expect(r.status == .badRequest && r.errorField == "arrow")
            }
            try await client.execute(uri: score + "/undo", method: .post, headers: pinHeader) { r in
                #expect(r.status == .ok && (r.json["arrows"] as? [[String: Any]])?[2]["score"] as? String == "9")
            }
            try await client.execute(uri: "/api/video/sessions", method: .get) { r in
                let scored = r.jsonArray.first?["score"] as? [String: Any]
                #expect(scored?["total"] as? Int == 29 && (scored?["arrows"] as? [Any])?.count == 4)
            }
            for _ in 0..<4 {
                try await client.execute(uri: score + "/undo", method: .post, headers: pinHeader) { r in #expect(r.status == .ok) }
            }
            try await client.execute(uri: score + "/undo", method: .post, headers: pinHeader) { r in
                #expect(r.status == .conflict && r.text.contains("nothing to undo"))
            }
            try await client.execute(uri: "/api/video/sessions/s1", method: .delete) { r in #expect(r.status == .unauthorized) }
            try await client.execute(uri: "/api/video/sessions/s1", method: .delete, headers: pinHeader) { r in #expect(r.status == .noContent) }
            try await client.execute(uri: score, method: .get) { r in #expect(r.status == .notFound && r.errorField == "session") }
        }
    }
}
