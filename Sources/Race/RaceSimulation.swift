// SPDX-License-Identifier: Apache-2.0
// Several race sessions on an in-memory network in virtual time, with per-gate clock errors.

import ClockSync
public import GateCore
public import PeerWire

/// Impairment of the simulated Wi-Fi, the same in both directions.
public struct SimulatedLink: Sendable, Hashable {
    /// One-way delay and its uniform jitter (± jitter).
    public var delay: Span
    public var jitter: Span
    /// Probabilities per datagram, 0…1.
    public var loss: Double
    public var duplicate: Double
    /// Held back by an extra `delay + 2 × jitter` so later datagrams overtake it.
    public var reorder: Double

    public init(delay: Span = .milliseconds(2), jitter: Span = .microseconds(500), loss: Double = 0, duplicate: Double = 0,
                reorder: Double = 0) {
        self.delay = delay
        self.jitter = jitter
        self.loss = loss
        self.duplicate = duplicate
        self.reorder = reorder
    }
}

/// A host and its gates exchanging encoded datagrams through an impaired in-memory
/// network, in virtual time (the `EmbeddedEventLoop` idea): each gate's clock is
/// `true time × (1 + ppm) + offset`, so the host's results can be compared with the true
/// instants of the crossings. Deterministic for a given seed.
public struct RaceSimulation: Sendable {
    /// A simulated gate: its session and its clock error.
    public struct Gate: Sendable {
        public var session: RaceSession
        /// Clock offset from true time at true time 0, nanoseconds.
        public var offsetNanoseconds: Int64
        /// Frequency error, ppm (positive: fast).
        public var ppm: Double
        /// False while the gate is switched off (datagrams to it are lost).
        public var running = true
    }

    private struct InFlight: Sendable {
        var due: Int64
        var order: UInt64
        var to: Int
        var bytes: [UInt8]
    }

    public private(set) var gates: [Gate] = []
    /// True time in nanoseconds.
    public private(set) var now: Int64 = 0
    public var link: SimulatedLink
    /// How late the timing gates' loops (not the host's) may read a datagram after it
    /// arrived, busy with a frame: each is read up to this much later, uniformly, with
    /// its arrival time passed on as the kernel's receive timestamp; replies leave when
    /// it is read. One-sided on purpose: lateness on both ends would average out.
    /// Zero: at once.
    public var readLatency = Span(nanoseconds: 0)
    /// Every action the host performed that reported a crossing, in order.
    public private(set) var hostCrossings: [RaceCrossing] = []
    /// Every start the host reported (`.started`), in order.
    public private(set) var hostStarts: [RaceCrossing] = []
    /// The false starts each gate was told of or saw (`.falseStart` actions), by gate index.
    public private(set) var falseStartNotices: [[UInt32]] = []
    /// The runs each gate was armed for (`.runArmed` actions), by gate index.
    public private(set) var armedRuns: [[UInt32]] = []
    /// The resets each gate was told of (`.resetForNextRun` actions), by gate index.
    public private(set) var resets: [[UInt32]] = []
    /// Images of crossings the host received whole, in order.
    public private(set) var hostPhotos: [RacePhoto] = []
    /// Image chunks sent (first sends and repeats) and acknowledgements, over the link.
    public private(set) var chunksSent = 0, chunkAcks = 0
    /// Datagrams sent, lost and duplicated by the network.
    public private(set) var sent = 0, lost = 0, duplicated = 0
    /// Datagrams that failed to decode (none expected: the codec is exercised end to end).
    public private(set) var undecodable = 0
    private var inFlight: [InFlight] = []
    private var order: UInt64 = 0
    private var rng: SplitMix64
    private var pendingCrossings: [(gate: Int, trueTime: Int64, uncertainty: Span)] = []
    private enum StartInput: Sendable { case start, falseStart(FalseStartCause) }
    private var pendingStarts: [(gate: Int, trueTime: Int64, what: StartInput, type: RaceStartType?)] = []
    private var actions: [RaceAction] = []

    /// Gate 0 is the host, or with `electable` every gate is an `auto` gate and they elect
    /// one. `clocks` gives each gate's (offset ns, ppm).
    public init(gateIDs: [GateID], clocks: [(Int64, Double)], link: SimulatedLink = SimulatedLink(), seed: UInt64 = 1,
                configuration: RaceConfiguration = RaceConfiguration(), electable: Bool = false) {
        precondition(gateIDs.count == clocks.count && gateIDs.count >= 1)
        self.link = link
        rng = SplitMix64(seed: seed)
        for (i, id) in gateIDs.enumerated() {
            gates.append(Gate(session: RaceSession(kind: i == 0 && !electable ? .host : .gate, me: id, bootEpoch: 1,
                                                   configuration: configuration, electable: electable),
                              offsetNanoseconds: clocks[i].0, ppm: clocks[i].1))
        }
        actions.reserveCapacity(64)
        falseStartNotices = Array(repeating: [], count: gates.count)
        armedRuns = Array(repeating: [], count: gates.count)
        resets = Array(repeating: [], count: gates.count)
        for i in gates.indices {
            let t = local(i)
            gates[i].session.start(now: t, into: &actions)
            perform(from: i)
        }
    }

