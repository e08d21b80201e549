// SPDX-License-Identifier: Apache-2.0
// Host election among `auto` gates and failover mid-race, in virtual time at 10 % loss.

import ClockSync
import GateCore
import PeerWire
import Race
import Testing

@Suite struct RaceElectionTests {
    static let a = GateID(0x3333), b = GateID(0x1111), c = GateID(0x2222)
    static let s: Int64 = 1_000_000_000
    static let lossy = SimulatedLink(delay: .milliseconds(5), jitter: .milliseconds(3), loss: 0.10, duplicate: 0.05, reorder: 0.10)

    static func autoGates(link: SimulatedLink = lossy, seed: UInt64 = 1, type: RaceStartType = .flying) -> RaceSimulation {
        var configuration = RaceConfiguration()
        configuration.startType = type
        return RaceSimulation(gateIDs: [a, b, c], clocks: [(5 * s, 0), (-1_300_000_000, 40), (250_000_000, -25)],
                              link: link, seed: seed, configuration: configuration, electable: true)
    }

    /// Three gates switched on together, all `auto`: the lowest id hosts, the others join it.
    @Test(arguments: [UInt64(1), 2, 3])
    func autoGatesElectTheLowestID(seed: UInt64) throws {
        var sim = Self.autoGates(seed: seed)
        // Why 20 s: the election takes 3 s, and at 10 % loss with 3 ms jitter a gate's clock
        // may need 13 s more to be usable (the same as under a configured host).
        sim.run(until: 20 * Self.s)
        let hosts = sim.gates.indices.filter { sim.gates[$0].session.kind == .host }
        #expect(hosts == [1], "hosts \(hosts.map { sim.gates[$0].session.me })")
        let host = sim.gates[1].session
        #expect(host.phase == .ready && host.elections == 1, "\(host.phase)")
        #expect(Set(host.gates.map(\.id)) == [Self.a, Self.b, Self.c] && host.gates.allSatisfy(\.joined))
        for i in [0, 2] {
            #expect(sim.gates[i].session.host == Self.b && sim.gates[i].session.phase == .ready)
        }
    }

    /// The host (a lap gate) dies mid-race after the start gate's crossing was
    /// acknowledged: the next lowest id takes over, the gates keep their places on the
    /// course, the start is reported again, and the run is timed to the finish.
    @Test(arguments: [RaceStartType.flying, .buttonRelease], [UInt64(1), 2])
    func aHostLostMidRaceIsReplacedAndTheRunIsNotLost(type: RaceStartType, seed: UInt64) throws {
        var sim = Self.autoGates(seed: seed, type: type)
        sim.run(until: 20 * Self.s)
        // Course: c (0x2222) starts at 0 m, the host b (0x1111) is a lap gate at 15 m, a
        // (0x3333) finishes at 30 m. When b dies, c is the lowest id left.
        try sim.assign(Self.c, role: .start, distanceMetres: 0)
        try sim.assign(Self.b, role: .lap, distanceMetres: 15)
        try sim.assign(Self.a, role: .finish, distanceMetres: 30)
        sim.run(until: 21 * Self.s)
        try sim.armRun()
        sim.run(until: 22 * Self.s)
        let run = try #require(sim.hostIndex.map { sim.gates[$0].session.runID })
        let t0 = 22 * Self.s + 100_000_000, t2 = t0 + 3_700_000_000
        if type == .flying { sim.crossing(atGate: 2, trueTime: t0) } else { sim.start(atGate: 2, trueTime: t0) }
        sim.crossing(atGate: 1, trueTime: t0 + 1_900_000_000)
        sim.run(until: t0 + 1_950_000_000)
        #expect(sim.gates[1].session.phase == .running)
        #expect(sim.gates[2].session.unacknowledged == 0)  // the start reached the old host
        sim.powerOff(1)
        sim.crossing(atGate: 0, trueTime: t2)  // the finish, while no host is up
        sim.run(until: 50 * Self.s)
        let h = try #require(sim.hostIndex)
        #expect(h == 2, "new host \(sim.gates[h].session.me)")
        var host = sim.gates[h].session
        #expect(host.elections == 1)
        if host.phase == .ready {
            try sim.armRun()  // the daemon arms at once; the same run resumes
            sim.run(until: 55 * Self.s)
            host = sim.gates[h].session
        }
        #expect(host.runID == run)
        #expect(host.phase == .finished, "phase \(host.phase)")
        let finish = try #require(host.gates.first { $0.id == Self.a })
        #expect(finish.role == .finish && finish.distanceMetres == 30)
        let split = try #require(host.splits().last)
        #expect(split.gate == Self.a)
        let error = split.time.nanoseconds - (t2 - t0)
        #expect(Double(abs(error)) <= 4 * Double(split.uncertainty.nanoseconds), "error \(error) ns")
        #expect(sim.gates[0].session.host == Self.c)
    }
}
