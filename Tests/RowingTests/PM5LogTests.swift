// SPDX-License-Identifier: Apache-2.0
// Synthetic pieces with exact truth through the text log and into recorders: every stroke
// that arrived is recorded, the stretch out of reach is a gap with its strokes counted,
// malformed notifications are dropped; eight ergs at once.

import Rowing
import Testing

@Suite("PM5 logs and synthetic pieces")
struct PM5LogTests {
    @Test("a 2000 m piece out of reach for 20 s and with malformed strokes: 100 % of what arrived recorded, the gap marked with the strokes rowed in it")
    func pieceWithDropout() throws {
        var piece = PM5Piece()
        piece.outOfReach = 120...140
        piece.malformedEvery = 37
        let truth = piece.events()
        let text = PM5Log.write(truth.events, header: ["Name: 2000 m at 24/min, out of reach 120-140 s, every 37th stroke cut short"])
        let events = try PM5Log.read(text)
        // The log keeps milliseconds: the same events, each within half of one.
        #expect(events.count == truth.events.count)
        for (a, b) in zip(events, truth.events) {
            #expect(abs(a.t - b.t) <= 0.0005 && a.erg == b.erg)
            switch (a, b) {
            case (.notification(_, _, let c1, let v1), .notification(_, _, let c2, let v2)): #expect(c1 == c2 && v1 == v2)
            case (.connected, .connected), (.disconnected, .disconnected): break
            default: Issue.record("\(a) read back as \(b)")
            }
        }
        #expect(try PM5Log.read(PM5Log.write(events)) == events)
        let r = try #require(PM5Log.replay(events)[1])
        #expect(r.strokes.map(\.data.strokeCount) == truth.strokesArrived)
        #expect(r.dropped == truth.malformed && truth.malformed > 0)
        let inGap = truth.strokesSent.filter { n in !truth.strokesArrived.contains(n) }.count - truth.malformed
        #expect(r.gaps.count == 1 && r.gaps[0].from == 120 && r.gaps[0].to == 140)
        #expect(r.gaps[0].missedStrokes == inGap && inGap >= 7)
        // Every stroke that arrived has its power; all but the ones whose force curve
        // the gap cut have their curve.
        #expect(r.strokes.allSatisfy { $0.power != nil })
        #expect(r.strokes.filter { !$0.forceCurve.isEmpty }.count >= r.strokes.count - 2)
        #expect(r.summary?.distance == 2000 && r.splits.count == 4)
        print("synthetic 2000 m: \(truth.strokesSent.count) strokes sent, \(truth.strokesArrived.count) arrived whole, \(r.strokes.count) recorded, \(inGap) in the gap, \(r.dropped) malformed dropped")
    }

    @Test("eight ergs at once, one out of reach and back: each erg's record is its own, complete")
    func eightErgs() throws {
        var all: [PM5LogEvent] = []
        var truths: [Int: PM5Piece.Result] = [:]
        for erg in 1...8 {
            var p = PM5Piece()
            p.erg = erg
            p.distance = 1000
            p.pace = 100 + Double(erg) * 3
            p.strokeRate = 22 + Double(erg)
            p.start = Double(erg) * 0.37
            p.sampleRate = .tenthSecond
            if erg == 5 { p.outOfReach = 60...75 }
            let t = p.events()
            truths[erg] = t
            all += t.events
        }
        all.sort { $0.t < $1.t }
        let ergs = PM5Log.replay(try PM5Log.read(PM5Log.write(all)))
        #expect(ergs.count == 8)
        for (erg, t) in truths {
            let r = try #require(ergs[erg])
            #expect(r.strokes.map(\.data.strokeCount) == t.strokesArrived, "erg \(erg)")
            #expect(r.gaps.count == (erg == 5 ? 1 : 0) && r.dropped == 0)
        }
    }

    @Test("malformed log lines are refused with the line", arguments: [
        ("N t=1.0 erg=1 c=0035 v=0g", "line 1: \"0g\" is not a hex byte"),
        ("N t=1.0 erg=1 v=00", "line 1: no characteristic c="),
        ("X t=1.0 erg=1", "line 1: \"X\" is not an event (N, C or D)"),
        ("C erg=1", "line 1: no time t="),
        ("C t=2 erg=1\nC t=1 erg=1", "line 2: time goes back (1.0 after 2.0)"),
        ("N t=1 erg=1 c=0035 v=0", "line 1: no value v= of whole bytes"),
    ])
    func badLines(text: String, why: String) {
        do {
            _ = try PM5Log.read(text)
            Issue.record("\(text) was read")
        } catch {
            #expect(error.description == why)
        }
    }
}