    /// Gate `i`'s clock at true time `trueNs`.
    public func local(_ i: Int, at trueNs: Int64? = nil) -> MonotonicInstant {
        let t = trueNs ?? now
        return MonotonicInstant(nanoseconds: t + gates[i].offsetNanoseconds + Int64((Double(t) * gates[i].ppm * 1e-6).rounded()))
    }

    /// Runs until true time `end`, waking every gate at each datagram's arrival and at
    /// least every `step` (the daemon's loop wakes at least every 10 ms).
    public mutating func run(until end: Int64, step: Span = .milliseconds(1)) {
        var nextTick = now + step.nanoseconds
        while now < end {
            // Like epoll: wake at the next arrival or the next timer, whichever is first.
            let arrival = inFlight.min { $0.due < $1.due }?.due ?? .max
            now = min(end, nextTick, max(now + 1, arrival))
            if now >= nextTick { nextTick += step.nanoseconds }
            deliverDue()
            fireStarts()
            fireCrossings()
            for i in gates.indices where gates[i].running {
                gates[i].session.tick(now: local(i), into: &actions)
                perform(from: i)
            }
        }
    }

    /// An athlete crosses gate `i` at true time `trueTime` (seen by its detector then,
    /// reported at the next wake-up).
    /// `uncertainty`: the detector's one sigma reported with it.
    public mutating func crossing(atGate i: Int, trueTime: Int64, uncertainty: Span = .microseconds(500)) {
        pendingCrossings.append((i, trueTime, uncertainty))
    }

    /// Gate `i`'s engine starts the clock at true time `trueTime` (a button release, a
    /// sound's onset), handed to its session at the next wake-up with a 100 µs sigma.
    /// `type`: how the engine started; nil: the start type the gate's session holds.
    public mutating func start(atGate i: Int, trueTime: Int64, type: RaceStartType? = nil) {
        pendingStarts.append((i, trueTime, .start, type))
    }

    /// Gate `i`'s photo of its crossing at true time `crossingTrueTime` (the instant given
    /// to `crossing(atGate:trueTime:)`), handed to its session now. Returns what the
    /// session answered: false when the image goes nowhere.
    @discardableResult
    public mutating func photo(atGate i: Int, crossingTrueTime: Int64, bundle: [UInt8], media: RaceMedia = .photo) -> Bool {
        let sent = gates[i].session.localPhoto(crossingTimeMono: local(i, at: crossingTrueTime), bundle: bundle, media: media,
                                               now: local(i), into: &actions)
        perform(from: i)
        return sent
    }

    /// Gate `i`'s engine sees a false start at true time `trueTime`.
    public mutating func falseStart(atGate i: Int, trueTime: Int64, reason: FalseStartCause = .movement) {
        pendingStarts.append((i, trueTime, .falseStart(reason), nil))
    }

    /// The running gate that hosts the session (gate 0 unless elections moved it); nil
    /// while none does.
    public var hostIndex: Int? { gates.indices.first { gates[$0].running && gates[$0].session.kind == .host } }

    /// Gate `i`'s loop reports its status now (the daemon does every iteration).
    public mutating func reportStatus(atGate i: Int, _ report: GateStatusReport) {
        gates[i].session.localStatus(report, now: local(i), into: &actions)
        perform(from: i)
    }

    /// Host commands: pause or resume detection on every gate; reset for the next run;
    /// end the session.
    public mutating func setPaused(_ p: Bool) throws(RaceError) {
        let h = hostIndex ?? 0
        try gates[h].session.setPaused(p, into: &actions)
        perform(from: h)
    }
    public mutating func resetForNextRun() throws(RaceError) {
        let h = hostIndex ?? 0
        try gates[h].session.resetForNextRun(now: local(h), into: &actions)
        perform(from: h)
    }
    public mutating func endSession() {
        let h = hostIndex ?? 0
        gates[h].session.endSession(into: &actions)
        perform(from: h)
    }

    /// Host command: the start type of the next runs.
    public mutating func setStartType(_ type: RaceStartType) throws(RaceError) {
        let h = hostIndex ?? 0
        try gates[h].session.setStartType(type, now: local(h), into: &actions)
        perform(from: h)
    }

    /// Host command: assign a role and distance.
    public mutating func assign(_ gate: GateID, role: GateRole, distanceMetres: Double) throws(RaceError) {
        let h = hostIndex ?? 0
        try gates[h].session.assign(gate, role: role, distanceMetres: distanceMetres, into: &actions)
        perform(from: h)
    }

    /// Host command: arm a run.
    public mutating func armRun() throws(RaceError) {
        let h = hostIndex ?? 0
        try gates[h].session.armRun(now: local(h), into: &actions)
        perform(from: h)
    }

