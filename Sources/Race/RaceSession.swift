// SPDX-License-Identifier: Apache-2.0
// The race session: a value-type state machine for the host and for its gates.

import ClockSync
public import GateCore
public import PeerWire

/// One gate's part in a multi-gate race, as a synchronous state machine: feed it decoded
/// datagrams (`receive`), local crossings (`localCrossing`) and the loop's timestamp
/// (`tick`), and perform the `RaceAction`s it appends. It reads no clock and does no I/O,
/// so the daemon's epoll loop and the virtual-time simulation drive the same code.
///
/// The host's CLOCK_MONOTONIC is the race's network timeline. The host pings every gate
/// on the `PeerClock` schedule, keeps one `PeerClock` per gate (offset = gate − host) and
/// maps each reported crossing onto its own timeline with that gate's uncertainty. A gate
/// retransmits each crossing with doubling back-off until the host acknowledges it; the
/// host keeps the key (gate, boot epoch, crossing id) of everything it took in, so a
/// repeat is acknowledged again but never counted twice. A gate that restarts comes back
/// with a larger boot epoch: the host forgets its clock history and takes it in again,
/// with the same place on the course.
public struct RaceSession: Sendable {
    public enum Kind: Sendable, Hashable { case host, gate }

    /// Host or gate; a gate configured `auto` becomes the host when it wins an election.
    public private(set) var kind: Kind
    /// Configured `auto`: takes part in host elections (lowest gate id wins).
    public let electable: Bool
    public let me: GateID
    public let bootEpoch: UInt32
    public private(set) var configuration: RaceConfiguration
    public private(set) var phase: RacePhase = .idle
    public private(set) var session: SessionID = .none
    public private(set) var runID: UInt32 = 1

    // Host state.
    /// Gates of the session in course order (index 0: start); the host is one of them.
    public private(set) var gates: [RaceGate] = []
    /// Every crossing taken in, in arrival order.
    public private(set) var crossings: [RaceCrossing] = []
    /// Crossings received before their gate's clock was usable, mapped when it is.
    private var unmapped: [(event: CrossingEvent, bootEpoch: UInt32)] = []
    private var seen: Set<CrossingKey> = []
    /// The start of the current run on the network timeline: the start gate's crossing
    /// (flying start) or its start event (crossing id 0).
    public private(set) var runStart: RaceCrossing?
    /// How the current run started; nil before it did.
    public private(set) var runStartType: RaceStartType?
    /// Start events received before their gate's clock was usable, mapped when it is.
    private var unmappedStarts: [(event: StartEvent, gate: GateID, bootEpoch: UInt32)] = []
    /// Runs voided by a false start, in order (host).
    public private(set) var falseStarts: [(runID: UInt32, gate: GateID, reason: FalseStartCause)] = []
    /// Images of crossings: sent to the host (gate), assembled from the gates (host).
    private var imageSender = ImageSender()
    private var imageReceiver = ImageReceiver()

    // Gate state.
    public private(set) var host: GateID?
    public private(set) var assignment: RoleAssignment?
    /// Gate: the host's boot epoch and sequence number of the assignment in force. Why:
    /// the host sends a fresh assignment at every change, and two sent back to back can
    /// arrive swapped; the older one must not win.
    private var assignmentFrom: (bootEpoch: UInt32, sequence: UInt32)?
    /// The last sync report from the host (gate only): this gate's offset and uncertainty.
    public private(set) var syncReport: SyncResult?
    private var nextCrossingID: UInt32 = 1
    private var outbox: [Pending] = []
    private var nextAnnounce = MonotonicInstant(nanoseconds: .min)
    private var nextAssignmentRepeat = MonotonicInstant(nanoseconds: .min)
    /// Auto gates: the gates heard announcing (id → when), and when this gate may take the
    /// host role if no host has offered it a session by then.
    private var announcers: [GateID: MonotonicInstant] = [:]
    private var electionAt = MonotonicInstant(nanoseconds: .max)
    /// Gate: the newest run the host reset the session for.
    private var resetTo: UInt32 = 0
    /// Gate: the last status sent and when the next is due.
    private var lastStatusSent: GateStatusReport?
    private var nextStatus = MonotonicInstant(nanoseconds: .min)
    /// Gate: when the host was last heard from.
    private var hostHeard = MonotonicInstant(nanoseconds: .min)
    /// Both: what this gate reported of the current run (its crossings, its start), to
    /// report again to a host that replaced a lost one.
    private var runLog: [CrossingEvent] = []
    private var runStartLog: StartEvent?
    /// Gate: the host of the session before the current one.
    private var previousHost: GateID?
    /// Host elected mid-run: the next `armRun` arms the same run and takes this gate's own
    /// reports of it.
    private var resuming = false
    /// Hosts elected in this life (tests and logs).
    public private(set) var elections = 0
    /// Gate: the newest run the host armed, and the newest false start it relayed.
    private var armedRun: (runID: UInt32, startType: RaceStartType) = (0, .flying)
    private var relayedFalseStart: UInt32 = 0
    /// Gate: runs this gate reported a false start of (their echoes are acknowledgements).
    private var reportedFalseStarts: Set<UInt32> = []

    // Both.
    private var sequence: UInt32 = 0
    private var nextPing: [GateID: MonotonicInstant] = [:]

    private struct CrossingKey: Hashable, Sendable {
        var gate: GateID
        var bootEpoch: UInt32
        var crossingID: UInt32
    }

    /// A message waiting for an acknowledgement.
    private struct Pending: Sendable {
        var message: Message
        var to: GateID
        var due: MonotonicInstant
        var backoff: Span
        var crossingID: UInt32
    }

