// SPDX-License-Identifier: Apache-2.0
// One iteration of the gate: frames through the detector, edges and timers through the
// engine, the engine's actions onto lines and sound. The same code runs on hardware and
// in virtual time.

public import Detector
public import GateCore
public import PhotoFinish
public import VideoDelay

/// Counters of the loop, read by the stats line and the status page.
public struct LoopStats: Sendable, Hashable {
    public var frames: UInt64 = 0
    public var dropped: UInt64 = 0
    public var crossings: UInt64 = 0
    public var lineEvents: UInt64 = 0
    /// Output or sound failures (each kind is logged once until it clears).
    public var deviceErrors: UInt64 = 0
    /// Largest delay from a frame's timestamp to the end of its processing, nanoseconds.
    public var worstFrameLatencyNs: Int64 = 0
    public init() {}
}

/// Owns the ports, the detector and the engine, and runs one loop iteration at a time
/// with the iteration's single timestamp. Nothing below it reads a clock.
public struct GateLoop<Camera: FrameSource & ~Copyable, Lines: LineInputs & LineOutputs & ~Copyable, Sound: Beeper & ~Copyable>: ~Copyable {
    public var camera: Camera
    public var lines: Lines
    public var sound: Sound
    public var detector: PhotoFinishDetector
    public var engine: Engine
    public private(set) var stats = LoopStats()
    public private(set) var lastStatus = GateStatus()
    /// The 10-second window behind the stats line.
    public var statsWindow = StatsWindow()
    /// Called with every engine action and every crossing, at configuration time only
    /// (results to storage, the status page, replay recordings).
    public var observer: ((LoopEvent) -> Void)?
    /// The photo-finish ring, fed with every frame; nil records nothing. Set at
    /// configuration time (`PhotoFinishRecorder(config:)` with the detector's gate x).
    public var photoFinish: PhotoFinishRecorder?
    /// Receives each frozen photo-finish capture on the loop thread. It must hand the
    /// capture to another thread to render and encode (`PhotoFinishRenderer`), which
    /// calls `capture.release()` when done; without a receiver captures are released at once.
    /// Why a callback of its own, not a `LoopEvent` case: existing observers switch
    /// over `LoopEvent` exhaustively.
    public var photoFinishObserver: ((PhotoFinishCapture) -> Void)?
    /// The page's camera view: offered every frame, copies a few a second while watched.
    public var preview: FramePreview?
    /// The delayed video's tap: offered every frame, lent to the video thread when the
    /// camera can spare the buffer (the video thread copies it; the loop gives it back to
    /// the camera once copied), else copied whole into a free slot; dropped and counted
    /// when the video thread is behind. Set at configuration time.
    public var videoTap: FrameTap?
    /// The delay mode's marks: every mark taken, from any source, is confirmed by a beep
    /// and a flash of the crossing LED. Set at configuration time.
    public var videoMarks: MarkRequests?
    /// Where the start button's presses go instead of the engine: the delay mode's marks
    /// (`[video] mark_button`), or an area that takes the button (the ski logger with
    /// `[ski] button`); nil, the engine's. Each press is confirmed at once by a beep and a
    /// flash. The appliance chooses it (`ApplianceFeatures`); set between wake-ups.
    public var buttonPresses: MarkRequests?
    private var marksConfirmed: UInt64 = 0
    private var markFlashUntil: MonotonicInstant?
    /// How long the crossing LED flashes for a mark.
    public static var markFlash: Span { .milliseconds(150) }
    /// Frames lent to the video tap and not yet given back to the camera, oldest first.
    private var loans: [(ticket: UInt64, lease: FrameLease)] = []
    private var actions: [EngineAction] = []
    private var lineBuffer: [LineEvent] = []
    private var detection = DetectionSet()
    private var lastError: DeviceError?
    private var lastPlayed: GateSound?
    private var lastRefinedOnset: MonotonicInstant?
    /// The ready LED's current pattern.
    public private(set) var statusLight = StatusLight.off

    public init(camera: consuming Camera, lines: consuming Lines, sound: consuming Sound,
                detector: consuming PhotoFinishDetector, engine: Engine) {
        self.camera = camera
        self.lines = lines
        self.sound = sound
        self.detector = detector
        self.engine = engine
        actions.reserveCapacity(64)
        lineBuffer.reserveCapacity(64)
        loans.reserveCapacity(8)
    }