    /// Switches gate `i` off (its unsent state is lost, as on a power cut).
    public mutating func powerOff(_ i: Int) { gates[i].running = false }

    /// Switches gate `i` on again with a fresh session and the next boot epoch.
    public mutating func powerOn(_ i: Int) {
        let old = gates[i].session
        gates[i].session = RaceSession(kind: old.electable ? .gate : old.kind, me: old.me, bootEpoch: old.bootEpoch + 1,
                                       configuration: old.configuration, electable: old.electable)
        gates[i].running = true
        gates[i].session.start(now: local(i), into: &actions)
        perform(from: i)
    }

    // MARK: - Network

    /// Sends what gate `i` asked for, leaving at true time `sentAt` (default: now).
    private mutating func perform(from i: Int, at sentAt: Int64? = nil) {
        let sentAt = sentAt ?? now
        for a in actions {
            switch a {
            case let .send(e, to):
                guard let j = gates.firstIndex(where: { $0.session.me == to }) else { continue }
                if case .thumbnailChunk = e.message { chunksSent += 1 }
                if case .calibrationFrames = e.message { chunksSent += 1 }
                if case .thumbnailAck = e.message { chunkAcks += 1 }
                if case .calibrationFramesAck = e.message { chunkAcks += 1 }
                transmit(e, to: j, at: sentAt)
            case let .broadcast(e):
                for j in gates.indices where j != i { transmit(e, to: j, at: sentAt) }
            case let .crossing(c):
                if gates[i].session.kind == .host { hostCrossings.append(c) }
            case let .started(c, _):
                if gates[i].session.kind == .host { hostStarts.append(c) }
            case let .falseStart(_, run, _):
                falseStartNotices[i].append(run)
            case let .runArmed(run, _):
                armedRuns[i].append(run)
            case let .resetForNextRun(run):
                resets[i].append(run)
            case let .photo(p):
                hostPhotos.append(p)
            default:
                break
            }
        }
        actions.removeAll(keepingCapacity: true)
    }

    private mutating func transmit(_ e: Envelope, to j: Int, at sentAt: Int64) {
        guard let bytes = try? e.encoded() else {
            undecodable += 1
            return
        }
        sent += 1
        if unit() < link.loss {
            lost += 1
            return
        }
        let copies = unit() < link.duplicate ? 2 : 1
        if copies == 2 { duplicated += 1 }
        for _ in 0..<copies {
            var delay = link.delay.nanoseconds + Int64((unit() * 2 - 1) * Double(link.jitter.nanoseconds))
            if unit() < link.reorder { delay += link.delay.nanoseconds + 2 * link.jitter.nanoseconds }
            order += 1
            inFlight.append(InFlight(due: sentAt + max(0, delay), order: order, to: j, bytes: bytes))
        }
    }

    private mutating func deliverDue() {
        inFlight.sort { ($0.due, $0.order) < ($1.due, $1.order) }
        var n = 0
        while n < inFlight.count, inFlight[n].due <= now { n += 1 }
        let due = inFlight.prefix(n)
        inFlight.removeFirst(n)
        for d in due where gates[d.to].running {
            guard let e = try? Envelope.decode(d.bytes) else {
                undecodable += 1
                continue
            }
            let late = d.to == 0 ? 0 : Int64((unit() * Double(readLatency.nanoseconds)).rounded())
            gates[d.to].session.receive(e, now: local(d.to, at: now + late), arrival: local(d.to, at: d.due),
                                        into: &actions)
            perform(from: d.to, at: now + late)
        }
    }

    private mutating func fireCrossings() {
        var k = 0
        while k < pendingCrossings.count {
            let c = pendingCrossings[k]
            if c.trueTime <= now {
                pendingCrossings.remove(at: k)
                guard gates[c.gate].running else { continue }
                gates[c.gate].session.localCrossing(timeMono: local(c.gate, at: c.trueTime), uncertainty: c.uncertainty,
                                                    direction: .leftToRight, now: local(c.gate), into: &actions)
                perform(from: c.gate)
            } else {
                k += 1
            }
        }
    }

    private mutating func fireStarts() {
        var k = 0
        while k < pendingStarts.count {
            let p = pendingStarts[k]
            guard p.trueTime <= now else {
                k += 1
                continue
            }
            pendingStarts.remove(at: k)
            guard gates[p.gate].running else { continue }
            switch p.what {
            case .start:
                let session = gates[p.gate].session
                gates[p.gate].session.localStart(startMono: local(p.gate, at: p.trueTime), uncertainty: .microseconds(100),
                                                 startType: p.type ?? session.configuration.startType, now: local(p.gate), into: &actions)
            case let .falseStart(reason):
                gates[p.gate].session.localFalseStart(reason, atMono: local(p.gate, at: p.trueTime), now: local(p.gate),
                                                      into: &actions)
            }
            perform(from: p.gate)
        }
    }

    /// Uniform in [0, 1).
    private mutating func unit() -> Double { rng.unit() }
}
