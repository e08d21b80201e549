// SPDX-License-Identifier: Apache-2.0
// The coach's board from a row of ergs: tiles, athletes, stale ergs, the race order.

import Rowing
import Testing

@Suite("Erg hub and board")
struct ErgHubTests {
    /// Four ergs on 500 m at different paces, erg 3 out of reach from 40 to 60 s.
    func race() -> [PM5LogEvent] {
        var all: [PM5LogEvent] = []
        for erg in 1...4 {
            var p = PM5Piece()
            p.erg = erg
            p.distance = 500
            p.split = 250
            p.pace = 95 + 5 * Double(erg)
            if erg == 3 { p.outOfReach = 40...60 }
            all += p.events().events
        }
        return all.sorted { $0.t < $1.t }
    }

    @Test("tiles in erg order with their athletes; an erg out of reach or silent is stale; the race order is by distance")
    func board() {
        var hub = ErgHub()
        for (erg, name) in [(1, "Ada"), (2, "Grace"), (3, "Hedy"), (4, "Joan")] { hub.assign(erg: erg, athlete: name) }
        let events = race()
        for e in events where e.t <= 50 { hub.apply(e) }
        let b = hub.board(now: 50)
        #expect(b.tiles.map(\.erg) == [1, 2, 3, 4] && b.tiles.map(\.athlete) == ["Ada", "Grace", "Hedy", "Joan"])
        #expect(b.tiles.map(\.stale) == [false, false, true, false])
        #expect(!b.tiles[2].connected && b.tiles[2].gaps == 1)
        #expect(b.tiles[0].strokeRate == 24 && b.tiles[0].power != nil && b.tiles[0].forceCurve.count == 24 && b.tiles[0].dragFactor == 120)
        // Erg 1 is fastest; erg 3's last figures are from before it went out of reach.
        #expect(b.race.map(\.erg) == [1, 2, 4, 3] && b.race[0].behind == 0 && b.race[1].behind > 0)
        // Nothing heard from anyone for longer than the stale time: every tile is stale.
        let silent = hub.board(now: 60)
        #expect(silent.tiles.allSatisfy { $0.stale })
        for e in events where e.t > 50 { hub.apply(e) }
        let end = hub.board(now: events.last!.t)
        #expect(end.tiles.allSatisfy { $0.finished } && end.tiles[2].connected)
        #expect(end.race.allSatisfy { $0.distance >= 499 })
    }

    @Test("the board encodes for the page")
    func encodes() throws {
        var hub = ErgHub()
        hub.add(erg: 7, name: "PM5 430000007")
        for e in race() where e.erg == 1 && e.t < 10 { hub.apply(e) }
        let b = hub.board(now: 10)
        #expect(b.tiles.map(\.erg) == [1, 7] && b.tiles[1].name == "PM5 430000007" && b.tiles[1].stale && b.race.count == 1)
    }
}
