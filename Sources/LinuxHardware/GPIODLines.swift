// SPDX-License-Identifier: Apache-2.0
// GPIO through libgpiod 1.6: the start button's debounced, timestamped edges and the outputs by role.

import CGPIOD
public import GateCore
#if canImport(Glibc)
import Glibc
#endif

/// The gate's GPIO lines on the kernel's character device, through libgpiod 1.6 (the v1 uAPI).
///
/// Inputs (the start button) are requested for both edges with the configured bias and
/// active-low flag; their event descriptors go on the engine's epoll (`fileDescriptors`)
/// and `readEvents(now:_:)` drains them without blocking. Outputs are requested at their
/// inactive level and `set(_:_:)` remembers the last level written, so writing an unchanged
/// level makes no system call. Roles missing from the board file are not wired: `set` on
/// them does nothing and `level` reads `false`.
///
/// Timestamps: the v1 uAPI stamps edges with `ktime_get_ns()`, CLOCK_MONOTONIC, since
/// Linux 5.7 (Debian 12 ships 6.1), so an edge's kernel timestamp is used as a
/// `MonotonicInstant` unchanged. The rig tests check this against `clock_gettime`.
///
/// Debounce, per input line, with a window of `debounce_ms` from the board file:
/// 1. An edge is *accepted* when it arrives at least the window after the last accepted
///    edge and changes the level last reported; it is reported with its kernel timestamp.
/// 2. An edge within the window after the last accepted edge is ignored (contact bounce),
///    and a settle check is scheduled for the end of the window (`nextSettleCheck`).
/// 3. At the settle check (the first `readEvents` at or after it) the line's real level is
///    read; if it differs from the level last reported, an edge to the real level is
///    reported, stamped with the kernel time of the last ignored edge (when the line last
///    changed). So a tap shorter than the window still reports press and release, and the
///    level reported last always equals the line's settled level.
/// 4. An edge that does not change the reported level is dropped. Why: the v1 uAPI reads the
///    line's level in the interrupt thread to name the edge, so a fast burst can deliver
///    two edges of the same kind.
///
/// Sequence numbers count every edge read from the kernel (per line and over all lines,
/// from 1), so a gap in the reported numbers is the count of edges the debounce dropped;
/// the v1 uAPI does not report edges lost by the kernel's queue.
///
/// Used from the engine thread only; not `Sendable`.
public struct GPIODLines: LineInputs, LineOutputs, ~Copyable {
    /// Events read per system call. Why: libgpiod 1.6 reads at most 16 events at once into a
    /// stack buffer, so larger batches gain nothing.
    static let eventBatch = 16

    struct Input {
        var role: GPIORole
        var line: OpaquePointer
        var fd: Int32
        var name: String
        var debounceNs: Int64
        /// Logical level last reported (true = active).
        var reported: Bool
        /// Kernel time of the last accepted edge; `Int64.min` before the first.
        var lastAcceptedNs: Int64 = .min
        var settlePending = false
        var lastRawNs: Int64 = 0
        var lastRawLineSeq: UInt32 = 0
        var lastRawGlobalSeq: UInt32 = 0
        var lineSeq: UInt32 = 0
    }

    struct Output {
        var role: GPIORole
        var line: OpaquePointer
        var name: String
        /// Logical level last written (true = on).
        var level: Bool
    }

    private let chips: [OpaquePointer]
    private var inputs: [Input]
    private var outputs: [Output]
    /// Index into `inputs` by `GPIORole.slot`, or -1 when the role is not an input here.
    private let inputSlot: [Int]
    /// Index into `outputs` by `GPIORole.slot`, or -1 when the role is not an output here.
    private let outputSlot: [Int]
    private var globalSeq: UInt32 = 0
    private let events: UnsafeMutablePointer<gpiod_line_event>

    /// Event descriptors of the input lines (non-blocking), one per input, for epoll.
    public let fileDescriptors: [Int32]

    /// Number of `gpiod_line_set_value` calls made by `set` (each is one ioctl); unchanged
    /// levels do not count.
    public private(set) var outputWrites: Int = 0

