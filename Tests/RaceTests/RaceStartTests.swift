// SPDX-License-Identifier: Apache-2.0
// Starts across gates in virtual time: every start type from a remote start gate at 10 %
// loss, false starts that void the run on every gate, control gates, start type changes.

import ClockSync
import GateCore
import PeerWire
import Race
import Testing

@Suite struct RaceStartTests {
    static let host = GateID(0x1111), starter = GateID(0x2222), finish = GateID(0x3333)
    static let s: Int64 = 1_000_000_000
    static let lossy = SimulatedLink(delay: .milliseconds(5), jitter: .milliseconds(3), loss: 0.10, duplicate: 0.05, reorder: 0.10)

    /// The start gate is a remote gate at 0 m, the host a lap gate at 15 m, the finish at
    /// 30 m: the start travels on the race link like any crossing.
    static func course(_ type: RaceStartType, link: SimulatedLink = lossy, seed: UInt64 = 1) throws -> RaceSimulation {
        var configuration = RaceConfiguration()
        configuration.startType = type
        var sim = RaceSimulation(gateIDs: [host, starter, finish],
                                 clocks: [(5 * s, 0), (-1_300_000_000, 40), (250_000_000, -25)], link: link, seed: seed,
                                 configuration: configuration)
        sim.run(until: 15 * s)
        try sim.assign(starter, role: .start, distanceMetres: 0)
        try sim.assign(host, role: .lap, distanceMetres: 15)
        try sim.assign(finish, role: .finish, distanceMetres: 30)
        sim.run(until: 16 * s)
        return sim
    }

    /// Five runs per start type, each started by the remote start gate; the athlete also
    /// runs through the start gate's own camera, which must neither start nor split.
    @Test(arguments: [RaceStartType.buttonRelease, .countdown, .voice, .inFrame], [UInt64(1), 2])
    func everyStartTypeFromARemoteStartGateAtTenPercentLoss(type: RaceStartType, seed: UInt64) throws {
        var sim = try Self.course(type, seed: seed)
        let host = sim.gates[0].session
        #expect(host.phase == .ready)
        #expect(host.gates.map(\.role) == [.start, .lap, .finish])
        #expect(sim.gates[1].session.role == .start && sim.gates[1].session.configuration.startType == type)
        var t = 16 * Self.s
        for run in 0..<5 {
            try sim.armRun()
            t += Self.s
            sim.run(until: t)
            let runID = sim.gates[0].session.runID
            #expect(sim.gates[1].session.runID == runID)
            let t0 = t + 123_456_789, tStartCam = t0 + 300_000_000, t1 = t0 + 1_800_000_000 + Int64(run) * 10_000_000
            let t2 = t0 + 3_900_000_000 + Int64(run) * 20_000_000
            sim.start(atGate: 1, trueTime: t0)
            sim.crossing(atGate: 1, trueTime: tStartCam)
            sim.crossing(atGate: 0, trueTime: t1)
            sim.crossing(atGate: 2, trueTime: t2)
            t += 5 * Self.s
            sim.run(until: t)
            let h = sim.gates[0].session
            #expect(h.phase == .finished, "run \(run)")
            #expect(h.runStartType == type)
            let start = try #require(h.runStart)
            #expect(start.gate == Self.starter && start.crossingID == 0 && start.runID == runID)
            let splits = h.splits()
            #expect(splits.map(\.gateIndex) == [1, 2], "run \(run): \(splits.map(\.gateIndex))")
            for (split, truth) in zip(splits, [t1 - t0, t2 - t0]) {
                let error = split.time.nanoseconds - truth
                #expect(Double(abs(error)) <= 4 * Double(split.uncertainty.nanoseconds), "run \(run) error \(error) ns")
            }
        }
        // Each start reached the host once per run (a repeat is echoed, not taken again).
        #expect(sim.hostStarts.count == 5)
        #expect(Set(sim.hostStarts.map(\.runID)).count == 5)
        #expect(sim.lost > 0)
        #expect(sim.gates[1].session.unacknowledged == 0 && sim.gates[2].session.unacknowledged == 0)
        #expect(sim.undecodable == 0)
    }

