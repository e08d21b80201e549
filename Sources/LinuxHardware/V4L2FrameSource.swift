// SPDX-License-Identifier: Apache-2.0
// The camera adapter: V4L2 mmap streaming with kernel timestamps, drop accounting, exposure and MJPEG.

import CMJPEG
import CV4L2
public import GateCore
public import Logging
#if canImport(Glibc)
import Glibc
#endif

/// How the driver says it stamps its buffers (`V4L2_BUF_FLAG_TSTAMP_SRC_*`).
public enum TimestampSource: Sendable, Hashable {
    /// At the start of the exposure (uvcvideo claims this, and in practice stamps the
    /// arrival of the frame's first packet). `V4L2_BUF_FLAG_TSTAMP_SRC_SOE`.
    case startOfExposure
    /// When the last pixel was received. `V4L2_BUF_FLAG_TSTAMP_SRC_EOF`.
    case endOfFrame
}

/// A V4L2 camera (a UVC webcam on a Pi, vivid in the test rig) as a `FrameSource`.
///
/// `open()` enumerates the device's native modes, picks one with `choose(modes:request:)`,
/// sets format, rate and exposure, maps `request.bufferCount` driver buffers and starts
/// streaming. `nextFrame()` dequeues without blocking and hands out a view into the
/// driver's buffer (or, for MJPEG, into a luma buffer decoded from it), valid until
/// `release`. After `open()` neither `nextFrame` nor `release` allocates (with MJPEG,
/// after the first decoded frame, which sizes the decoder's working memory).
///
/// Timestamps: the driver's stamp must be on CLOCK_MONOTONIC (`V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC`);
/// a frame without it is stamped with the dequeue time and counted in
/// `stats.nonMonotonic`. The adapter assumes the driver stamps the start of frame
/// reception (uvcvideo does, whatever its flags say), which follows the end of the top
/// row's exposure, and subtracts `request.timestampOffset` (default: half the effective
/// exposure) to reach the `FrameView` convention, the middle of the top row's exposure.
///
/// Unplug: ENODEV/EIO/ENXIO from any call moves `state` to `.absent`, stops streaming
/// and closes the device once every lease is back; `open()` later starts again. The
/// counters in `stats` survive. An unplugged node polls as POLLERR|POLLHUP, not as
/// readable: on those events call `nextFrame()` too, which reports the loss. Used from
/// the engine thread only.
public struct V4L2FrameSource: FrameSource, ~Copyable {
    /// Device node or udev symlink, e.g. `/dev/sprintgate/camera`.
    public let path: String
    /// What to ask of the camera; a change takes effect at the next `open()`.
    public var request: CameraRequest
    private var logger: Logger

    public private(set) var state: DeviceState = .closed
    public private(set) var fileDescriptor: Int32 = -1
    /// Cumulative counters, kept across reopen.
    public private(set) var stats = CameraStats()
    /// The mode streaming now (the driver's actual size and rate), nil while closed.
    public private(set) var mode: CameraMode?
    /// The whole frame rates the camera offers in an accepted format, slowest first, as
    /// enumerated at the last open (`offeredRates(modes:formats:)`); empty before it.
    public private(set) var offeredRates: [Int] = []
    /// The exposure the camera reports using, nil when it does not say (automatic
    /// exposure, no exposure control).
    public private(set) var exposure: Span?
    /// What the driver says about its timestamps, nil until the first frame.
    public private(set) var timestampSource: TimestampSource?
    /// The offset subtracted from driver timestamps (see the type's documentation).
    public private(set) var timestampOffset: Span = .zero
    /// Set-up problems that do not stop the camera (exposure too long or not settable,
    /// rate not settable), from the last `open()`. Each is also logged once.
    public private(set) var warnings: [String] = []
    /// The last failure, until the next successful open.
    public private(set) var lastError: DeviceError?
    /// The driver's timestamp of the last frame handed out, on CLOCK_MONOTONIC, before
    /// the offset (for latency measurements).
    public private(set) var lastKernelTimestamp = MonotonicInstant(nanoseconds: 0)
    /// Kernel timestamp of the last frame dequeued, good or not, or, before the first one
    /// since opening, when `checkSignal` started waiting for it (the signal watchdog).
    public private(set) var lastFrameAt: MonotonicInstant?

