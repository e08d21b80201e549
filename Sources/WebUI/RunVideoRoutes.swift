// SPDX-License-Identifier: Apache-2.0
// A timed run's videos on the page: the gate's clip of the run, a phone video uploaded for
// it, and either one downloaded with the run's times drawn on it.

import Foundation
import GateCore
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization
public import VideoDelay

/// The page's view of the run videos (the daemon's shelf).
public protocol RunVideoDesk: Sendable {
    /// The run's videos, the gate's first.
    func videos(run: Int64) -> [RunVideoRecord]
    /// The file of a run's video, nil when it has none from `source`.
    func file(run: Int64, source: RunVideoSource) -> String?
    /// The parts drawn when the page does not choose (the settings file's `[video] overlay`).
    var defaultParts: Set<OverlayPart> { get }
    /// The run's video with its times drawn on it; blocks while it draws. Returns its path.
    func drawn(run: RunRecord, source: RunVideoSource, parts: Set<OverlayPart>, speedUnit: String) throws(VideoDeskError) -> String
    /// Keeps the video at `path` (moved) as the run's uploaded video.
    func importVideo(run: Int64, from path: String) throws(VideoDeskError) -> RunVideoRecord
    /// Marks where the run starts on its uploaded video, seconds.
    func setStart(run: Int64, seconds: Double) throws(VideoDeskError) -> RunVideoRecord
    /// A folder on the same disk for uploads in progress.
    var uploadDirectory: String { get }
    func delete(run: Int64, source: RunVideoSource)
    /// Runs that have a video.
    func runs() -> Set<Int64>
}

/// Where the daemon plugs its run videos in; empty on a gate that keeps none.
public final class RunVideoDeskSlot: Sendable {
    private let desk = Mutex<(any RunVideoDesk)?>(nil)
    public init() {}
    public func connect(_ d: any RunVideoDesk) { desk.withLock { $0 = d } }
    public var current: (any RunVideoDesk)? { desk.withLock { $0 } }
}

extension WebServer {
    func runVideoDesk() throws -> any RunVideoDesk {
        guard let d = bridge.runVideos.current else {
            throw APIError(.notFound, field: "video", reason: "this gate keeps no run videos (it runs without its page's video support)")
        }
        return d
    }

    /// Upload limit: a phone's 4K minute is about 400 MB.
    static let maxUploadBytes = 1 << 30