    /// A session for gate `me` in its life `bootEpoch` (increase it at every start, e.g.
    /// from a counter in the state directory). `session` is the host's session id.
    /// `electable`: a gate configured `auto` (`kind` must be `.gate`): with no host heard
    /// within `configuration.electionWindow` of starting, or after losing its host, the
    /// lowest gate id among the gates announcing becomes the host.
    public init(kind: Kind, me: GateID, bootEpoch: UInt32, session: SessionID = SessionID(1),
                configuration: RaceConfiguration = RaceConfiguration(), electable: Bool = false) {
        precondition(me.rawValue != 0, "gate id 0 is reserved")
        precondition(!electable || kind == .gate, "an electable session starts as a gate")
        self.kind = kind
        self.electable = electable
        self.me = me
        self.bootEpoch = bootEpoch
        self.configuration = configuration
        if kind == .host { self.session = session }
    }

    // MARK: - Commands

    /// Opens the session (host) or starts looking for one (gate).
    public mutating func start(now: MonotonicInstant, into actions: inout [RaceAction]) {
        guard phase == .idle else { return }
        switch kind {
        case .host:
            gates = [RaceGate(id: me, bootEpoch: bootEpoch, role: .start, index: 0, distanceMetres: 0, joined: true,
                              clock: PeerClock(configuration: configuration.clock), lastHeard: now, rejoins: 0)]
            setPhase(.connecting, &actions)
        case .gate:
            nextAnnounce = now
            electionAt = now + configuration.electionWindow
            setPhase(.connecting, &actions)
            tick(now: now, into: &actions)
        }
    }

    /// Host: moves `gate` to `role` at `distanceMetres` from the start and renumbers the
    /// course by distance. Throws when the gate is unknown or the distance is not in
    /// 0…100 000 m.
    public mutating func assign(_ gate: GateID, role: GateRole, distanceMetres: Double,
                                into actions: inout [RaceAction]) throws(RaceError) {
        guard kind == .host else { throw .notHost }
        guard distanceMetres.isFinite, (0...100_000).contains(distanceMetres) else { throw .badDistance(distanceMetres) }
        guard let i = gates.firstIndex(where: { $0.id == gate }) else { throw .unknownGate(gate) }
        let moved = gates[i].distanceMetres != distanceMetres
        gates[i].role = role
        gates[i].distanceMetres = distanceMetres
        if moved {
            // Every gate hears of the move at once; the assignments that follow carry it too.
            for g in gates where g.id != me && g.joined {
                actions.append(.send(envelope(.distanceChange(DistanceChange(gate: gate, distanceFromStartMetres: distanceMetres))),
                                     to: g.id))
            }
        }
        renumber(&actions)
    }

    /// Host: arms a run (the next one after a finished run).
    public mutating func armRun(now: MonotonicInstant, into actions: inout [RaceAction]) throws(RaceError) {
        guard kind == .host else { throw .notHost }
        switch phase {
        case .ready: break
        case .finished, .waitingForCrossing, .running: runID &+= 1
        default: throw .notReady(phase)
        }
        runStart = nil
        runStartType = nil
        if let p = pendingStartType {
            pendingStartType = nil
            applyStartType(p, &actions)
        }
        for g in gates where g.id != me {
            sendReliably(.startTiming(StartTiming(runID: runID, startType: configuration.startType)), to: g.id, now: now, &actions)
        }
        setPhase(.waitingForCrossing, &actions)
        actions.append(.runArmed(runID: runID, startType: configuration.startType))
        if resuming {
            resuming = false
            for c in runLog where c.runID == runID { take(c, bootEpoch: bootEpoch, now: now, &actions) }
            if let st = runStartLog, st.runID == runID { takeStart(st, gate: me, bootEpoch: bootEpoch, now: now, &actions) }
        }
    }

    /// Host: how the next runs start. Sent to every gate at once (`startTypeChange`) and
    /// with every `startTiming`; a run armed but not started is armed again with it. While
    /// a run is running it waits for the next run (`pendingStartType`).
    public mutating func setStartType(_ type: RaceStartType, now: MonotonicInstant, into actions: inout [RaceAction]) throws(RaceError) {
        guard kind == .host else { throw .notHost }
        guard phase != .running else {
            pendingStartType = type == configuration.startType ? nil : type
            return
        }
        pendingStartType = nil
        guard type != configuration.startType else { return }
        applyStartType(type, &actions)
        if phase == .waitingForCrossing {
            runID &-= 1  // Armed again as the same run.
            try armRun(now: now, into: &actions)
        }
    }

    /// Host: a start type chosen while a run was running, for the next run.
    public private(set) var pendingStartType: RaceStartType?

    private mutating func applyStartType(_ type: RaceStartType, _ actions: inout [RaceAction]) {
        configuration.startType = type
        for g in gates where g.id != me && g.joined {
            actions.append(.send(envelope(.startTypeChange(StartTypeChange(startType: type))), to: g.id))
        }
    }

    /// This gate's role in the session: the host's entry for itself, or the assignment.
    public var role: GateRole? {
        kind == .host ? gates.first { $0.id == me }?.role : assignment?.role
    }

    /// The start gate's engine started the run's clock at local instant `startMono` (a
    /// button release, a sound's onset, the athlete leaving the frame), with one sigma
    /// `uncertainty`; again with a better instant when it refines it. Ignored unless this
    /// is the start gate and `startType` (how the engine started) is not flying (a flying
    /// start is a crossing). A gate sends it to the host until acknowledged; the host takes
    /// it only when the run was armed with that start type (an engine that started a
    /// countdown just before the coach chose a voice start does not start a voice run).
    public mutating func localStart(startMono: MonotonicInstant, uncertainty: Span, startType: RaceStartType,
                                    now: MonotonicInstant, into actions: inout [RaceAction]) {
        guard role == .start, startType != .flying else { return }
        let event = StartEvent(runID: runID, startMono: startMono, uncertainty: uncertainty, startType: startType)
        runStartLog = event
        switch kind {
        case .host:
            takeStart(event, gate: me, bootEpoch: bootEpoch, now: now, &actions)
        case .gate:
            guard let host else { return }
            sendReliably(.startEvent(event), to: host, now: now, &actions)
        }
    }

