// SPDX-License-Identifier: Apache-2.0
// The multi-gate race link: authenticated UDP between gates, driving RaceSession on the epoll loop.

import ClockSync
public import Engine
import Foundation
public import GateCore
public import LinuxHardware
public import Logging
import PeerAuth
public import PeerWire
public import Race
public import SQLiteStore
public import WebUI
#if canImport(Glibc)
import Glibc
#endif

/// What the daemon needs to join or host a race, from `[peers]` or the command line.
public struct PeerOptions: Sendable {
    public var role: RaceSession.Kind
    /// `auto`: a gate that takes part in host elections.
    public var electable = false
    /// UDP port this gate binds (the host's port is the one gates send to).
    public var port: UInt16
    public var pairingCode: String
    /// Gate only: where announces go instead of the LAN broadcast address (a host across
    /// a router, or an impairment proxy in tests). `HOST:PORT`.
    public var hostAddress: UDPAddress?
    /// This gate's id; nil: the one kept in the state directory (chosen at random once).
    public var gateID: UInt32?
    /// For tests only: the skew applied to this gate's peer-facing clock.
    public var skew: ClockSkew = .none
    /// For tests and the demo only: what this gate receives is delayed, jittered, lost and
    /// duplicated as the simulated link says, with a seeded generator (nil: taken as it comes).
    public var impairment: (link: SimulatedLink, seed: UInt64)?
    /// The IPv4 address the link binds: every interface (`0.0.0.0`) on a gate; the page's
    /// address in the demo. Bound to a loopback address the link makes no announces on
    /// the LAN (a gate then needs `hostAddress`).
    public var listenHost = "0.0.0.0"

    public init(role: RaceSession.Kind, electable: Bool = false, port: UInt16, pairingCode: String, hostAddress: UDPAddress? = nil,
                gateID: UInt32? = nil, skew: ClockSkew = .none, impairment: (link: SimulatedLink, seed: UInt64)? = nil) {
        self.role = role
        self.electable = electable
        self.port = port
        self.pairingCode = pairingCode
        self.hostAddress = hostAddress
        self.gateID = gateID
        self.skew = skew
        self.impairment = impairment
    }
}

/// One gate's side of a multi-gate race, on the engine thread.
///
/// Owns the peer UDP socket (its descriptor joins the epoll loop) and the `PeerGuard`
/// keyed by the pairing code: every datagram is sealed on the way out and opened on the
/// way in; anything that does not open (another group, forged, replayed, malformed) is
/// dropped and counted, never acted on. Accepted envelopes feed `RaceSession` with the
/// loop iteration's single timestamp, and the session's actions are performed here.
///
/// Time domains: the session runs on this gate's *peer clock*, local CLOCK_MONOTONIC
/// plus the test-only skew (none in production). On the host, crossings come out on the
/// network timeline, which is the host's peer clock.
public final class PeerLink {
    private var transport: UDPTransport
    private var peerGuard: PeerGuard
    private(set) var race: RaceSession
    public let options: PeerOptions
    private let log: Logger
    /// Last address each peer was heard from (replies go there).
    private var addresses: [GateID: UDPAddress] = [:]
    private var actions: [RaceAction] = []
    private let receiveBuffer: UnsafeMutableRawBufferPointer
    private let sendBuffer: UnsafeMutableRawBufferPointer
    /// Where announces go: the host address when one is given, else every interface's
    /// directed broadcast address (refreshed while announcing: Wi-Fi may come up late).
    private var announceAddresses: [UDPAddress]
    private var nextInterfaceScan = MonotonicInstant(nanoseconds: .min)
    /// Why 5 s: a gate that joins the Wi-Fi after start is found within a few announces;
    /// reading the interface list more often buys nothing.
    public static let interfaceScanPeriod = Span.seconds(5)
    private var loggedDrops = DropCounts()
    private var loggedSendDrops: UInt64 = 0
    private var nextHealth = MonotonicInstant(nanoseconds: .min)
    private var nextSyncLine: [GateID: MonotonicInstant] = [:]
    /// Crossings this gate handed to the session (gate: sent to the host; host: its own).
    private(set) var localCrossings = 0
    /// Crossings seen while not in a session (a gate without a host cannot report them).
    private(set) var unsentCrossings = 0
    /// Crossings the host took into its results.
    private(set) var raceCrossings = 0
    /// Host: receives each finished race as a stored run (set by `GateServices` to the
    /// storage thread's queue).
    public var onRaceFinished: ((StoredRun) -> Void)?
    /// Host: races finished and handed to `onRaceFinished`.
    private(set) var racesStored = 0
    /// Host: receives each gate's image of its crossing, with the crossing's instant on
    /// this gate's CLOCK_MONOTONIC and the gate's place on the course (set by
    /// `GateServices` to the photo-finish link).
    public var onRacePhoto: ((_ photo: RemotePhoto) -> Void)?
    /// Host: images that arrived whole from gates.
    private(set) var photosReceived = 0
    /// Frame strips received whole (host).
    private(set) var stripsReceived = 0