    /// A start before the start gate heard of the run, or from a gate that is not the start,
    /// starts nothing; a flying start is the start gate's crossing.
    @Test func onlyTheStartGateStartsAndAFlyingStartIsACrossing() throws {
        var sim = try Self.course(.buttonRelease, link: SimulatedLink())
        try sim.armRun()
        sim.run(until: 17 * Self.s)
        sim.start(atGate: 2, trueTime: 17 * Self.s + 100_000_000)   // the finish gate's button
        sim.crossing(atGate: 1, trueTime: 17 * Self.s + 200_000_000)  // the start gate's camera
        sim.run(until: 18 * Self.s)
        #expect(sim.gates[0].session.phase == .waitingForCrossing)
        #expect(sim.hostStarts.isEmpty)

        var flying = try Self.course(.flying, link: SimulatedLink())
        try flying.armRun()
        flying.run(until: 17 * Self.s)
        flying.start(atGate: 1, trueTime: 17 * Self.s + 100_000_000)  // ignored: flying
        flying.crossing(atGate: 1, trueTime: 17 * Self.s + 500_000_000)
        flying.crossing(atGate: 2, trueTime: 21 * Self.s)
        flying.run(until: 22 * Self.s)
        let h = flying.gates[0].session
        #expect(h.phase == .finished && h.runStartType == .flying)
        #expect(h.runStart?.crossingID != 0)
        #expect(flying.hostStarts.isEmpty)
    }

    /// A false start at the remote start gate voids the run on the host, every other gate
    /// is told once, the next run is armed on every gate, and it is timed.
    @Test(arguments: [UInt64(1), 2, 3])
    func aFalseStartVoidsTheRunOnEveryGate(seed: UInt64) throws {
        var sim = try Self.course(.voice, seed: seed)
        try sim.armRun()
        sim.run(until: 17 * Self.s)
        let voided = sim.gates[0].session.runID
        sim.falseStart(atGate: 1, trueTime: 17 * Self.s + 400_000_000)
        sim.run(until: 19 * Self.s)
        let h = sim.gates[0].session
        #expect(h.falseStarts.map(\.runID) == [voided])
        #expect(h.falseStarts.first?.gate == Self.starter)
        #expect(h.runID == voided + 1 && h.phase == .waitingForCrossing)
        #expect(sim.falseStartNotices[0] == [voided])  // the host
        #expect(sim.falseStartNotices[2] == [voided])  // the finish gate, once despite repeats
        #expect(sim.falseStartNotices[1].isEmpty)      // the start gate saw it itself
        #expect(sim.gates[1].session.runID == voided + 1 && sim.gates[2].session.runID == voided + 1)
        #expect(sim.armedRuns[1].last == voided + 1)
        // A late start of the voided run changes nothing; the next run is timed.
        let t0 = 19 * Self.s + 500_000_000
        sim.start(atGate: 1, trueTime: t0)
        sim.crossing(atGate: 2, trueTime: t0 + 4_100_000_000)
        sim.run(until: 25 * Self.s)
        let after = sim.gates[0].session
        #expect(after.phase == .finished && after.runStart?.runID == voided + 1)
        let split = try #require(after.splits().last)
        #expect(abs(split.time.nanoseconds - 4_100_000_000) <= 4 * split.uncertainty.nanoseconds)
        #expect(sim.gates[1].session.unacknowledged == 0 && sim.gates[2].session.unacknowledged == 0)
    }

    /// A control gate has no camera duties: its crossings are not sent, it never starts or
    /// splits, and the course's start and finish are the gates around it.
    @Test func aControlGateNeverStartsOrSplits() throws {
        var sim = try Self.course(.flying, link: SimulatedLink())
        try sim.assign(Self.host, role: .control, distanceMetres: 0)
        sim.run(until: 17 * Self.s)
        let h = sim.gates[0].session
        #expect(h.gates.map(\.id) == [Self.host, Self.starter, Self.finish])
        #expect(h.gates.map(\.role) == [.control, .start, .finish])
        try sim.armRun()
        sim.run(until: 18 * Self.s)
        sim.crossing(atGate: 0, trueTime: 18 * Self.s + 100_000_000)  // the control gate's camera
        sim.crossing(atGate: 1, trueTime: 18 * Self.s + 200_000_000)
        sim.crossing(atGate: 0, trueTime: 19 * Self.s)
        sim.crossing(atGate: 2, trueTime: 21 * Self.s + 200_000_000)
        sim.run(until: 23 * Self.s)
        let after = sim.gates[0].session
        #expect(after.phase == .finished)
        #expect(after.runStart?.gate == Self.starter)
        #expect(after.splits().map(\.gate) == [Self.finish])
        #expect(sim.hostCrossings.allSatisfy { $0.gate != Self.host })
    }