    // Driver buffers, indexed by slot; sized once per open, never grown while streaming.
    private var maps: [UnsafeRawPointer?] = []
    private var lengths: [Int] = []
    private var held: [Bool] = []
    private var heldCount = 0
    private var streaming = false
    private var format = PixelFormat.gray8
    private var width = 0
    private var height = 0
    private var bytesPerRow = 0
    private var minimumBytes = 0
    // MJPEG: one decoded luma frame per slot, so every outstanding lease stays valid.
    private var luma: UnsafeMutableRawPointer?
    private var lumaCapacity = 0
    private var decoder: OpaquePointer?
    // Sequence tracking: the driver's 32-bit numbers, extended and made to keep rising
    // across reopen (each session starts after the last number handed out).
    private var sessionBase: UInt64 = 0
    private var lastDriverSequence: UInt32 = 0
    private var lastSessionSequence: UInt64 = 0
    private var seenInSession = false
    private var skippedSinceDelivery: UInt64 = 0
    private var lastLogged: DeviceError?

    /// Exposure above which a running athlete blurs. Why: at 10 m/s a torso moves 4 cm
    /// in 4 ms, about the detector's sub-pixel edge budget at 3 m distance; the
    /// reference photo-finish app warns at the same value.
    public static let blurLimit = Span.microseconds(4000)
    /// Time without frames after which a streaming camera counts as `.noSignal`.
    /// Why: ten frames at 30 fps; a UVC camera that lost its sensor link keeps the
    /// stream open and simply stops delivering.
    public static let noSignalAfter = Span.milliseconds(333)

    /// A closed source for the camera at `path`; `open()` starts it.
    public init(path: String, request: CameraRequest = CameraRequest(), logger: Logger) {
        self.path = path
        self.request = request
        self.logger = logger
    }

    deinit {
        Self.unmap(maps, lengths)
        if fileDescriptor >= 0 { Sys.closeVideo(fileDescriptor) }
        luma?.deallocate()
        if let decoder { sprintgate_mjpeg_decoder_destroy(decoder) }
    }

    /// The native capture modes of the device at `path` (formats libv4l2 only emulates
    /// are left out). Opens and closes the device.
    public static func modes(path: String) throws(DeviceError) -> [CameraMode] {
        let fd = try V4L2.open(path)
        defer { Sys.closeVideo(fd) }
        return try V4L2.modes(fd, path)
    }

    // MARK: - FrameSource

    public mutating func open() throws(DeviceError) {
        precondition(heldCount == 0, "every frame lease must be released before the camera is reopened")
        teardown()
        do {
            try start()
        } catch var error {
            teardown()
            if error.errno == EBUSY {
                error.detail = "the camera is in use by another program; close it first "
                    + "(for a second sprintgate: sudo systemctl stop sprintgate)"
            }
            fail(error, disconnect: false)
            throw error
        }
        stats.opens += 1
        state = .streaming
        lastError = nil
        lastLogged = nil
        lastFrameAt = nil
        logger.info("camera streaming", metadata: [
            "path": "\(path)", "mode": "\(mode.map(\.description) ?? "?")",
            "exposure_us": "\(exposure.map { String($0.nanoseconds / 1000) } ?? "unknown")",
            "buffers": "\(maps.count)",
        ])
    }

