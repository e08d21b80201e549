// SPDX-License-Identifier: Apache-2.0
// The message set of protocol version 3: payload types, their numbers and their codecs.

public import GateCore

/// The message type byte of the header.
public enum MessageType: UInt8, Sendable, Hashable, CaseIterable {
    // Handshake.
    case sessionConfig = 1, sessionConfigAck = 2, roleRequest = 3, roleAssignment = 4, startTiming = 5
    // Clock sync.
    case ping = 10, pong = 11, syncResult = 12
    // Timing.
    case crossingEvent = 20, crossingAck = 21, startEvent = 22, falseStart = 23
    // Control.
    case gateStatus = 30, pauseDetection = 31, resumeDetection = 32, resetForNextRun = 33, endSession = 34
    // Media.
    case thumbnailChunk = 40, thumbnailAck = 41
    /// A gate's frames around a crossing (a `FrameStrip`), in chunks laid out like
    /// `thumbnailChunk`'s and acknowledged like them by `calibrationFramesAck`.
    case calibrationFrames = 42, calibrationFramesAck = 43
    // Configuration.
    case startTypeChange = 50, distanceChange = 51
    // Discovery.
    case announce = 60
}

/// Host → gates: the session's settings. The host is the header's sender; the session id
/// is the header's.
public struct SessionConfig: Sendable, Hashable {
    /// How runs start.
    public var startType: RaceStartType
    /// Number of the first run.
    public var runID: UInt32
    /// Gates the host expects, 1...16.
    public var gateCount: UInt8
    /// Shown on the coaches' phones; at most `Wire.maxNameBytes` UTF-8 bytes.
    public var name: String
    public init(startType: RaceStartType, runID: UInt32, gateCount: UInt8, name: String) {
        self.startType = startType
        self.runID = runID
        self.gateCount = gateCount
        self.name = name
    }
}

/// Gate → host: the gate joined (or refused) the session of the header.
public struct SessionConfigAck: Sendable, Hashable {
    /// False when the gate cannot join (already in another session).
    public var accepted: Bool
    public init(accepted: Bool) { self.accepted = accepted }
}

/// Gate → host: the role the gate would like.
public struct RoleRequest: Sendable, Hashable {
    public var role: GateRole
    /// Metres from the start line the gate stands at, if the coach entered it on the gate.
    public var distanceFromStartMetres: Double?
    public init(role: GateRole, distanceFromStartMetres: Double? = nil) {
        self.role = role
        self.distanceFromStartMetres = distanceFromStartMetres
    }
}

/// Host → gates: the role a gate has in this session.
public struct RoleAssignment: Sendable, Hashable {
    /// The gate addressed.
    public var gate: GateID
    public var role: GateRole
    /// Order along the course: 0 for the start gate, then 1, 2, … towards the finish.
    public var gateIndex: UInt8
    /// Metres from the start line, 0...100 000.
    public var distanceFromStartMetres: Double
    public init(gate: GateID, role: GateRole, gateIndex: UInt8, distanceFromStartMetres: Double) {
        self.gate = gate
        self.role = role
        self.gateIndex = gateIndex
        self.distanceFromStartMetres = distanceFromStartMetres
    }
}

/// Host → gates: arm for a run.
public struct StartTiming: Sendable, Hashable {
    public var runID: UInt32
    public var startType: RaceStartType
    public init(runID: UInt32, startType: RaceStartType) {
        self.runID = runID
        self.startType = startType
    }
}

/// Clock-sync request: `t1` is the sender's CLOCK_MONOTONIC when it sent the ping.
public struct Ping: Sendable, Hashable {
    public var t1: MonotonicInstant
    public init(t1: MonotonicInstant) { self.t1 = t1 }
}

/// Clock-sync reply. `t1` is echoed from the ping (the pinger's clock); `t2` (ping received)
/// and `t3` (pong sent) are on the replying gate's CLOCK_MONOTONIC. The pinger adds `t4`.
public struct Pong: Sendable, Hashable {
    public var t1: MonotonicInstant
    public var t2: MonotonicInstant
    public var t3: MonotonicInstant
    public init(t1: MonotonicInstant, t2: MonotonicInstant, t3: MonotonicInstant) {
        self.t1 = t1
        self.t2 = t2
        self.t3 = t3
    }
}

