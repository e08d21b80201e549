// SPDX-License-Identifier: Apache-2.0
// Stand-ins for the hardware ports: frames from a scene or clip, scripted lines, a recording beeper.

public import GateCore

/// A `FrameSource` that serves rendered scene frames with timestamps `start + i / fps`,
/// then goes `.absent` (like a camera pulled out) after the last one.
public struct ReplayFrameSource: FrameSource, ~Copyable {
    public let spec: SceneSpec
    public let start: MonotonicInstant
    private let renderer: SceneRenderer
    private let buffer: UnsafeMutableBufferPointer<UInt8>
    private var next = 0
    private var leased = false
    /// Frame indices to leave out, to imitate drops (their sequence numbers are skipped).
    public var dropping: Set<Int> = []
    /// In virtual time, only frames stamped at or before this instant are ready, as a
    /// camera delivers them at its frame rate; `nil` serves every frame at once.
    public var readyUntil: MonotonicInstant?
    public private(set) var state: DeviceState = .closed

    public init(spec: SceneSpec, start: MonotonicInstant = MonotonicInstant(nanoseconds: 1_000_000_000)) {
        self.spec = spec
        self.start = start
        renderer = SceneRenderer(spec: spec)
        buffer = .allocate(capacity: spec.width * spec.height)
    }

    deinit { buffer.deallocate() }

    public var fileDescriptor: Int32 { -1 }

    /// Timestamp of frame `i`.
    public func timestamp(ofFrame i: Int) -> MonotonicInstant {
        start + .seconds(Double(i) / spec.fps)
    }

    public mutating func open() throws(DeviceError) {
        guard next < spec.frameCount else {
            state = .absent
            throw DeviceError(operation: "open", errno: 19, path: "scene:\(spec.name)", detail: "the clip has ended")
        }
        state = .streaming
    }

    public mutating func nextFrame() -> FrameLease? {
        guard state == .streaming else { return nil }
        precondition(!leased, "the previous frame was not released")
        var dropped: UInt64 = 0
        while dropping.contains(next) { next += 1; dropped += 1 }
        guard next < spec.frameCount else {
            state = .absent
            return nil
        }
        if let readyUntil, timestamp(ofFrame: next) > readyUntil {
            next -= Int(dropped)  // not read yet: the drops are reported with the frame
            return nil
        }
        renderer.render(frame: next, into: buffer)
        let view = FrameView(base: UnsafeRawPointer(buffer.baseAddress!), width: spec.width, height: spec.height,
                             bytesPerRow: spec.width, format: .gray8, sequence: UInt64(next),
                             timestamp: timestamp(ofFrame: next))
        next += 1
        leased = true
        return FrameLease(view: view, slot: 0, droppedBefore: dropped)
    }

    public mutating func release(_ lease: FrameLease) {
        precondition(leased && lease.slot == 0, "release of a frame that is not leased")
        leased = false
    }

    public mutating func close() { state = .closed }
}

/// Scripted input edges and recorded output levels, for tests and replays.
public struct FakeLines: LineInputs, LineOutputs {
    /// Edges waiting to be read, oldest first; `readEvents` hands out those due by `now`.
    public var pending: [LineEvent] = []
    /// Every level change written, in order.
    public private(set) var writes: [(role: GPIORole, on: Bool)] = []
    /// Current logical levels of all roles.
    public private(set) var levels: [GPIORole: Bool] = [:]
    /// Calls to `set` that changed nothing (a real adapter skips the system call for them).
    public private(set) var unchangedWrites = 0

    public init() {}

    public var fileDescriptors: [Int32] { [] }

    public mutating func readEvents(now: MonotonicInstant, _ body: (LineEvent) -> Void) throws(DeviceError) {
        while let first = pending.first, first.timestamp <= now {
            pending.removeFirst()
            levels[first.role] = first.edge == .rising
            body(first)
        }
    }

    public func level(_ role: GPIORole) throws(DeviceError) -> Bool { levels[role] ?? false }

    public mutating func set(_ role: GPIORole, _ on: Bool) throws(DeviceError) {
        guard levels[role] != on else { unchangedWrites += 1; return }
        levels[role] = on
        writes.append((role, on))
    }
}

/// A `Beeper` that records what it was asked to play and reports a fixed output latency.
public struct RecordingBeeper: Beeper {
    public var state: DeviceState = .streaming
    /// Time from `play` to the sound reaching the converter.
    public var latency: Span
    public private(set) var played: [(sound: GateSound, at: MonotonicInstant, onset: MonotonicInstant)] = []

    public init(latency: Span = .milliseconds(20)) { self.latency = latency }

    public mutating func play(_ sound: GateSound, now: MonotonicInstant) throws(DeviceError) -> MonotonicInstant {
        guard state == .streaming else {
            throw DeviceError(operation: "play", errno: 19, path: "recording beeper", detail: "no audio device")
        }
        let onset = now + latency
        played.append((sound, now, onset))
        refinedOnset = onset
        return onset
    }

    public mutating func service() throws(DeviceError) {}

    /// Times spoken, in seconds.
    public private(set) var spoken: [Double] = []

    public mutating func speak(seconds: Double, now: MonotonicInstant) throws(DeviceError) {
        guard state == .streaming else {
            throw DeviceError(operation: "speak", errno: 19, path: "recording beeper", detail: "no audio device")
        }
        spoken.append(seconds)
    }

    /// The onset of the last sound (a recording beeper knows it exactly at once).
    public private(set) var refinedOnset: MonotonicInstant?
}
