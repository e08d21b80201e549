// SPDX-License-Identifier: Apache-2.0
// Start and feedback sounds on an ALSA device, with the instant the first sample reaches the converter.

public import GateCore
public import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The gate's sound output over ALSA.
///
/// `init` opens the board's device (S16_LE, mono if the device takes it else stereo,
/// 48 kHz, 5 ms periods, 200 ms buffer). A device that cannot be opened leaves the
/// beeper `.absent` (or `.busy`) with one logged warning; `play` then throws a
/// `DeviceError` that the daemon may ignore: the gate still times, silently.
///
/// Onset: `play` stops whatever is playing, writes the first buffer of the sound into the
/// prepared stream, starts it and takes one timestamped status. With `delay` the frames
/// still to play before a frame written now and `written` the frames of this sound written
/// so far, the first sample reaches the converter at `t + (delay − written) / rate`, where
/// `t` is the instant at which `delay` was true: the status `htstamp` (CLOCK_MONOTONIC).
/// Why: the kernel refreshes `htstamp` only when the hardware position moves, so right after
/// the start it still holds an older instant (zero on a fresh stream); while the position
/// has not moved since the start, the trigger timestamp is that instant instead
/// (`ALSAPCM.Status.reference`). Drivers advance their position in steps (a DMA period, or
/// a 4 ms timer tick for snd-aloop at HZ=250), so one snapshot can be off by up to a step;
/// `service()` takes a snapshot on every loop iteration while the sound plays and keeps
/// the earliest estimate in `refinedOnset`, which converges on the true onset within the
/// first few position steps.
///
/// Used from the engine thread only. `play` and `service` allocate nothing.
public struct ALSABeeper: Beeper, ~Copyable {
    /// Timing of the last `play`, for logs and contract tests.
    public struct PlayTiming: Sendable, Hashable {
        /// The first status after starting the stream.
        public var status: ALSAPCM.Status
        /// Frames of the sound written before that status.
        public var written: Int
        /// The onset `play` returned, CLOCK_MONOTONIC.
        public var onset: MonotonicInstant
    }

    /// The device's condition: `.streaming` when usable (playing or idle), `.absent` or
    /// `.busy` when it could not be opened.
    public private(set) var state: DeviceState
    /// Why the device is unusable, for the status page; `nil` when it is usable.
    public private(set) var warning: String?
    /// The ALSA device name from the board file.
    public let device: String
    /// Timing of the last `play`.
    public private(set) var lastPlay: PlayTiming?
    /// The earliest onset estimate of the sound playing (or last played), CLOCK_MONOTONIC;
    /// improved by `service()`.
    public private(set) var refinedOnset: MonotonicInstant?

    private var pcm: ALSAPCM?
    private var openError: DeviceError?
    private let bank: SoundBank
    private var sounds: [PCMSound]
    private var current: [Int16] = []
    private var cursor = 0
    private var scratch: UnsafeMutablePointer<Int16>
    private var scratchFrames: Int
    /// Frames per second of the open device.
    public private(set) var rate = SoundBank.rate
    /// Interleaved channels of the open device (1, or 2 when it takes no mono).
    public private(set) var channels = 1
    private let logger: Logger

    /// Opens `config.device`; never throws (see `state` and `warning`).
    public init(config: AudioConfig, sounds: SoundBank, logger: Logger = Logger(label: "sprintgate.audio")) {
        device = config.device
        bank = sounds
        self.logger = logger
        self.sounds = GateSound.allCases.map { sounds[$0] }
        scratch = .allocate(capacity: 1)
        scratchFrames = 0
        state = .closed
        open()
    }

    deinit { scratch.deallocate() }

    /// (Re)opens the device, e.g. after a USB sound card was plugged in.
    public mutating func open() {
        pcm = nil
        do {
            let p = try ALSAPCM(device: device, direction: .playback, rate: SoundBank.rate)
            if p.rate != SoundBank.rate {
                // Why: some hw: devices only run at 44.1 kHz; resampling once here keeps play() cheap.
                sounds = GateSound.allCases.map { bank[$0].resampled(to: p.rate) }
            }
            scratch.deallocate()
            scratchFrames = p.bufferFrames
            scratch = .allocate(capacity: p.bufferFrames * p.channels)
            logger.info("audio device open", metadata: [
                "device": "\(device)", "rate": "\(p.rate)", "channels": "\(p.channels)",
                "period_frames": "\(p.periodFrames)", "buffer_frames": "\(p.bufferFrames)",
            ])
            rate = p.rate
            channels = p.channels
            pcm = consume p
            state = .streaming
            warning = nil
            openError = nil
        } catch {
            state = error.impliedState == .busy ? .busy : .absent
            warning = "no sound: audio device \"\(device)\" cannot be opened (\(error.detail)); the gate still times"
            openError = error
            logger.warning("\(warning!)")
        }
    }