    public mutating func nextFrame() -> FrameLease? {
        guard streaming else { return nil }
        while true {
            var buf = V4L2.mmapBuffer(V4L2.captureType)
            do {
                guard case .processed = try Sys.ioctl(fileDescriptor, CV4L2_VIDIOC_DQBUF(), &buf,
                                                      op: "VIDIOC_DQBUF", path: path) else { return nil }
            } catch {
                fail(error, disconnect: V4L2.isGone(error.errno))
                return nil
            }
            let slot = Int(buf.index)
            precondition(slot >= 0 && slot < maps.count && !held[slot], "driver returned an unknown buffer")

            // Sequence accounting: every dequeued buffer, good or not, closes a gap.
            let seq = buf.sequence
            let gap: UInt64
            if seenInSession {
                let step = UInt64(seq &- lastDriverSequence)
                gap = step == 0 ? 0 : step - 1
                lastSessionSequence += step
            } else {
                // The driver numbers frames from 0 at STREAMON.
                gap = UInt64(seq)
                lastSessionSequence = UInt64(seq)
                seenInSession = true
            }
            lastDriverSequence = seq
            stats.dropped += gap

            // Why: `timeval`'s fields are attributed to whichever C module first includes
            // <sys/time.h> (CALSA or CV4L2), and MemberImportVisibility then asks for that
            // module's import; they are read by layout instead: two longs.
            let (sec, usec) = unsafeBitCast(buf.timestamp, to: (Int, Int).self)
            var kernelMono = MonotonicInstant(nanoseconds: Int64(sec) * 1_000_000_000 + Int64(usec) * 1000)
            if buf.flags & u32(V4L2_BUF_FLAG_TIMESTAMP_MASK) != u32(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC) {
                stats.nonMonotonic += 1
                kernelMono = Sys.monotonicNow()
            }
            lastFrameAt = kernelMono
            if state == .noSignal { state = .streaming }
            if timestampSource == nil {
                timestampSource = buf.flags & u32(V4L2_BUF_FLAG_TSTAMP_SRC_MASK) == u32(V4L2_BUF_FLAG_TSTAMP_SRC_SOE)
                    ? .startOfExposure : .endOfFrame
            }

            var base = maps[slot]!
            var rowBytes = bytesPerRow
            var viewFormat = format
            var good = buf.flags & u32(V4L2_BUF_FLAG_ERROR) == 0
            if good && format == .mjpeg {
                let dst = luma! + slot * width * height
                let r = sprintgate_mjpeg_decode(decoder, base.assumingMemoryBound(to: UInt8.self), Int(buf.bytesused),
                                                dst.assumingMemoryBound(to: UInt8.self),
                                                Int32(width), Int32(height), Int32(width))
                good = r == 0
                base = UnsafeRawPointer(dst)
                rowBytes = width
                viewFormat = .gray8
            } else if good {
                // Why: uvcvideo hands back short buffers when USB packets were lost
                // (ustreamer checks the same); such a frame shows a torn image.
                good = Int(buf.bytesused) >= minimumBytes
            }
            if !good {
                stats.corrupt += 1
                skippedSinceDelivery += gap + 1
                guard requeue(slot) else { return nil }
                continue
            }

            let dropped = skippedSinceDelivery + gap
            skippedSinceDelivery = 0
            held[slot] = true
            heldCount += 1
            stats.frames += 1
            lastKernelTimestamp = kernelMono
            var view = FrameView(base: base, width: width, height: height, bytesPerRow: rowBytes, format: viewFormat,
                                 sequence: sessionBase + lastSessionSequence, timestamp: kernelMono - timestampOffset)
            if format == .mjpeg { view.compressed = UnsafeRawBufferPointer(start: maps[slot]!, count: Int(buf.bytesused)) }
            return FrameLease(view: view, slot: slot, droppedBefore: dropped)
        }
    }

    /// Buffers beyond three (one being processed, two queued so the driver never runs
    /// dry) can be held: one of the default four.
    public var spareBuffers: Int { max(0, maps.count - 3) }

    public mutating func release(_ lease: FrameLease) {
        let slot = lease.slot
        precondition(slot >= 0 && slot < held.count && held[slot], "frame lease released twice or not from this source")
        held[slot] = false
        heldCount -= 1
        if streaming {
            _ = requeue(slot)
        } else if heldCount == 0 {
            // The device went away while frames were out; now nothing points into the maps.
            teardown()
        }
    }

    public mutating func close() {
        precondition(heldCount == 0, "every frame lease must be released before the camera is closed")
        teardown()
        state = .closed
    }

    /// Moves a streaming camera that has delivered nothing for `noSignalAfter` to
    /// `.noSignal` (and back on the next frame). Call once per loop iteration with the
    /// loop's time on CLOCK_MONOTONIC.
    public mutating func checkSignal(now: MonotonicInstant) {
        guard streaming, state == .streaming else { return }
        guard let last = lastFrameAt else {
            lastFrameAt = now  // nothing yet since open: the watch starts now
            return
        }
        if now.since(last) > Self.noSignalAfter {
            state = .noSignal
            logger.warning("camera delivers no frames", metadata: ["path": "\(path)"])
        }
    }

    // MARK: - Set-up