    /// The start gate's engine saw a false start at local instant `atMono`: the run is
    /// void, every gate is told, and the next run is armed. Ignored unless this is the
    /// start gate.
    public mutating func localFalseStart(_ reason: FalseStartCause, atMono: MonotonicInstant, now: MonotonicInstant,
                                         into actions: inout [RaceAction]) {
        guard role == .start else { return }
        let f = FalseStart(runID: runID, reason: reason, atMono: atMono)
        switch kind {
        case .host:
            voidRun(f, gate: me, now: now, &actions)
        case .gate:
            guard let host else { return }
            reportedFalseStarts.insert(f.runID)
            sendReliably(.falseStart(f), to: host, now: now, &actions)
        }
    }

    /// Detection paused by the host: crossings are not reported (gate) or taken (host).
    public private(set) var paused = false

    /// Host: pauses (or resumes) detection on every gate, at once and again with every
    /// repeat of the role assignments (the messages have no acknowledgement).
    public mutating func setPaused(_ p: Bool, into actions: inout [RaceAction]) throws(RaceError) {
        guard kind == .host else { throw .notHost }
        guard p != paused else { return }
        paused = p
        actions.append(.paused(p))
        sendPause(&actions)
    }

    private mutating func sendPause(_ actions: inout [RaceAction]) {
        for g in gates where g.id != me && g.joined {
            actions.append(.send(envelope(paused ? .pauseDetection : .resumeDetection), to: g.id))
        }
    }

    /// Host: abandons the run in progress and arms the next on every gate; the gates reset
    /// their engines (`resetForNextRun`, then the reliable `startTiming`).
    public mutating func resetForNextRun(now: MonotonicInstant, into actions: inout [RaceAction]) throws(RaceError) {
        guard kind == .host else { throw .notHost }
        let next = phase == .ready ? runID : runID &+ 1
        for g in gates where g.id != me && g.joined {
            actions.append(.send(envelope(.resetForNextRun(ResetForNextRun(nextRunID: next))), to: g.id))
        }
        try armRun(now: now, into: &actions)
    }

    /// Host: the session ends (the host stops); every gate is told, twice against loss.
    public mutating func endSession(into actions: inout [RaceAction]) {
        guard kind == .host else { return }
        for _ in 0..<2 {
            for g in gates where g.id != me && g.joined { actions.append(.send(envelope(.endSession), to: g.id)) }
        }
        setPhase(.idle, &actions)
    }

    /// This gate's status (readiness, camera, frame rate, drops, temperature) at `now`;
    /// call every loop iteration. A gate sends it to its host when readiness or camera
    /// changed and every `statusInterval` otherwise (no acknowledgement: the next one
    /// replaces a lost one); the host keeps its own in its gate list.
    public mutating func localStatus(_ report: GateStatusReport, now: MonotonicInstant, into actions: inout [RaceAction]) {
        switch kind {
        case .host:
            if let i = gates.firstIndex(where: { $0.id == me }) {
                gates[i].status = report
                gates[i].statusAt = now
            }
        case .gate:
            guard let host else { return }
            let changed = lastStatusSent.map { $0.readiness != report.readiness || $0.camera != report.camera } ?? true
            guard changed || now >= nextStatus else { return }
            lastStatusSent = report
            nextStatus = now + configuration.statusInterval
            actions.append(.send(envelope(.gateStatus(report)), to: host))
        }
    }

    /// A crossing seen by this gate's detector at local instant `timeMono` with one sigma
    /// `uncertainty`. On the host it goes straight into the results; on a gate it is sent
    /// to the host and retransmitted until acknowledged.
    public mutating func localCrossing(timeMono: MonotonicInstant, uncertainty: Span, direction: CrossingDirection,
                                       now: MonotonicInstant, into actions: inout [RaceAction]) {
        guard role != .control else { return }  // A control gate has no camera duties.
        guard !paused else { return }
        let id = nextCrossingID
        nextCrossingID &+= 1
        let event = CrossingEvent(gate: me, crossingID: id, runID: runID, timeMono: timeMono, uncertainty: uncertainty,
                                  direction: direction)
        runLog.removeAll { $0.runID != runID }
        runLog.append(event)
        switch kind {
        case .host:
            take(event, bootEpoch: bootEpoch, now: now, &actions)
        case .gate:
            guard let host else { return }  // Not in a session: nothing to time against.
            sendReliably(.crossingEvent(event), to: host, now: now, &actions, crossingID: id)
            imageSender.crossingReported(id: id, time: timeMono)
        }
    }

    // MARK: - Input

    /// A datagram from `envelope.sender`, decoded, read in the loop iteration at `now`.
    /// `arrival` is when it reached this gate (the kernel's receive timestamp: usually
    /// before `now`, a little after when it came while the iteration was reading);
    /// clock-sync timestamps use it, so a loop busy with a frame does not count as
    /// network delay. Nil: `now`.
    public mutating func receive(_ envelope: Envelope, now: MonotonicInstant, arrival: MonotonicInstant? = nil,
                                 into actions: inout [RaceAction]) {
        guard envelope.sender != me else { return }  // Our own broadcast coming back.
        let arrival = arrival ?? now
        switch kind {
        case .host: hostReceive(envelope, now: now, arrival: arrival, &actions)
        case .gate: gateReceive(envelope, now: now, arrival: arrival, &actions)
        }
    }