    /// Creates the adapter and requests every configured line.
    ///
    /// - Parameters:
    ///   - lines: the board's `[gpio.<role>]` tables. The chip is opened by label first
    ///     (stable across Pi 4 and Pi 5 kernels), then by name (`gpiochip0`) or path.
    ///   - boardFile: the board file, named in errors.
    ///   - consumer: the consumer name `gpioinfo` shows on requested lines.
    /// - Throws: `DeviceError` naming the chip label, line and board key, suggesting `gpioinfo`,
    ///   when a chip or line is missing or a request fails (e.g. `EBUSY`: the line is in use).
    public init(lines: [GPIORole: GPIOLineConfig], boardFile: String = "", consumer: String = "sprintgate") throws(DeviceError) {
        // Why: everything is built in locals and stored at the end, so a failed request
        // releases what was requested so far here and `deinit` never sees a partial adapter.
        var chips: [OpaquePointer] = []
        var inputs: [Input] = []
        var outputs: [Output] = []
        var opened: [String: OpaquePointer] = [:]
        func cleanUp() {
            for i in inputs { gpiod_line_release(i.line) }
            for o in outputs { gpiod_line_release(o.line) }
            for c in chips { gpiod_chip_close(c) }
        }
        // Why: a stable order makes descriptors and sequence numbers reproducible.
        for role in GPIORole.allCases {
            guard let cfg = lines[role] else { continue }
            let chip: OpaquePointer
            if let c = opened[cfg.chip] {
                chip = c
            } else {
                do { chip = try Self.openChip(cfg.chip, role: role, boardFile: boardFile) } catch {
                    cleanUp()
                    throw error
                }
                opened[cfg.chip] = chip
                chips.append(chip)
            }
            let name = "\(cfg.chip)/\(cfg.line)"
            guard let line = gpiod_chip_find_line(chip, cfg.line) else {
                let e = Glibc.errno
                cleanUp()
                throw DeviceError(
                    operation: "gpiod_chip_find_line", errno: e == 0 ? ENOENT : e, path: name,
                    detail: "GPIO chip \"\(cfg.chip)\" has no line named \"\(cfg.line)\" for role \(role)"
                        + Self.where_(boardFile, role, "line")
                        + "; `gpioinfo \(cfg.chip)` lists its line names")
            }
            var flags: Int32 = cfg.activeLow ? Int32(GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW) : 0
            flags |= cfg.bias.requestFlag
            switch role.direction {
            case .input:
                guard gpiod_line_request_both_edges_events_flags(line, consumer, flags) == 0 else {
                    let error = Self.requestError("gpiod_line_request_both_edges_events_flags", name, role, boardFile)
                    cleanUp()
                    throw error
                }
                let fd = gpiod_line_event_get_fd(line)
                precondition(fd >= 0, "libgpiod gave no event descriptor for a requested line")
                // Why: the kernel's line-event descriptor blocks on read by default;
                // readEvents must return when the queue is empty.
                let fl = fcntl(fd, F_GETFL)
                _ = fcntl(fd, F_SETFL, fl | O_NONBLOCK)
                let v = gpiod_line_get_value(line)
                guard v >= 0 else {
                    let error = Sys.fail("gpiod_line_get_value", name)
                    gpiod_line_release(line)
                    cleanUp()
                    throw error
                }
                inputs.append(Input(
                    role: role, line: line, fd: fd, name: name,
                    debounceNs: Int64(cfg.debounceMilliseconds) * 1_000_000, reported: v == 1))
            case .output:
                guard gpiod_line_request_output_flags(line, consumer, flags, 0) == 0 else {
                    let error = Self.requestError("gpiod_line_request_output_flags", name, role, boardFile)
                    cleanUp()
                    throw error
                }
                outputs.append(Output(role: role, line: line, name: name, level: false))
            }
        }
        var inputSlot = Array(repeating: -1, count: GPIORole.slotCount)
        var outputSlot = Array(repeating: -1, count: GPIORole.slotCount)
        for (k, i) in inputs.enumerated() { inputSlot[i.role.slot] = k }
        for (k, o) in outputs.enumerated() { outputSlot[o.role.slot] = k }
        self.chips = chips
        self.inputs = inputs
        self.outputs = outputs
        self.inputSlot = inputSlot
        self.outputSlot = outputSlot
        self.fileDescriptors = inputs.map(\.fd)
        self.events = .allocate(capacity: Self.eventBatch)
    }

