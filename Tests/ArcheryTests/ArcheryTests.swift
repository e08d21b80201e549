// SPDX-License-Identifier: Apache-2.0
// Ring geometry, the line-cutter rule on every face, the compound inner ten and the card.

import Archery
import Foundation
import Testing

@Suite("Archery scoring")
struct ArcheryTests {
    /// A point `r` millimetres from the face's (or a spot's) centre along a direction.
    func at(_ r: Double, angle: Double = 0.7, from c: FacePoint = FacePoint(x: 0, y: 0)) -> FacePoint {
        FacePoint(x: c.x + r * cos(angle), y: c.y + r * sin(angle))
    }

    @Test("ring radii follow the rules' widths: 1 ring 610, 400 and 200 mm out; X half the ten", arguments: [
        (TargetFace.wa122, 61.0), (.wa80, 40.0), (.wa40, 20.0),
    ])
    func geometry(face: TargetFace, width: Double) {
        #expect(face.ringWidth == width)
        #expect(face.outerRadius(ofRing: 10) == width)
        #expect(face.outerRadius(ofRing: 1) == 10 * width)
        #expect(face.xRadius == width / 2)
        #expect(face.spotCentres == [FacePoint(x: 0, y: 0)])
        // The face is as wide as its name: 122, 80, 40 cm.
        #expect(face.drawingRadius * 2 == width * 20)
    }

    @Test("a thin shaft's centre in the middle of each zone scores that zone on every full face", arguments: [TargetFace.wa122, .wa80, .wa40])
    func everyZone(face: TargetFace) {
        for n in 1...10 {
            let middle = face.outerRadius(ofRing: n) - face.ringWidth / 2
            let expected: ArrowScore = n == 10 ? .x : .ring(n)
            // The ten's middle is the X ring's edge; move a little out for the plain ten.
            let r = n == 10 ? face.xRadius + face.ringWidth / 4 : middle
            #expect(face.score(at(r), arrowDiameter: 3.1, bow: .recurve) == (n == 10 ? .ring(10) : expected))
        }
        #expect(face.score(at(0), arrowDiameter: 3.1, bow: .recurve) == .x)
        #expect(face.score(at(face.spotRadius + 10), arrowDiameter: 3.1, bow: .recurve) == .miss)
    }

    @Test("line cutters: touching the line scores the higher zone, a hair off it the lower", arguments: [TargetFace.wa122, .wa80, .wa40, .vegas3])
    func lineCutters(face: TargetFace) {
        let d = 5.5
        let centre = face.spotCentres[0]
        for n in face.lowestRing...10 {
            let line = face.outerRadius(ofRing: n)
            // The shaft's edge exactly on the line: it touches, so ring n.
            #expect(face.score(at(line + d / 2, from: centre), arrowDiameter: d, bow: .recurve) == .ring(n))
            // 0.05 mm further out it no longer touches: the zone outside (or a miss).
            let outside: ArrowScore = n == face.lowestRing ? .miss : .ring(n - 1)
            #expect(face.score(at(line + d / 2 + 0.05, from: centre), arrowDiameter: d, bow: .recurve) == outside)
        }
        // The X line likewise.
        #expect(face.score(at(face.xRadius + d / 2, from: centre), arrowDiameter: d, bow: .recurve) == .x)
        #expect(face.score(at(face.xRadius + d / 2 + 0.05, from: centre), arrowDiameter: d, bow: .recurve) == .ring(10))
    }

    @Test("a thicker shaft cuts a line a thinner one misses")
    func shaftDiameter() {
        // Centre 2 mm outside the 9 line of the 40 cm face: a 3.1 mm shaft stays out
        // (edge 0.45 mm off), a 9.3 mm shaft reaches in (edge 2.65 mm over).
        let p = at(TargetFace.wa40.outerRadius(ofRing: 9) + 2)
        #expect(TargetFace.wa40.score(p, arrowDiameter: 3.1, bow: .recurve) == .ring(8))
        #expect(TargetFace.wa40.score(p, arrowDiameter: 9.3, bow: .recurve) == .ring(9))
    }

    @Test("compound scores 10 only inside the inner ten on the 40 cm face and the 3-spot, not outdoors")
    func compoundInnerTen() {
        for face in [TargetFace.wa40, .vegas3] {
            let c = face.spotCentres[0]
            let outerTen = at(face.xRadius + 5, from: c)
            #expect(face.score(outerTen, arrowDiameter: 3.1, bow: .recurve) == .ring(10))
            #expect(face.score(outerTen, arrowDiameter: 3.1, bow: .compound) == .ring(9))
            #expect(face.score(at(1, from: c), arrowDiameter: 3.1, bow: .compound) == .x)
            #expect(face.score(at(face.outerRadius(ofRing: 9) - 2, from: c), arrowDiameter: 3.1, bow: .compound) == .ring(9))
        }
        let outdoor = at(TargetFace.wa80.xRadius + 5)
        #expect(TargetFace.wa80.score(outdoor, arrowDiameter: 3.1, bow: .compound) == .ring(10))
    }