    /// Timers: announces, pings, retransmissions, phase checks. Call every iteration.
    public mutating func tick(now: MonotonicInstant, into actions: inout [RaceAction]) {
        if kind == .gate, host != nil, now.since(hostHeard) > configuration.peerTimeout {
            loseHost(now: now, &actions)
        }
        if electable, kind == .gate, host == nil, now >= electionAt {
            // Why lowest id: every gate that hears the same announces picks the same one.
            let recent = announcers.filter { now.since($0.value) <= configuration.electionWindow }.keys
            if recent.allSatisfy({ $0.rawValue > me.rawValue }) {
                becomeHost(now: now, &actions)
            } else {
                electionAt = now + configuration.electionWindow  // Wait for the winner's offer.
            }
        }
        if kind == .gate, phase == .connecting, host == nil, now >= nextAnnounce {
            nextAnnounce = now + configuration.announceInterval
            actions.append(.broadcast(envelope(.announce(Announce(gateName: "gate \(me.rawValue)", roleWish: nil,
                                                                  listeningPort: configuration.peerPort)))))
        }
        if kind == .host {
            for i in gates.indices where gates[i].id != me && gates[i].joined {
                let next = gates[i].clock.nextPoll(now: now)
                if now >= next {
                    gates[i].clock.pollSent(at: now)
                    actions.append(.send(envelope(.ping(Ping(t1: now))), to: gates[i].id))
                }
            }
            if now >= nextAssignmentRepeat {
                nextAssignmentRepeat = now + configuration.assignmentRepeat
                sendAssignments(now: now, &actions)
                if paused { sendPause(&actions) }
            }
            mapPending(now: now, &actions)
            deliverImages(now: now, &actions)
            updateHostPhase(now: now, &actions)
        } else if host != nil {
            sendImageChunks(now: now, &actions)
        }
        var i = 0
        while i < outbox.count {
            if now >= outbox[i].due {
                actions.append(.send(envelope(outbox[i].message), to: outbox[i].to))
                outbox[i].backoff = min(configuration.retransmitMax, Span(nanoseconds: outbox[i].backoff.nanoseconds * 2))
                outbox[i].due = now + outbox[i].backoff
            }
            i += 1
        }
    }

    /// Messages still waiting for an acknowledgement (crossings and handshakes).
    public var unacknowledged: Int { outbox.count }

    /// Image transfers: this gate's to its host, and the host's from its gates.
    public var imageCounts: ImageTransferCounts {
        var c = imageSender.counts
        c.assembled = imageReceiver.counts.assembled
        c.dropped = imageReceiver.counts.dropped
        return c
    }

    /// Gate: images still being sent to the host.
    public var imagesInFlight: Int { imageSender.pending }

    /// This gate's image of its crossing at local instant `crossingTimeMono` (the instant
    /// given to `localCrossing`): a `PhotoBundle`'s bytes, or a `FrameStrip`'s (`media`).
    /// A gate sends it to its host in chunks (`thumbnailChunk` or `calibrationFrames`),
    /// paced by `imageChunksPerTick` and repeated until every chunk is acknowledged; the
    /// host delivers it as `.photo` once the crossing is in. Returns
    /// false when it goes nowhere: on the host (its own images are its owner's), with no
    /// host, for a crossing not reported, or an image too large to chunk.
    @discardableResult
    public mutating func localPhoto(crossingTimeMono: MonotonicInstant, bundle: [UInt8], media: RaceMedia = .photo,
                                    now: MonotonicInstant, into actions: inout [RaceAction]) -> Bool {
        guard kind == .gate, let host, let id = imageSender.crossingID(at: crossingTimeMono) else { return false }
        guard imageSender.add(media, imageID: id, bundle: bundle, to: host, now: now, backoff: configuration.retransmitInitial) else {
            return false
        }
        sendImageChunks(now: now, &actions)
        return true
    }

    private mutating func sendImageChunks(now: MonotonicInstant, _ actions: inout [RaceAction]) {
        guard imageSender.pending > 0 else { return }
        var out: [(RaceMedia, ThumbnailChunk, GateID)] = []
        imageSender.tick(now: now, budget: configuration.imageChunksPerTick, maxBackoff: configuration.retransmitMax,
                         giveUp: configuration.imageGiveUp) { out.append(($0, $1, $2)) }
        for (media, c, to) in out {
            actions.append(.send(envelope(media == .photo ? .thumbnailChunk(c) : .calibrationFrames(c)), to: to))
        }
    }

    private mutating func deliverImages(now: MonotonicInstant, _ actions: inout [RaceAction]) {
        guard !imageReceiver.waiting.isEmpty else { return }
        let known = crossings
        var out: [RacePhoto] = []
        imageReceiver.resolve(now: now, maxWait: configuration.imageGiveUp, crossing: { k in
            known.last { $0.gate == k.gate && $0.bootEpoch == k.bootEpoch && $0.crossingID == k.imageID }
        }, deliver: { out.append($0) })
        for p in out { actions.append(.photo(p)) }
    }

    /// Host: the splits of the current run so far, in course order.
    public func splits() -> [RaceSplit] {
        guard let start = runStart else { return [] }
        var byIndex: [Int: RaceCrossing] = [:]
        let control = Set(gates.filter { $0.role == .control }.map(\.id))
        for c in crossings where c.runID == start.runID && c.gateIndex > 0 && c.timeNet > start.timeNet && !control.contains(c.gate) {
            if let old = byIndex[c.gateIndex], old.timeNet <= c.timeNet { continue }  // First crossing counts.
            byIndex[c.gateIndex] = c
        }
        var out: [RaceSplit] = []
        var previous = start
        for index in byIndex.keys.sorted() {
            let c = byIndex[index]!
            let time = c.timeNet.since(start.timeNet)
            let a = Double(c.uncertainty.nanoseconds), b = Double(start.uncertainty.nanoseconds)
            let segment = c.timeNet.since(previous.timeNet)
            let length = c.distanceMetres - previous.distanceMetres
            out.append(RaceSplit(gateIndex: index, gate: c.gate, distanceMetres: c.distanceMetres, time: time,
                                 uncertainty: Span(nanoseconds: Int64((a * a + b * b).squareRoot().rounded(.up))),
                                 segment: segment,
                                 segmentSpeed: length > 0 && segment.nanoseconds > 0 ? length / segment.seconds : nil))
            previous = c
        }
        return out
    }