    func addRunVideoRoutes(to router: Router<WebContext>) {
        let s = self
        @Sendable func source(_ context: WebContext, _ key: String = "source") throws -> RunVideoSource {
            let raw = context.parameters.get(key) ?? ""
            guard let src = RunVideoSource(rawValue: raw.hasSuffix(".mp4") ? String(raw.dropLast(4)) : raw) else {
                throw APIError.invalid(key, "must be gate or phone")
            }
            return src
        }
        router.get("/api/results/:id/videos") { _, context in
            let id = try s.runID(context)
            return try s.json(try s.runVideoDesk().videos(run: id))
        }
        // The video as kept (`gate.mp4`, `phone.mp4`): byte ranges for the page's player.
        router.get("/api/results/:id/videos/:source") { request, context in
            let id = try s.runID(context)
            let src = try source(context)
            guard let path = try s.runVideoDesk().file(run: id, source: src) else {
                throw APIError(.notFound, field: "source", reason: "run \(id) has no \(src.rawValue) video")
            }
            return try await s.serveFile(path, type: "video/mp4", request: request, context: context,
                                         download: request.uri.queryParameters["download"] != nil ? "sprintgate-run-\(id)-\(src.rawValue).mp4" : nil,
                                         cache: false)
        }
        // The video with the run's times drawn on it, as a download. `show` picks the parts
        // (comma-separated: time, splits, speed, type, athlete); default: the settings file's.
        router.get("/api/results/:id/videos/:source/drawn") { request, context in
            let id = try s.runID(context)
            let src = try source(context)
            let desk = try s.runVideoDesk()
            var parts = desk.defaultParts
            if let show = request.uri.queryParameters["show"] {
                parts = []
                for word in show.split(separator: ",") where !word.isEmpty {
                    guard let p = OverlayPart(rawValue: String(word)) else {
                        throw APIError.invalid("show", "\"\(word)\" is not one of \(OverlayPart.allCases.map(\.rawValue).joined(separator: ", "))")
                    }
                    parts.insert(p)
                }
            }
            let run: RunRecord
            do { run = try s.book.run(id: id) } catch { throw apiError(error) }
            let unit = s.settings.speedUnit
            let chosen = parts
            let path = try await Self.offload { () throws(APIError) -> String in
                do throws(VideoDeskError) { return try desk.drawn(run: run, source: src, parts: chosen, speedUnit: unit) } catch { throw error.api }
            }
            return try await s.serveFile(path, type: "video/mp4", request: request, context: context,
                                         download: "sprintgate-run-\(id)-times.mp4", cache: false)
        }
        // A video filmed on a phone: the request's body is the file (any container and codec
        // FFmpeg reads), streamed to disk; refused when it is not a video.
        // (Every route names the source as a parameter: a literal `phone` beside `:source`
        // would hide the parameter's routes for that word.)
        @Sendable func phoneOnly(_ context: WebContext) throws {
            guard try source(context) == .phone else { throw APIError.invalid("source", "only a phone video can be uploaded or marked") }
        }
        router.post("/api/results/:id/videos/:source") { request, context in
            try phoneOnly(context)
            let id = try s.runID(context)
            let desk = try s.runVideoDesk()
            do { _ = try s.book.run(id: id) } catch { throw apiError(error) }
            let upload = desk.uploadDirectory + "/upload-\(id)-\(UUID().uuidString).part"
            guard FileManager.default.createFile(atPath: upload, contents: nil), let handle = FileHandle(forWritingAtPath: upload) else {
                throw APIError(.serviceUnavailable, field: "video", reason: "the gate cannot write the upload (is its disk full?)")
            }
            var total = 0
            do {
                for try await buffer in request.body {
                    total += buffer.readableBytes
                    guard total <= Self.maxUploadBytes else {
                        throw APIError(.contentTooLarge, field: "video", reason: "the video is larger than 1 GB: trim it on the phone first")
                    }
                    try handle.write(contentsOf: Data(buffer.readableBytesView))
                }
                try handle.close()
            } catch {
                try? handle.close()
                try? FileManager.default.removeItem(atPath: upload)
                if let e = error as? APIError { throw e }
                throw APIError(.serviceUnavailable, field: "video", reason: "the upload failed: \(error.localizedDescription)")
            }
            guard total > 0 else {
                try? FileManager.default.removeItem(atPath: upload)
                throw APIError.invalid("video", "the request has no video in it: send the file as the body")
            }
            let record = try await Self.offload { () throws(APIError) -> RunVideoRecord in
                do throws(VideoDeskError) { return try desk.importVideo(run: id, from: upload) } catch { throw error.api }
            }
            return try s.json(record, status: .created)
        }
        router.put("/api/results/:id/videos/:source/start") { request, context in
            try phoneOnly(context)
            let id = try s.runID(context)
            let body = try await s.body(request, context)
            guard let seconds = WebServer.number(body["seconds"]) else {
                throw APIError.invalid("seconds", "the time of the start frame, seconds from the video's start, is required")
            }
            do { return try s.json(try s.runVideoDesk().setStart(run: id, seconds: seconds)) } catch let e as VideoDeskError { throw e.api }
        }
        router.delete("/api/results/:id/videos/:source") { request, context in
            let id = try s.runID(context)
            let src = try source(context)
            try s.runVideoDesk().delete(run: id, source: src)
            return Response(status: .noContent)
        }
    }

    /// Deletes the videos of runs the book no longer has (after a run, a session or
    /// everything was deleted), so a later run given the same id never shows them.
    func forgetDeletedRunVideos() {
        guard let desk = bridge.runVideos.current else { return }
        for id in desk.runs() {
            do throws(ResultsBookError) { _ = try book.run(id: id) } catch {
                guard error.kind == .notFound else { continue }
                for source in RunVideoSource.allCases { desk.delete(run: id, source: source) }
            }
        }
    }

    /// A file as the response, with byte ranges; `download` names it for saving.
    /// `cache`: the file never changes under its address (a clip), so a browser keeps it.
    /// `missing` says what is missing when the file is not there.
    func serveFile(_ path: String, type: String, request: Request, context: WebContext, download: String?,
                   cache: Bool = true, missing: String = "the file is missing") async throws -> Response {
        guard let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size > 0 else {
            throw APIError(.notFound, field: "file", reason: missing)
        }
        var headers: HTTPFields = [.contentType: type, .cacheControl: cache ? "private, max-age=86400" : "no-store", .acceptRanges: "bytes"]
        if let download { headers[.contentDisposition] = "attachment; filename=\"\(download)\"" }
        let io = FileIO()
        if let range = request.headers[.range], let r = Self.byteRange(range, size: size) {
            headers[.contentRange] = "bytes \(r.lowerBound)-\(r.upperBound)/\(size)"
            headers[.contentLength] = String(r.count)
            return Response(status: .partialContent, headers: headers, body: try await io.loadFile(path: path, range: r, context: context))
        }
        headers[.contentLength] = String(size)
        return Response(status: .ok, headers: headers, body: try await io.loadFile(path: path, context: context))
    }
}