    /// Runs one iteration at `now` (read once, after the wait for readiness).
    public mutating func iterate(now: MonotonicInstant) {
        if let tap = videoTap { collectLoans(tap) }
        // Input lines first: a button edge is older than a frame that arrives with it.
        var buffer = lineBuffer
        lineBuffer = []
        do {
            try lines.readEvents(now: now) { buffer.append($0) }
        } catch {
            note(error)
        }
        for e in buffer {
            stats.lineEvents += 1
            observer?(.line(e))
            if e.role == .startButton, let presses = buttonPresses {
                // The button is taken (a mark of the delayed video, the ski logger's on and
                // off); a press is the rising edge. Its beep and flash come now, not when
                // the taker gets to the request, so a busy video thread never delays them;
                // a video mark's own confirmation is counted ahead.
                if e.edge == .rising, presses.request(at: e.timestamp) {
                    if presses === videoMarks { marksConfirmed &+= 1 }
                    markFeedback(now: now)
                }
                continue
            }
            step(.line(e), now: now)
        }
        buffer.removeAll(keepingCapacity: true)
        lineBuffer = buffer

        while let lease = camera.nextFrame() {
            let view = lease.view
            stats.frames += 1
            stats.dropped += lease.droppedBefore
            detector.process(view, into: &detection)
            // The gate column and thumbnail are copied before the buffer goes back.
            photoFinish?.record(view)
            if let preview, preview.offer(view) {
                // The picture's overlay: what the detector saw in this frame.
                var i = 0
                while i < detector.bodyCount, i < FramePreview.maxBodies {
                    let b = detector.bodyBox(i)
                    preview.addBody(left: b.left, top: b.top, right: b.right, bottom: b.bottom, small: b.small, vehicle: b.vehicle)
                    i += 1
                }
            }
            if let tap = videoTap {
                collectLoans(tap)
                if loans.count < min(camera.spareBuffers, loans.capacity) {
                    if let ticket = tap.lend(view) { loans.append((ticket, lease)) } else { camera.release(lease) }
                } else {
                    tap.offer(view)
                    camera.release(lease)
                }
            } else {
                camera.release(lease)
            }
            lastStatus = detection.status
            if let c = detection.crossing {
                stats.crossings += 1
                observer?(.crossing(c))
                photoFinish?.crossingReported(c)
            }
            while let capture = photoFinish?.nextFinished() {
                if let photoFinishObserver { photoFinishObserver(capture) } else { capture.release() }
            }
            stats.worstFrameLatencyNs = max(stats.worstFrameLatencyNs, now.since(view.timestamp).nanoseconds)
            statsWindow.add(latency: now.since(view.timestamp), dropped: lease.droppedBefore,
                            detection: detection.crossing != nil, now: now)
            step(.frame(detection, frameTime: view.timestamp), now: now)
        }
        if let marks = videoMarks { confirmMarks(marks, now: now) }
        if let line = statsWindow.line(now: now) { observer?(.statsLine(line)) }
        // The ready LED shows what the gate sees; an unchanged level costs nothing.
        let light = StatusLight(status: lastStatus, camera: camera.state)
        if light != statusLight {
            statusLight = light
            observer?(.statusLight(light))
        }
        do { try lines.set(.readyLED, light.level(at: now)) } catch { note(error) }
        // Keep a playing sound fed; a better onset estimate can move a sound start.
        do { try sound.service() } catch { note(error) }
        if let refined = sound.refinedOnset, refined != lastRefinedOnset, let played = lastPlayed {
            lastRefinedOnset = refined
            step(.soundOnsetRefined(played, onset: refined), now: now)
        }
        step(.tick, now: now)
    }

    /// A beep and a flash of the crossing LED for each new mark taken (the flash alone while
    /// a start is under way); the flash ends `markFlash` later.
    private mutating func confirmMarks(_ marks: MarkRequests, now: MonotonicInstant) {
        // Ahead of the count when the button's own feedback has come first.
        let taken = marks.confirmed
        if taken > marksConfirmed {
            marksConfirmed = taken
            markFeedback(now: now)
        } else if let until = markFlashUntil, now >= until {
            markFlashUntil = nil
            do { try lines.set(.crossingLED, false) } catch { note(error) }
        }
    }

