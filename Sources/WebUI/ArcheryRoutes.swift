// SPDX-License-Identifier: Apache-2.0
// Archery scoring of a delay session on the page: the face, arrows placed and dragged,
// undo, and each arrow's clip.

import Archery
import Foundation
import Hummingbird
import VideoDelay

/// A score card as the page draws it: the face's geometry (from the scoring engine, so the
/// page never redraws rules of its own), each arrow with its score and clip, and the sheet.
struct ScoreView: Encodable {
    struct Face: Encodable {
        var id: String
        var title: String
        /// Millimetres: ring width, X ring radius, the half-width of the drawing square.
        var ringWidth: Double
        var lowestRing: Int
        var xRadius: Double
        var drawingRadius: Double
        var spots: [FacePoint]
    }
    struct Arrow: Encodable {
        /// From 1, in shooting order.
        var n: Int
        var x: Double
        var y: Double
        var score: String
        var points: Int
        /// The shot's clip (the n-th clip cut at a mark), when there is one.
        var clip: String?
    }
    struct End: Encodable {
        var n: Int
        var scores: [String]
        var total: Int
        var running: Int
    }
    var session: String
    var face: Face
    var bow: String
    var arrowDiameter: Double
    var arrowsPerEnd: Int
    var arrows: [Arrow]
    var ends: [End]
    var total: Int
    var xCount: Int
    var tenCount: Int
    var hitCount: Int
    var maximum: Int
    var canUndo: Bool
    /// Clips cut at marks: the shots that arrows go with.
    var shots: [String]

    init(_ card: ScoreCard, session: SessionRecord) {
        let f = card.face
        self.session = session.id
        face = Face(id: f.rawValue, title: f.title, ringWidth: f.ringWidth, lowestRing: f.lowestRing, xRadius: f.xRadius,
                    drawingRadius: f.drawingRadius, spots: f.spotCentres)
        bow = card.bow.rawValue
        arrowDiameter = card.arrowDiameter
        arrowsPerEnd = card.arrowsPerEnd
        shots = session.shots.map(\.id)
        let shots = shots
        arrows = card.arrows.enumerated().map { i, a in
            Arrow(n: i + 1, x: a.point.x, y: a.point.y, score: a.score.label, points: a.score.points,
                  clip: i < shots.count ? shots[i] : nil)
        }
        let totals = card.endTotals, running = card.runningTotals
        ends = card.ends.enumerated().map { i, e in
            End(n: i + 1, scores: e.map(\.score.label), total: totals[i], running: running[i])
        }
        total = card.total
        xCount = card.xCount
        tenCount = card.tenCount
        hitCount = card.hitCount
        maximum = card.maximum
        canUndo = card.canUndo
    }
}

/// A session in the list, with its score when it was scored.
struct SessionListing: Encodable {
    var record: SessionRecord
    var score: ScoreView?

    private enum Keys: String, CodingKey { case score }
    func encode(to encoder: any Encoder) throws {
        try record.encode(to: encoder)
        var c = encoder.container(keyedBy: Keys.self)
        try c.encodeIfPresent(score, forKey: .score)
    }

    init(_ record: SessionRecord) {
        self.record = record
        score = record.archery.flatMap { try? ScoreCard(sheet: $0) }.map { ScoreView($0, session: record) }
    }
}

extension VideoDeskError {
    var api: APIError { ResultsBookError(kind, field: field, reason: reason).api }
}

extension WebServer {
    func addArcheryRoutes(to router: Router<WebContext>) {
        let s = self
        /// Runs a desk call for session `:id`, its refusal as the API's error, and answers
        /// with the session's card.
        @Sendable func answer(_ context: WebContext, status: HTTPResponse.Status = .ok,
                              _ body: (any VideoDesk, String) throws(VideoDeskError) -> ScoreCard?) throws -> Response {
            let desk = try s.videoDesk()
            let id = context.parameters.get("id") ?? ""
            let card: ScoreCard?
            do { card = try body(desk, id) } catch { throw error.api }
            guard let card, let record = desk.sessions().first(where: { $0.id == id }) else {
                throw APIError(.notFound, field: "score", reason: "session \(id) is not scored yet: choose its target face first")
            }
            return try s.json(ScoreView(card, session: record), status: status)
        }

        router.get("/api/video/sessions/:id/score") { _, context in
            try answer(context) { (desk, id) throws(VideoDeskError) in try desk.scoreCard(session: id) }
        }
        router.put("/api/video/sessions/:id/score") { request, context in
            let body = try await s.body(request, context)
            guard let faceName = body["face"] as? String, let face = TargetFace(rawValue: faceName) else {
                throw APIError.invalid("face", "choose one of " + TargetFace.allCases.map(\.rawValue).joined(separator: ", "))
            }
            let bowName = body["bow"] as? String ?? BowClass.recurve.rawValue
            guard let bow = BowClass(rawValue: bowName) else {
                throw APIError.invalid("bow", "choose one of " + BowClass.allCases.map(\.rawValue).joined(separator: ", "))
            }
            var diameter = ArrowDiameter.standard
            if let v = body["arrowDiameter"], !(v is NSNull) {
                guard let n = WebServer.number(v) else {
                    throw APIError.invalid("arrowDiameter", "the shaft's diameter in millimetres is required")
                }
                diameter = n
            }
            var perEnd = 6
            if let v = body["arrowsPerEnd"], !(v is NSNull) {
                guard let n = v as? Int, n == 3 || n == 6 else {
                    throw APIError.invalid("arrowsPerEnd", "must be 3 (indoor) or 6 (outdoor)")
                }
                perEnd = n
            }
            return try answer(context) { (desk, id) throws(VideoDeskError) in
                try desk.setUpScore(session: id, face: face, bow: bow, arrowDiameter: diameter, arrowsPerEnd: perEnd)
            }
        }
        router.post("/api/video/sessions/:id/score/arrows") { request, context in
            let p = try Self.arrowPoint(try await s.body(request, context))
            return try answer(context, status: .created) { (desk, id) throws(VideoDeskError) in
                try desk.changeScore(session: id, .place(p))
            }
        }
        router.put("/api/video/sessions/:id/score/arrows/:n") { request, context in
            guard let n = context.parameters.get("n").flatMap({ Int($0) }), n >= 1 else {
                throw APIError.invalid("n", "the arrow's number, from 1, is required")
            }
            let p = try Self.arrowPoint(try await s.body(request, context))
            return try answer(context) { (desk, id) throws(VideoDeskError) in
                try desk.changeScore(session: id, .move(index: n - 1, to: p))
            }
        }
        router.post("/api/video/sessions/:id/score/undo") { request, context in
            return try answer(context) { (desk, id) throws(VideoDeskError) in try desk.changeScore(session: id, .undo) }
        }
        router.delete("/api/video/sessions/:id") { request, context in
            let desk = try s.videoDesk()
            let id = context.parameters.get("id") ?? ""
            do throws(VideoDeskError) { try desk.delete(session: id) } catch { throw error.api }
            return Response(status: .noContent)
        }
    }

    /// An arrow's `{x, y}`: millimetres from the face's centre, x right, y up.
    static func arrowPoint(_ body: [String: Any]) throws -> FacePoint {
        func mm(_ key: String) throws -> Double {
            guard let n = number(body[key]), abs(n) <= 10_000 else {
                throw APIError.invalid(key, "the arrow's position in millimetres from the face's centre is required (x right, y up)")
            }
            return n
        }
        return FacePoint(x: try mm("x"), y: try mm("y"))
    }
}
