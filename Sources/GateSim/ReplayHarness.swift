// SPDX-License-Identifier: Apache-2.0
// Replays a recorded or scripted case through the whole gate loop in virtual time and
// renders its outputs as canonical JSON lines for golden-file comparison.

import Detector
public import Engine
public import GateCore

/// A replay case: `case.log` with a header naming the frames (a synthetic scene) and the
/// engine settings, and a body of scripted events (commands and GPIO edges).
///
/// Header keys: `# Scene: NAME fps=F variant=V [duration=S] [crossing=S]` and
/// `# Engine: start_type=T [solo=true] [seed=N] [marks=A-B] [set=A-B] [sound=S]`.
/// Body lines: `C t_ns=… cmd=arm|start|reset|restart` and the `G …` lines of `ReplayEvent`;
/// `restart` persists the engine's state as text and restarts detector and engine from it.
public struct ReplayCase: Sendable {
    public var name: String
    public var scene: SceneSpec
    public var engine: EngineConfig
    public var commands: [(time: MonotonicInstant, command: EngineCommand)] = []
    /// Instants at which the gate restarts: engine state through its text form, detector anew.
    public var restarts: [MonotonicInstant] = []
    public var lines: [LineEvent] = []

    public init(text: String, name: String) throws(ClipError) {
        self.name = name
        var sceneLine: Substring?
        var engineLine: Substring = ""
        var body = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("# Scene:") { sceneLine = line.dropFirst(8).drop { $0 == " " }; continue }
            if line.hasPrefix("# Engine:") { engineLine = line.dropFirst(9).drop { $0 == " " }; continue }
            if line.hasPrefix("C ") {
                var t: Int64?
                var cmd: EngineCommand?
                var restartAt = false
                for token in line.dropFirst(2).split(separator: " ") {
                    if token.hasPrefix("t_ns=") { t = Int64(token.dropFirst(5)) }
                    if token.hasPrefix("cmd=") {
                        switch token.dropFirst(4) {
                        case "arm": cmd = .arm
                        case "start": cmd = .start
                        case "reset": cmd = .reset
                        case "restart": cmd = nil; restartAt = true
                        default: throw ClipError("\(name): unknown command '\(token.dropFirst(4))'")
                        }
                    }
                }
                guard let t, cmd != nil || restartAt else { throw ClipError("\(name): command line needs t_ns= and cmd=: \(line)") }
                if let cmd { commands.append((MonotonicInstant(nanoseconds: t), cmd)) } else { restarts.append(MonotonicInstant(nanoseconds: t)) }
                continue
            }
            body += line + "\n"
        }
        guard let sceneLine else { throw ClipError("\(name): no '# Scene:' header") }
        let parts = sceneLine.split(separator: " ")
        var fps = 60.0, variant = 0
        var duration: Double?, crossing: Double?
        for p in parts.dropFirst() {
            let kv = p.split(separator: "=", maxSplits: 1)
            guard kv.count == 2, let v = Double(kv[1]) else { throw ClipError("\(name): bad scene parameter '\(p)'") }
            switch kv[0] {
            case "fps": fps = v
            case "variant": variant = Int(v)
            case "duration": duration = v
            case "crossing": crossing = v
            default: throw ClipError("\(name): unknown scene parameter '\(kv[0])'")
            }
        }
        guard let first = parts.first, var spec = SceneCatalog.scene(String(first), fps: fps, variant: variant) else {
            throw ClipError("\(name): unknown scene '\(parts.first ?? "")'")
        }
        if let duration { spec.duration = duration }
        if let crossing, !spec.runners.isEmpty { spec.runners[spec.runners.count - 1].crossingTime = crossing }
        scene = spec
        engine = EngineConfig()
        for p in engineLine.split(separator: " ") {
            let kv = p.split(separator: "=", maxSplits: 1)
            guard kv.count == 2 else { throw ClipError("\(name): bad engine setting '\(p)'") }
            let v = String(kv[1])
            func range(_ s: String) throws(ClipError) -> ClosedRange<Double> {
                let ab = s.split(separator: "-")
                guard ab.count == 2, let a = Double(ab[0]), let b = Double(ab[1]), a <= b else {
                    throw ClipError("\(name): bad range '\(s)'")
                }
                return a...b
            }
            switch kv[0] {
            case "start_type":
                guard let st = StartType(rawValue: v) else { throw ClipError("\(name): unknown start type '\(v)'") }
                engine.startType = st
            case "solo": engine.solo = v == "true"
            case "seed": engine.seed = UInt64(v) ?? 0
            case "marks": engine.marksPause = try range(v)
            case "set": engine.setPause = try range(v)
            case "sound":
                guard let s = GateSound(rawValue: v) else { throw ClipError("\(name): unknown sound '\(v)'") }
                engine.startSound = s
            default: throw ClipError("\(name): unknown engine setting '\(kv[0])'")
            }
        }
        let log = try ReplayLog(text: body, name: name)
        for e in log.events {
            if case let .line(l) = e { lines.append(l) } else { throw ClipError("\(name): only C and G lines are scripted") }
        }
    }

    /// Runs the case: frames at their timestamps (frame 0 at 0 ns), each iteration 2 ms
    /// after its frame, scripted edges and commands at their times, a 20 ms speaker
    /// latency. Returns the canonical output lines.
    public func run() -> [String] {
        var camera = ReplayFrameSource(spec: scene, start: MonotonicInstant(nanoseconds: 0))
        var out: [String] = []
        do { try camera.open() } catch { return ["{\"event\":\"error\",\"message\":\"\(error)\"}"] }
        let detector = PhotoFinishDetector(config: detectorConfig(for: scene), inputWidth: scene.width, inputHeight: scene.height)
        var lines = FakeLines()
        lines.pending = self.lines
        var loop = GateLoop(camera: camera, lines: lines, sound: RecordingBeeper(latency: .milliseconds(20)),
                            detector: detector, engine: Engine(config: engine))
        final class Sink: @unchecked Sendable { var lines: [String] = [] ; var now = MonotonicInstant(nanoseconds: 0) }
        let sink = Sink()
        loop.observer = { sink.lines.append(contentsOf: Self.render($0, now: sink.now)) }
        var commands = self.commands[...]
        var restarts = self.restarts[...]
        let frameNs = 1e9 / scene.fps
        // Run two seconds past the clip so timers and pending crossings finish.
        let iterations = scene.frameCount + Int(2 * scene.fps)
        for i in 0..<iterations {
            let now = MonotonicInstant(nanoseconds: Int64((Double(i) * frameNs).rounded()) + 2_000_000)
            sink.now = now
            while let c = commands.first, c.time <= now {
                commands = commands.dropFirst()
                loop.command(c.command, now: now)
            }
            while let r = restarts.first, r <= now {
                restarts = restarts.dropFirst()
                let state = loop.engine.persistentState
                sink.lines.append("{\"t_ns\":\(now.nanoseconds),\"event\":\"restart\",\"state\":\"\(state)\"}")
                _ = loop.restart(restoring: state, now: now)
            }
            loop.camera.readyUntil = now
            loop.iterate(now: now)
        }
        out = sink.lines
        return out
    }

    /// Rounds to 10 µs so results do not depend on the last bits of floating point.
    static func ns(_ t: MonotonicInstant) -> Int64 { round10us(t.nanoseconds) }
    static func ns(_ s: Span) -> Int64 { round10us(s.nanoseconds) }
    static func round10us(_ n: Int64) -> Int64 { (n + 5_000) / 10_000 * 10_000 }

    static func render(_ e: LoopEvent, now: MonotonicInstant) -> [String] {
        let at = "{\"t_ns\":\(now.nanoseconds),"
        switch e {
        case let .crossing(c):
            return [at + "\"event\":\"crossing\",\"time_ns\":\(ns(c.time)),\"direction\":\"\(c.direction)\"}"]
        case let .line(l):
            return [at + "\"event\":\"line\",\"line\":\"\(l.role.rawValue)\",\"edge\":\"\(l.edge)\"}"]
        case .statsLine:
            return []
        case let .statusLight(l):
            return [at + "\"event\":\"ready_led\",\"pattern\":\"\(l.rawValue)\"}"]
        case let .deviceError(d):
            return [at + "\"event\":\"device_error\",\"operation\":\"\(d.operation)\"}"]
        case let .action(a, _):
            switch a {
            case let .output(role, on): return [at + "\"event\":\"gpio\",\"line\":\"\(role.rawValue)\",\"on\":\(on)}"]
            case let .play(s): return [at + "\"event\":\"play\",\"sound\":\"\(s.rawValue)\"}"]
            case let .speakTime(cs): return [at + "\"event\":\"speak\",\"centiseconds\":\(cs)}"]
            case let .started(t, by): return [at + "\"event\":\"started\",\"at_ns\":\(ns(t)),\"by\":\"\(by.rawValue)\"}"]
            case let .startCorrected(t): return [at + "\"event\":\"start_corrected\",\"at_ns\":\(ns(t))}"]
            case let .falseStart(r, t): return [at + "\"event\":\"false_start\",\"at_ns\":\(ns(t)),\"reason\":\"\(r.rawValue)\"}"]
            case let .lap(n, t, split, lap):
                return [at + "\"event\":\"lap\",\"number\":\(n),\"at_ns\":\(ns(t)),\"split_ns\":\(ns(split)),\"lap_ns\":\(ns(lap))}"]
            case let .finished(t, time):
                return [at + "\"event\":\"finished\",\"at_ns\":\(ns(t)),\"time_ns\":\(ns(time))}"]
            case .phase:
                return []
            }
        }
    }
}