    deinit {
        // Why: a released v1 line keeps its last value, so LEDs and the buzzer are switched
        // off before the lines go back to the kernel.
        for o in outputs where o.level { _ = gpiod_line_set_value(o.line, 0) }
        releaseAll()
        events.deallocate()
    }

    private func releaseAll() {
        for i in inputs { gpiod_line_release(i.line) }
        for o in outputs { gpiod_line_release(o.line) }
        for c in chips { gpiod_chip_close(c) }
    }

    // MARK: LineInputs

    /// The earliest instant (CLOCK_MONOTONIC) at which a debounce settle check is due, or
    /// `nil`. The engine loop must call `readEvents` at or after it even when no descriptor
    /// is readable, or a tap shorter than the debounce window reports no release.
    public var nextSettleCheck: MonotonicInstant? {
        var best: Int64? = nil
        for i in inputs where i.settlePending {
            let due = i.lastAcceptedNs &+ i.debounceNs
            if best == nil || due < best! { best = due }
        }
        return best.map { MonotonicInstant(nanoseconds: $0) }
    }

    /// Reads all pending edges of every input without blocking and passes the debounced ones
    /// to `body`, per line oldest first (see the type's documentation for the rule). Settle
    /// checks due at `now` (CLOCK_MONOTONIC, the loop's timestamp) run after the queue is
    /// drained. Allocates nothing.
    public mutating func readEvents(now: MonotonicInstant, _ body: (LineEvent) -> Void) throws(DeviceError) {
        for i in inputs.indices {
            try drain(i, body)
            if inputs[i].settlePending && now.nanoseconds >= inputs[i].lastAcceptedNs &+ inputs[i].debounceNs {
                try settle(i, body)
            }
        }
    }

    private mutating func drain(_ i: Int, _ body: (LineEvent) -> Void) throws(DeviceError) {
        while true {
            let n = gpiod_line_event_read_fd_multiple(inputs[i].fd, events, UInt32(Self.eventBatch))
            if n < 0 {
                let e = Glibc.errno
                if e == EINTR { continue }
                if e == EAGAIN { return }
                throw Sys.fail("gpiod_line_event_read_fd_multiple", inputs[i].name, e)
            }
            for k in 0..<Int(n) {
                // Why: `timespec`'s members are attributed to whichever C module first
                // includes <time.h>, so the stamp is read by layout: two longs.
                let (sec, nsec) = unsafeBitCast(events[k].ts, to: (Int, Int).self)
                let ns = Int64(sec) &* 1_000_000_000 &+ Int64(nsec)
                accept(i, ns: ns, active: events[k].event_type == Int32(GPIOD_LINE_EVENT_RISING_EDGE), body)
            }
            if Int(n) < Self.eventBatch { return }
        }
    }

    private mutating func accept(_ i: Int, ns: Int64, active: Bool, _ body: (LineEvent) -> Void) {
        globalSeq &+= 1
        inputs[i].lineSeq &+= 1
        inputs[i].lastRawNs = ns
        inputs[i].lastRawLineSeq = inputs[i].lineSeq
        inputs[i].lastRawGlobalSeq = globalSeq
        let inWindow = inputs[i].lastAcceptedNs != .min && ns &- inputs[i].lastAcceptedNs < inputs[i].debounceNs
        if inWindow {
            inputs[i].settlePending = true
            return
        }
        guard active != inputs[i].reported else { return }
        inputs[i].reported = active
        inputs[i].lastAcceptedNs = ns
        inputs[i].settlePending = false
        body(LineEvent(
            role: inputs[i].role, edge: active ? .rising : .falling, timestamp: MonotonicInstant(nanoseconds: ns),
            lineSequence: inputs[i].lineSeq, globalSequence: globalSeq))
    }