/// Host → gate: the host's estimate of the gate's clock.
public struct SyncResult: Sendable, Hashable {
    /// The gate addressed.
    public var gate: GateID
    /// `offset = host − gate` (peer − local, seen from the gate): host time = gate time + offset.
    public var offset: Span
    /// One standard deviation of `offset`; never negative.
    public var uncertainty: Span
    /// Exchanges behind the estimate.
    public var samples: UInt16
    public init(gate: GateID, offset: Span, uncertainty: Span, samples: UInt16) {
        self.gate = gate
        self.offset = offset
        self.uncertainty = uncertainty
        self.samples = samples
    }
}

/// Gate → host: an athlete crossed the gate.
public struct CrossingEvent: Sendable, Hashable {
    /// The gate that saw the crossing (the sender, or the gate a host relays for).
    public var gate: GateID
    /// Per gate, increasing; the host acknowledges it and drops repeats.
    public var crossingID: UInt32
    public var runID: UInt32
    /// The crossing on the seeing gate's CLOCK_MONOTONIC, in nanoseconds.
    public var timeMono: MonotonicInstant
    /// One standard deviation of `timeMono`; never negative.
    public var uncertainty: Span
    public var direction: CrossingDirection
    public init(gate: GateID, crossingID: UInt32, runID: UInt32, timeMono: MonotonicInstant, uncertainty: Span,
                direction: CrossingDirection) {
        self.gate = gate
        self.crossingID = crossingID
        self.runID = runID
        self.timeMono = timeMono
        self.uncertainty = uncertainty
        self.direction = direction
    }
}

/// Host → gate: the crossing arrived (stops retransmission).
public struct CrossingAck: Sendable, Hashable {
    public var gate: GateID
    public var crossingID: UInt32
    public init(gate: GateID, crossingID: UInt32) {
        self.gate = gate
        self.crossingID = crossingID
    }
}

/// Start gate → all: the run's clock started.
public struct StartEvent: Sendable, Hashable {
    public var runID: UInt32
    /// The start on the start gate's CLOCK_MONOTONIC (sound onset, button release or crossing).
    public var startMono: MonotonicInstant
    /// One standard deviation of `startMono`; never negative.
    public var uncertainty: Span
    public var startType: RaceStartType
    public init(runID: UInt32, startMono: MonotonicInstant, uncertainty: Span, startType: RaceStartType) {
        self.runID = runID
        self.startMono = startMono
        self.uncertainty = uncertainty
        self.startType = startType
    }
}

/// Start gate → host: the athlete went before the start sound (or let go of the button
/// before it); the run is void. Not in the reference app's set: there a false start stays
/// on the start gate's phone, here every gate of the session shows it. The host echoes it
/// back as the acknowledgement.
public struct FalseStart: Sendable, Hashable {
    public var runID: UInt32
    public var reason: FalseStartCause
    /// When the start gate saw it, on its CLOCK_MONOTONIC.
    public var atMono: MonotonicInstant
    public init(runID: UInt32, reason: FalseStartCause, atMono: MonotonicInstant) {
        self.runID = runID
        self.reason = reason
        self.atMono = atMono
    }
}

/// Why a start was false, on the wire.
public enum FalseStartCause: UInt8, Sendable, Hashable, CaseIterable {
    /// The button was let go before the start sound.
    case buttonReleased = 1
    /// The athlete moved after "Set", before the start sound.
    case movement = 2
}

/// Gate → host: what the gate sees and how its camera and board are. Sent on every
/// change of readiness or camera and every few seconds; nothing depends on one arriving.
public struct GateStatusReport: Sendable, Hashable {
    public var readiness: ReadinessFlags
    public var camera: DeviceState
    /// Frames per second measured over the last stats window; finite, 0...1000.
    public var framesPerSecond: Float
    /// Frames the camera dropped since the previous report.
    public var droppedFrames: UInt32
    /// The board's SoC temperature in °C, −50...150; nil when the board has no thermal zone.
    public var socCelsius: Float?
    public init(readiness: ReadinessFlags, camera: DeviceState, framesPerSecond: Float, droppedFrames: UInt32 = 0,
                socCelsius: Float? = nil) {
        self.readiness = readiness
        self.camera = camera
        self.framesPerSecond = framesPerSecond
        self.droppedFrames = droppedFrames
        self.socCelsius = socCelsius
    }
}

