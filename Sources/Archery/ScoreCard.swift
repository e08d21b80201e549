// SPDX-License-Identifier: Apache-2.0
// A round's score card: arrows placed on the face in the order they were shot, by end.

/// One arrow on the card: where it hit and what that scores.
public struct PlacedArrow: Hashable, Sendable {
    public var point: FacePoint
    public var score: ArrowScore
}

/// Why the card refused a change.
public struct ScoreCardError: Error, Hashable, Sendable, CustomStringConvertible {
    public let description: String
}

/// Arrows in shooting order, grouped into ends, scored on one face with one arrow
/// diameter and bow class. Arrow `i` belongs to clip `i` of the session (shots and clips
/// are both in order). Every change can be undone, in reverse order.
public struct ScoreCard: Sendable {
    public let face: TargetFace
    public let bow: BowClass
    /// Shaft diameter, millimetres, within `ArrowDiameter.range`.
    public let arrowDiameter: Double
    /// Arrows in one end: 3 (indoor) or 6 (outdoor).
    public let arrowsPerEnd: Int
    public private(set) var arrows: [PlacedArrow] = []

    private enum Change: Sendable {
        case placed
        case moved(index: Int, from: FacePoint)
    }
    private var history: [Change] = []

    public init(face: TargetFace, bow: BowClass = .recurve, arrowDiameter: Double = ArrowDiameter.standard,
                arrowsPerEnd: Int = 6) throws(ScoreCardError) {
        guard ArrowDiameter.range.contains(arrowDiameter) else {
            throw ScoreCardError(description: "arrow diameter \(arrowDiameter) mm is outside \(ArrowDiameter.range.lowerBound)–\(ArrowDiameter.range.upperBound) mm")
        }
        guard arrowsPerEnd == 3 || arrowsPerEnd == 6 else {
            throw ScoreCardError(description: "arrows per end must be 3 or 6, not \(arrowsPerEnd)")
        }
        self.face = face
        self.bow = bow
        self.arrowDiameter = arrowDiameter
        self.arrowsPerEnd = arrowsPerEnd
    }

    /// Scores `point` on this card's face with its shaft and bow.
    public func score(at point: FacePoint) -> ArrowScore {
        face.score(point, arrowDiameter: arrowDiameter, bow: bow)
    }

    /// Places the next arrow; returns its score.
    @discardableResult
    public mutating func place(at point: FacePoint) throws(ScoreCardError) -> ArrowScore {
        try check(point)
        let s = score(at: point)
        arrows.append(PlacedArrow(point: point, score: s))
        history.append(.placed)
        return s
    }

    /// Drags arrow `index` to `point`; returns its new score.
    @discardableResult
    public mutating func move(_ index: Int, to point: FacePoint) throws(ScoreCardError) -> ArrowScore {
        guard arrows.indices.contains(index) else {
            throw ScoreCardError(description: "there is no arrow \(index + 1) (the card has \(arrows.count))")
        }
        try check(point)
        history.append(.moved(index: index, from: arrows[index].point))
        arrows[index] = PlacedArrow(point: point, score: score(at: point))
        return arrows[index].score
    }

    /// Whether `undo` has something to take back.
    public var canUndo: Bool { !history.isEmpty }

    /// Takes back the last placement or move; false when there is nothing to undo.
    @discardableResult
    public mutating func undo() -> Bool {
        guard let last = history.popLast() else { return false }
        switch last {
        case .placed:
            arrows.removeLast()
        case .moved(let index, let from):
            arrows[index] = PlacedArrow(point: from, score: score(at: from))
        }
        return true
    }

    private func check(_ point: FacePoint) throws(ScoreCardError) {
        guard point.x.isFinite, point.y.isFinite else {
            throw ScoreCardError(description: "an arrow's position must be a number of millimetres")
        }
    }

    /// Arrows grouped by end, the last end possibly short.
    public var ends: [ArraySlice<PlacedArrow>] {
        stride(from: 0, to: arrows.count, by: arrowsPerEnd).map { arrows[$0..<min($0 + arrowsPerEnd, arrows.count)] }
    }

    /// Each end's sum, in order.
    public var endTotals: [Int] { ends.map { $0.reduce(0) { $0 + $1.score.points } } }
    /// The running total after each end, as a score sheet writes it.
    public var runningTotals: [Int] {
        var sum = 0
        return endTotals.map { sum += $0; return sum }
    }
    public var total: Int { arrows.reduce(0) { $0 + $1.score.points } }
    /// Arrows in the X ring.
    public var xCount: Int { arrows.filter { $0.score == .x }.count }
    /// Arrows worth 10, X included (the "10s" column of a score sheet).
    public var tenCount: Int { arrows.filter { $0.score.points == 10 }.count }
    public var hitCount: Int { arrows.filter { $0.score != .miss }.count }
    /// The most this many arrows can score.
    public var maximum: Int { arrows.count * 10 }
}

/// What is kept of a card: its face, shaft and bow, and where each arrow hit. Scores are
/// not kept; they follow from the points on reading the sheet back.
public struct ScoreSheet: Codable, Hashable, Sendable {
    public var face: TargetFace
    public var bow: BowClass
    public var arrowDiameter: Double
    public var arrowsPerEnd: Int
    public var arrows: [FacePoint]

    public init(face: TargetFace, bow: BowClass, arrowDiameter: Double, arrowsPerEnd: Int, arrows: [FacePoint] = []) {
        self.face = face
        self.bow = bow
        self.arrowDiameter = arrowDiameter
        self.arrowsPerEnd = arrowsPerEnd
        self.arrows = arrows
    }
}

/// One change a coach makes on a card.
public enum ScoreChange: Hashable, Sendable {
    case place(FacePoint)
    /// Arrow `index` (from 0) dragged to a new point.
    case move(index: Int, to: FacePoint)
    case undo
}

extension ScoreCard {
    /// Reads a kept sheet back: each arrow placed in order (so undo takes them back one by one).
    public init(sheet: ScoreSheet) throws(ScoreCardError) {
        try self.init(face: sheet.face, bow: sheet.bow, arrowDiameter: sheet.arrowDiameter, arrowsPerEnd: sheet.arrowsPerEnd)
        for p in sheet.arrows { try place(at: p) }
    }

    public var sheet: ScoreSheet {
        ScoreSheet(face: face, bow: bow, arrowDiameter: arrowDiameter, arrowsPerEnd: arrowsPerEnd, arrows: arrows.map(\.point))
    }

    /// Applies a change; `undo` with nothing to take back is refused.
    public mutating func apply(_ change: ScoreChange) throws(ScoreCardError) {
        switch change {
        case .place(let p): try place(at: p)
        case .move(let i, let p): try move(i, to: p)
        case .undo:
            guard undo() else { throw ScoreCardError(description: "there is nothing to undo") }
        }
    }
}
