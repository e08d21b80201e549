// SPDX-License-Identifier: Apache-2.0
// The run video routes over a stand-in desk and the real SQLite book: the PIN, refusals by
// field, an upload streamed to disk whole, the parts asked for reaching the desk, and the
// videos of deleted runs forgotten.

import Foundation
import GateCore
import HTTPTypes
import Hummingbird
import Synchronization
import Testing
import VideoDelay
@testable import WebUI

/// Records what the routes ask; "draws" by writing the parts asked for into a file.
final class StandInRunVideoDesk: RunVideoDesk {
    struct State {
        var records: [RunVideoRecord] = []
        var uploads: [(run: Int64, bytes: [UInt8])] = []
        var drawn: [(run: Int64, parts: Set<OverlayPart>, unit: String, title: Double)] = []
    }
    let state = Mutex(State())
    let uploadDirectory: String
    let defaultParts: Set<OverlayPart> = [.time, .splits]
    init(directory: String) { uploadDirectory = directory }

    func videos(run: Int64) -> [RunVideoRecord] { state.withLock { $0.records.filter { $0.runID == run } } }
    func file(run: Int64, source: RunVideoSource) -> String? {
        videos(run: run).contains { $0.source == source } ? uploadDirectory + "/\(run)-\(source.rawValue).mp4" : nil
    }
    func drawn(run: RunRecord, source: RunVideoSource, parts: Set<OverlayPart>, speedUnit: String) throws(VideoDeskError) -> String {
        guard let r = videos(run: run.id).first(where: { $0.source == source }) else {
            throw VideoDeskError(.notFound, field: "source", reason: "run \(run.id) has no \(source.rawValue) video")
        }
        guard r.startSeconds != nil else { throw VideoDeskError(.conflict, field: "seconds", reason: "mark the frame where the run starts") }
        state.withLock { $0.drawn.append((run.id, parts, speedUnit, run.seconds)) }
        let path = uploadDirectory + "/drawn.mp4"
        FileManager.default.createFile(atPath: path, contents: Data(parts.map(\.rawValue).sorted().joined(separator: ",").utf8))
        return path
    }
    func importVideo(run: Int64, from path: String) throws(VideoDeskError) -> RunVideoRecord {
        let bytes = [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data())
        try? FileManager.default.removeItem(atPath: path)
        guard bytes.starts(with: Array("VIDEO".utf8)) else { throw VideoDeskError(field: "video", reason: "the upload is not a video") }
        let r = RunVideoRecord(runID: run, source: .phone, startSeconds: nil, width: 360, height: 640, seconds: 4, frames: 120,
                               bytes: bytes.count, savedAt: 0)
        state.withLock { s in
            s.uploads.append((run, bytes))
            s.records.removeAll { $0.runID == run && $0.source == .phone }
            s.records.append(r)
        }
        return r
    }
    func setStart(run: Int64, seconds: Double) throws(VideoDeskError) -> RunVideoRecord {
        try state.withLock { (s: inout State) throws(VideoDeskError) -> RunVideoRecord in
            guard let i = s.records.firstIndex(where: { $0.runID == run && $0.source == .phone }) else {
                throw VideoDeskError(.notFound, field: "source", reason: "no upload")
            }
            guard (0...s.records[i].seconds).contains(seconds) else { throw VideoDeskError(field: "seconds", reason: "outside the video") }
            s.records[i].startSeconds = seconds
            return s.records[i]
        }
    }
    func delete(run: Int64, source: RunVideoSource) { state.withLock { $0.records.removeAll { $0.runID == run && $0.source == source } } }
    func runs() -> Set<Int64> { state.withLock { Set($0.records.map(\.runID)) } }
}

