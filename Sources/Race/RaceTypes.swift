// SPDX-License-Identifier: Apache-2.0
// Values of a multi-gate race: phases, settings, gates in the session, results and splits.

public import ClockSync
public import GateCore
public import PeerWire

/// Where a gate's race session stands.
public enum RacePhase: String, Sendable, Hashable, CustomStringConvertible {
    /// Not in a race.
    case idle
    /// Host: waiting for gates to join. Gate: announcing itself until a host takes it in.
    case connecting
    /// In the session, clocks not yet usable (host: some gate's; gate: its own).
    case syncing
    /// Every clock usable and every gate has a role: a run can be armed.
    case ready
    /// A run is armed; no start crossing yet.
    case waitingForCrossing
    /// The start gate saw the athlete; later gates report splits.
    case running
    /// The last gate saw the athlete; results are complete.
    case finished

    public var description: String { rawValue }
}

/// Settings of a session. Times are spans of local CLOCK_MONOTONIC.
public struct RaceConfiguration: Sendable, Hashable {
    /// Shown on the coaches' phones.
    public var name = "race"
    public var startType: RaceStartType = .flying
    /// How long an electable gate listens to announces before it takes the host role (it
    /// does only if no lower gate id announced meanwhile and no host offered a session).
    /// Why 3 s: three announce intervals, so one or two lost announces do not elect two
    /// hosts, and a session forms within seconds of switching the gates on.
    public var electionWindow: Span = .seconds(3)
    /// Between status reports of a gate whose readiness and camera did not change (a
    /// change is reported at once). Why 2 s: the page shows a gate's camera, fps and
    /// temperature within seconds, for one small datagram per gate every 2 s.
    public var statusInterval: Span = .seconds(2)
    /// Between announces of a gate that is not in a session. Why 1 s: a gate switched on
    /// appears on the host within a second, and 8 gates cost 8 small datagrams a second.
    public var announceInterval: Span = .seconds(1)
    /// First retransmission of an unacknowledged crossing or handshake message. Why
    /// 50 ms: several Wi-Fi round trips (2–10 ms each), so a retransmission is rarely
    /// spurious, yet a lost crossing reaches the host well within a second.
    public var retransmitInitial: Span = .milliseconds(50)
    /// Cap of the doubling back-off. Why 1 s: a gate out of range for a minute comes back
    /// and delivers within a second of the link returning.
    public var retransmitMax: Span = .seconds(1)
    /// Between repeats of every gate's role assignment (host). The assignment is sent at
    /// once when it changes and then again at this interval, so one lost on the way (the
    /// message set has no acknowledgement for it) arrives at the next repeat; gates ignore
    /// a repeat of what they hold. Why 2 s: a coach who moves a gate from the page sees it
    /// take the new role within a few seconds even at 10 % loss, for one small datagram
    /// per gate every 2 s.
    public var assignmentRepeat: Span = .seconds(2)
    /// Image chunks a gate sends per `tick`. Why 8: at 30 to 120 loop iterations a second
    /// that is 0.25 to 1 MB/s, so a 70 KiB photo reaches the host in well under a second
    /// without a burst that fills a phone hotspot's queue.
    public var imageChunksPerTick = 8
    /// A gate gives up sending an image, and the host waiting for one's crossing, after
    /// this long. Why 30 s: a gate out of range for longer has newer crossings to send.
    public var imageGiveUp: Span = .seconds(30)
    /// A gate not heard from for this long is shown as lost (it keeps its place and its
    /// crossings). Why 5 s: ten missed pings at the steady poll interval.
    public var peerTimeout: Span = .seconds(5)
    /// Distance between consecutive gates auto-assigned when a gate joins, metres; the
    /// coach sets the real distances afterwards.
    public var defaultSpacingMetres = 10.0
    /// UDP port the gates listen on, carried in announces. Why 47 210: unassigned by IANA
    /// and above the ranges phones' hotspots and common LAN services use.
    public var peerPort: UInt16 = 47_210
    /// Clock tracking of each gate.
    public var clock = PeerClock.Configuration()

    public init() {}
}