/// Host → gates: start the next run.
public struct ResetForNextRun: Sendable, Hashable {
    public var nextRunID: UInt32
    public init(nextRunID: UInt32) { self.nextRunID = nextRunID }
}

/// Gate → host: one piece of an image of a crossing (a `PhotoBundle`: the photo-finish
/// image and its thumbnails), retransmitted until the host's `ThumbnailAck` has it.
public struct ThumbnailChunk: Sendable, Hashable {
    /// Largest chunk in bytes. Why: a power of two that keeps header, chunk fields and
    /// authentication tag under `Wire.maxDatagramLength` with 100 bytes to spare.
    public static let maxBytes = 1024
    /// Most chunks an image may have (256 KiB). Why: a photo-finish image of a 480-row
    /// column with its four thumbnails is 60 to 120 KiB as JPEG; twice that is headroom.
    public static let maxChunks = 256

    /// Identifies the image; by convention the crossing id it shows.
    public var imageID: UInt32
    /// 0..<chunkCount.
    public var chunkIndex: UInt16
    /// 1...maxChunks.
    public var chunkCount: UInt16
    /// At most `maxBytes`.
    public var bytes: [UInt8]
    public init(imageID: UInt32, chunkIndex: UInt16, chunkCount: UInt16, bytes: [UInt8]) {
        self.imageID = imageID
        self.chunkIndex = chunkIndex
        self.chunkCount = chunkCount
        self.bytes = bytes
    }

    /// Splits an image into chunks of at most `maxBytes`, or nil when it is empty or needs
    /// more than `maxChunks`.
    public static func split(imageID: UInt32, image: [UInt8]) -> [ThumbnailChunk]? {
        guard !image.isEmpty else { return nil }
        let count = (image.count + maxBytes - 1) / maxBytes
        guard count <= maxChunks else { return nil }
        return (0 ..< count).map { i in
            let range = i * maxBytes ..< min(image.count, (i + 1) * maxBytes)
            return ThumbnailChunk(imageID: imageID, chunkIndex: UInt16(i), chunkCount: UInt16(count),
                                  bytes: Array(image[range]))
        }
    }
}

/// Host → gate: which chunks of an image the host holds, sent for every chunk it
/// receives. The gate sends again only the chunks missing here; a full bitmap ends the
/// transfer.
public struct ThumbnailAck: Sendable, Hashable {
    public var imageID: UInt32
    /// 1...`ThumbnailChunk.maxChunks`.
    public var chunkCount: UInt16
    /// Bit `i % 8` of byte `i / 8` is chunk `i`; exactly `(chunkCount + 7) / 8` bytes, the
    /// bits past `chunkCount` zero.
    public var received: [UInt8]
    public init(imageID: UInt32, chunkCount: UInt16, received: [UInt8]) {
        self.imageID = imageID
        self.chunkCount = chunkCount
        self.received = received
    }

    /// An acknowledgement of the chunks whose flags are set.
    public init(imageID: UInt32, flags: [Bool]) {
        var bits = [UInt8](repeating: 0, count: (flags.count + 7) / 8)
        for (i, f) in flags.enumerated() where f { bits[i / 8] |= 1 << UInt8(i % 8) }
        self.init(imageID: imageID, chunkCount: UInt16(clamping: flags.count), received: bits)
    }

    /// Whether chunk `index` is acknowledged.
    public func has(_ index: Int) -> Bool {
        index >= 0 && index < Int(chunkCount) && index / 8 < received.count && received[index / 8] & (1 << UInt8(index % 8)) != 0
    }

    /// Every chunk is acknowledged.
    public var complete: Bool { (0 ..< Int(chunkCount)).allSatisfy(has) }

    /// The bitmap is as long as the count says and has no bits past it.
    var wellFormed: Bool {
        guard (1 ... ThumbnailChunk.maxChunks).contains(Int(chunkCount)), received.count == (Int(chunkCount) + 7) / 8 else { return false }
        let spare = received.count * 8 - Int(chunkCount)
        return spare == 0 || received[received.count - 1] >> UInt8(8 - spare) == 0
    }
}

