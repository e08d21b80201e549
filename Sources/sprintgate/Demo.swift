// SPDX-License-Identifier: Apache-2.0
// `sprintgate demo`: the gate on the built-in demo clip with stand-in lines and sound.

import ArgumentParser
import Detector
import Engine
import GateCore
import GateSim

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the gate on the built-in demo clip (two sprinters, 120 fps) and print what it does.",
        discussion: """
            The clip is rendered from its scene description, so it ships inside the binary. \
            The gate is armed for a flying start: the first runner's crossing starts the clock \
            and the second's stops it. LEDs and buzzer are simulated and printed.
            """)

    @Flag(help: "Only the crossings, one JSON object per line.")
    var json = false

    func run() throws {
        guard let spec = SceneCatalog.scene("two-runners", fps: 120, variant: 3) else { fail("demo scene missing") }
        if json {
            for c in replayScene(spec) { print(c.json) }
            return
        }
        var camera = ReplayFrameSource(spec: spec, start: MonotonicInstant(nanoseconds: 0))
        do { try camera.open() } catch { fail(error.description) }
        let detector = PhotoFinishDetector(config: detectorConfig(for: spec), inputWidth: spec.width, inputHeight: spec.height)
        var loop = GateLoop(camera: camera, lines: FakeLines(), sound: RecordingBeeper(), detector: detector,
                            engine: Engine(config: EngineConfig()))
        let truth = spec.expectedCrossings
        print("SprintGate demo: \(spec.frameCount) frames \(spec.width)x\(spec.height) at \(Int(spec.fps)) fps, "
            + "gate line at x=\(ClipCrossing.fixed(spec.gateX, 1)), flying start")
        print("")
        final class Clock: @unchecked Sendable { var now = 0.0 }
        let clock = Clock()
        loop.observer = { event in
            switch event {
            case let .crossing(c):
                let t = c.time.seconds
                let nearest = truth.min { abs($0.time - t) < abs($1.time - t) }
                let err = nearest.map { " (true \(ClipCrossing.fixed($0.time, 4)) s, error \(ClipCrossing.fixed((t - $0.time) * 1000, 2)) ms)" } ?? ""
                print("  crossing  \(ClipCrossing.fixed(t, 4)) s ±\(ClipCrossing.fixed(c.uncertainty.milliseconds, 2)) ms  \(c.direction)\(err)")
            case let .action(a, now):
                let at = ClipCrossing.fixed(now.seconds, 3)
                switch a {
                case let .output(role, on): print("  [\(at) s] \(role) \(on ? "on" : "off")")
                case let .started(start, by): print("  [\(at) s] clock started at \(ClipCrossing.fixed(start.seconds, 4)) s (\(by.rawValue))")
                case let .finished(_, time): print("  [\(at) s] finished: \(ClipCrossing.fixed(time.seconds, 3)) s")
                default: break
                }
            case let .statusLight(l):
                print("  [\(ClipCrossing.fixed(clock.now, 3)) s] ready LED: \(l.rawValue)")
            case .line, .deviceError, .statsLine:
                break
            }
        }
        loop.command(.arm, now: MonotonicInstant(nanoseconds: 0))
        for i in 0..<(spec.frameCount + 24) {
            let now = MonotonicInstant(seconds: Double(i) / spec.fps + 0.002)
            clock.now = now.seconds
            loop.camera.readyUntil = now
            loop.iterate(now: now)
        }
        print("")
        print("\(loop.stats.crossings) crossing(s) detected, \(truth.count) expected; "
            + "true time between them \(ClipCrossing.fixed(truth[1].time - truth[0].time, 3)) s.")
    }
}
