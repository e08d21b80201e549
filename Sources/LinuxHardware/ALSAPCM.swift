// SPDX-License-Identifier: Apache-2.0
// Thin wrappers over alsa-lib PCM calls: open and configure a stream, write, read, timestamped status.

import CALSA
public import GateCore
#if canImport(Glibc)
import Glibc
#endif

/// An open ALSA PCM stream of signed 16-bit little-endian frames, non-blocking, with
/// CLOCK_MONOTONIC status timestamps. Owns the handle and closes it in `deinit`.
///
/// Used from one thread at a time.
public struct ALSAPCM: ~Copyable {
    /// Which way the samples flow.
    public enum Direction: Sendable { case playback, capture }

    /// A status snapshot. `timestamp` is CLOCK_MONOTONIC (the status `htstamp`): the
    /// instant the hardware position was last seen to move, at which `delay` was true
    /// (see `reference(fallback:)`).
    public struct Status: Sendable, Hashable {
        /// When the snapshot was taken, CLOCK_MONOTONIC.
        public var timestamp: MonotonicInstant
        /// When the stream was last started or stopped, CLOCK_MONOTONIC.
        public var trigger: MonotonicInstant
        /// Playback: frames that will play before a frame written now reaches the converter.
        /// Capture: frames captured but not yet read, plus the converter's latency.
        public var delay: Int
        /// Frames that can be written (playback) or read (capture) without blocking.
        public var avail: Int
        /// `SND_PCM_STATE_*` value; 3 is RUNNING, 4 XRUN.
        public var state: Int32
        public var isRunning: Bool { state == Int32(SND_PCM_STATE_RUNNING.rawValue) }

        /// Whether `timestamp` was taken since the last start. Why: the kernel updates the
        /// status timestamp only when the hardware position moves (`update_audio_tstamp`),
        /// so until the first move it still holds an older instant, zero on a fresh stream.
        public var timestampIsFresh: Bool { timestamp.nanoseconds > 0 && timestamp >= trigger }

        /// The CLOCK_MONOTONIC instant at which `delay` held: `timestamp` when fresh; else
        /// the trigger instant, since the position has not moved since the start; else
        /// `fallback` (a plugin that reports no timestamps).
        public func reference(fallback: MonotonicInstant) -> MonotonicInstant {
            if timestampIsFresh { return timestamp }
            if trigger.nanoseconds > 0 && isRunning { return trigger }
            return fallback
        }
    }

    let handle: OpaquePointer
    /// The ALSA device name.
    public let device: String
    /// Frames per second the device accepted.
    public let rate: Int
    /// Interleaved channels per frame the device accepted.
    public let channels: Int
    /// Frames per period (the device's wake-up granularity).
    public let periodFrames: Int
    /// Ring buffer size in frames.
    public let bufferFrames: Int
    private let status: OpaquePointer