/// Host → gates: the start type changed for the next runs.
public struct StartTypeChange: Sendable, Hashable {
    public var startType: RaceStartType
    public init(startType: RaceStartType) { self.startType = startType }
}

/// Host → gates: a gate was moved along the course.
public struct DistanceChange: Sendable, Hashable {
    public var gate: GateID
    /// Metres from the start line, 0...100 000.
    public var distanceFromStartMetres: Double
    public init(gate: GateID, distanceFromStartMetres: Double) {
        self.gate = gate
        self.distanceFromStartMetres = distanceFromStartMetres
    }
}

/// Any gate, by UDP broadcast: "I am here". The session is the header's (`SessionID.none`
/// while waiting to join).
public struct Announce: Sendable, Hashable {
    /// The name the coach gave the gate; at most `Wire.maxNameBytes` UTF-8 bytes.
    public var gateName: String
    /// The role the gate would like, if any.
    public var roleWish: GateRole?
    /// The UDP port the gate listens on for unicast (1...65535).
    public var listeningPort: UInt16
    public init(gateName: String, roleWish: GateRole?, listeningPort: UInt16) {
        self.gateName = gateName
        self.roleWish = roleWish
        self.listeningPort = listeningPort
    }
}

/// One message of the protocol.
public enum Message: Sendable, Hashable {
    case sessionConfig(SessionConfig)
    case sessionConfigAck(SessionConfigAck)
    case roleRequest(RoleRequest)
    case roleAssignment(RoleAssignment)
    case startTiming(StartTiming)
    case ping(Ping)
    case pong(Pong)
    case syncResult(SyncResult)
    case crossingEvent(CrossingEvent)
    case crossingAck(CrossingAck)
    case startEvent(StartEvent)
    case falseStart(FalseStart)
    case gateStatus(GateStatusReport)
    case pauseDetection
    case resumeDetection
    case resetForNextRun(ResetForNextRun)
    case endSession
    case thumbnailChunk(ThumbnailChunk)
    case thumbnailAck(ThumbnailAck)
    /// Gate → host: one chunk of a `FrameStrip` (image id = the crossing id it shows).
    case calibrationFrames(ThumbnailChunk)
    /// Host → gate: the chunks of a frame strip the host holds.
    case calibrationFramesAck(ThumbnailAck)
    case startTypeChange(StartTypeChange)
    case distanceChange(DistanceChange)
    case announce(Announce)

    /// The header's type byte for this message.
    public var type: MessageType {
        switch self {
        case .sessionConfig: return .sessionConfig
        case .sessionConfigAck: return .sessionConfigAck
        case .roleRequest: return .roleRequest
        case .roleAssignment: return .roleAssignment
        case .startTiming: return .startTiming
        case .ping: return .ping
        case .pong: return .pong
        case .syncResult: return .syncResult
        case .crossingEvent: return .crossingEvent
        case .crossingAck: return .crossingAck
        case .startEvent: return .startEvent
        case .falseStart: return .falseStart
        case .gateStatus: return .gateStatus
        case .pauseDetection: return .pauseDetection
        case .resumeDetection: return .resumeDetection
        case .resetForNextRun: return .resetForNextRun
        case .endSession: return .endSession
        case .thumbnailChunk: return .thumbnailChunk
        case .thumbnailAck: return .thumbnailAck
        case .calibrationFrames: return .calibrationFrames
        case .calibrationFramesAck: return .calibrationFramesAck
        case .startTypeChange: return .startTypeChange
        case .distanceChange: return .distanceChange
        case .announce: return .announce
        }
    }
}

// MARK: - Payload codec

extension WireWriter {
    mutating func distance(_ metres: Double, _ field: String) throws(WireError) {
        guard metres >= 0, metres <= maxDistanceMetres else { throw .malformed(field) }
        try finiteDouble(metres, field)
    }

    mutating func nonNegative(_ span: Span, _ field: String) throws(WireError) {
        guard span.nanoseconds >= 0 else { throw .malformed(field) }
        try i64(span.nanoseconds)
    }
}

extension WireReader {
    mutating func distance(_ field: String) throws(WireError) -> Double {
        let metres = try finiteDouble(field)
        guard metres >= 0, metres <= maxDistanceMetres else { throw .malformed(field) }
        return metres
    }

