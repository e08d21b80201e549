// SPDX-License-Identifier: Apache-2.0
// The whole loop in virtual time: scene frames, scripted button, recorded LEDs and sounds.

import CMallocCounter
import Detector
import Engine
import GateCore
import GateSim
import Testing

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
        loop.iterate(now: MonotonicInstant(seconds: 1))
        sprintgate_alloc_count_begin()
        for i in 1..<spec.frameCount {
            loop.iterate(now: MonotonicInstant(seconds: 1 + Double(i) / spec.fps))
        }
        let n = sprintgate_alloc_count_end()
        #expect(n == 0, "\(n) allocations")
        #expect(loop.stats.crossings == 1 && loop.stats.frames == UInt64(spec.frameCount))
    }
}

/// Pre-rendered frames served without any work per frame (for allocation counting).
struct BufferedFrames: FrameSource, ~Copyable {
    let spec: SceneSpec
    let frames: UnsafeMutableBufferPointer<UInt8>
    var next = 0
    var state: DeviceState = .closed
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
        guard next < spec.frameCount, state == .streaming else { return nil }
        let n = spec.width * spec.height
        let v = FrameView(base: UnsafeRawPointer(frames.baseAddress! + next * n), width: spec.width, height: spec.height,
                          bytesPerRow: spec.width, format: .gray8, sequence: UInt64(next),
                          timestamp: MonotonicInstant(seconds: 1 + Double(next) / spec.fps))
        next += 1
        // One frame per iteration, as a camera at its frame rate delivers.
        state = .noSignal
        return FrameLease(view: v, slot: 0, droppedBefore: 0)
    }
    mutating func release(_ lease: FrameLease) { state = .streaming }
    mutating func close() { state = .closed }
}