    @Test("3-spot: each spot scores 6 to X around its own centre; between the spots and at the face centre is a miss")
    func vegas() {
        let face = TargetFace.vegas3
        #expect(face.spotCentres.count == 3)
        #expect(face.lowestRing == 6)
        #expect(face.spotRadius == 100)
        // The spots stand apart: centres 220 mm from each other.
        let c = face.spotCentres
        for (a, b) in [(0, 1), (1, 2), (0, 2)] {
            let dx = c[a].x - c[b].x, dy = c[a].y - c[b].y
            #expect(abs((dx * dx + dy * dy).squareRoot() - 220) < 1e-9)
        }
        for spot in c {
            #expect(face.score(spot, arrowDiameter: 5, bow: .recurve) == .x)
            #expect(face.score(at(50, from: spot), arrowDiameter: 3.1, bow: .recurve) == .ring(8))
            #expect(face.score(at(95, from: spot), arrowDiameter: 3.1, bow: .recurve) == .ring(6))
        }
        // Halfway between the two upper spots: 110 mm from each, outside both 6 rings.
        let between = FacePoint(x: 0, y: c[0].y)
        #expect(face.score(between, arrowDiameter: 5, bow: .recurve) == .miss)
        // The face's centre (the triangle's centroid) is 127 mm from every spot.
        #expect(face.score(FacePoint(x: 0, y: 0), arrowDiameter: 9.9, bow: .recurve) == .miss)
    }

    @Test("labels round-trip and order as a sheet orders them")
    func labels() {
        let all: [ArrowScore] = [.x] + (1...10).reversed().map { .ring($0) } + [.miss]
        for s in all { #expect(ArrowScore(label: s.label) == s) }
        #expect(all == all.sorted(by: >))
        #expect(ArrowScore(label: "11") == nil)
        #expect(ArrowScore(label: "0") == nil)
        #expect(ArrowScore.x.points == 10 && ArrowScore.miss.points == 0)
    }

    func undo(_ card: inout ScoreCard) -> Bool { card.undo() }

    @Test("score card: ends, running totals, Xs and tens, moves and undo in reverse order")
    func card() throws {
        var card = try ScoreCard(face: .wa122, arrowDiameter: 5.5, arrowsPerEnd: 3)
        let w = TargetFace.wa122.ringWidth
        let shots: [(Double, ArrowScore)] = [
            (0, .x), (w * 1.5, .ring(9)), (w * 3.5, .ring(7)),  // end 1: 26
            (w * 0.75, .ring(10)), (w * 20, .miss), (w * 9.5, .ring(1)),  // end 2: 11
            (w * 2.5, .ring(8)),  // end 3 (short): 8
        ]
        for (r, expected) in shots {
            #expect(try card.place(at: at(r)) == expected)
        }
        #expect(card.endTotals == [26, 11, 8])
        #expect(card.runningTotals == [26, 37, 45])
        #expect(card.total == 45)
        #expect(card.xCount == 1)
        #expect(card.tenCount == 2)
        #expect(card.hitCount == 6)
        #expect(card.maximum == 70)
        #expect(card.ends.map(\.count) == [3, 3, 1])

        // The coach drags the miss onto the nine, then the first arrow out to the 8.
        #expect(try card.move(4, to: at(w * 1.5)) == .ring(9))
        #expect(try card.move(0, to: at(w * 2.5)) == .ring(8))
        #expect(card.total == 45 + 9 - 2)
        #expect(undo(&card))  // the first arrow back to the X
        #expect(card.arrows[0].score == .x)
        #expect(undo(&card))  // the fifth back to a miss
        #expect(card.arrows[4].score == .miss)
        #expect(undo(&card))  // the seventh arrow taken off
        #expect(card.arrows.count == 6)
        #expect(card.total == 37)
        for _ in 0..<6 { #expect(undo(&card)) }
        #expect(card.arrows.isEmpty)
        #expect(!undo(&card))
    }

    @Test("the card refuses a shaft outside 3.1–9.9 mm, odd ends, unknown arrows and positions that are not numbers")
    func refusals() throws {
        #expect(throws: ScoreCardError.self) { try ScoreCard(face: .wa40, arrowDiameter: 3.0) }
        #expect(throws: ScoreCardError.self) { try ScoreCard(face: .wa40, arrowDiameter: 10.0) }
        #expect(throws: ScoreCardError.self) { try ScoreCard(face: .wa40, arrowsPerEnd: 4) }
        _ = try ScoreCard(face: .wa40, arrowDiameter: 3.1)
        _ = try ScoreCard(face: .wa40, arrowDiameter: 9.9)
        var card = try ScoreCard(face: .wa40)
        let error = #expect(throws: ScoreCardError.self) { try card.move(0, to: FacePoint(x: 0, y: 0)) }
        #expect(error?.description == "there is no arrow 1 (the card has 0)")
        #expect(throws: ScoreCardError.self) { try card.place(at: FacePoint(x: .nan, y: 0)) }
        #expect(card.arrows.isEmpty)
    }
}