    mutating func nonNegative(_ field: String) throws(WireError) -> Span {
        let ns = try i64(field)
        guard ns >= 0 else { throw .malformed(field) }
        return Span(nanoseconds: ns)
    }

    mutating func instant(_ field: String) throws(WireError) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: try i64(field))
    }

    mutating func role(_ field: String) throws(WireError) -> GateRole {
        guard let role = GateRole(rawValue: try u8(field)) else { throw .malformed(field) }
        return role
    }

    mutating func startType(_ field: String) throws(WireError) -> RaceStartType {
        guard let type = RaceStartType(rawValue: try u8(field)) else { throw .malformed(field) }
        return type
    }
}

extension Message {
    /// Writes the payload (no header). Values the decoder would refuse (out of range,
    /// non-finite, too long) throw `malformed(field)`, so what is sent always decodes.
    func encodePayload(into w: inout WireWriter) throws(WireError) {
        switch self {
        case .sessionConfig(let m):
            guard (1 ... 16).contains(m.gateCount) else { throw .malformed("gateCount") }
            try w.u8(m.startType.rawValue)
            try w.u32(m.runID)
            try w.u8(m.gateCount)
            try w.string(m.name, "name")
        case .sessionConfigAck(let m):
            try w.bool(m.accepted)
        case .roleRequest(let m):
            try w.u8(m.role.rawValue)
            if let metres = m.distanceFromStartMetres {
                try w.bool(true)
                try w.distance(metres, "distanceFromStartMetres")
            } else {
                try w.bool(false)
            }
        case .roleAssignment(let m):
            try w.u32(m.gate.rawValue)
            try w.u8(m.role.rawValue)
            try w.u8(m.gateIndex)
            try w.distance(m.distanceFromStartMetres, "distanceFromStartMetres")
        case .startTiming(let m):
            try w.u32(m.runID)
            try w.u8(m.startType.rawValue)
        case .ping(let m):
            try w.i64(m.t1.nanoseconds)
        case .pong(let m):
            try w.i64(m.t1.nanoseconds)
            try w.i64(m.t2.nanoseconds)
            try w.i64(m.t3.nanoseconds)
        case .syncResult(let m):
            try w.u32(m.gate.rawValue)
            try w.i64(m.offset.nanoseconds)
            try w.nonNegative(m.uncertainty, "uncertainty")
            try w.u16(m.samples)
        case .crossingEvent(let m):
            try w.u32(m.gate.rawValue)
            try w.u32(m.crossingID)
            try w.u32(m.runID)
            try w.i64(m.timeMono.nanoseconds)
            try w.nonNegative(m.uncertainty, "uncertainty")
            try w.u8(m.direction.wireCode)
        case .crossingAck(let m):
            try w.u32(m.gate.rawValue)
            try w.u32(m.crossingID)
        case .startEvent(let m):
            try w.u32(m.runID)
            try w.i64(m.startMono.nanoseconds)
            try w.nonNegative(m.uncertainty, "uncertainty")
            try w.u8(m.startType.rawValue)
        case .falseStart(let m):
            try w.u32(m.runID)
            try w.u8(m.reason.rawValue)
            try w.i64(m.atMono.nanoseconds)
        case .gateStatus(let m):
            guard ReadinessFlags.all.isSuperset(of: m.readiness) else { throw .malformed("readiness") }
            guard m.framesPerSecond >= 0, m.framesPerSecond <= 1000 else { throw .malformed("framesPerSecond") }
            try w.u8(m.readiness.rawValue)
            try w.u8(m.camera.wireCode)
            try w.finiteFloat(m.framesPerSecond, "framesPerSecond")
            try w.u32(m.droppedFrames)
            if let c = m.socCelsius {
                guard c >= -50, c <= 150 else { throw .malformed("socCelsius") }
                try w.u8(1)
                try w.finiteFloat(c, "socCelsius")
            } else {
                try w.u8(0)
                try w.finiteFloat(0, "socCelsius")
            }
        case .pauseDetection, .resumeDetection, .endSession:
            break
        case .resetForNextRun(let m):
            try w.u32(m.nextRunID)
        case .thumbnailChunk(let m), .calibrationFrames(let m):
            guard (1 ... ThumbnailChunk.maxChunks).contains(Int(m.chunkCount)) else { throw .malformed("chunkCount") }
            guard m.chunkIndex < m.chunkCount else { throw .malformed("chunkIndex") }
            guard (1 ... ThumbnailChunk.maxBytes).contains(m.bytes.count) else { throw .malformed("bytes") }
            try w.u32(m.imageID)
            try w.u16(m.chunkIndex)
            try w.u16(m.chunkCount)
            try w.u16(UInt16(m.bytes.count))
            try w.bytes(m.bytes)
        case .thumbnailAck(let m), .calibrationFramesAck(let m):
            guard m.wellFormed else { throw .malformed("received") }
            try w.u32(m.imageID)
            try w.u16(m.chunkCount)
            try w.bytes(m.received)
        case .startTypeChange(let m):
            try w.u8(m.startType.rawValue)
        case .distanceChange(let m):
            try w.u32(m.gate.rawValue)
            try w.distance(m.distanceFromStartMetres, "distanceFromStartMetres")
        case .announce(let m):
            guard m.listeningPort != 0 else { throw .malformed("listeningPort") }
            try w.string(m.gateName, "gateName")
            try w.u8(m.roleWish?.rawValue ?? 0)
            try w.u16(m.listeningPort)
        }
    }