/// A gate of the session as the host sees it.
public struct RaceGate: Sendable {
    public var id: GateID
    /// The boot epoch of the gate's current life; a larger one means it restarted.
    public var bootEpoch: UInt32
    public var role: GateRole
    /// Order along the course: 0 is the start gate.
    public var index: Int
    /// Metres from the start line.
    public var distanceMetres: Double
    /// True once the gate acknowledged the session configuration.
    public var joined: Bool
    /// The host's tracking of this gate's clock (offset = gate − host); the host's own
    /// entry is never used.
    public var clock: PeerClock
    /// Local instant of the last datagram from the gate.
    public var lastHeard: MonotonicInstant
    /// Times the gate came back with a new boot epoch.
    public var rejoins: Int
    /// The gate's last status report (the host's own: its loop's), and when it came.
    public var status: GateStatusReport? = nil
    public var statusAt: MonotonicInstant? = nil
}

/// One crossing on the host's timeline (the network timeline is the host's
/// CLOCK_MONOTONIC), once per (gate, boot epoch, crossing id).
public struct RaceCrossing: Sendable, Hashable {
    public var gate: GateID
    public var bootEpoch: UInt32
    public var crossingID: UInt32
    public var runID: UInt32
    /// Where the gate stood when the crossing was recorded.
    public var gateIndex: Int
    public var distanceMetres: Double
    /// On the network timeline.
    public var timeNet: NetworkInstant
    /// One sigma of the detector's timing on the gate.
    public var detectorUncertainty: Span
    /// One sigma of mapping the gate's clock onto the host's (0 on the host itself).
    public var syncUncertainty: Span
    /// Bound of the mapping error (half the minimum round trip plus 3 sigma).
    public var syncMaxError: Span
    public var direction: CrossingDirection

    /// Detector and sync uncertainty combined (independent errors: quadrature).
    public var uncertainty: Span {
        let a = Double(detectorUncertainty.nanoseconds), b = Double(syncUncertainty.nanoseconds)
        return Span(nanoseconds: Int64((a * a + b * b).squareRoot().rounded(.up)))
    }
}

/// A split of one run: the time from the start crossing to a gate's crossing.
public struct RaceSplit: Sendable, Hashable {
    public var gateIndex: Int
    public var gate: GateID
    public var distanceMetres: Double
    /// From the start crossing.
    public var time: Span
    /// One sigma of `time` (both crossings' errors in quadrature).
    public var uncertainty: Span
    /// Since the previous gate's crossing.
    public var segment: Span
    /// Segment speed in metres per second; nil when the segment has no length or time.
    public var segmentSpeed: Double?
}

/// What the session asks its owner to do. The owner (the daemon's loop or a simulation)
/// performs them in order.
public enum RaceAction: Sendable, Hashable {
    /// Send a message to one gate (its address is the one it was last heard from).
    case send(Envelope, to: GateID)
    /// Send to every gate on the LAN (UDP broadcast: discovery).
    case broadcast(Envelope)
    /// The session's phase changed.
    case phase(RacePhase)
    /// A crossing reached the host's results (host only), exactly once.
    case crossing(RaceCrossing)
    /// A gate joined, or came back after a restart (host only).
    case gateJoined(GateID, rejoin: Bool)
    /// This gate was taken into a session with this role (gate only).
    case assigned(RoleAssignment)
    /// A run was armed (host: by this session; gate: the host's `startTiming` for a newer
    /// run). The start gate's owner arms its engine with `startType`.
    case runArmed(runID: UInt32, startType: RaceStartType)
    /// Host: the run's clock started by the start gate's button, sound or in-frame exit
    /// (a flying start is its first crossing, reported as `.crossing`), on the network
    /// timeline. Reported again when the start gate refines the start (a sound's onset).
    case started(RaceCrossing, RaceStartType)
    /// A false start at the start gate voided run `runID` (host: reported by the start
    /// gate or its own; gate: relayed by the host). The next run is armed after it.
    case falseStart(gate: GateID, runID: UInt32, FalseStartCause)
    /// Detection paused (true) or resumed on this gate: its crossings are not reported.
    case paused(Bool)
    /// Gate: the host reset the session; the next run is `runID`.
    case resetForNextRun(UInt32)
    /// This gate won a host election and now hosts `SessionID`.
    case elected(SessionID)
    /// Host: a gate's image of one of its crossings arrived whole.
    case photo(RacePhoto)
}