@Suite("Run video routes")
struct RunVideoRouteTests {
    @Test("videos in the run's details; the drawn download with the parts asked (or the defaults); an upload streamed whole; the start marked; refusals by field; a deleted run's videos forgotten")
    func routes() async throws {
        let f = Fixture()
        let desk = StandInRunVideoDesk(directory: f.directory.path)
        let run = try f.book.record(TimedRun(seconds: 4.2, startType: "flying", preset: "flying-30m", distanceMetres: 30, wallTime: 1))
        let other = try f.book.record(TimedRun(seconds: 4.5, startType: "flying", preset: "flying-30m", distanceMetres: 30, wallTime: 2))
        try await f.test { client in
            try await client.execute(uri: "/api/results/\(run.id)/videos", method: .get) { r in
                #expect(r.status == .notFound && r.errorField == "video")
            }
            f.bridge.runVideos.connect(desk)
            desk.state.withLock {
                $0.records = [RunVideoRecord(runID: run.id, source: .gate, startSeconds: 2, width: 640, height: 480, seconds: 8.4, frames: 504,
                                             bytes: 1000, savedAt: 0),
                              RunVideoRecord(runID: other.id, source: .gate, startSeconds: 2, width: 640, height: 480, seconds: 8.7, frames: 520,
                                             bytes: 1000, savedAt: 0)]
            }
            FileManager.default.createFile(atPath: f.directory.path + "/\(run.id)-gate.mp4", contents: Data(repeating: 7, count: 1000))
            try await client.execute(uri: "/api/results/\(run.id)", method: .get) { r in
                let videos = r.json["videos"] as? [[String: Any]]
                #expect(r.status == .ok && videos?.count == 1 && videos?.first?["source"] as? String == "gate")
                #expect(r.json["videoOverlay"] as? [String] == ["time", "splits"], "the desk's default parts, in order")
            }
            try await client.execute(uri: "/api/results/\(run.id)/videos/gate", method: .get, headers: [.range: "bytes=0-9"]) { r in
                #expect(r.status == .partialContent && r.headers[.contentType] == "video/mp4" && r.body.readableBytes == 10)
            }
            try await client.execute(uri: "/api/results/\(run.id)/videos/phone", method: .get) { r in
                #expect(r.status == .notFound && r.errorField == "source")
            }
            try await client.execute(uri: "/api/results/\(run.id)/videos/tv", method: .get) { r in
                #expect(r.status == .badRequest && r.errorField == "source")
            }
            // Drawn: the parts asked for, the defaults without `show`, an unknown part named.
            try await client.execute(uri: "/api/results/\(run.id)/videos/gate/drawn?show=time,athlete", method: .get) { r in
                #expect(r.status == .ok && r.text == "athlete,time" && r.headers[.cacheControl] == "no-store")
                #expect(r.headers[.contentDisposition] == "attachment; filename=\"sprintgate-run-\(run.id)-times.mp4\"")
            }
            try await client.execute(uri: "/api/results/\(run.id)/videos/gate/drawn", method: .get) { r in
                #expect(r.status == .ok && r.text == "splits,time")
            }
            try await client.execute(uri: "/api/results/\(run.id)/videos/gate/drawn?show=time,wind", method: .get) { r in
                #expect(r.status == .badRequest && r.errorField == "show" && r.text.contains("wind"))
            }
            try await client.execute(uri: "/api/results/999/videos/gate/drawn", method: .get) { r in #expect(r.status == .notFound) }
            #expect(desk.state.withLock { $0.drawn.map(\.unit) } == ["m/s", "m/s"])
            #expect(desk.state.withLock { $0.drawn.first?.title } == 4.2, "the run from the book")
            // Upload: the PIN; only a phone video; the whole body reaches the desk; not a video, empty.
            let video = Array("VIDEO".utf8) + (0..<300_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
            let upload: HTTPFields = [HTTPField.Name("X-Gate-PIN")!: Fixture.pin, .contentType: "video/mp4"]
            try await client.execute(uri: "/api/results/\(run.id)/videos/phone", method: .post, body: ByteBuffer(bytes: video)) { r in
                #expect(r.status == .unauthorized)
            }
            try await client.execute(uri: "/api/results/\(run.id)/videos/gate", method: .post, headers: upload, body: ByteBuffer(bytes: video)) { r in
                #expect(r.status == .badRequest && r.errorField == "source")
            }
            try await client.execute(uri: "/api/results/999/videos/phone", method: .post, headers: upload, body: ByteBuffer(bytes: video)) { r in
                #expect(r.status == .notFound)
            }
            try await client.execute(uri: "/api/results/\(run.id)/videos/phone", method: .post, headers: upload, body: ByteBuffer(bytes: video)) { r in
                #expect(r.status == .created && r.json["source"] as? String == "phone")
            }
            #expect(desk.state.withLock { $0.uploads.first?.bytes } == video)
            try await client.execute(uri: "/api/results/\(run.id)/videos/phone", method: .post, headers: upload, body: body("lane 4")) { r in
                #expect(r.status == .badRequest && r.errorField == "video")
            }
            try await client.execute(uri: "/api/results/\(run.id)/videos/phone", method: .post, headers: upload) { r in
                #expect(r.status == .badRequest && r.errorField == "video")
            }
            let left = try FileManager.default.contentsOfDirectory(atPath: f.directory.path).filter { $0.hasPrefix("upload-") }
            #expect(left.isEmpty, "uploads left behind: \(left)")
            // The start: unmarked it is refused for drawing; marked within the video it draws.
            try await client.execute(uri: "/api/results/\(run.id)/videos/phone/drawn", method: .get) { r in
                #expect(r.status == .conflict && r.errorField == "seconds")
            }
            try await client.execute(uri: "/api/results/\(run.id)/videos/phone/start", method: .put, headers: pinHeader, body: body("{\"seconds\": \"one\"}")) { r in
                #expect(r.status == .badRequest && r.errorField == "seconds")
            }
            try await client.execute(uri: "/api/results/\(run.id)/videos/phone/start", method: .put, headers: pinHeader, body: body("{\"seconds\": 9}")) { r in
                #expect(r.status == .badRequest && r.errorField == "seconds")
            }
            try await client.execute(uri: "/api/results/\(run.id)/videos/phone/start", method: .put, headers: pinHeader, body: body("{\"seconds\": 1.5}")) { r in
                #expect(r.status == .ok && r.json["startSeconds"] as? Double == 1.5)
            }
            try await client.execute(uri: "/api/results/\(run.id)/videos/phone/drawn?show=time", method: .get) { r in #expect(r.status == .ok) }
            // Deleting a run forgets its videos and no other's.
            try await client.execute(uri: "/api/results/\(run.id)", method: .delete, headers: pinHeader) { r in #expect(r.status == .noContent) }
            #expect(desk.runs() == [other.id])
            try await client.execute(uri: "/api/results/\(other.id)/videos/gate", method: .delete) { r in #expect(r.status == .unauthorized) }
            try await client.execute(uri: "/api/results/\(other.id)/videos/gate", method: .delete, headers: pinHeader) { r in
                #expect(r.status == .noContent)
            }
            #expect(desk.runs().isEmpty)
        }
    }
}