    /// How often peer health goes to the web page and drop counters are compared. Why
    /// 1 s: the page shows seconds since last heard; faster buys nothing.
    public static let healthPeriod = Span.seconds(1)
    /// Host: how often each gate's clock estimate is logged (sync benchmark reads these).
    /// Why 1 s: one line per gate per second is readable and enough for percentiles.
    public static let syncLinePeriod = Span.seconds(1)

    public var fileDescriptor: Int32 { transport.fileDescriptor }
    /// Datagrams the test impairment holds back, with their simulated arrival.
    private var held: [(due: MonotonicInstant, bytes: [UInt8], from: UDPAddress)] = []
    private var impairmentRNG = SplitMix64(seed: 0)

    /// Bound to a loopback address: no announces go to the LAN's broadcast addresses.
    private let onLoopback: Bool

    /// The UDP port the link is bound to (the one asked for, or the kernel's choice for 0).
    public var localPort: UInt16 { transport.localPort }

    public init(options: PeerOptions, stateDirectory: String, now: MonotonicInstant, log: Logger) throws {
        self.options = options
        self.log = log
        let key = try PairingKey(pairingCode: options.pairingCode)
        let id = GateID(options.gateID ?? PeerIdentity.gateID(stateDirectory: stateDirectory, log: log))
        let epoch = PeerIdentity.nextBootEpoch(stateDirectory: stateDirectory, log: log)
        let loopback = UDPAddress(host: options.listenHost, port: 0).map { $0.ip >> 24 == 127 } ?? false
        onLoopback = loopback
        transport = try UDPTransport(host: options.listenHost, port: options.port, broadcast: options.hostAddress == nil && !loopback)
        peerGuard = PeerGuard(key: key, localGate: id, bootEpoch: epoch,
                              session: options.role == .host ? SessionID(1) : nil)
        var configuration = RaceConfiguration()
        configuration.peerPort = transport.localPort
        race = RaceSession(kind: options.role, me: id, bootEpoch: epoch, session: SessionID(1), configuration: configuration,
                           electable: options.electable)
        announceAddresses = options.hostAddress.map { [$0] } ?? (loopback ? [] : Self.broadcastAddresses(port: options.port))
        receiveBuffer = .allocate(byteCount: Wire.maxDatagramLength + PeerGuard.tagLength, alignment: 8)
        sendBuffer = .allocate(byteCount: Wire.maxDatagramLength + PeerGuard.tagLength, alignment: 8)
        actions.reserveCapacity(32)
        pendingCrossings.reserveCapacity(8)
        log.notice("peer link: \(options.role == .host ? "host" : (options.electable ? "auto (electable gate)" : "gate")) \(id) boot epoch \(epoch) on udp \(options.listenHost):\(transport.localPort), \(announceAddresses.isEmpty ? "no announces (on loopback: gates give this host's address)" : "announces to " + announceAddresses.map { "\($0)" }.joined(separator: ", "))")
        if options.skew != .none {
            log.warning("test clock skew on the peer clock: gate=\(id.rawValue) offset_ns=\(options.skew.offsetNanoseconds) ppm=\(options.skew.ppm) origin_ns=\(options.skew.origin.nanoseconds)")
        }
        if let (link, seed) = options.impairment {
            impairmentRNG = SplitMix64(seed: seed)
            log.warning("test impairment on what this gate receives: delay_ms=\(link.delay.milliseconds) jitter_ms=±\(link.jitter.milliseconds) loss=\(link.loss) duplicate=\(link.duplicate)")
        }
        race.start(now: peerNow(now), into: &actions)
        perform(now: now)
    }

    deinit {
        receiveBuffer.deallocate()
        sendBuffer.deallocate()
    }

    /// In a race session: a host with a gate that joined, or a gate with a host. Its
    /// results are then the race's, not this gate's own engine's.
    public var inSession: Bool {
        race.kind == .host ? race.gates.contains { $0.id != race.me && $0.joined } : race.host != nil
    }

    /// The session's phase (the host's: every gate synced is `ready`).
    public var racePhase: RacePhase { race.phase }

    /// A gate with a host: its photos go to the host (a host keeps its own).
    public var sendsPhotos: Bool { race.kind == .gate && race.host != nil }

    /// This gate's peer clock at local instant `t`.
    private func peerNow(_ t: MonotonicInstant) -> MonotonicInstant { options.skew.apply(t) }

    /// One loop iteration: reads every queued datagram, runs the session's timers and
    /// performs what they ask. `now` is the iteration's timestamp (local CLOCK_MONOTONIC).
    public func service(now: MonotonicInstant, web: WebGate?) {
        let peer = peerNow(now)
        if !pendingStarts.isEmpty { handOnStarts(now: now) }
        if !pendingCrossings.isEmpty {
            for c in pendingCrossings { localCrossing(c, now: now) }
            pendingCrossings.removeAll(keepingCapacity: true)
        }
        while true {
            let r: IOResult<(count: Int, from: UDPAddress, at: MonotonicInstant)>
            do { r = try transport.receive(into: receiveBuffer) } catch {
                log.error("peer socket: \(error.description)")
                break
            }
            guard case let .processed((n, from, arrival)) = r else { break }
            let bytes = UnsafeRawBufferPointer(rebasing: receiveBuffer[0..<n])
            if let (link, _) = options.impairment {
                impair(bytes, from: from, arrival: arrival, link: link)
            } else {
                accept(bytes, from: from, arrival: arrival, peer: peer)
            }
        }
        if !held.isEmpty { acceptHeld(now: now, peer: peer) }
        race.tick(now: peer, into: &actions)
        perform(now: now)
        if now >= nextHealth {
            nextHealth = now + Self.healthPeriod
            logDrops()
            web?.publishPeers(peerViews(now: now))
        }
        if race.kind == .host { logSync(now: now) }
    }

    /// Crossings from the loop's observer, handed to the session at the next `service`
    /// with that iteration's timestamp.
    private var pendingCrossings: [Crossing] = []
    /// Starts and false starts of this gate's engine, handed on like crossings.
    private var pendingStarts: [EngineAction] = []

    /// Called from the GateLoop observer: a crossing of this gate's detector.
    public func noteCrossing(_ c: Crossing) { pendingCrossings.append(c) }

    /// Called from the GateLoop observer: the engine started the clock (or refined the
    /// start) or saw a false start. The session passes it on only at the start gate.
    public func noteEngine(_ a: EngineAction) {
        switch a {
        case .started, .startCorrected, .falseStart: pendingStarts.append(a)
        default: break
        }
    }

    /// What the race asks of this gate's engine, taken by `GateServices` each iteration.
    public enum EngineRequest: Equatable {
        /// Arm for the next run with this start type (the start gate: the race's type).
        case arm(StartType)
        /// Another gate's false start voided the run: say so here (the gate's number, and why
        /// in the engine's words).
        case falseStartElsewhere(gate: String, reason: String)
        /// The host reset the session for the next run.
        case reset
    }
    private(set) var engineRequests: [EngineRequest] = []
    public func takeEngineRequests() -> [EngineRequest] {
        defer { engineRequests.removeAll(keepingCapacity: true) }
        return engineRequests
    }

    /// One sigma of a start instant by how it was taken. Why: a button edge carries the
    /// kernel's timestamp (BENCHMARKS: read within 0.7 ms, stamped at the interrupt); a
    /// sound's first estimate is `play()`'s (mean 2 ms late, at most 3.6 ms), its
    /// refinement within 0.2 ms; an in-frame start is the frame the athlete left in,
    /// a third of a 60 fps frame interval.
    public static func startUncertainty(_ type: StartType, refined: Bool) -> Span {
        switch type {
        case .buttonRelease: return .microseconds(100)
        case .countdown, .voice: return refined ? .microseconds(200) : .milliseconds(2)
        case .inFrame: return .milliseconds(5)
        case .flying: return .milliseconds(1)
        }
    }

    /// Each start type as the race link and the engine name it.
    public static let startTypes: [(race: RaceStartType, engine: StartType)] = [
        (.flying, .flying), (.buttonRelease, .buttonRelease), (.countdown, .countdown), (.voice, .voice), (.inFrame, .inFrame),
    ]
    public static func engineStartType(_ t: RaceStartType) -> StartType { startTypes.first { $0.race == t }?.engine ?? .flying }
    public static func raceStartType(_ t: StartType) -> RaceStartType { startTypes.first { $0.engine == t }?.race ?? .flying }

    /// Host: the page paused or resumed detection on every gate.
    public func setPaused(_ paused: Bool, now: MonotonicInstant) {
        do {
            try race.setPaused(paused, into: &actions)
            log.notice("page \(paused ? "paused" : "resumed") detection on every gate")
        } catch {
            log.warning("page asked to \(paused ? "pause" : "resume") detection: \(error.description)")
        }
        perform(now: now)
    }

    /// Host: the page reset the gate; every gate resets for the next run.
    public func resetForNextRun(now: MonotonicInstant) {
        guard race.kind == .host else { return }
        do { try race.resetForNextRun(now: peerNow(now), into: &actions) } catch {
            log.warning("race reset: \(error.description)")
        }
        perform(now: now)
    }

    /// Host, on the way out: tells every gate the session ended, so they look for a host
    /// (or elect one) at once instead of after the host's silence times out.
    public func endSession(now: MonotonicInstant) {
        guard race.kind == .host else { return }
        race.endSession(into: &actions)
        perform(now: now)
    }

    /// Host: the page changed the start type; the next runs use it on every gate.
    public func setStartType(_ t: StartType, now: MonotonicInstant) {
        guard race.kind == .host else { return }
        do {
            try race.setStartType(Self.raceStartType(t), now: peerNow(now), into: &actions)
            log.notice(race.pendingStartType == nil ? "race start type: \(t.rawValue)"
                                                    : "race start type: \(t.rawValue) from the next run (a run is running)")
        } catch {
            log.warning("race start type \(t.rawValue) not taken: \(error.description)")
        }
        perform(now: now)
    }

    /// How the engine started its last run (a refinement carries no start type).
    private var lastStartType = StartType.flying

    private func logLocalStart(_ at: MonotonicInstant, _ how: String) {
        guard race.role == .start, race.configuration.startType != .flying else { return }
        log.info("local start gate=\(race.me.rawValue) boot=\(race.bootEpoch) run=\(race.runID) mono_ns=\(at.nanoseconds) peer_ns=\(peerNow(at).nanoseconds) how=\(how)")
    }

    private func handOnStarts(now: MonotonicInstant) {
        for a in pendingStarts {
            switch a {
            case let .started(at, by):
                lastStartType = by
                logLocalStart(at, by.rawValue)
                race.localStart(startMono: peerNow(at), uncertainty: Self.startUncertainty(by, refined: false),
                                startType: Self.raceStartType(by), now: peerNow(now), into: &actions)
            case let .startCorrected(at):
                logLocalStart(at, "refined")
                race.localStart(startMono: peerNow(at), uncertainty: Self.startUncertainty(lastStartType, refined: true),
                                startType: Self.raceStartType(lastStartType), now: peerNow(now), into: &actions)
            case let .falseStart(reason, at):
                race.localFalseStart(FalseStartCause(reason), atMono: peerNow(at),
                                     now: peerNow(now), into: &actions)
            default:
                break
            }
        }
        pendingStarts.removeAll(keepingCapacity: true)
        perform(now: now)
    }

    /// A crossing of this gate's detector at local instant `c.time`.
    private func localCrossing(_ c: Crossing, now: MonotonicInstant) {
        let inSession = race.kind == .host || race.host != nil
        if inSession { localCrossings += 1 } else { unsentCrossings += 1 }
        // `id` is the session's crossing id: it counts every crossing of this life.
        log.info("local crossing gate=\(race.me.rawValue) boot=\(race.bootEpoch) id=\(localCrossings + unsentCrossings) mono_ns=\(c.time.nanoseconds) peer_ns=\(peerNow(c.time).nanoseconds) unc_ns=\(c.uncertainty.nanoseconds) \(inSession ? "sent" : "unsent (not in a session)")")
        race.localCrossing(timeMono: peerNow(c.time), uncertainty: c.uncertainty, direction: c.direction,
                           now: peerNow(now), into: &actions)
        perform(now: now)
    }

    /// This gate's photo-finish image (a `PhotoBundle`) or frame strip (a `FrameStrip`)
    /// of its crossing at local instant `crossingNs`: a gate sends it to its host; the
    /// host keeps its own (see `PhotoFinishLink`).
    public func notePhoto(bundle: [UInt8], crossingNs: Int64, media: RaceMedia = .photo, now: MonotonicInstant) {
        guard race.kind == .gate else { return }
        let what = media == .photo ? "photo" : "frames"
        if race.localPhoto(crossingTimeMono: peerNow(MonotonicInstant(nanoseconds: crossingNs)), bundle: bundle, media: media,
                           now: peerNow(now), into: &actions) {
            log.info("\(what) of the crossing at mono \(crossingNs) ns: sending \(bundle.count) bytes to the host")
        } else {
            log.debug("\(what) of the crossing at mono \(crossingNs) ns: not for a race (no host, or the crossing was not reported)")
        }
        perform(now: now)
    }

    /// The board's SoC temperature in °C, read at most every `statusPeriod` (set by `run`
    /// from the board's thermal zone; nil: none).
    public var socCelsius: (() -> Double?)?
    private var statusFrames: (at: MonotonicInstant, frames: UInt64, dropped: UInt64)?
    private var statusRate: (fps: Float, dropped: UInt32, celsius: Float?) = (0, 0, nil)
    /// Why 1 s: the frame rate and drops are measured over a second, like the page's.
    public static let statusPeriod = Span.seconds(1)

    /// This gate's status, every loop iteration (from `GateServices.afterFrames`): the
    /// session sends it to the host when it changed or is due.
    public func noteStatus(_ status: GateStatus, camera: DeviceState, frames: UInt64, dropped: UInt64, now: MonotonicInstant) {
        if let last = statusFrames {
            let dt = now.since(last.at)
            if dt >= Self.statusPeriod {
                let fps = Double(frames &- last.frames) / dt.seconds
                statusRate = (Float(min(1000, max(0, fps))), UInt32(clamping: dropped &- last.dropped),
                              socCelsius?().map { Float(min(150, max(-50, $0))) })
                statusFrames = (now, frames, dropped)
            }
        } else {
            statusFrames = (now, frames, dropped)
        }
        let report = GateStatusReport(readiness: ReadinessFlags(status), camera: camera, framesPerSecond: statusRate.fps,
                                      droppedFrames: statusRate.dropped, socCelsius: statusRate.celsius)
        race.localStatus(report, now: peerNow(now), into: &actions)
        perform(now: now)
    }

    /// What the page shows of a gate's status: the camera when it is not streaming, the
    /// warnings, the frame rate, drops and a hot board.
    public static func statusText(_ r: GateStatusReport) -> String {
        var parts: [String] = []
        if r.camera != .streaming { parts.append("camera \(r.camera)") }
        if r.readiness.contains(.tooFar) { parts.append("too far") }
        if r.readiness.contains(.shaking) { parts.append("shaking") }
        parts.append(r.readiness.contains(.armed) ? "armed" : "not armed")
        parts.append("\(Int(r.framesPerSecond.rounded())) fps")
        if r.droppedFrames > 0 { parts.append("\(r.droppedFrames) dropped") }
        if let c = r.socCelsius { parts.append("\(Int(c.rounded())) °C\(c >= 80 ? " (hot)" : "")") }
        return parts.joined(separator: ", ")
    }

    /// Host: gives `gate` a new role and distance (from the page); the session renumbers
    /// the course and tells the gates. Refusals (not host, unknown gate) are logged.
    public func assign(gate: UInt32, role name: String, distanceMetres: Double, now: MonotonicInstant) {
        guard let role = GateRole.allCases.first(where: { "\($0)" == name }) else {
            log.warning("page asked for role \(name) of gate \(gate): not a role")
            return
        }
        do {
            try race.assign(GateID(gate), role: role, distanceMetres: distanceMetres, into: &actions)
            log.notice("page set gate \(gate) to \(role) at \(distanceMetres) m")
        } catch {
            log.warning("page asked for gate \(gate) as \(role) at \(distanceMetres) m: \(error.description)")
        }
        perform(now: now)
    }

    /// A summary line for the end of a run.
    public var summary: String {
        "peer link summary: role \(race.kind == .host ? "host" : "gate") id \(race.me.rawValue) epoch \(race.bootEpoch) "
            + "phase \(race.phase) local_crossings \(localCrossings) unsent \(unsentCrossings) race_crossings \(raceCrossings) races_stored \(racesStored) "
            + "unacknowledged \(race.unacknowledged) accepted \(peerGuard.acceptedCount) dropped \(peerGuard.drops.total) "
            + "images_sent \(race.imageCounts.delivered) images_abandoned \(race.imageCounts.abandoned) photos_received \(photosReceived) strips_received \(stripsReceived)"
    }

    // MARK: - Actions

    private func perform(now: MonotonicInstant) {
        guard !actions.isEmpty else { return }
        // By index: arming a run (host) appends actions while these are performed.
        var i = 0
        while i < actions.count {
            let action = actions[i]
            i += 1
            switch action {
            case let .send(envelope, to: gate):
                guard let address = addresses[gate] ?? (gate == race.host ? options.hostAddress : nil) else {
                    log.debug("no address for \(gate); message dropped")
                    continue
                }
                send(envelope, to: address)
            case let .broadcast(envelope):
                if options.hostAddress == nil, !onLoopback, now >= nextInterfaceScan {
                    nextInterfaceScan = now + Self.interfaceScanPeriod
                    let found = Self.broadcastAddresses(port: options.port)
                    if found != announceAddresses {
                        announceAddresses = found
                        log.notice("peer announces now go to \(found.map { "\($0)" }.joined(separator: ", "))")
                    }
                }
                for address in announceAddresses { send(envelope, to: address) }
            case let .phase(p):
                log.notice("race phase: \(p)")
                if race.kind == .host { hostPhase(p, now: now) }
            case let .crossing(c):
                raceCrossings += 1
                log.notice("race crossing gate=\(c.gate.rawValue) boot=\(c.bootEpoch) id=\(c.crossingID) run=\(c.runID) index=\(c.gateIndex) distance_m=\(c.distanceMetres) time_net_ns=\(c.timeNet.nanoseconds) det_unc_ns=\(c.detectorUncertainty.nanoseconds) sync_unc_ns=\(c.syncUncertainty.nanoseconds) sync_max_ns=\(c.syncMaxError.nanoseconds) direction=\(c.direction)")
            case let .gateJoined(g, rejoin):
                log.notice("race gate \(rejoin ? "rejoined" : "joined"): \(g.rawValue)")
            case let .assigned(a):
                log.notice("race role: \(a.role) index \(a.gateIndex) at \(a.distanceFromStartMetres) m")
                // The start gate arms with the race's start type when it takes the role.
                if a.role == .start, race.phase == .waitingForCrossing {
                    engineRequests.append(.arm(Self.engineStartType(race.configuration.startType)))
                }
            case let .runArmed(run, type):
                log.notice("race run \(run) armed, \(Self.engineStartType(type).rawValue) start")
                if race.role == .start { engineRequests.append(.arm(Self.engineStartType(type))) }
            case let .started(start, type):
                log.notice("race start run=\(start.runID) gate=\(start.gate.rawValue) boot=\(start.bootEpoch) type=\(Self.engineStartType(type).rawValue) time_net_ns=\(start.timeNet.nanoseconds) det_unc_ns=\(start.detectorUncertainty.nanoseconds) sync_unc_ns=\(start.syncUncertainty.nanoseconds) sync_max_ns=\(start.syncMaxError.nanoseconds)")
            case let .paused(p):
                log.notice("race detection \(p ? "paused" : "resumed") by the host")
            case let .resetForNextRun(run):
                log.notice("race reset by the host; next run \(run)")
                engineRequests.append(.reset)
            case let .elected(session):
                log.notice("race host elected: this gate \(race.me.rawValue) hosts \(session), run \(race.runID)")
            case let .photo(p):
                if p.media == .photo { photosReceived += 1 } else { stripsReceived += 1 }
                let local = options.skew.local(MonotonicInstant(nanoseconds: p.crossing.timeNet.nanoseconds))
                log.notice("race \(p.media == .photo ? "photo" : "frames") gate=\(p.crossing.gate.rawValue) boot=\(p.crossing.bootEpoch) id=\(p.crossing.crossingID) run=\(p.crossing.runID) index=\(p.crossing.gateIndex) bytes=\(p.bundle.count) mono_ns=\(local.nanoseconds)")
                onRacePhoto?(RemotePhoto(bundle: p.bundle, crossingNs: local.nanoseconds, gateIndex: p.crossing.gateIndex,
                                         media: p.media))
            case let .falseStart(gate, run, reason):
                log.notice("race false start run=\(run) gate=\(gate.rawValue) reason=\(reason == .buttonReleased ? "button released early" : "movement after Set")")
                if gate != race.me {
                    engineRequests.append(.falseStartElsewhere(gate: "\(gate.rawValue)", reason: FalseStartReason(reason).rawValue))
                }
            }
        }
        actions.removeAll(keepingCapacity: true)
    }

    /// Host: arms a run as soon as every gate is synced, and the next one after a finish.
    private func hostPhase(_ p: RacePhase, now: MonotonicInstant) {
        switch p {
        case .finished:
            let splits = race.splits()
            for s in splits {
                log.notice("race split run=\(race.runID) index=\(s.gateIndex) gate=\(s.gate.rawValue) distance_m=\(s.distanceMetres) time_s=\(ClipCrossingFormat.fixed(s.time.seconds, 4)) unc_ms=\(ClipCrossingFormat.ms(s.uncertainty))")
            }
            if let start = race.runStart {
                // The start crossing is on the network timeline (this host's peer clock).
                let localStart = options.skew.local(MonotonicInstant(nanoseconds: start.timeNet.nanoseconds))
                if let run = RaceResults.storedRun(runID: race.runID, startType: Self.engineStartType(race.runStartType ?? .flying),
                                                   splits: splits, gateCount: race.gates.count,
                                                   localStart: localStart, wallStartMs: StoreEvents.wallMs(of: localStart)) {
                    racesStored += 1
                    onRaceFinished?(run)
                }
            }
            fallthrough
        case .ready:
            do { try race.armRun(now: peerNow(now), into: &actions) } catch {
                log.warning("race: cannot arm: \(error.description)")
            }
        default:
            break
        }
    }

    /// Every interface's directed broadcast address at `port`; 255.255.255.255 when no
    /// interface offers one (it needs a route, see `UDPAddress.interfaceBroadcasts`).
    public static func broadcastAddresses(port: UInt16) -> [UDPAddress] {
        let found = UDPAddress.interfaceBroadcasts(port: port)
        return found.isEmpty ? [.broadcast(port: port)] : found
    }

    private func send(_ envelope: Envelope, to address: UDPAddress) {
        peerGuard.session = race.session == .none ? nil : race.session
        // Transmit timestamps as late as possible (RFC 5905 §8): a ping's t1 and a pong's
        // t3 are read again just before sealing, so the work between the iteration's
        // timestamp and the send does not count as network delay on one side only.
        var message = envelope.message
        switch message {
        case .ping: message = .ping(Ping(t1: peerNow(Sys.monotonicNow())))
        case let .pong(p): message = .pong(Pong(t1: p.t1, t2: p.t2, t3: max(p.t2, peerNow(Sys.monotonicNow()))))
        default: break
        }
        let length: Int
        do { length = try peerGuard.seal(message, into: sendBuffer) } catch {
            log.error("peer message \(envelope.message.type) not sent: \(error.description)")
            return
        }
        do { _ = try transport.send(UnsafeRawBufferPointer(rebasing: sendBuffer[0..<length]), to: address) } catch {
            log.warning("peer send to \(address): \(error.description)")
        }
    }

    /// An authenticated datagram goes to the session; anything else is dropped (counted by
    /// the guard, logged once per change by `logDrops`).
    private func accept(_ bytes: UnsafeRawBufferPointer, from: UDPAddress, arrival: MonotonicInstant, peer: MonotonicInstant) {
        guard case let .accepted(received) = peerGuard.open(bytes) else { return }
        addresses[received.envelope.sender] = from
        race.receive(received.envelope, now: peer, arrival: peerNow(arrival), into: &actions)
    }

    /// The test impairment, applied as datagrams arrive: lost, or held until the kernel's
    /// arrival stamp plus the link's delay ± jitter, which then stands as their arrival
    /// (twice when duplicated). Applied on arrival rather than on sending, the simulated
    /// delay is exact in the timestamps whatever the loop was doing.
    private func impair(_ bytes: UnsafeRawBufferPointer, from: UDPAddress, arrival: MonotonicInstant, link: SimulatedLink) {
        if Double.random(in: 0..<1, using: &impairmentRNG) < link.loss { return }
        let copies = Double.random(in: 0..<1, using: &impairmentRNG) < link.duplicate ? 2 : 1
        for _ in 0..<copies {
            let jitter = link.jitter.nanoseconds > 0
                ? Int64.random(in: -link.jitter.nanoseconds...link.jitter.nanoseconds, using: &impairmentRNG) : 0
            held.append((arrival + Span(nanoseconds: max(0, link.delay.nanoseconds + jitter)), Array(bytes), from))
        }
    }

    /// Takes in the held datagrams due by `now`, in order of their simulated arrival.
    private func acceptHeld(now: MonotonicInstant, peer: MonotonicInstant) {
        held.sort { $0.due < $1.due }
        let due = held.prefix { $0.due <= now }
        for d in due { d.bytes.withUnsafeBytes { accept($0, from: d.from, arrival: d.due, peer: peer) } }
        held.removeFirst(due.count)
    }

    // MARK: - Health

    private func logDrops() {
        let d = peerGuard.drops
        if d != loggedDrops {
            let parts = DropReason.allCases.filter { d[$0] != 0 }.map { "\($0)=\(d[$0])" }
            log.warning("peer datagrams dropped: \(parts.joined(separator: " ")) (total \(d.total))")
            loggedDrops = d
        }
        if transport.sendDrops != loggedSendDrops {
            loggedSendDrops = transport.sendDrops
            log.warning("peer datagrams not sent (no buffer or no route): \(loggedSendDrops)")
        }
    }

    /// Host: each joined gate's clock estimate, once a second, as `key=value` lines.
    private func logSync(now: MonotonicInstant) {
        let peer = peerNow(now)
        for g in race.gates where g.id != race.me && g.joined {
            if let due = nextSyncLine[g.id], now < due { continue }
            nextSyncLine[g.id] = now + Self.syncLinePeriod
            let stats = g.clock.stats(at: peer)
            guard let o = g.clock.offset(at: peer) else { continue }
            log.info("peer sync gate=\(g.id.rawValue) boot=\(g.bootEpoch) mono_ns=\(now.nanoseconds) state=\(stats.state) offset_ns=\(o.value.nanoseconds) unc_ns=\(o.uncertainty.nanoseconds) max_ns=\(o.maxError.nanoseconds) samples=\(stats.samplesInFit) first_sync_ns=\(stats.timeToFirstSync?.nanoseconds ?? -1)")
        }
    }

    /// Peer health for the coaches' page: the host lists its gates, a gate its host.
    public func peerViews(now: MonotonicInstant) -> [LiveSnapshot.PeerView] {
        let peer = peerNow(now)
        switch race.kind {
        case .host:
            // The host's own row first: the coach moves the host along the course too.
            let me = race.gates.first { $0.id == race.me }.map { g in
                LiveSnapshot.PeerView(name: "gate \(g.id.rawValue) (this gate, host)", role: "\(g.role)",
                                      state: "host" + (race.paused ? ", paused" : "") + (g.status.map { "; " + Self.statusText($0) } ?? ""),
                                      offsetMicroseconds: 0, uncertaintyMicroseconds: 0, lastSeenSecondsAgo: 0,
                                      gateID: g.id.rawValue, distanceMetres: g.distanceMetres)
            }
            return (me.map { [$0] } ?? []) + race.gates.filter { $0.id != race.me }.map { g in
                let o = g.clock.offset(at: peer)
                let silent = peer.since(g.lastHeard)
                var state = !g.joined ? "joining" : (silent > race.configuration.peerTimeout ? "lost" : "\(g.clock.state(at: peer))")
                if let st = g.status, let at = g.statusAt, peer.since(at) <= race.configuration.peerTimeout {
                    state += "; " + Self.statusText(st)
                }
                return LiveSnapshot.PeerView(name: "gate \(g.id.rawValue)", role: "\(g.role)", state: state,
                                             offsetMicroseconds: o.map { Double($0.value.nanoseconds) / 1e3 } ?? 0,
                                             uncertaintyMicroseconds: o.map { Double($0.uncertainty.nanoseconds) / 1e3 } ?? 0,
                                             lastSeenSecondsAgo: max(0, silent.seconds), gateID: g.id.rawValue,
                                             distanceMetres: g.distanceMetres)
            }
        case .gate:
            guard let host = race.host else { return [] }
            let s = race.syncReport
            return [LiveSnapshot.PeerView(name: "host \(host.rawValue)", role: race.assignment.map { "\($0.role)" } ?? "unassigned",
                                          state: "\(race.phase)" + (race.paused ? ", paused" : ""), offsetMicroseconds: s.map { Double($0.offset.nanoseconds) / 1e3 } ?? 0,
                                          uncertaintyMicroseconds: s.map { Double($0.uncertainty.nanoseconds) / 1e3 } ?? 0,
                                          lastSeenSecondsAgo: 0)]
        }
    }
}

/// The gate's id and boot epoch, kept in the state directory.
public enum PeerIdentity {
    /// The gate id in `<state>/gate-id`, chosen at random (non-zero) the first time.
    public static func gateID(stateDirectory: String, log: Logger) -> UInt32 {
        let path = stateDirectory + "/gate-id"
        if let text = try? String(contentsOfFile: path, encoding: .utf8),
           let id = UInt32(text.trimmingCharacters(in: .whitespacesAndNewlines)), id != 0 {
            return id
        }
        let id = UInt32.random(in: 1...UInt32.max)
        do { try "\(id)\n".write(toFile: path, atomically: true, encoding: .utf8) } catch {
            log.warning("cannot keep the gate id in \(path): \(error.localizedDescription); it changes at every start")
        }
        return id
    }

    /// One more than the boot epoch in `<state>/peer-epoch`, saved before use, so peers
    /// take a restarted gate's datagrams and refuse replays of its earlier life.
    public static func nextBootEpoch(stateDirectory: String, log: Logger) -> UInt32 {
        let path = stateDirectory + "/peer-epoch"
        let old = (try? String(contentsOfFile: path, encoding: .utf8))
            .flatMap { UInt32($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0
        // Why a wall-clock floor: a gate whose state directory was wiped must still come
        // back with an epoch above its last one (seconds since 2024 fit 32 bits to 2160).
        let wall = UInt32(clamping: Int64(Date().timeIntervalSince1970) - 1_704_067_200)
        let epoch = max(old &+ 1, wall)
        do { try "\(epoch)\n".write(toFile: path, atomically: true, encoding: .utf8) } catch {
            log.warning("cannot save the boot epoch in \(path): \(error.localizedDescription)")
        }
        return epoch
    }
}

/// The engine's false-start reasons and the race wire's causes, one for one.
extension FalseStartCause {
    init(_ reason: FalseStartReason) {
        switch reason {
        case .buttonReleased: self = .buttonReleased
        case .movement: self = .movement
        }
    }
}

extension FalseStartReason {
    init(_ cause: FalseStartCause) {
        switch cause {
        case .buttonReleased: self = .buttonReleased
        case .movement: self = .movement
        }
    }
}