    // MARK: - Host

    private mutating func hostReceive(_ e: Envelope, now: MonotonicInstant, arrival: MonotonicInstant,
                                      _ actions: inout [RaceAction]) {
        if case .announce = e.message {
            admit(e, now: now, &actions)
            return
        }
        guard e.session == session, let i = gates.firstIndex(where: { $0.id == e.sender }) else {
            // A gate we do not know talks about our session (we restarted): take it in again.
            if e.session == session || e.session == .none { admit(e, now: now, &actions) }
            return
        }
        if e.bootEpoch > gates[i].bootEpoch {
            admit(e, now: now, &actions)
            return
        }
        guard e.bootEpoch == gates[i].bootEpoch else { return }  // A datagram from an earlier life.
        gates[i].lastHeard = now
        switch e.message {
        case let .sessionConfigAck(ack):
            acknowledge(from: e.sender) { if case .sessionConfig = $0.message { return true } else { return false } }
            if ack.accepted, !gates[i].joined {
                gates[i].joined = true
                sendAssignments(now: now, &actions)
            }
        case let .pong(p):
            do {
                try gates[i].clock.add(t1: p.t1, t2: PeerInstant(nanoseconds: p.t2.nanoseconds),
                                       t3: PeerInstant(nanoseconds: p.t3.nanoseconds), t4: arrival)
            } catch {
                return  // Counted by the clock; impossible timestamps change nothing.
            }
            if let o = gates[i].clock.offset(at: now) {
                let stats = gates[i].clock.stats(at: now)
                actions.append(.send(envelope(.syncResult(SyncResult(gate: e.sender, offset: o.value, uncertainty: o.uncertainty,
                                                                     samples: UInt16(clamping: stats.samplesInFit)))),
                                     to: e.sender))
            }
        case let .crossingEvent(c):
            guard c.gate == e.sender else { return }  // Relaying for another gate is not supported.
            actions.append(.send(envelope(.crossingAck(CrossingAck(gate: c.gate, crossingID: c.crossingID))), to: e.sender))
            let key = CrossingKey(gate: c.gate, bootEpoch: e.bootEpoch, crossingID: c.crossingID)
            guard !seen.contains(key) else { return }
            seen.insert(key)
            take(c, bootEpoch: e.bootEpoch, now: now, &actions)
        case let .crossingAck(a):
            acknowledge(from: e.sender) {
                if case .startTiming = $0.message, a.crossingID == 0 { return true }
                return false
            }
        case let .gateStatus(r):
            gates[i].status = r
            gates[i].statusAt = now
        case let .thumbnailChunk(c):
            let ack = imageReceiver.chunk(.photo, c, from: e.sender, bootEpoch: e.bootEpoch, now: now)
            actions.append(.send(envelope(.thumbnailAck(ack)), to: e.sender))
            deliverImages(now: now, &actions)
        case let .calibrationFrames(c):
            let ack = imageReceiver.chunk(.frames, c, from: e.sender, bootEpoch: e.bootEpoch, now: now)
            actions.append(.send(envelope(.calibrationFramesAck(ack)), to: e.sender))
            deliverImages(now: now, &actions)
        case let .roleRequest(r):
            // A gate that stood on the course of a lost host keeps its place; its
            // assignment (sent by `assign`) acknowledges the request.
            if let d = r.distanceFromStartMetres, d.isFinite, (0...100_000).contains(d) {
                gates[i].role = r.role
                gates[i].distanceMetres = d
                renumber(&actions)
            } else {
                sendAssignments(now: now, &actions)
            }
        case let .startEvent(ev):
            // The echo is the acknowledgement; a repeat is echoed again and changes nothing.
            actions.append(.send(envelope(.startEvent(ev)), to: e.sender))
            takeStart(ev, gate: e.sender, bootEpoch: e.bootEpoch, now: now, &actions)
        case let .falseStart(f):
            let relayed = outbox.contains { if case .falseStart(f) = $0.message { return $0.to == e.sender } else { return false } }
            if relayed {
                // A gate's echo of the false start relayed to it.
                acknowledge(from: e.sender) { if case .falseStart(f) = $0.message { return true } else { return false } }
            } else if gates[i].role == .start {
                // The echo is the acknowledgement; only the start gate's reports are echoed,
                // so two echoes never bounce between host and gate.
                actions.append(.send(envelope(.falseStart(f)), to: e.sender))
                voidRun(f, gate: e.sender, now: now, &actions)
            }
        default:
            break
        }
    }

    /// Takes the start gate's start of the current run onto the network timeline.
    private mutating func takeStart(_ ev: StartEvent, gate: GateID, bootEpoch: UInt32, now: MonotonicInstant,
                                    _ actions: inout [RaceAction]) {
        guard let g = gates.first(where: { $0.id == gate }), g.role == .start, g.bootEpoch == bootEpoch,
              ev.runID == runID, ev.startType != .flying, ev.startType == configuration.startType else { return }
        // A refinement of the start already taken moves it; any other start of a running
        // run (a second press) is ignored.
        switch phase {
        case .waitingForCrossing: break
        case .running where runStart?.gate == gate && runStart?.crossingID == 0: break
        default: return
        }
        let mapped: (NetworkInstant, Span, Span)
        if gate == me {
            mapped = (NetworkInstant(nanoseconds: ev.startMono.nanoseconds), .zero, .zero)
        } else {
            guard let l = ClockModel.local(fromPeer: PeerInstant(nanoseconds: ev.startMono.nanoseconds), clock: g.clock),
                  g.clock.state(at: now) == .synced || g.clock.state(at: now) == .stale else {
                unmappedStarts.removeAll { $0.gate == gate }
                unmappedStarts.append((ev, gate, bootEpoch))
                return
            }
            mapped = (NetworkInstant(nanoseconds: l.value.nanoseconds), l.uncertainty, l.maxError)
        }
        let start = RaceCrossing(gate: gate, bootEpoch: bootEpoch, crossingID: 0, runID: ev.runID, gateIndex: g.index,
                                 distanceMetres: g.distanceMetres, timeNet: mapped.0, detectorUncertainty: ev.uncertainty,
                                 syncUncertainty: mapped.1, syncMaxError: mapped.2, direction: .leftToRight)
        guard start != runStart else { return }
        runStart = start
        runStartType = ev.startType
        setPhase(.running, &actions)
        actions.append(.started(start, ev.startType))
        finishIfReached(&actions)
    }