    private mutating func settle(_ i: Int, _ body: (LineEvent) -> Void) throws(DeviceError) {
        inputs[i].settlePending = false
        let v = gpiod_line_get_value(inputs[i].line)
        guard v >= 0 else { throw Sys.fail("gpiod_line_get_value", inputs[i].name) }
        let active = v == 1
        guard active != inputs[i].reported else { return }
        inputs[i].reported = active
        inputs[i].lastAcceptedNs = inputs[i].lastRawNs
        body(LineEvent(
            role: inputs[i].role, edge: active ? .rising : .falling,
            timestamp: MonotonicInstant(nanoseconds: inputs[i].lastRawNs),
            lineSequence: inputs[i].lastRawLineSeq, globalSequence: inputs[i].lastRawGlobalSeq))
    }

    /// The current logical level of a line: read from the kernel for an input, the cached
    /// level for an output; `false` for a role that is not wired.
    public func level(_ role: GPIORole) throws(DeviceError) -> Bool {
        let s = inputSlot[role.slot]
        if s >= 0 {
            let v = gpiod_line_get_value(inputs[s].line)
            guard v >= 0 else { throw Sys.fail("gpiod_line_get_value", inputs[s].name) }
            return v == 1
        }
        let o = outputSlot[role.slot]
        return o >= 0 ? outputs[o].level : false
    }

    // MARK: LineOutputs

    /// Sets an output's logical level (true = on, active-low applied by the kernel). An
    /// unchanged level makes no system call; a role that is not wired is ignored.
    /// Allocates nothing.
    public mutating func set(_ role: GPIORole, _ on: Bool) throws(DeviceError) {
        let s = outputSlot[role.slot]
        guard s >= 0, outputs[s].level != on else { return }
        outputWrites += 1
        guard gpiod_line_set_value(outputs[s].line, on ? 1 : 0) == 0 else {
            throw Sys.fail("gpiod_line_set_value", outputs[s].name)
        }
        outputs[s].level = on
    }

    // MARK: Errors

    private static func openChip(_ chip: String, role: GPIORole, boardFile: String) throws(DeviceError) -> OpaquePointer {
        if chip.hasPrefix("/") {
            if let c = gpiod_chip_open(chip) { return c }
        } else {
            if let c = gpiod_chip_open_by_label(chip) { return c }
            if chip.hasPrefix("gpiochip"), let c = gpiod_chip_open_by_name(chip) { return c }
        }
        let e = Glibc.errno
        throw DeviceError(
            operation: chip.hasPrefix("/") ? "gpiod_chip_open" : "gpiod_chip_open_by_label",
            errno: e == 0 ? ENOENT : e, path: chip,
            detail: "no GPIO chip labelled or named \"\(chip)\" for role \(role)" + where_(boardFile, role, "chip")
                + "; `gpioinfo` lists the chips with their labels and line names"
                + (e == EACCES ? " (permission denied: is the user in group gpio?)" : ""))
    }

    private static func requestError(_ op: String, _ name: String, _ role: GPIORole, _ boardFile: String) -> DeviceError {
        let e = Glibc.errno
        let why = e == EBUSY ? "the line is in use by another consumer" : "the request was refused"
        return DeviceError(
            operation: op, errno: e, path: name,
            detail: "\(why) for role \(role)" + where_(boardFile, role, "line") + "; `gpioinfo` shows each line's consumer")
    }

    private static func where_(_ boardFile: String, _ role: GPIORole, _ key: String) -> String {
        boardFile.isEmpty ? " (key gpio.\(role).\(key))" : " (\(boardFile), key gpio.\(role).\(key))"
    }
}

extension GPIOBias {
    /// The libgpiod 1.6 request flag for this bias (0 for as-is).
    var requestFlag: Int32 {
        switch self {
        case .asIs: return 0
        case .disable: return Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE)
        case .pullUp: return Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP)
        case .pullDown: return Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN)
        }
    }
}
