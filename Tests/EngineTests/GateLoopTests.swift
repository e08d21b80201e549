// SPDX-License-Identifier: Apache-2.0
// The whole loop in virtual time: scene frames, scripted button, recorded LEDs and sounds.

import CMallocCounter
import Detector
import Engine
import GateCore
import GateSim
import PhotoFinish
import Testing
import VideoDelay

typealias SimLoop = GateLoop<ReplayFrameSource, FakeLines, RecordingBeeper>

/// Builds a loop over a scene and runs it frame by frame, `latency` after each frame's time.
func runScene(_ spec: SceneSpec, config: EngineConfig, beeper: RecordingBeeper = RecordingBeeper(),
              before: (inout SimLoop, MonotonicInstant) -> Void = { _, _ in },
              latency: Span = .milliseconds(2)) throws -> (events: [LoopEvent], stats: LoopStats, lines: FakeLines, beeper: RecordingBeeper) {
    var camera = ReplayFrameSource(spec: spec)
    try camera.open()
    let start = camera.start
    let detector = PhotoFinishDetector(config: detectorConfig(for: spec), inputWidth: spec.width, inputHeight: spec.height)
    var loop = SimLoop(camera: camera, lines: FakeLines(), sound: beeper, detector: detector, engine: Engine(config: config))
    final class Box: @unchecked Sendable { var events: [LoopEvent] = [] }
    let box = Box()
    loop.observer = { box.events.append($0) }
    before(&loop, start)
    for i in 0..<(spec.frameCount + 30) {
        let now = start + .seconds(Double(i) / spec.fps) + latency
        loop.camera.readyUntil = now
        loop.iterate(now: now)
    }
    return (box.events, loop.stats, loop.lines, loop.sound)
}

extension Array where Element == LoopEvent {
    var actions: [EngineAction] { compactMap { if case let .action(a, _) = $0 { return a } else { return nil } } }
    var finishedTimes: [Span] { actions.compactMap { if case let .finished(_, t) = $0 { return t } else { return nil } } }
    var startedAt: [MonotonicInstant] { actions.compactMap { if case let .started(at, _) = $0 { return at } else { return nil } } }
}

@Suite("Gate loop")
struct GateLoopTests {
    @Test("flying start over two runners: timed between their crossings, LED pulsed twice")
    func flyingTwoRunners() throws {
        let spec = try #require(SceneCatalog.scene("two-runners", fps: 60, variant: 1))
        let r = try runScene(spec, config: EngineConfig()) { loop, t in loop.command(.arm, now: t) }
        let truth = spec.expectedCrossings
        #expect(r.stats.crossings == 2)
        let time = try #require(r.events.finishedTimes.first)
        #expect(abs(time.seconds - (truth[1].time - truth[0].time)) < 0.006)
        let led = r.lines.writes.filter { $0.role == .crossingLED }.map(\.on)
        #expect(led == [true, false, true, false])
        #expect(r.stats.frames == UInt64(spec.frameCount))
    }

    @Test("countdown from the button: the clock starts at the beep's onset")
    func countdownButton() throws {
        let spec = try #require(SceneCatalog.scene("sprint", fps: 60, variant: 0))
        var config = EngineConfig()
        config.startType = .countdown
        var sceneSpec = spec
        sceneSpec.duration = 5.0
        sceneSpec.runners[0].crossingTime = 4.2
        let r = try runScene(sceneSpec, config: config, beeper: RecordingBeeper(latency: .milliseconds(25))) { loop, t in
            loop.command(.arm, now: t)
            loop.lines.pending = [LineEvent(role: .startButton, edge: .rising, timestamp: t + .milliseconds(100),
                                            lineSequence: 1, globalSequence: 1)]
        }
        let plays = r.beeper.played
        #expect(plays.map(\.sound) == [.countdownTick, .countdownTick, .countdownTick, .beep])
        let onset = try #require(plays.last?.onset)
        #expect(r.events.startedAt == [onset])
        let crossing = ReplayFrameSource(spec: sceneSpec).start + .seconds(4.2)
        let time = try #require(r.events.finishedTimes.first)
        #expect(abs(time.seconds - crossing.since(onset).seconds) < 0.004)
    }