    /// Voids the current run for a false start at `gate` (the start gate), tells the other
    /// gates and arms the next run.
    private mutating func voidRun(_ f: FalseStart, gate: GateID, now: MonotonicInstant, _ actions: inout [RaceAction]) {
        guard f.runID == runID, gates.first(where: { $0.id == gate })?.role == .start,
              phase == .waitingForCrossing || phase == .running else { return }
        falseStarts.append((f.runID, gate, f.reason))
        actions.append(.falseStart(gate: gate, runID: f.runID, f.reason))
        for g in gates where g.id != me && g.id != gate && g.joined {
            sendReliably(.falseStart(f), to: g.id, now: now, &actions)
        }
        do { try armRun(now: now, into: &actions) } catch {}  // Cannot fail: waiting or running.
    }

    /// Takes a gate into the session (new, or back with a new boot epoch).
    private mutating func admit(_ e: Envelope, now: MonotonicInstant, _ actions: inout [RaceAction]) {
        guard phase != .idle else { return }
        if let i = gates.firstIndex(where: { $0.id == e.sender }) {
            guard e.bootEpoch > gates[i].bootEpoch || !gates[i].joined else {
                if gates[i].joined, case .announce = e.message {
                    // It lost the session (our reply went missing): offer it again.
                    sendReliably(.sessionConfig(sessionConfig), to: e.sender, now: now, &actions)
                }
                return
            }
            let rejoin = gates[i].bootEpoch != e.bootEpoch
            if rejoin {
                gates[i].bootEpoch = e.bootEpoch
                gates[i].clock.reset()
                gates[i].rejoins += 1
                gates[i].joined = false
                outbox.removeAll { $0.to == e.sender }
                actions.append(.gateJoined(e.sender, rejoin: true))
            }
            gates[i].lastHeard = now
        } else {
            guard gates.count < 16 else { return }  // The protocol's largest session.
            let last = gates.map(\.distanceMetres).max() ?? 0
            gates.append(RaceGate(id: e.sender, bootEpoch: e.bootEpoch, role: .finish, index: gates.count,
                                  distanceMetres: last + configuration.defaultSpacingMetres, joined: false,
                                  clock: PeerClock(configuration: configuration.clock), lastHeard: now, rejoins: 0))
            renumber(&actions, send: false)
            actions.append(.gateJoined(e.sender, rejoin: false))
        }
        sendReliably(.sessionConfig(sessionConfig), to: e.sender, now: now, &actions)
        updateHostPhase(now: now, &actions)
    }

    private var sessionConfig: SessionConfig {
        SessionConfig(startType: configuration.startType, runID: runID, gateCount: UInt8(gates.count), name: configuration.name)
    }

    /// Orders gates by distance (ties by id); of the gates that are not control gates,
    /// the first is the start, the last the finish and the others laps. Tells every gate.
    private mutating func renumber(_ actions: inout [RaceAction], send: Bool = true) {
        gates.sort { ($0.distanceMetres, $0.id.rawValue) < ($1.distanceMetres, $1.id.rawValue) }
        let timing = gates.indices.filter { gates[$0].role != .control }
        for i in gates.indices {
            gates[i].index = i
            if gates[i].role != .control {
                gates[i].role = i == timing.first ? .start : (i == timing.last ? .finish : .lap)
            }
        }
        if send { sendAssignments(now: nil, &actions) }
    }

    private mutating func sendAssignments(now: MonotonicInstant?, _ actions: inout [RaceAction]) {
        for g in gates where g.id != me && g.joined {
            let a = RoleAssignment(gate: g.id, role: g.role, gateIndex: UInt8(clamping: g.index), distanceFromStartMetres: g.distanceMetres)
            actions.append(.send(envelope(.roleAssignment(a)), to: g.id))
        }
    }

    private mutating func take(_ c: CrossingEvent, bootEpoch: UInt32, now: MonotonicInstant, _ actions: inout [RaceAction]) {
        guard let g = gates.first(where: { $0.id == c.gate }) else { return }
        let mapped: (NetworkInstant, Span, Span)
        if c.gate == me {
            mapped = (NetworkInstant(nanoseconds: c.timeMono.nanoseconds), .zero, .zero)
        } else {
            guard let l = ClockModel.local(fromPeer: PeerInstant(nanoseconds: c.timeMono.nanoseconds), clock: g.clock),
                  g.clock.state(at: now) == .synced || g.clock.state(at: now) == .stale else {
                unmapped.append((c, bootEpoch))
                return
            }
            mapped = (NetworkInstant(nanoseconds: l.value.nanoseconds), l.uncertainty, l.maxError)
        }
        let crossing = RaceCrossing(gate: c.gate, bootEpoch: bootEpoch, crossingID: c.crossingID, runID: c.runID,
                                    gateIndex: g.index, distanceMetres: g.distanceMetres, timeNet: mapped.0,
                                    detectorUncertainty: c.uncertainty, syncUncertainty: mapped.1, syncMaxError: mapped.2,
                                    direction: c.direction)
        crossings.append(crossing)
        actions.append(.crossing(crossing))
        guard crossing.runID == runID, g.role != .control else { return }
        if phase == .waitingForCrossing, g.role == .start, configuration.startType == .flying {
            runStart = crossing
            runStartType = .flying
            setPhase(.running, &actions)
            finishIfReached(&actions)
        } else if phase == .running, let start = runStart, crossing.timeNet > start.timeNet, g.role == .finish {
            setPhase(.finished, &actions)
        }
    }