    /// The mark's beep and the start of its flash.
    private mutating func markFeedback(now: MonotonicInstant) {
        markFlashUntil = now + Self.markFlash
        do { try lines.set(.crossingLED, true) } catch { note(error) }
        // Why no beep while the start sounds play or the clock has just started: the
        // beep would cut into them, and the engine refines the start sound's onset from
        // the device for the first moments of the run.
        var quiet = false
        switch engine.phase {
        case .starting: quiet = true
        case .running(let start): quiet = now.since(start) < .seconds(1)
        default: break
        }
        if !quiet {
            do {
                // The beep's onset is not a start sound's: the engine never hears of it.
                lastRefinedOnset = try sound.play(.beep, now: now)
                lastPlayed = nil
            } catch {
                note(error)
            }
        }
    }

    /// Gives the camera back the buffers the video thread has copied.
    private mutating func collectLoans(_ tap: FrameTap) {
        while let first = loans.first, tap.collect(first.ticket) {
            camera.release(first.lease)
            loans.removeFirst()
        }
    }

    /// Takes every frame lent to the video tap back and gives its buffer to the camera (a
    /// frame the video thread has not copied yet is lost to the video, and counted). Call
    /// before the camera is closed or replaced.
    public mutating func reclaimVideoLoans() {
        guard let tap = videoTap else { return }
        for loan in loans {
            tap.reclaim(loan.ticket)
            camera.release(loan.lease)
        }
        loans.removeAll(keepingCapacity: true)
    }

    /// Closes the camera, taking lent frames back first.
    public mutating func closeCamera() {
        reclaimVideoLoans()
        camera.close()
    }

    /// Continues after a restart of the gate: the detector relearns the background and
    /// the engine resumes from its persisted state line (see `Engine.persistentState`).
    public mutating func restart(restoring state: String, now: MonotonicInstant) -> Bool {
        guard let restored = Engine(config: engine.config, restoring: state) else { return false }
        detector.reset()
        engine = restored
        actions.removeAll(keepingCapacity: true)
        engine.refreshOutputs(into: &actions)
        for a in actions {
            observer?(.action(a, now))
            if case let .output(role, on) = a { do { try lines.set(role, on) } catch { note(error) } }
        }
        return true
    }

    /// Passes a user command to the engine.
    public mutating func command(_ c: EngineCommand, now: MonotonicInstant) {
        step(.command(c), now: now)
    }

    /// Replaces the engine's settings (an active run is reset); its actions go to the
    /// lines and the observer like a command's.
    public mutating func reconfigure(_ config: EngineConfig, now: MonotonicInstant) {
        actions.removeAll(keepingCapacity: true)
        engine.reconfigure(config, now: now, into: &actions)
        performActions(now: now)
    }

    private mutating func step(_ input: EngineInput, now: MonotonicInstant) {
        actions.removeAll(keepingCapacity: true)
        engine.step(input, now: now, into: &actions)
        performActions(now: now)
    }

    /// Performs the engine's pending `actions` in order.
    private mutating func performActions(now: MonotonicInstant) {
        var i = 0
        // Why: playing a sound feeds its onset back, which can add actions; index rather
        // than iterate so those run in the same pass.
        while i < actions.count {
            let a = actions[i]
            i += 1
            observer?(.action(a, now))
            switch a {
            case let .output(role, on):
                do { try lines.set(role, on) } catch { note(error) }
            case let .play(s):
                let onset: MonotonicInstant
                do {
                    onset = try sound.play(s, now: now)
                } catch {
                    // Why: without a speaker the gate still times; the clock starts now.
                    note(error)
                    onset = now
                }
                lastPlayed = s
                lastRefinedOnset = onset
                engine.step(.soundOnset(s, onset: onset), now: now, into: &actions)
            case let .speakTime(cs):
                do { try sound.speak(seconds: Double(cs) / 100, now: now) } catch { note(error) }
            default:
                break
            }
        }
    }

    private mutating func note(_ error: DeviceError) {
        stats.deviceErrors += 1
        if lastError != error {
            lastError = error
            observer?(.deviceError(error))
        }
    }
}

/// What a `GateLoop` reports to its observer.
public enum LoopEvent: Sendable {
    case crossing(Crossing)
    case line(LineEvent)
    case action(EngineAction, MonotonicInstant)
    /// A device failed (logged once per distinct error).
    case deviceError(DeviceError)
    /// The fixed-column stats line, once per window (see `StatsWindow.header`).
    case statsLine(String)
    /// The ready LED's pattern changed.
    case statusLight(StatusLight)
}