    private mutating func start() throws(DeviceError) {
        fileDescriptor = try V4L2.open(path)
        let fd = fileDescriptor
        let cap = try V4L2.capabilities(fd, path)
        guard cap.caps & u32(V4L2_CAP_VIDEO_CAPTURE) != 0, cap.caps & u32(V4L2_CAP_STREAMING) != 0 else {
            throw DeviceError(operation: "VIDIOC_QUERYCAP", errno: ENOTTY, path: path,
                              detail: "\(cap.card) (\(cap.driver)) is not a streaming video capture device")
        }
        let modes = try V4L2.modes(fd, path)
        offeredRates = Self.offeredRates(modes: modes, formats: request.formats)
        guard let chosen = Self.choose(modes: modes, request: request) else {
            throw DeviceError(operation: "choose mode", errno: 0, path: path,
                              detail: "no mode in an accepted format (\(request.formats.map(\.description).joined(separator: ", "))); "
                                  + "the camera offers: " + modes.map(\.description).joined(separator: "; "))
        }
        warnings = []

        var f = v4l2_format()
        f.type = V4L2.captureType
        f.fmt.pix.width = u32(chosen.width)
        f.fmt.pix.height = u32(chosen.height)
        f.fmt.pix.pixelformat = chosen.format.rawValue
        f.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        try V4L2.call(fd, CV4L2_VIDIOC_S_FMT(), &f, "VIDIOC_S_FMT", path)
        guard f.fmt.pix.pixelformat == chosen.format.rawValue else {
            throw DeviceError(operation: "VIDIOC_S_FMT", errno: EINVAL, path: path,
                              detail: "driver refused \(chosen.format) and offered \(PixelFormat(rawValue: f.fmt.pix.pixelformat))")
        }
        format = chosen.format
        width = Int(f.fmt.pix.width)
        height = Int(f.fmt.pix.height)
        bytesPerRow = format == .mjpeg ? width : max(Int(f.fmt.pix.bytesperline), width * format.lumaStep)
        minimumBytes = format == .mjpeg ? 0 : bytesPerRow * height

        var interval = chosen.intervals[0]
        var p = v4l2_streamparm()
        p.type = V4L2.captureType
        p.parm.capture.timeperframe = v4l2_fract(numerator: interval.numerator, denominator: interval.denominator)
        if try V4L2.optional(fd, CV4L2_VIDIOC_S_PARM(), &p, "VIDIOC_S_PARM", path) {
            let t = p.parm.capture.timeperframe
            if t.numerator > 0 && t.denominator > 0 { interval = FrameInterval(numerator: t.numerator, denominator: t.denominator) }
        } else {
            warn("the driver does not take a frame rate (VIDIOC_S_PARM); running at its own rate")
        }
        mode = CameraMode(format: format, width: width, height: height, intervals: [interval])
        if abs(interval.fps - request.fps) > request.fps * Self.fpsTolerance {
            warn("camera runs at \(interval) instead of the requested \(Int(request.fps)) fps")
        }

        try configureExposure(fd)
        timestampOffset = request.timestampOffset ?? Span(nanoseconds: (exposure?.nanoseconds ?? 0) / 2)

        var rb = v4l2_requestbuffers()
        rb.count = u32(request.bufferCount)
        rb.type = V4L2.captureType
        rb.memory = V4L2.mmapMemory
        try V4L2.call(fd, CV4L2_VIDIOC_REQBUFS(), &rb, "VIDIOC_REQBUFS", path)
        guard rb.count >= 2 else {
            throw DeviceError(operation: "VIDIOC_REQBUFS", errno: ENOMEM, path: path, detail: "driver granted \(rb.count) buffers")
        }
        let count = Int(rb.count)
        maps = Array(repeating: nil, count: count)
        lengths = Array(repeating: 0, count: count)
        held = Array(repeating: false, count: count)
        for i in 0..<count {
            var b = V4L2.mmapBuffer(V4L2.captureType, index: i)
            try V4L2.call(fd, CV4L2_VIDIOC_QUERYBUF(), &b, "VIDIOC_QUERYBUF", path)
            maps[i] = try Sys.mmap(fd, length: Int(b.length), offset: Int(b.m.offset), path: path)
            lengths[i] = Int(b.length)
        }
        if format == .mjpeg {
            let need = count * width * height
            if lumaCapacity < need {
                luma?.deallocate()
                luma = UnsafeMutableRawPointer.allocate(byteCount: need, alignment: 64)
                lumaCapacity = need
            }
            if decoder == nil {
                decoder = sprintgate_mjpeg_decoder_create()
                guard decoder != nil else {
                    throw DeviceError(operation: "jpeg decoder", errno: ENOMEM, path: path, detail: "out of memory")
                }
            }
        }
        for i in 0..<count {
            var b = V4L2.mmapBuffer(V4L2.captureType, index: i)
            try V4L2.call(fd, CV4L2_VIDIOC_QBUF(), &b, "VIDIOC_QBUF", path)
        }
        var type = Int32(bitPattern: V4L2.captureType)
        try V4L2.call(fd, CV4L2_VIDIOC_STREAMON(), &type, "VIDIOC_STREAMON", path)
        streaming = true
        // A new session: numbers continue after the last one handed out.
        if seenInSession || stats.frames > 0 { sessionBase += lastSessionSequence + 1 }
        seenInSession = false
        lastSessionSequence = 0
        skippedSinceDelivery = 0
        timestampSource = nil
    }

