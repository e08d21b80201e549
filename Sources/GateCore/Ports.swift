// SPDX-License-Identifier: Apache-2.0
// What the gate needs from hardware: camera, GPIO lines and sound, as protocols with stand-ins.

/// The condition of a device, driving reopen with back-off, the status banner and the
/// fault LED.
public enum DeviceState: Sendable, Hashable, CustomStringConvertible {
    /// Not present (unplugged, no such node).
    case absent
    /// Present but held by another process or refusing the requested mode.
    case busy
    /// Open but delivering nothing (no frames within the expected time).
    case noSignal
    /// Delivering.
    case streaming
    /// Closed by the gate.
    case closed

    public var description: String {
        switch self {
        case .absent: return "absent"
        case .busy: return "busy"
        case .noSignal: return "no signal"
        case .streaming: return "streaming"
        case .closed: return "closed"
        }
    }
}

/// A failed system call or library call, with the operation, errno and device path.
public struct DeviceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The call that failed, e.g. `"VIDIOC_S_FMT"` or `"gpiod_line_request"`.
    public var operation: String
    /// The errno value (0 when the failure was not a system error).
    public var errno: Int32
    /// The device path or name.
    public var path: String
    /// Extra detail for the user: what to check or change.
    public var detail: String

    public init(operation: String, errno: Int32, path: String, detail: String = "") {
        self.operation = operation
        self.errno = errno
        self.path = path
        self.detail = detail
    }

    /// The device state this error implies: gone, held by someone else, or unusable.
    public var impliedState: DeviceState {
        switch errno {
        case 2, 6, 19: return .absent  // ENOENT, ENXIO, ENODEV
        case 16, 13, 1: return .busy  // EBUSY, EACCES, EPERM
        default: return .noSignal
        }
    }

    public var description: String {
        "\(path): \(operation) failed" + (errno != 0 ? " (errno \(errno))" : "") + (detail.isEmpty ? "" : ": \(detail)")
    }
}

/// A frame borrowed from a `FrameSource`: valid until given back with `release`.
public struct FrameLease {
    public let view: FrameView
    /// The source's buffer slot, to hand back.
    public let slot: Int
    /// Frames lost before this one according to the driver's sequence numbers.
    public let droppedBefore: UInt64

    public init(view: FrameView, slot: Int, droppedBefore: UInt64) {
        self.view = view
        self.slot = slot
        self.droppedBefore = droppedBefore
    }
}

/// A camera. Used from the engine thread only.
public protocol FrameSource: ~Copyable {
    /// Current condition of the device.
    var state: DeviceState { get }
    /// Descriptor to wait on for readability (epoll), or −1 while closed.
    var fileDescriptor: Int32 { get }
    /// Opens and starts streaming; on failure the state tells why and the error says what.
    mutating func open() throws(DeviceError)
    /// The next frame if one is ready, without blocking. `nil` when none is; a failure
    /// (device removed) sets `state` and returns `nil`.
    mutating func nextFrame() -> FrameLease?
    /// Gives a frame's buffer back to the device. Every lease must be released once.
    mutating func release(_ lease: FrameLease)
    /// Stops streaming and closes the device.
    mutating func close()
    /// How many leases the source can leave out at once besides the frame being
    /// processed, their bytes staying put until released (the gate lends such frames to
    /// the video thread instead of copying them). 0 when `nextFrame` reuses its buffer.
    var spareBuffers: Int { get }
}

extension FrameSource where Self: ~Copyable {
    public var spareBuffers: Int { 0 }
}

/// The direction of a level change on an input line.
public enum Edge: UInt8, Sendable, Hashable, CustomStringConvertible {
    case rising
    case falling
    public var description: String { self == .rising ? "rising" : "falling" }
}

/// A debounced edge on an input line, in logical levels (active-low already applied).
public struct LineEvent: Sendable, Hashable {
    public var role: GPIORole
    /// `rising` when the line became active (button pressed).
    public var edge: Edge
    /// Kernel timestamp of the edge, on CLOCK_MONOTONIC.
    public var timestamp: MonotonicInstant
    /// Count of edges read from the kernel on this line; a gap is edges dropped by the
    /// debounce (the v1 GPIO uAPI does not report queue overflow).
    public var lineSequence: UInt32
    /// Count of edges seen on all lines of the gate.
    public var globalSequence: UInt32

    public init(role: GPIORole, edge: Edge, timestamp: MonotonicInstant, lineSequence: UInt32, globalSequence: UInt32) {
        self.role = role
        self.edge = edge
        self.timestamp = timestamp
        self.lineSequence = lineSequence
        self.globalSequence = globalSequence
    }
}