    /// Whether a sound is still being written (call `service()` on each loop iteration).
    public var isPlaying: Bool { cursor < current.count }

    /// Plays one of the gate's sounds now; returns its onset on CLOCK_MONOTONIC. `now` is
    /// the loop's timestamp, used only when the driver gives no timestamp.
    public mutating func play(_ sound: GateSound, now: MonotonicInstant) throws(DeviceError) -> MonotonicInstant {
        try play(samples: sounds[sound.index].samples, now: now)
    }

    /// Speaks `seconds` ("ten point four two") from the number words of the sound bank.
    /// Needs the words rendered by `scripts/make-sounds`; without them it throws.
    public mutating func speak(seconds: Double, now: MonotonicInstant) throws(DeviceError) {
        guard let speech = bank.speech(forSeconds: seconds) else {
            throw DeviceError(operation: "speak", errno: 0, path: device,
                              detail: "no number words in the sound directory; run scripts/make-sounds")
        }
        _ = try play(samples: speech.rate == rate ? speech.samples : speech.resampled(to: rate).samples, now: now)
    }

    /// Plays mono samples at the device rate (`SoundBank.rate` unless the device refused
    /// it); see `play(_:now:)`. Interrupts the sound playing.
    public mutating func play(samples: [Int16], now: MonotonicInstant) throws(DeviceError) -> MonotonicInstant {
        guard pcm != nil else {
            throw openError ?? DeviceError(operation: "snd_pcm_open", errno: ENODEV, path: device, detail: "not open")
        }
        current = samples
        cursor = 0
        refinedOnset = nil
        do {
            try pcm!.reset()
            let first = try fill()
            try pcm!.start()
            let st = try pcm!.currentStatus()
            let onset = onsetEstimate(st, written: first, fallback: now)
            lastPlay = PlayTiming(status: st, written: first, onset: onset)
            refinedOnset = onset
            return onset
        } catch {
            lost(error)
            throw error
        }
    }

    /// Keeps the sound playing: writes what fits and improves `refinedOnset`. Call on every
    /// loop iteration while `isPlaying` (and for ~50 ms after a start sound for the onset).
    /// Allocates nothing.
    public mutating func service() throws(DeviceError) {
        guard pcm != nil, !current.isEmpty else { return }
        do {
            _ = try fill()
            let st = try pcm!.currentStatus()
            // Why: only a running stream whose written count is known at the snapshot gives a
            // valid estimate; the frames written just now are in `cursor`.
            if st.isRunning, st.timestampIsFresh, let r = refinedOnset {
                let est = onsetEstimate(st, written: cursor, fallback: r)
                if est < r { refinedOnset = est }
            }
        } catch {
            lost(error)
            throw error
        }
    }

    private func onsetEstimate(_ st: ALSAPCM.Status, written: Int, fallback: MonotonicInstant) -> MonotonicInstant {
        let rate = Int64(self.rate)
        return st.reference(fallback: fallback) + Span(nanoseconds: Int64(st.delay - written) * 1_000_000_000 / rate)
    }

    /// Writes as much of the current sound as the buffer takes; returns the frames written
    /// so far.
    private mutating func fill() throws(DeviceError) -> Int {
        let ch = channels
        while cursor < current.count {
            let n = min(current.count - cursor, scratchFrames)
            current.withUnsafeBufferPointer { src in
                if ch == 1 {
                    scratch.update(from: src.baseAddress! + cursor, count: n)
                } else {
                    for i in 0..<n {
                        let v = src[cursor + i]
                        for c in 0..<ch { scratch[i * ch + c] = v }
                    }
                }
            }
            switch try pcm!.write(scratch, frames: n) {
            case .processed(let k):
                cursor += k
                if k < n { return cursor }
            case .wouldBlock:
                return cursor
            }
        }
        return cursor
    }

    private mutating func lost(_ error: DeviceError) {
        if error.impliedState == .absent {
            pcm = nil
            state = .absent
            openError = error
            warning = "no sound: audio device \"\(device)\" went away (\(error.detail)); the gate still times"
            logger.warning("\(warning!)")
        }
    }
}