    /// The coach changes the start type on the host: every gate takes it at once, the
    /// armed run is armed again with it; chosen during a run, it starts the next.
    @Test(arguments: [0.0, 0.10])
    func aStartTypeChangeReachesEveryGate(loss: Double) throws {
        var sim = try Self.course(.flying, link: SimulatedLink(loss: loss))
        try sim.armRun()
        sim.run(until: 17 * Self.s)
        let run = sim.gates[0].session.runID
        try sim.setStartType(.buttonRelease)
        sim.run(until: 19 * Self.s)
        #expect(sim.gates.allSatisfy { $0.session.configuration.startType == .buttonRelease })
        #expect(sim.gates[0].session.runID == run)
        #expect(sim.armedRuns[1].suffix(2) == [run, run])  // armed again, same run, new type
        // A countdown the start gate's engine began before the change does not start a
        // button-release run.
        sim.start(atGate: 1, trueTime: 19 * Self.s + 50_000_000, type: .countdown)
        sim.run(until: 19 * Self.s + 90_000_000)
        #expect(sim.gates[0].session.phase == .waitingForCrossing)
        sim.start(atGate: 1, trueTime: 19 * Self.s + 100_000_000)
        sim.run(until: 20 * Self.s)
        #expect(sim.gates[0].session.phase == .running)
        // Chosen while running: the next run has it, this one keeps its own.
        try sim.setStartType(.voice)
        #expect(sim.gates[0].session.configuration.startType == .buttonRelease)
        #expect(sim.gates[0].session.pendingStartType == .voice)
        sim.crossing(atGate: 2, trueTime: 23 * Self.s)
        sim.run(until: 24 * Self.s)
        #expect(sim.gates[0].session.phase == .finished && sim.gates[0].session.runStartType == .buttonRelease)
        try sim.armRun()
        sim.run(until: 26 * Self.s)
        #expect(sim.gates.allSatisfy { $0.session.configuration.startType == .voice })
        #expect(sim.armedRuns[1].last == run + 1)
    }
}

extension RaceStartTests {
    /// A 60 m with splits at 20 m and 40 m over four gates at 10 % loss: every run has three
    /// splits in course order, each within four reported sigmas of the truth, with segment
    /// speeds; a countdown start from the host, which is the start gate.
    @Test(arguments: [RaceStartType.flying, .countdown], [UInt64(1), 2])
    func fourGatesSixtyMetresWithSplits(type: RaceStartType, seed: UInt64) throws {
        let ids = [GateID(0x1111), GateID(0x2222), GateID(0x3333), GateID(0x4444)]
        var configuration = RaceConfiguration()
        configuration.startType = type
        var sim = RaceSimulation(gateIDs: ids, clocks: [(0, 0), (3 * Self.s, 30), (-2 * Self.s, -45), (700_000_000, 12)],
                                 link: Self.lossy, seed: seed, configuration: configuration)
        sim.run(until: 20 * Self.s)
        for (i, d) in [(1, 20.0), (2, 40.0), (3, 60.0)] { try sim.assign(ids[i], role: i == 3 ? .finish : .lap, distanceMetres: d) }
        sim.run(until: 21 * Self.s)
        #expect(sim.gates[0].session.gates.map(\.role) == [.start, .lap, .lap, .finish])
        var t = 21 * Self.s
        for run in 0..<4 {
            try sim.armRun()
            t += Self.s
            sim.run(until: t)
            let t0 = t + 50_000_000
            let times = [t0, t0 + 2_900_000_000 + Int64(run) * 7_000_000, t0 + 5_150_000_000, t0 + 7_300_000_000]
            if type == .flying { sim.crossing(atGate: 0, trueTime: times[0]) } else { sim.start(atGate: 0, trueTime: times[0]) }
            for i in 1...3 { sim.crossing(atGate: i, trueTime: times[i]) }
            t += 9 * Self.s
            sim.run(until: t)
            let host = sim.gates[0].session
            #expect(host.phase == .finished, "run \(run)")
            let splits = host.splits()
            #expect(splits.map(\.distanceMetres) == [20, 40, 60], "run \(run)")
            for (k, split) in splits.enumerated() {
                let error = split.time.nanoseconds - (times[k + 1] - times[0])
                #expect(Double(abs(error)) <= 4 * Double(split.uncertainty.nanoseconds), "run \(run) split \(k): \(error) ns")
                let trueSpeed = 20.0 / (Double(times[k + 1] - times[k]) * 1e-9)
                #expect(abs((split.segmentSpeed ?? 0) - trueSpeed) < 0.01, "run \(run) split \(k)")
            }
        }
        #expect(sim.lost > 0)
        #expect((1...3).allSatisfy { sim.gates[$0].session.unacknowledged == 0 })
    }
}