    /// Reads a whole payload of type `type`; the payload must be exactly the message.
    static func decodePayload(_ type: MessageType, from r: inout WireReader) throws(WireError) -> Message {
        let message: Message
        switch type {
        case .sessionConfig:
            let startType = try r.startType("startType")
            let runID = try r.u32("runID")
            let gateCount = try r.u8("gateCount")
            guard (1 ... 16).contains(gateCount) else { throw .malformed("gateCount") }
            let name = try r.string("name")
            message = .sessionConfig(SessionConfig(startType: startType, runID: runID, gateCount: gateCount, name: name))
        case .sessionConfigAck:
            message = .sessionConfigAck(SessionConfigAck(accepted: try r.bool("accepted")))
        case .roleRequest:
            let role = try r.role("role")
            let metres: Double? = try r.bool("hasDistance") ? try r.distance("distanceFromStartMetres") : nil
            message = .roleRequest(RoleRequest(role: role, distanceFromStartMetres: metres))
        case .roleAssignment:
            let gate = GateID(try r.u32("gate"))
            let role = try r.role("role")
            let index = try r.u8("gateIndex")
            let metres = try r.distance("distanceFromStartMetres")
            message = .roleAssignment(RoleAssignment(gate: gate, role: role, gateIndex: index, distanceFromStartMetres: metres))
        case .startTiming:
            let runID = try r.u32("runID")
            message = .startTiming(StartTiming(runID: runID, startType: try r.startType("startType")))
        case .ping:
            message = .ping(Ping(t1: try r.instant("t1")))
        case .pong:
            let t1 = try r.instant("t1")
            let t2 = try r.instant("t2")
            let t3 = try r.instant("t3")
            message = .pong(Pong(t1: t1, t2: t2, t3: t3))
        case .syncResult:
            let gate = GateID(try r.u32("gate"))
            let offset = Span(nanoseconds: try r.i64("offset"))
            let uncertainty = try r.nonNegative("uncertainty")
            let samples = try r.u16("samples")
            message = .syncResult(SyncResult(gate: gate, offset: offset, uncertainty: uncertainty, samples: samples))
        case .crossingEvent:
            let gate = GateID(try r.u32("gate"))
            let crossingID = try r.u32("crossingID")
            let runID = try r.u32("runID")
            let time = try r.instant("timeMono")
            let uncertainty = try r.nonNegative("uncertainty")
            guard let direction = CrossingDirection(wireCode: try r.u8("direction")) else { throw .malformed("direction") }
            message = .crossingEvent(CrossingEvent(gate: gate, crossingID: crossingID, runID: runID, timeMono: time,
                                                   uncertainty: uncertainty, direction: direction))
        case .crossingAck:
            let gate = GateID(try r.u32("gate"))
            message = .crossingAck(CrossingAck(gate: gate, crossingID: try r.u32("crossingID")))
        case .startEvent:
            let runID = try r.u32("runID")
            let start = try r.instant("startMono")
            let uncertainty = try r.nonNegative("uncertainty")
            let startType = try r.startType("startType")
            message = .startEvent(StartEvent(runID: runID, startMono: start, uncertainty: uncertainty, startType: startType))
        case .falseStart:
            let runID = try r.u32("runID")
            guard let reason = FalseStartCause(rawValue: try r.u8("reason")) else { throw .malformed("reason") }
            message = .falseStart(FalseStart(runID: runID, reason: reason, atMono: try r.instant("atMono")))
        case .gateStatus:
            let readiness = ReadinessFlags(rawValue: try r.u8("readiness"))
            guard ReadinessFlags.all.isSuperset(of: readiness) else { throw .malformed("readiness") }
            guard let camera = DeviceState(wireCode: try r.u8("camera")) else { throw .malformed("camera") }
            let fps = try r.finiteFloat("framesPerSecond")
            guard fps >= 0, fps <= 1000 else { throw .malformed("framesPerSecond") }
            let dropped = try r.u32("droppedFrames")
            let hasTemperature = try r.u8("socCelsius")
            let celsius = try r.finiteFloat("socCelsius")
            // Canonical: no temperature is a 0 flag and a 0 value, all bits clear (−0.0, which
            // equals 0, would decode to a message that encodes to other bytes).
            guard hasTemperature <= 1, hasTemperature == 1 || celsius.bitPattern == 0, celsius >= -50, celsius <= 150 else {
                throw .malformed("socCelsius")
            }
            message = .gateStatus(GateStatusReport(readiness: readiness, camera: camera, framesPerSecond: fps,
                                                   droppedFrames: dropped, socCelsius: hasTemperature == 1 ? celsius : nil))
        case .pauseDetection:
            message = .pauseDetection
        case .resumeDetection:
            message = .resumeDetection
        case .resetForNextRun:
            message = .resetForNextRun(ResetForNextRun(nextRunID: try r.u32("nextRunID")))
        case .endSession:
            message = .endSession
        case .thumbnailChunk, .calibrationFrames:
            let imageID = try r.u32("imageID")
            let index = try r.u16("chunkIndex")
            let count = try r.u16("chunkCount")
            guard (1 ... ThumbnailChunk.maxChunks).contains(Int(count)) else { throw .malformed("chunkCount") }
            guard index < count else { throw .malformed("chunkIndex") }
            let length = Int(try r.u16("byteCount"))
            guard (1 ... ThumbnailChunk.maxBytes).contains(length) else { throw .malformed("byteCount") }
            let bytes = try r.bytes("bytes", count: length)
            let chunk = ThumbnailChunk(imageID: imageID, chunkIndex: index, chunkCount: count, bytes: bytes)
            message = type == .thumbnailChunk ? .thumbnailChunk(chunk) : .calibrationFrames(chunk)
        case .thumbnailAck, .calibrationFramesAck:
            let imageID = try r.u32("imageID")
            let count = try r.u16("chunkCount")
            guard (1 ... ThumbnailChunk.maxChunks).contains(Int(count)) else { throw .malformed("chunkCount") }
            let ack = ThumbnailAck(imageID: imageID, chunkCount: count, received: try r.bytes("received", count: (Int(count) + 7) / 8))
            guard ack.wellFormed else { throw .malformed("received") }
            message = type == .thumbnailAck ? .thumbnailAck(ack) : .calibrationFramesAck(ack)
        case .startTypeChange:
            message = .startTypeChange(StartTypeChange(startType: try r.startType("startType")))
        case .distanceChange:
            let gate = GateID(try r.u32("gate"))
            message = .distanceChange(DistanceChange(gate: gate, distanceFromStartMetres: try r.distance("distanceFromStartMetres")))
        case .announce:
            let name = try r.string("gateName")
            let wishCode = try r.u8("roleWish")
            let wish: GateRole?
            if wishCode == 0 {
                wish = nil
            } else {
                guard let role = GateRole(rawValue: wishCode) else { throw .malformed("roleWish") }
                wish = role
            }
            let port = try r.u16("listeningPort")
            guard port != 0 else { throw .malformed("listeningPort") }
            message = .announce(Announce(gateName: name, roleWish: wish, listeningPort: port))
        }
        try r.expectEnd()
        return message
    }
}