    /// A finish crossing taken before the start (reports repeated to a new host arrive in
    /// any order) finishes the run once the start is in.
    private mutating func finishIfReached(_ actions: inout [RaceAction]) {
        guard phase == .running, let start = runStart else { return }
        let finishers = Set(gates.filter { $0.role == .finish }.map(\.id))
        if crossings.contains(where: { $0.runID == start.runID && finishers.contains($0.gate) && $0.timeNet > start.timeNet }) {
            setPhase(.finished, &actions)
        }
    }

    private mutating func mapPending(now: MonotonicInstant, _ actions: inout [RaceAction]) {
        if !unmappedStarts.isEmpty {
            let waiting = unmappedStarts
            unmappedStarts.removeAll()
            for w in waiting { takeStart(w.event, gate: w.gate, bootEpoch: w.bootEpoch, now: now, &actions) }
        }
        guard !unmapped.isEmpty else { return }
        let waiting = unmapped
        unmapped.removeAll()
        for w in waiting {
            if let g = gates.first(where: { $0.id == w.event.gate }), g.bootEpoch != w.bootEpoch {
                // Its gate restarted: the old clock mapping is gone; keep it unmapped no longer.
                continue
            }
            take(w.event, bootEpoch: w.bootEpoch, now: now, &actions)
        }
    }

    private mutating func updateHostPhase(now: MonotonicInstant, _ actions: inout [RaceAction]) {
        switch phase {
        case .connecting, .syncing, .ready:
            let others = gates.filter { $0.id != me }
            if others.isEmpty || others.contains(where: { !$0.joined }) {
                setPhase(others.isEmpty ? .connecting : .syncing, &actions)
            } else if others.allSatisfy({ $0.clock.state(at: now) == .synced }) {
                setPhase(.ready, &actions)
            } else {
                setPhase(.syncing, &actions)
            }
        default:
            break
        }
    }

    // MARK: - Gate

    private mutating func gateReceive(_ e: Envelope, now: MonotonicInstant, arrival: MonotonicInstant,
                                      _ actions: inout [RaceAction]) {
        switch e.message {
        case .sessionConfig:
            let newHost = host != e.sender || session != e.session
            if newHost {
                lastStatusSent = nil
                if let h = host, h != e.sender { previousHost = h }
                host = e.sender
                session = e.session
            }
            hostHeard = now
            if case let .sessionConfig(c) = e.message {
                runID = max(runID, c.runID)
                configuration.startType = c.startType
            }
            actions.append(.send(envelope(.sessionConfigAck(SessionConfigAck(accepted: true))), to: e.sender))
            if phase == .connecting { setPhase(.syncing, &actions) }
            if newHost, previousHost != nil { reportAgain(to: e.sender, now: now, &actions) }
            return
        case .announce:
            announcers[e.sender] = now
            return
        default:
            break
        }
        guard e.sender == host, e.session == session else { return }
        hostHeard = now
        switch e.message {
        case let .roleAssignment(a) where a.gate == me:
            acknowledge(from: e.sender) { $0.message.type == .roleRequest }
            if let last = assignmentFrom, (e.bootEpoch, e.sequence) <= (last.bootEpoch, last.sequence) { break }
            assignmentFrom = (e.bootEpoch, e.sequence)
            if assignment != a {
                assignment = a
                actions.append(.assigned(a))
            }
        case let .ping(p):
            // t2 is the ping's arrival; t3 is `now` here and restamped by the transport just
            // before the reply is sealed and sent (see `Pong`), as NTP wants it.
            actions.append(.send(envelope(.pong(Pong(t1: p.t1, t2: arrival, t3: now))), to: e.sender))
        case let .syncResult(s) where s.gate == me:
            syncReport = s
            if phase == .syncing, s.uncertainty <= configuration.clock.usableUncertainty, s.samples >= UInt16(configuration.clock.minimumSamplesForSync) {
                setPhase(.ready, &actions)
            }
        case let .crossingAck(a) where a.gate == me:
            acknowledge(from: e.sender) { $0.crossingID == a.crossingID }
        case let .startTiming(s):
            actions.append(.send(envelope(.crossingAck(CrossingAck(gate: me, crossingID: 0))), to: e.sender))
            if s.runID >= runID {
                runID = s.runID
                configuration.startType = s.startType
                setPhase(.waitingForCrossing, &actions)
                // Why the pair: a run armed again with a new start type is armed anew, even
                // when `startTypeChange` brought the type first.
                if s.runID > armedRun.runID {
                    runLog.removeAll { $0.runID < s.runID }
                    if let st = runStartLog, st.runID < s.runID { runStartLog = nil }
                }
                if s.runID > armedRun.runID || s.startType != armedRun.startType {
                    armedRun = (s.runID, s.startType)
                    actions.append(.runArmed(runID: s.runID, startType: s.startType))
                }
            }
        case let .startTypeChange(c):
            configuration.startType = c.startType
        case let .thumbnailAck(a):
            imageSender.ack(.photo, a, from: e.sender)
        case let .calibrationFramesAck(a):
            imageSender.ack(.frames, a, from: e.sender)
        case let .distanceChange(d) where d.gate == me:
            // Like an assignment: one older than the assignment in force changes nothing.
            if let last = assignmentFrom, (e.bootEpoch, e.sequence) <= (last.bootEpoch, last.sequence) { break }
            if var a = assignment, a.distanceFromStartMetres != d.distanceFromStartMetres {
                assignmentFrom = (e.bootEpoch, e.sequence)
                a.distanceFromStartMetres = d.distanceFromStartMetres
                assignment = a
                actions.append(.assigned(a))
            }
        case .pauseDetection, .resumeDetection:
            let p = e.message.type == .pauseDetection
            if p != paused {
                paused = p
                actions.append(.paused(p))
            }
        case let .resetForNextRun(r):
            if r.nextRunID > resetTo {
                resetTo = r.nextRunID
                actions.append(.resetForNextRun(r.nextRunID))
            }
        case let .startEvent(ev):
            // The host's echo: the start arrived.
            acknowledge(from: e.sender) { if case .startEvent(ev) = $0.message { return true } else { return false } }
        case let .falseStart(f):
            if reportedFalseStarts.contains(f.runID) {
                // The host's echo of this gate's own report.
                acknowledge(from: e.sender) { if case .falseStart(f) = $0.message { return true } else { return false } }
            } else {
                actions.append(.send(envelope(.falseStart(f)), to: e.sender))
                if f.runID > relayedFalseStart {
                    relayedFalseStart = f.runID
                    actions.append(.falseStart(gate: e.sender, runID: f.runID, f.reason))
                }
            }
        case .endSession:
            electionAt = now + configuration.electionWindow
            host = nil
            session = .none
            assignment = nil
            assignmentFrom = nil
            outbox.removeAll()
            imageSender.abandonAll()
            setPhase(.connecting, &actions)
        default:
            break
        }
    }