@Suite struct RaceDistanceTests {
    /// Moving a gate on the page tells every gate at once (`distanceChange`), besides the
    /// assignments; the moved gate takes its new distance from it alone.
    @Test func aMovedGateHearsItsNewDistance() throws {
        var sim = try RaceStartTests.course(.flying, link: SimulatedLink())
        var host = sim.gates[0].session
        var actions: [RaceAction] = []
        try host.assign(RaceStartTests.finish, role: .finish, distanceMetres: 36.576, into: &actions)
        let changes = actions.compactMap { a -> (GateID, DistanceChange)? in
            guard case let .send(e, to) = a, case let .distanceChange(d) = e.message else { return nil }
            return (to, d)
        }
        #expect(Set(changes.map(\.0)) == [RaceStartTests.starter, RaceStartTests.finish])
        #expect(changes.allSatisfy { $0.1 == DistanceChange(gate: RaceStartTests.finish, distanceFromStartMetres: 36.576) })
        // The same distance again is no move: no message.
        actions.removeAll()
        try host.assign(RaceStartTests.finish, role: .finish, distanceMetres: 36.576, into: &actions)
        #expect(!actions.contains { if case let .send(e, _) = $0, case .distanceChange = e.message { true } else { false } })

        // The finish gate, given only the distance change, moves.
        var gate = sim.gates[2].session
        actions.removeAll()
        let e = Envelope(session: host.session, sender: host.me, bootEpoch: host.bootEpoch, sequence: 1_000_000,
                         message: .distanceChange(DistanceChange(gate: RaceStartTests.finish, distanceFromStartMetres: 36.576)))
        gate.receive(e, now: sim.local(2), into: &actions)
        #expect(gate.assignment?.distanceFromStartMetres == 36.576)
        #expect(actions.contains { if case let .assigned(a) = $0 { a.distanceFromStartMetres == 36.576 } else { false } })
        // A move sent before the assignment in force (delivered late) changes nothing.
        let stale = Envelope(session: host.session, sender: host.me, bootEpoch: host.bootEpoch, sequence: 999_999,
                             message: .distanceChange(DistanceChange(gate: RaceStartTests.finish, distanceFromStartMetres: 50)))
        actions.removeAll()
        gate.receive(stale, now: sim.local(2), into: &actions)
        #expect(gate.assignment?.distanceFromStartMetres == 36.576 && actions.isEmpty)
        // Another gate's move changes nothing here.
        var other = sim.gates[1].session
        actions.removeAll()
        other.receive(e, now: sim.local(1), into: &actions)
        #expect(other.assignment?.distanceFromStartMetres == 0 && actions.isEmpty)

        // Through the link, every gate ends up with the course the host holds.
        try sim.assign(RaceStartTests.finish, role: .finish, distanceMetres: 40)
        sim.run(until: 17 * RaceStartTests.s)
        #expect(sim.gates[2].session.assignment?.distanceFromStartMetres == 40)
    }
}