    /// Sets manual exposure when requested, reads back what the camera uses and warns
    /// about blur. A camera without the controls gets a warning, not a failure.
    private mutating func configureExposure(_ fd: Int32) throws(DeviceError) {
        exposure = nil
        let autoID = u32(V4L2_CID_EXPOSURE_AUTO), absoluteID = u32(V4L2_CID_EXPOSURE_ABSOLUTE)
        if let us = request.exposureMicroseconds {
            let manual = Int32(bitPattern: V4L2_EXPOSURE_MANUAL.rawValue)
            guard try V4L2.setControl(fd, path, autoID, manual), let range = try V4L2.queryControl(fd, path, absoluteID) else {
                warn("camera has no manual exposure control: exposure_us \(us) ignored, exposure unknown")
                return
            }
            // Why: UVC cameras with auto-exposure priority lower the frame rate in dim
            // light to expose longer; the gate needs the rate it asked for.
            _ = try V4L2.setControl(fd, path, u32(V4L2_CID_EXPOSURE_AUTO_PRIORITY), 0)
            // V4L2_CID_EXPOSURE_ABSOLUTE counts 100 µs units.
            let step = max(1, range.step)
            var units = Int32(clamping: (us + 50) / 100)
            units = min(max(units, range.minimum), range.maximum)
            units = range.minimum + (units - range.minimum) / step * step
            if !(try V4L2.setControl(fd, path, absoluteID, units)) {
                warn("camera refused exposure_us \(us)")
            }
        }
        guard let mode = try V4L2.control(fd, path, autoID) else { return }
        if mode == Int32(bitPattern: V4L2_EXPOSURE_MANUAL.rawValue)
            || mode == Int32(bitPattern: V4L2_EXPOSURE_SHUTTER_PRIORITY.rawValue),
           let units = try V4L2.control(fd, path, absoluteID) {
            exposure = .microseconds(Double(units) * 100)
        }
        if let e = exposure, e > Self.blurLimit {
            warn(Self.blurWarning(e))
        }
    }

    /// The warning for an exposure that blurs a sprinter, e.g.
    /// "exposure 8.0 ms blurs a sprinter: set exposure_us to 4000 or less".
    public static func blurWarning(_ exposure: Span) -> String {
        let tenths = (exposure.nanoseconds + 50_000) / 100_000
        return "exposure \(tenths / 10).\(tenths % 10) ms blurs a sprinter: set exposure_us to "
            + "\(blurLimit.nanoseconds / 1000) or less"
    }

    private mutating func warn(_ message: String) {
        warnings.append(message)
        logger.warning("\(message)", metadata: ["path": "\(path)"])
    }

    // MARK: - Tear-down

    /// Gives a buffer back to the driver; false (and the state updated) when it failed.
    private mutating func requeue(_ slot: Int) -> Bool {
        var b = V4L2.mmapBuffer(V4L2.captureType, index: slot)
        do {
            try V4L2.call(fileDescriptor, CV4L2_VIDIOC_QBUF(), &b, "VIDIOC_QBUF", path)
            return true
        } catch {
            fail(error, disconnect: V4L2.isGone(error.errno))
            return false
        }
    }

    /// Records a failure: sets the state, logs once per distinct error, stops streaming
    /// and closes the device unless frames are still out (then the last release does).
    private mutating func fail(_ error: DeviceError, disconnect: Bool) {
        lastError = error
        state = disconnect ? .absent : error.impliedState
        if disconnect && streaming { stats.disconnects += 1 }
        if lastLogged != error {
            logger.warning("camera \(state): \(error)")
            lastLogged = error
        }
        if streaming {
            var type = Int32(bitPattern: V4L2.captureType)
            _ = try? Sys.ioctl(fileDescriptor, CV4L2_VIDIOC_STREAMOFF(), &type, op: "VIDIOC_STREAMOFF", path: path)
            streaming = false
        }
        if heldCount == 0 { teardown() }
    }

    /// Stops streaming, unmaps the buffers and closes the device. Why close at once on
    /// unplug: a mapping or descriptor left open keeps the driver's state alive (vivid
    /// and uvcvideo only let the node come back once the last user has gone).
    private mutating func teardown() {
        if streaming {
            var type = Int32(bitPattern: V4L2.captureType)
            _ = try? Sys.ioctl(fileDescriptor, CV4L2_VIDIOC_STREAMOFF(), &type, op: "VIDIOC_STREAMOFF", path: path)
            streaming = false
        }
        Self.unmap(maps, lengths)
        maps = []
        lengths = []
        held = []
        heldCount = 0
        if fileDescriptor >= 0 {
            Sys.closeVideo(fileDescriptor)
            fileDescriptor = -1
        }
    }

    private static func unmap(_ maps: [UnsafeRawPointer?], _ lengths: [Int]) {
        for (p, n) in zip(maps, lengths) {
            if let p { Sys.munmap(p, length: n) }
        }
    }
}