    /// Opens `device` and configures it: interleaved S16_LE at (near) `rate`, the first of
    /// `channelChoices` the device accepts, periods and buffer near the given times; software
    /// parameters with monotonic timestamps, no automatic start (`start()` starts),
    /// stop when the buffer runs empty, and silence written after the last frame.
    ///
    /// - Throws: `DeviceError` with the failing call and the negated ALSA error as `errno`.
    public init(
        device: String, direction: Direction, rate: Int = 48_000, channelChoices: [Int] = [1, 2],
        periodMicroseconds: Int = 5_000, bufferMicroseconds: Int = 200_000
    ) throws(DeviceError) {
        var pcm: OpaquePointer? = nil
        let stream = direction == .playback ? SND_PCM_STREAM_PLAYBACK : SND_PCM_STREAM_CAPTURE
        var r = snd_pcm_open(&pcm, device, stream, Int32(SND_PCM_NONBLOCK))
        guard r == 0, let pcm else { throw Self.error("snd_pcm_open", r, device) }
        var hw: OpaquePointer? = nil
        var sw: OpaquePointer? = nil
        var st: OpaquePointer? = nil
        snd_pcm_hw_params_malloc(&hw)
        snd_pcm_sw_params_malloc(&sw)
        snd_pcm_status_malloc(&st)
        defer {
            snd_pcm_hw_params_free(hw)
            snd_pcm_sw_params_free(sw)
        }
        func check(_ op: String, _ r: Int32) throws(DeviceError) {
            if r < 0 {
                snd_pcm_status_free(st)
                snd_pcm_close(pcm)
                throw Self.error(op, r, device)
            }
        }
        try check("snd_pcm_hw_params_any", snd_pcm_hw_params_any(pcm, hw))
        try check("snd_pcm_hw_params_set_access", snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED))
        try check("snd_pcm_hw_params_set_format (S16_LE)", snd_pcm_hw_params_set_format(pcm, hw, SND_PCM_FORMAT_S16_LE))
        var channels = 0
        for c in channelChoices where snd_pcm_hw_params_test_channels(pcm, hw, UInt32(c)) == 0 {
            channels = c
            break
        }
        if channels == 0 {
            var c: UInt32 = UInt32(channelChoices.first ?? 1)
            try check("snd_pcm_hw_params_set_channels_near", snd_pcm_hw_params_set_channels_near(pcm, hw, &c))
            channels = Int(c)
        } else {
            try check("snd_pcm_hw_params_set_channels", snd_pcm_hw_params_set_channels(pcm, hw, UInt32(channels)))
        }
        var rr = UInt32(rate)
        try check("snd_pcm_hw_params_set_rate_near", snd_pcm_hw_params_set_rate_near(pcm, hw, &rr, nil))
        var period = snd_pcm_uframes_t(Int(rr) * periodMicroseconds / 1_000_000)
        try check("snd_pcm_hw_params_set_period_size_near", snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, nil))
        var buffer = snd_pcm_uframes_t(Int(rr) * bufferMicroseconds / 1_000_000)
        try check("snd_pcm_hw_params_set_buffer_size_near", snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &buffer))
        try check("snd_pcm_hw_params", snd_pcm_hw_params(pcm, hw))
        snd_pcm_hw_params_get_period_size(hw, &period, nil)
        snd_pcm_hw_params_get_buffer_size(hw, &buffer)

        try check("snd_pcm_sw_params_current", snd_pcm_sw_params_current(pcm, sw))
        var boundary: snd_pcm_uframes_t = 0
        snd_pcm_sw_params_get_boundary(sw, &boundary)
        try check("snd_pcm_sw_params_set_tstamp_mode", snd_pcm_sw_params_set_tstamp_mode(pcm, sw, SND_PCM_TSTAMP_ENABLE))
        try check("snd_pcm_sw_params_set_tstamp_type", snd_pcm_sw_params_set_tstamp_type(pcm, sw, SND_PCM_TSTAMP_TYPE_MONOTONIC))
        try check("snd_pcm_sw_params_set_avail_min", snd_pcm_sw_params_set_avail_min(pcm, sw, period))
        if direction == .playback {
            // Why: the start instant is ours (`start()`), not whenever the buffer fills; the
            // stream stops by itself once everything written has played, and ALSA writes
            // silence behind the last frame so the ring's stale samples never play.
            try check("snd_pcm_sw_params_set_start_threshold", snd_pcm_sw_params_set_start_threshold(pcm, sw, boundary))
            try check("snd_pcm_sw_params_set_stop_threshold", snd_pcm_sw_params_set_stop_threshold(pcm, sw, buffer))
            try check("snd_pcm_sw_params_set_silence_threshold", snd_pcm_sw_params_set_silence_threshold(pcm, sw, 0))
            try check("snd_pcm_sw_params_set_silence_size", snd_pcm_sw_params_set_silence_size(pcm, sw, boundary))
        } else {
            try check("snd_pcm_sw_params_set_start_threshold", snd_pcm_sw_params_set_start_threshold(pcm, sw, 1))
        }
        try check("snd_pcm_sw_params", snd_pcm_sw_params(pcm, sw))
        r = snd_pcm_prepare(pcm)
        try check("snd_pcm_prepare", r)

        self.handle = pcm
        self.device = device
        self.rate = Int(rr)
        self.channels = channels
        self.periodFrames = Int(period)
        self.bufferFrames = Int(buffer)
        self.status = st!
    }

    deinit {
        snd_pcm_close(handle)
        snd_pcm_status_free(status)
    }

    /// Stops the stream, discarding pending frames, and prepares it for the next start.
    public func reset() throws(DeviceError) {
        _ = snd_pcm_drop(handle)
        let r = snd_pcm_prepare(handle)
        if r < 0 { throw Self.error("snd_pcm_prepare", r, device) }
    }

    /// Starts a prepared stream now.
    public func start() throws(DeviceError) {
        let r = snd_pcm_start(handle)
        if r < 0 { throw Self.error("snd_pcm_start", r, device) }
    }

    /// Writes up to `frames` interleaved frames without blocking; returns the frames taken
    /// (0 when the buffer is full). An underrun (`EPIPE`) is reported as `.wouldBlock`.
    public func write(_ p: UnsafePointer<Int16>, frames: Int) throws(DeviceError) -> IOResult<Int> {
        while true {
            let r = snd_pcm_writei(handle, p, snd_pcm_uframes_t(frames))
            if r >= 0 { return .processed(Int(r)) }
            if r == -Int(EINTR) { continue }
            if r == -Int(EAGAIN) || r == -Int(EPIPE) { return .wouldBlock }
            throw Self.error("snd_pcm_writei", Int32(r), device)
        }
    }

    /// Reads up to `frames` interleaved frames without blocking; `.wouldBlock` when none
    /// are ready. An overrun is recovered (the stream is restarted) and reported as a throw.
    public func read(into p: UnsafeMutablePointer<Int16>, frames: Int) throws(DeviceError) -> IOResult<Int> {
        while true {
            let r = snd_pcm_readi(handle, p, snd_pcm_uframes_t(frames))
            if r >= 0 { return .processed(Int(r)) }
            if r == -Int(EINTR) { continue }
            if r == -Int(EAGAIN) { return .wouldBlock }
            throw Self.error("snd_pcm_readi", Int32(r), device)
        }
    }

    /// A status snapshot (one `SNDRV_PCM_IOCTL_STATUS`); allocates nothing.
    public func currentStatus() throws(DeviceError) -> Status {
        let r = snd_pcm_status(handle, status)
        if r < 0 { throw Self.error("snd_pcm_status", r, device) }
        // Why: `timespec`'s members are attributed to whichever C module first includes
        // <time.h> (CALSA, CGPIOD or CV4L2), and MemberImportVisibility then asks for that
        // module's import; the stamps are read by layout instead: two longs.
        var ts = (0, 0), trig = (0, 0)
        withUnsafeMutablePointer(to: &ts) {
            $0.withMemoryRebound(to: snd_htimestamp_t.self, capacity: 1) { snd_pcm_status_get_htstamp(status, $0) }
        }
        withUnsafeMutablePointer(to: &trig) {
            $0.withMemoryRebound(to: snd_htimestamp_t.self, capacity: 1) { snd_pcm_status_get_trigger_htstamp(status, $0) }
        }
        return Status(
            timestamp: MonotonicInstant(nanoseconds: Int64(ts.0) * 1_000_000_000 + Int64(ts.1)),
            trigger: MonotonicInstant(nanoseconds: Int64(trig.0) * 1_000_000_000 + Int64(trig.1)),
            delay: Int(snd_pcm_status_get_delay(status)),
            avail: Int(snd_pcm_status_get_avail(status)),
            state: Int32(snd_pcm_status_get_state(status).rawValue))
    }

    static func error(_ op: String, _ r: Int32, _ device: String) -> DeviceError {
        let e = -r
        var detail = String(cString: snd_strerror(r))
        if op == "snd_pcm_open" {
            detail += e == EBUSY
                ? "; another program is playing on it (with PipeWire or PulseAudio running, use device \"default\")"
                : "; `aplay -L` lists the devices, and [audio] device in the board file chooses one"
        }
        return DeviceError(operation: op, errno: e, path: device, detail: detail)
    }
}