    @Test("without a speaker the start still happens and the error is reported once")
    func noSpeaker() throws {
        var spec = try #require(SceneCatalog.scene("sprint", fps: 30))
        spec.duration = 5
        spec.runners[0].crossingTime = 4.5
        var config = EngineConfig()
        config.startType = .countdown
        var beeper = RecordingBeeper()
        beeper.state = .absent
        let r = try runScene(spec, config: config, beeper: beeper) { loop, t in
            loop.command(.arm, now: t)
            loop.command(.start, now: t)
        }
        #expect(r.events.startedAt.count == 1)
        #expect(r.events.finishedTimes.count == 1)
        let errors = r.events.filter { if case .deviceError = $0 { return true } else { return false } }
        #expect(errors.count == 1)
        #expect(r.stats.deviceErrors == 4)
    }

    @Test("a spoken time reaches the speaker")
    func spokenTime() throws {
        let spec = try #require(SceneCatalog.scene("two-runners", fps: 60, variant: 1))
        var config = EngineConfig()
        config.spokenTime = true
        let r = try runScene(spec, config: config) { loop, t in loop.command(.arm, now: t) }
        let truth = spec.expectedCrossings
        #expect(r.beeper.spoken.count == 1)
        if let s = r.beeper.spoken.first { #expect(abs(s - (truth[1].time - truth[0].time)) < 0.011) }
    }

    @Test("the camera lost mid-run leaves the run running and its start intact")
    func cameraLost() throws {
        var spec = try #require(SceneCatalog.scene("two-runners", fps: 60, variant: 1))
        spec.duration = spec.expectedCrossings[0].time + 0.3  // the clip ends before the second runner
        let r = try runScene(spec, config: EngineConfig()) { loop, t in loop.command(.arm, now: t) }
        #expect(r.events.startedAt.count == 1)
        #expect(r.events.finishedTimes.isEmpty)
        #expect(r.stats.crossings == 1)
    }

    @Test("a loop iteration over frames allocates nothing")
    func noAllocations() throws {
        let spec = try #require(SceneCatalog.scene("sprint", fps: 60, variant: 1))
        var camera = BufferedFrames(spec: spec)
        try camera.open()
        let detector = PhotoFinishDetector(config: detectorConfig(for: spec), inputWidth: spec.width, inputHeight: spec.height)
        var config = EngineConfig()
        config.crossingLED = false
        config.crossingBuzzer = false
        var loop = GateLoop(camera: camera, lines: NoLines(), sound: RecordingBeeper(), detector: detector,
                            engine: Engine(config: config))
        loop.command(.arm, now: MonotonicInstant(nanoseconds: 0))
        // The first iteration writes each line once (the stand-in lines' table grows then).
        loop.camera.readyUntil = MonotonicInstant(seconds: 1)
        loop.iterate(now: MonotonicInstant(seconds: 1))
        #expect(loop.stats.frames == 1, "one frame per iteration")
        sprintgate_alloc_count_begin()
        for i in 1..<spec.frameCount {
            let now = MonotonicInstant(seconds: 1 + Double(i) / spec.fps)
            loop.camera.readyUntil = now
            loop.iterate(now: now)
        }
        let n = sprintgate_alloc_count_end()
        #expect(n == 0, "\(n) allocations")
        #expect(loop.stats.crossings == 1 && loop.stats.frames == UInt64(spec.frameCount))
    }
}

extension GateLoopTests {
    @Test("a loop iteration with the camera view watched allocates nothing, and its pictures carry the detector's bodies")
    func noAllocationsWatched() throws {
        let spec = try #require(SceneCatalog.scene("sprint", fps: 60, variant: 1))
        var camera = BufferedFrames(spec: spec)
        try camera.open()
        let detector = PhotoFinishDetector(config: detectorConfig(for: spec), inputWidth: spec.width, inputHeight: spec.height)
        var loop = GateLoop(camera: camera, lines: NoLines(), sound: RecordingBeeper(), detector: detector, engine: Engine(config: EngineConfig()))
        let preview = FramePreview(frameWidth: spec.width, frameHeight: spec.height, bands: FramePreview.bands(fps: spec.fps))
        loop.preview = preview
        loop.command(.arm, now: MonotonicInstant(nanoseconds: 0))
        loop.camera.readyUntil = MonotonicInstant(seconds: 1)
        loop.iterate(now: MonotonicInstant(seconds: 1))
        var allocations: Int64 = 0
        var pictures = 0, withBodies = 0
        for i in 1..<spec.frameCount {
            let now = MonotonicInstant(seconds: 1 + Double(i) / spec.fps)
            preview.watch(now: now)
            // Only the iteration is counted; taking a picture is the encoder thread's work.
            loop.camera.readyUntil = now
            sprintgate_alloc_count_begin()
            loop.iterate(now: now)
            allocations += sprintgate_alloc_count_end()
            if let p = preview.take() {
                pictures += 1
                if !p.bodies.isEmpty { withBodies += 1 }
                for b in p.bodies { #expect(b.left >= 0 && b.right <= spec.width && b.top >= 0 && b.bottom <= spec.height && b.left < b.right) }
            }
        }
        #expect(allocations == 0, "\(allocations) allocations")
        #expect(pictures >= Int(Double(spec.frameCount) / spec.fps / 0.2) - 1, "\(pictures) pictures")
        #expect(withBodies >= 1, "the sprinter was never boxed; copied \(preview.copied), skipped \(preview.skipped), frames \(loop.stats.frames)")
    }
}

extension GateLoopTests {
    @Test("with the video tap on, a loop iteration allocates nothing, every frame reaches the tap whole, and the crossings and times are those without it (3 scenes)",
          arguments: [("two-runners", 60.0, 1), ("sprint", 120.0, 0), ("sprint", 30.0, 2)])
    func videoTap(scene: String, fps: Double, variant: Int) throws {
        let spec = try #require(SceneCatalog.scene(scene, fps: fps, variant: variant))
        let off = try runScene(spec, config: EngineConfig()) { loop, t in loop.command(.arm, now: t) }
        // A tap with room for every frame, so nothing is dropped and each copy can be checked.
        let tap = FrameTap(slots: spec.frameCount + 1, width: spec.width, height: spec.height, bytesPerRow: spec.width, format: .gray8)
        let on = try runScene(spec, config: EngineConfig()) { loop, t in
            loop.videoTap = tap
            loop.command(.arm, now: t)
        }
        let crossings = { (events: [LoopEvent]) in events.compactMap { e -> String? in if case let .crossing(c) = e { return "\(c)" } else { return nil } } }
        #expect(crossings(on.events) == crossings(off.events))
        #expect(on.events.finishedTimes == off.events.finishedTimes)
        #expect(on.stats.crossings == off.stats.crossings)
        #expect(!crossings(off.events).isEmpty)
        #expect(tap.copied == UInt64(spec.frameCount) && tap.dropped == 0)
        let renderer = SceneRenderer(spec: spec)
        var expected = [UInt8](repeating: 0, count: spec.width * spec.height)
        for i in 0..<spec.frameCount {
            let slot = try #require(tap.next())
            #expect(slot.frame.sequence == UInt64(i))
            expected.withUnsafeMutableBufferPointer { renderer.render(frame: i, into: $0) }
            if i % 17 == 0 { #expect(Array(slot.bytes) == expected, "frame \(i)") }
            tap.release()
        }

        // Allocation: the loop with a small tap that fills up and drops.
        var camera = BufferedFrames(spec: spec)
        try camera.open()
        let detector = PhotoFinishDetector(config: detectorConfig(for: spec), inputWidth: spec.width, inputHeight: spec.height)
        var loop = GateLoop(camera: camera, lines: NoLines(), sound: RecordingBeeper(), detector: detector, engine: Engine(config: EngineConfig()))
        let small = FrameTap(slots: 4, width: spec.width, height: spec.height, bytesPerRow: spec.width, format: .gray8)
        loop.videoTap = small
        loop.command(.arm, now: MonotonicInstant(nanoseconds: 0))
        loop.camera.readyUntil = MonotonicInstant(seconds: 1)
        loop.iterate(now: MonotonicInstant(seconds: 1))
        var allocations: Int64 = 0
        for i in 1..<spec.frameCount {
            let now = MonotonicInstant(seconds: 1 + Double(i) / spec.fps)
            loop.camera.readyUntil = now
            sprintgate_alloc_count_begin()
            loop.iterate(now: now)
            allocations += sprintgate_alloc_count_end()
            // The video thread takes one frame in three.
            if i % 3 == 0, small.next() != nil { small.release() }
        }
        #expect(allocations == 0, "\(allocations) allocations")
        #expect(small.copied + small.dropped == UInt64(spec.frameCount))
        #expect(small.dropped > 0)
    }

    @Test("with a camera that can spare buffers, frames are lent to the video thread instead of copied: no allocation, every frame whole and in order, each buffer back to the camera once copied, the rest taken back before the camera closes (2 scenes)",
          arguments: [("two-runners", 60.0, 1), ("sprint", 120.0, 0)])
    func videoTapLends(scene: String, fps: Double, variant: Int) throws {
        let spec = try #require(SceneCatalog.scene(scene, fps: fps, variant: variant))
        var camera = BufferedFrames(spec: spec)
        camera.spareBuffers = 2
        try camera.open()
        let detector = PhotoFinishDetector(config: detectorConfig(for: spec), inputWidth: spec.width, inputHeight: spec.height)
        var loop = GateLoop(camera: camera, lines: NoLines(), sound: RecordingBeeper(), detector: detector, engine: Engine(config: EngineConfig()))
        let tap = FrameTap(slots: 6, width: spec.width, height: spec.height, bytesPerRow: spec.width, format: .gray8)
        loop.videoTap = tap
        loop.command(.arm, now: MonotonicInstant(nanoseconds: 0))
        let renderer = SceneRenderer(spec: spec)
        var expected = [UInt8](repeating: 0, count: spec.width * spec.height)
        var allocations: Int64 = 0, taken = 0, whole = true, maxHeld = 0
        var last: UInt64?
        for i in 0..<spec.frameCount {
            let now = MonotonicInstant(seconds: 1 + Double(i) / spec.fps)
            loop.camera.readyUntil = now
            if i > 0 { sprintgate_alloc_count_begin() }
            loop.iterate(now: now)
            if i > 0 { allocations += sprintgate_alloc_count_end() }
            maxHeld = max(maxHeld, loop.camera.held)
            // The video thread takes two frames in three.
            if i % 3 != 0, let slot = tap.next() {
                let n = Int(slot.frame.sequence)
                if let l = last, UInt64(n) <= l { whole = false }
                last = UInt64(n)
                expected.withUnsafeMutableBufferPointer { renderer.render(frame: n, into: $0) }
                if n % 7 == 0 { whole = whole && Array(slot.bytes) == expected }
                taken += 1
                tap.release()
            }
        }
        #expect(allocations == 0, "\(allocations) allocations")
        #expect(whole)
        #expect(tap.lent > 0 && tap.copied > 0, "lent \(tap.lent), copied \(tap.copied)")
        #expect(tap.lent + tap.copied + tap.dropped == UInt64(spec.frameCount))
        // The loop held at most its spare buffers on loan (it holds none of its own between iterations).
        #expect(maxHeld <= 2)
        #expect(loop.camera.released + loop.camera.held == spec.frameCount)
        loop.closeCamera()
        #expect(loop.camera.held == 0 && loop.camera.state == .closed)
        #expect(taken > 0)
    }
}

/// Pre-rendered frames served without any work per frame (for allocation counting).
struct BufferedFrames: FrameSource, ~Copyable {
    let spec: SceneSpec
    let frames: UnsafeMutableBufferPointer<UInt8>
    var next = 0
    var state: DeviceState = .closed
    /// Frames whose timestamp is at or before this are ready: the test sets it to each
    /// iteration's `now`, so one frame comes per iteration as a camera delivers them.
    var readyUntil = MonotonicInstant(nanoseconds: 0)
    /// Leases the loop may hold (its frames stay in place), and the leases out now.
    var spareBuffers = 0
    var held = 0
    var released = 0
    init(spec: SceneSpec) {
        self.spec = spec
        let n = spec.width * spec.height
        frames = .allocate(capacity: n * spec.frameCount)
        let r = SceneRenderer(spec: spec)
        for i in 0..<spec.frameCount { r.render(frame: i, into: UnsafeMutableBufferPointer(rebasing: frames[(i * n)..<((i + 1) * n)])) }
    }
    deinit { frames.deallocate() }
    var fileDescriptor: Int32 { -1 }
    mutating func open() throws(DeviceError) { state = .streaming }
    mutating func nextFrame() -> FrameLease? {
        guard next < spec.frameCount, state == .streaming, MonotonicInstant(seconds: 1 + Double(next) / spec.fps) <= readyUntil else { return nil }
        let n = spec.width * spec.height
        let v = FrameView(base: UnsafeRawPointer(frames.baseAddress! + next * n), width: spec.width, height: spec.height,
                          bytesPerRow: spec.width, format: .gray8, sequence: UInt64(next),
                          timestamp: MonotonicInstant(seconds: 1 + Double(next) / spec.fps))
        next += 1
        held += 1
        return FrameLease(view: v, slot: 0, droppedBefore: 0)
    }
    mutating func release(_ lease: FrameLease) {
        held -= 1
        released += 1
    }
    mutating func close() {
        precondition(held == 0, "every lease must be released before the camera closes")
        state = .closed
    }
}

extension GateLoopTests {
    @Test("delay mode: with the button marking, a press asks for a mark at its kernel time and does not arm the gate; the press beeps and flashes the crossing LED for 150 ms at once, its later confirmation adds nothing; iterations between allocate nothing")
    func buttonMarks() throws {
        let spec = try #require(SceneCatalog.scene("sprint", fps: 60, variant: 0))
        var camera = BufferedFrames(spec: spec)
        try camera.open()
        let detector = PhotoFinishDetector(config: detectorConfig(for: spec), inputWidth: spec.width, inputHeight: spec.height)
        var loop = GateLoop(camera: camera, lines: FakeLines(), sound: RecordingBeeper(), detector: detector, engine: Engine(config: EngineConfig()))
        let marks = MarkRequests()
        loop.videoMarks = marks
        loop.buttonPresses = marks
        let press = MonotonicInstant(seconds: 1.2)
        loop.lines.pending = [LineEvent(role: .startButton, edge: .rising, timestamp: press, lineSequence: 1, globalSequence: 1),
                              LineEvent(role: .startButton, edge: .falling, timestamp: press + .milliseconds(80), lineSequence: 2, globalSequence: 2)]
        let phase = loop.engine.phase
        var allocations: Int64 = 0
        var requested: [MonotonicInstant] = []
        var flashedAt: MonotonicInstant?, darkAt: MonotonicInstant?
        for i in 0..<90 {
            let now = MonotonicInstant(seconds: 1 + Double(i) / 60)
            loop.camera.readyUntil = now
            // The stand-in lines and beeper allocate as they record; iterations where they
            // record (the press, the beep, the flash's end) are not counted.
            let recorded = (loop.lines.writes.count, loop.sound.played.count, loop.lines.pending.count)
            if i > 1 { sprintgate_alloc_count_begin() }
            loop.iterate(now: now)
            if i > 1 {
                let n = sprintgate_alloc_count_end()
                if (loop.lines.writes.count, loop.sound.played.count, loop.lines.pending.count) == recorded { allocations += n }
            }
            // The video thread takes the request and confirms it, eight frames later.
            if i == 20 {
                marks.take { requested.append($0) }
                marks.confirm()
            }
            let lit = loop.lines.levels[.crossingLED] ?? false
            if lit && flashedAt == nil { flashedAt = now }
            if !lit, flashedAt != nil, darkAt == nil { darkAt = now }
        }
        #expect(requested == [press])
        #expect(loop.engine.phase == phase, "the button reached the engine")
        #expect(loop.sound.played.map(\.sound) == [.beep])
        let on = try #require(flashedAt), off = try #require(darkAt)
        // The press's own beep and flash come in the iteration that reads it; the video
        // thread's confirmation of that mark (frame 20) adds none.
        #expect(on == press)
        #expect(off.since(on) >= .milliseconds(150) && off.since(on) < .milliseconds(170))
        #expect(allocations == 0, "\(allocations) allocations")
        loop.closeCamera()

        // Without `buttonPresses` the button is the gate's again (a mark from elsewhere
        // is still confirmed).
        var camera2 = BufferedFrames(spec: spec)
        try camera2.open()
        var plain = GateLoop(camera: camera2, lines: FakeLines(), sound: RecordingBeeper(),
                             detector: PhotoFinishDetector(config: detectorConfig(for: spec), inputWidth: spec.width, inputHeight: spec.height),
                             engine: Engine(config: EngineConfig()))
        let others = MarkRequests()
        plain.videoMarks = others
        plain.lines.pending = [LineEvent(role: .startButton, edge: .rising, timestamp: press, lineSequence: 1, globalSequence: 1)]
        plain.iterate(now: MonotonicInstant(seconds: 1.3))
        var left = 0
        others.take { _ in left += 1 }
        #expect(left == 0 && plain.stats.lineEvents == 1)
        // A mark from the page (confirmed by the video thread) beeps and flashes.
        others.confirm()
        plain.iterate(now: MonotonicInstant(seconds: 1.32))
        #expect(plain.sound.played.map(\.sound) == [.beep] && plain.lines.levels[.crossingLED] == true)
        plain.closeCamera()
    }
}

extension GateLoopTests {
    @Test("a mark taken during a countdown flashes the LED but does not beep: the countdown's sounds and the clock's start are as without it")
    func markDuringCountdown() throws {
        let spec = try #require(SceneCatalog.scene("sprint", fps: 60, variant: 0))
        var config = EngineConfig()
        config.startType = .countdown
        var camera = BufferedFrames(spec: spec)
        try camera.open()
        var loop = GateLoop(camera: camera, lines: FakeLines(), sound: RecordingBeeper(latency: .milliseconds(25)),
                            detector: PhotoFinishDetector(config: detectorConfig(for: spec), inputWidth: spec.width, inputHeight: spec.height),
                            engine: Engine(config: config))
        let marks = MarkRequests()
        loop.videoMarks = marks
        loop.command(.arm, now: MonotonicInstant(seconds: 1))
        loop.lines.pending = [LineEvent(role: .startButton, edge: .rising, timestamp: MonotonicInstant(seconds: 1.01), lineSequence: 1, globalSequence: 1)]
        var flashedDuringCountdown = false
        for i in 0..<(8 * 60) {
            let now = MonotonicInstant(seconds: 1.02 + Double(i) / 60)
            loop.camera.readyUntil = now
            loop.iterate(now: now)
            if i == 30 {
                #expect({ if case .starting = loop.engine.phase { return true } else { return false } }(), "\(loop.engine.phase)")
                marks.confirm()
            }
            if i == 31 { flashedDuringCountdown = loop.lines.levels[.crossingLED] == true }
        }
        #expect(flashedDuringCountdown)
        #expect(loop.sound.played.map(\.sound) == [.countdownTick, .countdownTick, .countdownTick, .beep])
        #expect({ if case .running(let start) = loop.engine.phase { return start == loop.sound.played.last?.onset } else { return false } }(),
                "\(loop.engine.phase)")
        loop.closeCamera()
    }
}

@Suite("Feedback cues")
struct FeedbackCueTests {
    @Test("cues from another thread (the GPS timer) played after the loop's pass: the cue's sound, the crossing LED and the buzzer for the cue's time; no sound while a run is started or timed; passes with none waiting allocate nothing; a full queue counts what it drops")
    func cues() {
        var lines = FakeLines(), sound = RecordingBeeper(), player = CuePlayer()
        let cues = FeedbackCues.cues()
        var allocations: Int64 = 0
        var lit: [GPIORole: (on: MonotonicInstant?, off: MonotonicInstant?)] = [:]
        for i in 0..<120 {
            let now = MonotonicInstant(seconds: 1 + Double(i) / 100)
            if i == 10 { cues.push(.mark) }
            if i == 50 { cues.push(.done) }
            let recorded = (lines.writes.count, sound.played.count)
            if i > 1 { sprintgate_alloc_count_begin() }
            player.serve(cues, lines: &lines, sound: &sound, quiet: false, now: now)
            if i > 1 {
                let n = sprintgate_alloc_count_end()
                if (lines.writes.count, sound.played.count) == recorded { allocations += n }
            }
            for role in [GPIORole.crossingLED, .buzzer] {
                let on = lines.levels[role] ?? false
                if on && (lit[role]?.on == nil || lit[role]?.off != nil) { lit[role] = (now, nil) }
                if !on, let started = lit[role]?.on, lit[role]?.off == nil { lit[role] = (started, now) }
            }
            if i == 40 {
                // The mark: a beep and 150 ms of the crossing LED, no buzz.
                #expect(sound.played.map(\.sound) == [.beep])
                let flash = lit[.crossingLED]
                #expect(flash?.on == MonotonicInstant(seconds: 1.10) && flash?.off.map { $0.since(flash!.on!) } == .milliseconds(150))
                #expect(lit[.buzzer] == nil)
            }
        }
        // Complete: the crossing sound, 600 ms of light and 200 ms of buzz.
        #expect(sound.played.map(\.sound) == [.beep, .crossing])
        let flash = lit[.crossingLED], buzz = lit[.buzzer]
        #expect(flash?.on == MonotonicInstant(seconds: 1.50) && flash?.off.map { $0.since(flash!.on!) } == .milliseconds(600))
        #expect(buzz?.on == MonotonicInstant(seconds: 1.50) && buzz?.off.map { $0.since(buzz!.on!) } == .milliseconds(200))
        #expect(allocations == 0, "\(allocations) allocations")
        #expect(player.lastError == nil)
        // While a run is started or timed: the light, no sound.
        cues.push(.mark)
        player.serve(cues, lines: &lines, sound: &sound, quiet: true, now: MonotonicInstant(seconds: 3))
        #expect(sound.played.count == 2 && lines.levels[.crossingLED] == true)
        #expect(CuePlayer.quiet(.starting(step: 1)) && CuePlayer.quiet(.running(start: MonotonicInstant(seconds: 1))))
        #expect(!CuePlayer.quiet(.armed) && !CuePlayer.quiet(.idle))
        // Nobody taking them: the 17th is dropped and counted.
        let stalled = FeedbackCues.cues()
        #expect((0 ..< 16).allSatisfy { _ in stalled.push(.mark) })
        #expect(!stalled.push(.fault) && stalled.dropped == 1 && stalled.count == 16)
    }
}