    // MARK: - Election and failover

    /// Gate: the host fell silent. Back to announcing; an electable gate takes part in the
    /// election. The run's crossings and start stay in the log for the next host.
    private mutating func loseHost(now: MonotonicInstant, _ actions: inout [RaceAction]) {
        if let h = host {
            previousHost = h
            outbox.removeAll { $0.to == h }
        }
        imageSender.abandonAll()  // The new host does not know the old crossing ids' images.
        host = nil
        session = .none
        announcers.removeAll()
        electionAt = now + configuration.electionWindow
        nextAnnounce = now
        setPhase(.connecting, &actions)
    }

    /// Gate: a new host took this gate in after its old host was lost: ask for the old
    /// place on the course and report the current run's start and crossings again (the
    /// new host deduplicates them like any repeat).
    private mutating func reportAgain(to newHost: GateID, now: MonotonicInstant, _ actions: inout [RaceAction]) {
        if let a = assignment {
            sendReliably(.roleRequest(RoleRequest(role: a.role, distanceFromStartMetres: a.distanceFromStartMetres)),
                         to: newHost, now: now, &actions)
        }
        for c in runLog where c.runID == runID {
            sendReliably(.crossingEvent(c), to: newHost, now: now, &actions, crossingID: c.crossingID)
        }
        if let st = runStartLog, st.runID == runID { sendReliably(.startEvent(st), to: newHost, now: now, &actions) }
    }

    /// An electable gate won the election: it hosts a new session on the course it
    /// stood on, in the run it was in, and takes its own crossings and start of that run.
    private mutating func becomeHost(now: MonotonicInstant, _ actions: inout [RaceAction]) {
        kind = .host
        elections += 1
        outbox.removeAll()
        host = nil
        // A fresh session id: gates of the lost host's session see a new session.
        session = SessionID(UInt32(truncatingIfNeeded: UInt64(me.rawValue) &* 2_654_435_761 ^ UInt64(bootEpoch) ^ UInt64(elections)) | 1)
        let role = assignment?.role ?? .start
        gates = [RaceGate(id: me, bootEpoch: bootEpoch, role: role, index: 0,
                          distanceMetres: assignment?.distanceFromStartMetres ?? 0, joined: true,
                          clock: PeerClock(configuration: configuration.clock), lastHeard: now, rejoins: 0)]
        crossings = []
        seen = []
        unmapped = []
        unmappedStarts = []
        runStart = nil
        runStartType = nil
        phase = .idle
        setPhase(.connecting, &actions)
        actions.append(.elected(session))
        // The run goes on under this host: armed again as the same run when every gate is
        // back, with its own reports of it taken then (`resumeRun`).
        resuming = previousHost != nil  // A first election has no run to resume.
    }

    // MARK: - Plumbing

    private mutating func envelope(_ m: Message) -> Envelope {
        sequence &+= 1
        return Envelope(session: session, sender: me, bootEpoch: bootEpoch, sequence: sequence, message: m)
    }

    private mutating func sendReliably(_ m: Message, to gate: GateID, now: MonotonicInstant, _ actions: inout [RaceAction],
                                       crossingID: UInt32 = 0) {
        // A newer handshake of the same type replaces one still pending.
        if crossingID == 0 { outbox.removeAll { $0.to == gate && $0.message.type == m.type } }
        actions.append(.send(envelope(m), to: gate))
        outbox.append(Pending(message: m, to: gate, due: now + configuration.retransmitInitial,
                              backoff: configuration.retransmitInitial, crossingID: crossingID))
    }

    private mutating func acknowledge(from gate: GateID, _ matches: (Pending) -> Bool) {
        outbox.removeAll { $0.to == gate && matches($0) }
    }

    private mutating func setPhase(_ p: RacePhase, _ actions: inout [RaceAction]) {
        guard p != phase else { return }
        phase = p
        actions.append(.phase(p))
    }
}

/// Why a session command was refused.
public enum RaceError: Error, Sendable, Hashable, CustomStringConvertible {
    case notHost
    case unknownGate(GateID)
    case badDistance(Double)
    case notReady(RacePhase)

    public var description: String {
        switch self {
        case .notHost: return "only the host gate can do that"
        case let .unknownGate(g): return "\(g) is not in the session"
        case let .badDistance(d): return "distance \(d) m is outside 0...100000 m"
        case let .notReady(p): return "cannot arm a run while \(p) (every gate must be synced)"
        }
    }
}
