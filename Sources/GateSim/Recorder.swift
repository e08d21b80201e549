// SPDX-License-Identifier: Apache-2.0
// Records what a camera and input lines delivered: frames as a clip plus an event log.

public import GateCore

/// What a recording holds, for the summary a user sees.
public struct RecordingSummary: Sendable, Hashable {
    public var frames = 0
    public var dropped: UInt64 = 0
    public var lineEvents = 0
    public var stateChanges = 0
    /// Measured frame rate from the first to the last frame's timestamp.
    public var measuredFPS = 0.0
    public var clipPath = ""
    public var logPath = ""
}

/// Copies the luma plane of `view` into `out` (`width × height` bytes, rows packed).
public func copyLuma(_ view: FrameView, into out: UnsafeMutableRawPointer) {
    let step = view.format.lumaStep
    for y in 0..<view.height {
        let src = view.base.advanced(by: y * view.bytesPerRow).assumingMemoryBound(to: UInt8.self)
        let dst = out.advanced(by: y * view.width).assumingMemoryBound(to: UInt8.self)
        if step == 1 {
            dst.update(from: src, count: view.width)
        } else {
            for x in 0..<view.width { dst[x] = src[x * step] }
        }
    }
}

/// Records from a camera (and optionally input lines) into `directory`: `frames.y4m`
/// (mono, replayable with `sprintgate replay`) and `case.log` (frame, line and device
/// state events on CLOCK_MONOTONIC).
///
/// The loop calls `waitForFrame(fd)` (which returns once the camera's descriptor is
/// readable or a short timeout passed) and `now()` for the clock; lines are polled each
/// turn through `pollLines`. A camera that stops (unplugged) ends the recording early
/// with a state event; what was captured until then is kept.
public func recordSession<Camera: FrameSource & ~Copyable>(
    camera: inout Camera,
    fps: Double,
    seconds: Double,
    directory: String,
    header: [(String, String)],
    now: () -> MonotonicInstant,
    waitForFrame: (Int32) -> Void,
    pollLines: ((MonotonicInstant, (LineEvent) -> Void) throws(DeviceError) -> Void)? = nil
) throws(ClipError) -> RecordingSummary {
    var summary = RecordingSummary()
    summary.clipPath = directory + "/frames.y4m"
    summary.logPath = directory + "/case.log"
    let log = try ReplayLogWriter(path: summary.logPath, header: header)
    var writer: Y4MWriter?
    var luma = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    defer { luma.deallocate() }
    let start = now()
    var lastState = camera.state
    var first: MonotonicInstant?
    var last = start
    var pending: [ReplayEvent] = []
    let reorderWindow = Span.milliseconds(250)
    while now().since(start).seconds < seconds {
        waitForFrame(camera.fileDescriptor)
        let t = now()
        if let pollLines {
            do {
                try pollLines(t) { pending.append(.line($0)) }
            } catch {
                pending.append(.state(device: "gpio", time: t, state: "error"))
            }
        }
        if let lease = camera.nextFrame() {
            let v = lease.view
            if writer == nil {
                writer = try Y4MWriter(path: summary.clipPath, width: v.width, height: v.height, fps: fps)
                luma = .allocate(byteCount: v.width * v.height, alignment: 16)
            }
            copyLuma(v, into: luma.baseAddress!)
            camera.release(lease)
            try writer!.write(UnsafeRawBufferPointer(luma))
            pending.append(.frame(sequence: v.sequence, time: v.timestamp, kernelTime: v.timestamp.nanoseconds,
                                  offset: summary.frames, dropped: lease.droppedBefore))
            summary.frames += 1
            summary.dropped += lease.droppedBefore
            if first == nil { first = v.timestamp }
            last = v.timestamp
        }
        if camera.state != lastState {
            lastState = camera.state
            pending.append(.state(device: "camera", time: t, state: "\(lastState)"))
            summary.stateChanges += 1
        }
        // Why: frame stamps and line stamps come from different clocks' conversions (a
        // driver may stamp a frame's end, ahead of the edge read in the same turn); hold
        // events for a reorder window and write them in time order.
        pending.sort { $0.time < $1.time }
        let latest = pending.last?.time ?? t
        var written = 0
        for e in pending where latest.since(e.time) >= reorderWindow {
            if case .line = e { summary.lineEvents += 1 }
            log.append(e)
            written += 1
        }
        pending.removeFirst(written)
        if lastState == .absent || lastState == .closed { break }
    }
    for e in pending {
        if case .line = e { summary.lineEvents += 1 }
        log.append(e)
    }
    try writer?.close()
    try log.close()
    if let first, summary.frames > 1 {
        summary.measuredFPS = Double(summary.frames - 1) / last.since(first).seconds
    }
    return summary
}
