// SPDX-License-Identifier: Apache-2.0
// Results: runs with their photo finishes, bests, sessions, storage and export; corrections
// and deletes, and clear all.

import Foundation
import HTTPTypes
import Hummingbird
import Logging
import SQLiteStore
import VideoDelay

extension WebServer {
    /// Results: reading needs no PIN; corrections and deletes do (`PINRequired`).
    func addResultRoutes(to router: Router<WebContext>) {
        let s = self
        router.get("/api/results") { request, _ in
            let q = try s.historyQuery(request.uri.queryParameters)
            s.hub.refresh()
            do { return try s.json(try s.book.history(q).map(s.view)) } catch { throw apiError(error) }
        }
        router.get("/api/results/:id") { _, context in
            let id = try s.runID(context)
            do {
                var v = s.view(try s.book.run(id: id))
                if let desk = s.bridge.runVideos.current {
                    v.videos = desk.videos(run: id)
                    v.videoOverlay = OverlayPart.allCases.filter { desk.defaultParts.contains($0) }
                }
                return try s.json(v)
            } catch { throw apiError(error) }
        }
        router.get("/api/results/:id/photo.jpg") { _, context in
            let id = try s.runID(context)
            let bytes: [UInt8]?
            do { bytes = try s.book.photo(id: id) } catch { throw apiError(error) }
            guard let bytes else { throw APIError(.notFound, field: "id", reason: "run \(id) has no photo-finish image") }
            return s.jpeg(bytes)
        }
        router.get("/api/results/:id/thumb/:file") { _, context in
            let id = try s.runID(context)
            let index = try s.jpegIndex(context, 0...63, "a thumbnail number")
            let bytes: [UInt8]?
            do { bytes = try s.book.thumbnail(id: id, index: index) } catch { throw apiError(error) }
            guard let bytes else { throw APIError(.notFound, field: "file", reason: "run \(id) has no thumbnail \(index)") }
            return s.jpeg(bytes)
        }
        router.get("/api/results/:id/gates/:file") { _, context in
            let id = try s.runID(context)
            let index = try s.jpegIndex(context, 0...15, "a gate index")
            let bytes: [UInt8]?
            do { bytes = try s.book.gatePhoto(id: id, gateIndex: index) } catch { throw apiError(error) }
            guard let bytes else { throw APIError(.notFound, field: "file", reason: "run \(id) has no image from gate \(index)") }
            return s.jpeg(bytes)
        }
        router.get("/api/results/:id/gates/:gate/frames") { _, context in
            let id = try s.runID(context)
            let gate = try s.gateIndex(context)
            let strip: GateFrames?
            do { strip = try s.book.gateFrames(id: id, gateIndex: gate) } catch { throw apiError(error) }
            guard let strip else { throw APIError(.notFound, field: "gate", reason: "run \(id) has no frames from gate \(gate)") }
            return try s.json(strip)
        }
        router.get("/api/results/:id/gates/:gate/frames/:file") { _, context in
            let id = try s.runID(context)
            let gate = try s.gateIndex(context)
            let position = try s.jpegIndex(context, 0...31, "a frame number")
            let bytes: [UInt8]?
            do { bytes = try s.book.gateFrame(id: id, gateIndex: gate, position: position) } catch { throw apiError(error) }
            guard let bytes else { throw APIError(.notFound, field: "file", reason: "run \(id) has no frame \(position) from gate \(gate)") }
            return s.jpeg(bytes)
        }
        router.get("/api/bests") { request, _ in
            let athlete = try s.optionalID(request.uri.queryParameters, "athlete")
            do { return try s.json(try s.book.bestLines(athleteID: athlete)) } catch { throw apiError(error) }
        }
        router.get("/api/sessions") { _, _ in
            do { return try s.json(try s.book.sessions()) } catch { throw apiError(error) }
        }
        router.get("/api/storage") { _, _ in
            do { return try s.json(try s.book.storage()) } catch { throw apiError(error) }
        }
        router.get("/api/export.csv") { request, _ in
            var q = try s.historyQuery(request.uri.queryParameters, defaultLimit: Int.max)
            q.limit = request.uri.queryParameters["limit"] == nil ? Int.max : q.limit
            let rows: [RunRecord]
            do { rows = try s.book.history(q) } catch { throw apiError(error) }
            return Response(status: .ok,
                            headers: [.contentType: "text/csv; charset=utf-8",
                                      .contentDisposition: "attachment; filename=\"sprintgate-results.csv\""],
                            body: .init(byteBuffer: ByteBuffer(string: ResultsExport.csv(rows, settings: s.settings))))
        }
        router.get("/api/export.json") { request, _ in
            var q = try s.historyQuery(request.uri.queryParameters, defaultLimit: Int.max)
            q.limit = request.uri.queryParameters["limit"] == nil ? Int.max : q.limit
            let rows: [RunRecord]
            do { rows = try s.book.history(q) } catch { throw apiError(error) }
            var r = try s.json(rows.map(s.view))
            r.headers[.contentDisposition] = "attachment; filename=\"sprintgate-results.json\""
            return r
        }
        // A crossing placed by hand on the photo finish: the run re-timed, the measured time kept.
        router.put("/api/results/:id/correction") { request, context in
            let id = try s.runID(context)
            let body = try await s.body(request, context)
            guard let offset = Self.number(body["offsetMs"]) else {
                throw APIError.invalid("offsetMs", "milliseconds from the crossing the gate timed, a number (negative: earlier)")
            }
            return try s.correct(id, offsetMs: offset)
        }
        router.delete("/api/results/:id/correction") { request, context in
            return try s.correct(try s.runID(context), offsetMs: nil)
        }
        router.delete("/api/sessions/:id") { request, context in
            let id = try s.runID(context)
            do {
                let n = try s.book.deleteSession(id: id)
                s.hub.bookChanged()
                s.forgetDeletedRunVideos()
                return try s.json(["deletedRuns": n])
            } catch { throw apiError(error) }
        }
        // Everything stored goes: the page asks the coach to confirm, the body says so too.
        router.post("/api/clear-all") { request, context in
            let body = try await s.body(request, context)
            guard body["confirm"] as? String == "clear all" else {
                throw APIError.invalid("confirm", "must be the text \"clear all\": every run, session, image, athlete and best, "
                                       + "GPS run, ended ski track and erg session, and video session is deleted")
            }
            try s.requireBetweenRuns("clear the results after it")
            do {
                let n = try s.book.clearAll()
                s.hub.bookChanged()
                s.forgetDeletedRunVideos()
                let videos = s.bridge.video.deleteEndedSessions()
                s.logger.notice("all results cleared from the page: \(n) runs and \(videos) video sessions deleted")
                return try s.json(["deletedRuns": n, "deletedVideoSessions": videos])
            } catch { throw apiError(error) }
        }
        router.delete("/api/results/:id") { request, context in
            let id = try s.runID(context)
            do {
                try s.book.delete(id: id)
                s.hub.bookChanged()
                s.forgetDeletedRunVideos()
                return Response(status: .noContent)
            } catch { throw apiError(error) }
        }
    }
}
