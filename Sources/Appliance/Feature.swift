// SPDX-License-Identifier: Apache-2.0
// A product area beside the gate loop, and the list of those a board runs.

public import Engine
public import GateCore
public import Logging
public import VideoDelay

/// One product area of the appliance beside the camera gate: the GPS timer with the ski
/// logger, the rowing hub, MQTT. It is made from its own settings table, starts once the
/// storage and the page it uses are up, gets one turn on the loop's thread per wake-up,
/// and on `stop` frees everything it took (threads, sockets, memory).
///
/// A new area is one type conforming to this and one line where the board's list is made
/// (`ApplianceFeatures.forBoard` for `run`, the demo's own list for `demo --web`); see
/// docs/architecture.md.
public protocol Feature: AnyObject {
    /// The area's name in logs, e.g. `gps`.
    var name: String { get }
    /// Starts its threads and connections. Called once, on the loop's thread.
    func start()
    /// The loop thread's turn, once per wake-up after the frames, at `now`. Allocates
    /// nothing when there is nothing to do.
    func service(now: MonotonicInstant)
    /// Stops what `start` started and frees what the area holds.
    func stop()
    /// The start button, when this area takes its presses (the ski logger with `[ski]
    /// button`): the loop hands each press to it instead of the sprint engine, unless the
    /// delayed video has taken the button first.
    var startButton: MarkRequests? { get }
}

extension Feature {
    public func service(now: MonotonicInstant) {}
    public var startButton: MarkRequests? { nil }
}

/// The areas a board runs, in start order, and the one queue of feedback cues (LED
/// flashes, buzzes, sounds) they share, played through the gate loop's lines and sound.
public final class ApplianceFeatures {
    public private(set) var all: [any Feature] = []
    /// Cues any area pushes, from any thread; played on the loop's thread.
    public let cues = FeedbackCues.cues()
    private var player = CuePlayer()
    public private(set) var isStarted = false
    private let log: Logger

    public init(log: Logger) { self.log = log }

    /// Adds an area; one added after `startAll` starts at once.
    public func add(_ feature: any Feature) {
        all.append(feature)
        if isStarted { feature.start() }
    }

    /// The area called `name`, if the board runs it.
    public func named(_ name: String) -> (any Feature)? { all.first { $0.name == name } }

    public func startAll() {
        isStarted = true
        for f in all { f.start() }
        if !all.isEmpty { log.notice("areas on: \(all.map(\.name).joined(separator: ", "))") }
    }

    /// Stops every area, the last started first.
    public func stopAll() {
        for f in all.reversed() { f.stop() }
        isStarted = false
    }

    /// Each area's turn, then the cues through the loop's lines and sound (no cue's sound
    /// while a run is being started or timed). The start button goes to the first area
    /// that asks for it while nothing else holds it (the delayed video's marks, with
    /// `[video] mark_button`, take it over and give it back).
    public func service<C: FrameSource & ~Copyable, L: LineInputs & LineOutputs & ~Copyable, S: Beeper & ~Copyable>(
        _ loop: inout GateLoop<C, L, S>, now: MonotonicInstant) {
        for f in all { f.service(now: now) }
        if loop.buttonPresses == nil, let (name, presses) = buttonRequest {
            loop.buttonPresses = presses
            log.notice("the start button goes to \(name)")
        }
        player.serve(cues, lines: &loop.lines, sound: &loop.sound, quiet: CuePlayer.quiet(loop.engine.phase), now: now)
    }

    /// The first area that asks for the start button, by name, and its queue.
    public var buttonRequest: (name: String, presses: MarkRequests)? {
        for f in all { if let b = f.startButton { return (f.name, b) } }
        return nil
    }

    /// Who the start button's presses go to, by name: `video` (the delay mode's marks), an
    /// area (`gps`, whose ski logger takes it), or `sprint` (the engine: starts and arms).
    public func buttonOwner<C: FrameSource & ~Copyable, L: LineInputs & LineOutputs & ~Copyable, S: Beeper & ~Copyable>(
        _ loop: borrowing GateLoop<C, L, S>) -> String {
        guard let presses = loop.buttonPresses else { return "sprint" }
        if presses === loop.videoMarks { return "video" }
        return all.first { $0.startButton === presses }?.name ?? "sprint"
    }
}