/// Input lines (the start button). Used from the engine thread only.
public protocol LineInputs: ~Copyable {
    /// Descriptors to wait on for readability (epoll), one per requested input line.
    var fileDescriptors: [Int32] { get }
    /// Reads the pending edges without blocking and passes those that survive the
    /// debounce to `body`, oldest first. Allocates nothing.
    mutating func readEvents(now: MonotonicInstant, _ body: (LineEvent) -> Void) throws(DeviceError)
    /// The current logical level of an input.
    func level(_ role: GPIORole) throws(DeviceError) -> Bool
}

/// Output lines (LEDs, buzzer). Used from the engine thread only.
public protocol LineOutputs: ~Copyable {
    /// Sets a role's logical level (true = on); an unchanged level costs no system call.
    mutating func set(_ role: GPIORole, _ on: Bool) throws(DeviceError)
}

/// The start and feedback sounds a gate plays.
public enum GateSound: String, Sendable, Hashable, CaseIterable {
    case beep, countdownTick = "countdown-tick", gunshot, whistle, crossing
    case onYourMarks = "on-your-marks", set
}

/// Sound output. Used from the engine thread only.
public protocol Beeper: ~Copyable {
    var state: DeviceState { get }
    /// Starts playing `sound` now, without blocking, and returns the instant its first
    /// sample reaches the converter on CLOCK_MONOTONIC (the race clock's start for a
    /// start sound), estimated from the device's delay and timestamp.
    mutating func play(_ sound: GateSound, now: MonotonicInstant) throws(DeviceError) -> MonotonicInstant
    /// Speaks a time ("ten point four two") from pre-rendered number words, now.
    mutating func speak(seconds: Double, now: MonotonicInstant) throws(DeviceError)
    /// Keeps a playing sound fed and refines its onset; called on every loop iteration.
    mutating func service() throws(DeviceError)
    /// The best estimate so far of the last sound's onset on CLOCK_MONOTONIC; it can
    /// improve on `play`'s return value once the device's position has moved.
    var refinedOnset: MonotonicInstant? { get }
}

/// Lines for a board without GPIO: no inputs, outputs go nowhere.
public struct NoLines: LineInputs, LineOutputs {
    public init() {}
    public var fileDescriptors: [Int32] { [] }
    public mutating func readEvents(now: MonotonicInstant, _ body: (LineEvent) -> Void) throws(DeviceError) {}
    public func level(_ role: GPIORole) throws(DeviceError) -> Bool { false }
    public mutating func set(_ role: GPIORole, _ on: Bool) throws(DeviceError) {}
}

/// A display the appliance paints whole pictures on, such as a TV on the board's HDMI,
/// in 32-bit XRGB (bytes B, G, R, unused, in memory). Used from one thread.
public protocol PictureScreen: AnyObject {
    /// The picture's size, pixels.
    var width: Int { get }
    var height: Int { get }
    /// What it is, for the log and the page, e.g. `HDMI-A-1 1920×1080 at 60 Hz`.
    var name: String { get }
    /// Paints the next picture and shows it at the display's next refresh: `draw` fills
    /// `height` rows of `width` pixels, rows `pitch` (its second argument) bytes apart.
    /// Throws when the display is gone or taken; the caller opens it again later.
    func present(_ draw: (UnsafeMutableRawPointer, Int) throws -> Void) throws
}

/// The board's wall clock as the kernel keeps it, read at one instant.
public struct WallClockState: Sendable, Hashable {
    /// Milliseconds since the Unix epoch (wall time: display and storage only).
    public var wallMs: Int64
    /// A time service (chrony, ntpd, systemd-timesyncd) keeps the clock synchronised. An
    /// offline board without a battery clock is not: its date is whatever it last saved.
    public var synchronised: Bool
    /// Milliseconds since the board started (the process, for a clock that stands for a
    /// board's): every wall time this boot stamped lies in `wallMs - sinceBootMs ... wallMs`.
    public var sinceBootMs: Int64
    public init(wallMs: Int64, synchronised: Bool, sinceBootMs: Int64) {
        self.wallMs = wallMs
        self.synchronised = synchronised
        self.sinceBootMs = sinceBootMs
    }
}

/// The wall clock an offline gate takes from a coach's phone. Timing never reads it (runs
/// are timed on CLOCK_MONOTONIC), so stepping it moves only dates and times of day.
/// Callable from any thread.
public protocol WallClock: Sendable {
    /// The wall clock now, and whether a time service keeps it.
    func state() throws(DeviceError) -> WallClockState
    /// Steps the wall clock to `wallMs` milliseconds since the Unix epoch. Throws when the
    /// process may not (it needs CAP_SYS_TIME) or the kernel refuses the value.
    func set(wallMs: Int64) throws(DeviceError)
}
