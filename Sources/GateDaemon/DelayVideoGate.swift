// SPDX-License-Identifier: Apache-2.0
// The delay mode on a gate: the loop's video tap, the video thread, and the page's routes.

import Archery
public import Engine
import Foundation
public import GateCore
import LinuxHardware
import Logging
public import VideoDelay
public import VideoService
import WebUI

/// The page's view of the video thread.
final class DelayVideoDesk: VideoDesk {
    let video: DelayVideo
    init(video: DelayVideo) { self.video = video }

    func watch() { video.watch() }

    func latest() -> DelayedPicture? { video.latest }

    func status() -> VideoStatus {
        var s = video.status
        s.storageBytes = video.library.storageBytes
        return s
    }

    func set(delaySeconds: Double?, preRollSeconds: Double?, postRollSeconds: Double?) throws(VideoDeskError) {
        let s = video.status
        do {
            let delay = try delaySeconds.map { v throws(VideoSettingError) in try DelaySetting(seconds: v) }
            let roll = try RollSetting(preRollSeconds: preRollSeconds ?? s.preRollSeconds, postRollSeconds: postRollSeconds ?? s.postRollSeconds)
            if let delay { video.setDelay(delay) }
            video.setRoll(roll)
        } catch {
            throw VideoDeskError(field: error.field, reason: error.description)
        }
    }

    func mark() -> Int64 { video.mark().time.nanoseconds }
    func startSession() { video.startSession() }
    func endSession() { video.endSession() }
    func quickSave() { video.quickSave() }

    func sessions() -> [SessionRecord] { video.library.sessions.reversed() }

    func files(clip id: String) -> (video: String, thumbnail: String)? {
        guard let c = video.library.clip(id) else { return nil }
        return (video.library.videoPath(c), video.library.thumbnailPath(c))
    }

    func delete(clips ids: [String]) -> Int { video.library.delete(ids) }

    func trim(clip id: String, from: Double, to: Double) throws(VideoDeskError) -> ClipRecord {
        guard video.library.clip(id) != nil else { throw VideoDeskError(.notFound, field: "clip", reason: "there is no clip \(id)") }
        return try desk("from") { () throws(ClipLibraryError) in try video.library.trim(id, from: from, to: to) }
    }

    func deleteEndedSessions() -> Int { video.library.deleteSessions(except: video.status.session) }

    func delete(session id: String) throws(VideoDeskError) {
        if video.status.session == id {
            throw VideoDeskError(.conflict, field: "session", reason: "session \(id) is open: stop it first")
        }
        try desk("session") { () throws(ClipLibraryError) in try video.library.deleteSession(id) }
    }

    func scoreCard(session id: String) throws(VideoDeskError) -> ScoreCard? {
        try desk("session") { () throws(ClipLibraryError) in try video.library.scoreCard(id) }
    }

    func setUpScore(session id: String, face: TargetFace, bow: BowClass, arrowDiameter: Double,
                    arrowsPerEnd: Int) throws(VideoDeskError) -> ScoreCard {
        try desk("arrowDiameter") { () throws(ClipLibraryError) in
            try video.library.setUpScore(id, face: face, bow: bow, arrowDiameter: arrowDiameter, arrowsPerEnd: arrowsPerEnd)
        }
    }

    func changeScore(session id: String, _ change: ScoreChange) throws(VideoDeskError) -> ScoreCard {
        try desk("arrow") { () throws(ClipLibraryError) in try video.library.changeScore(id, change) }
    }

    private func desk<T>(_ field: String, _ body: () throws(ClipLibraryError) -> T) throws(VideoDeskError) -> T {
        try deskCall(field, unknown: "session", body)
    }
}

/// Runs a library call, its refusal told as the page's error on `field` (an unknown
/// session or video on `unknown`).
func deskCall<T>(_ field: String, unknown: String, _ body: () throws(ClipLibraryError) -> T) throws(VideoDeskError) -> T {
    do { return try body() } catch {
        switch error.kind {
        case .unknown: throw VideoDeskError(.notFound, field: unknown, reason: error.description)
        case .conflict: throw VideoDeskError(.conflict, field: field, reason: error.description)
        case .invalid: throw VideoDeskError(.invalid, field: field, reason: error.description)
        case .storage: throw VideoDeskError(.unavailable, field: field, reason: error.description)
        }
    }
}

extension WebGate {
    /// Starts the delay mode on `loop`'s frames: clips under `STATE_DIR/video`, the page's
    /// video routes connected. Returns the video thread (stop it before exit so clips
    /// waiting for their post-roll are cut).
    public func installDelayVideo<C: FrameSource & ~Copyable, L: LineInputs & LineOutputs & ~Copyable, S: Beeper & ~Copyable>(
        on loop: inout GateLoop<C, L, S>, config: DelayVideoConfig, stateDirectory: String,
        runVideos: RunVideoShelf? = nil) throws -> DelayVideo {
        let library: ClipLibrary
        do { library = try ClipLibrary(directory: stateDirectory + "/video") } catch {
            throw WebGateError(description: error.description)
        }
        let video = DelayVideo(config: config, library: library, runVideos: runVideos, clock: { Sys.monotonicNow() },
                               log: Logger(label: "sprintgate.video"))
        loop.videoTap = video.tap
        video.start()
        bridge.video.connect(DelayVideoDesk(video: video))
        return video
    }

    /// Memory available to the ring now (`MemAvailable`), or nil when it cannot be read.
    public static func availableMemory() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8) else { return nil }
        return BufferBudget.memAvailable(meminfo: text)
    }
}

/// The delay mode on a running gate, on and off: started from the settings file at start,
/// switched from the page between runs (`WebGate.takeVideoModeChange`). Owns the video
/// thread and the clicker reader while the mode is on. Loop thread only.
public final class DelayVideoSwitch {
    private let web: WebGate
    private let stateDirectory: String
    private let markButton: Bool
    private let useClickers: Bool
    private let makeConfig: () throws -> DelayVideoConfig
    private let log = Logger(label: "sprintgate.video")
    /// The video thread while the mode is on.
    public private(set) var video: DelayVideo?
    private var clickers: EvdevClickers?
    /// Timed runs' videos (kept while the mode is on, downloadable always); nil when their
    /// folder cannot be made.
    public let runVideos: GateRunVideos?

    /// `makeConfig` gives the video's settings when the mode turns on; `markButton`,
    /// `clickers` and `overlay` are the settings file's `[video]` choices. Each run the store
    /// writes through `commits` gets its clip while the mode is on.
    public init(web: WebGate, stateDirectory: String, markButton: Bool, clickers: Bool, overlay: Set<OverlayPart> = Set(OverlayPart.allCases),
                commits: CommitRelay? = nil, makeConfig: @escaping () throws -> DelayVideoConfig) {
        self.web = web
        self.stateDirectory = stateDirectory
        self.markButton = markButton
        self.useClickers = clickers
        self.makeConfig = makeConfig
        do {
            let runs = GateRunVideos(shelf: try RunVideoShelf(directory: stateDirectory + "/run-videos"), defaultParts: overlay)
            commits?.add { runs.committed($0) }
            web.bridge.runVideos.connect(runs)
            runVideos = runs
        } catch {
            log.error("video: \(error): runs keep no video")
            runVideos = nil
        }
    }

    /// Starts the delay mode on `loop`'s frames: the video thread, the page's routes, marks
    /// from the button (when chosen) and clickers, each confirmed by a beep and a flash.
    public func turnOn<C: FrameSource & ~Copyable, L: LineInputs & LineOutputs & ~Copyable, S: Beeper & ~Copyable>(
        _ loop: inout GateLoop<C, L, S>) throws {
        guard video == nil else { return }
        let v = try web.installDelayVideo(on: &loop, config: try makeConfig(), stateDirectory: stateDirectory,
                                          runVideos: runVideos?.shelf)
        runVideos?.attach(v)
        loop.videoMarks = v.marks
        // With `mark_button` the button marks the video, over an area that held it (which
        // gets it back once the mode is off); without, whoever held it keeps it.
        if markButton { loop.buttonPresses = v.marks }
        if useClickers {
            // A clicker's press marks at once from the reader's thread, so its confirmation
            // (the loop's beep and flash) never waits for the video thread.
            let c = EvdevClickers(log: log) { _, at, _ in v.mark(at: at) }
            c.start()
            clickers = c
        }
        video = v
        web.videoSwitched(on: true)
    }

    /// Stops the delay mode: the loop's lent frames taken back, the open session ended
    /// (its marks cut with what the buffer holds), the threads stopped, the page's video
    /// routes answering that the mode is off. Blocks until the clips are written.
    public func turnOff<C: FrameSource & ~Copyable, L: LineInputs & LineOutputs & ~Copyable, S: Beeper & ~Copyable>(
        _ loop: inout GateLoop<C, L, S>) {
        guard let v = video else { return }
        loop.reclaimVideoLoans()
        loop.videoTap = nil
        if loop.buttonPresses === loop.videoMarks { loop.buttonPresses = nil }
        loop.videoMarks = nil
        web.bridge.video.disconnect()
        v.endSession()
        stop()
        web.videoSwitched(on: false)
        log.notice("video: the delay mode is off")
    }

    /// Each loop iteration: applies the page's choice, if it made one.
    public func service<C: FrameSource & ~Copyable, L: LineInputs & LineOutputs & ~Copyable, S: Beeper & ~Copyable>(
        _ loop: inout GateLoop<C, L, S>) {
        guard let on = web.takeVideoModeChange() else { return }
        if !on {
            turnOff(&loop)
            return
        }
        do { try turnOn(&loop) } catch {
            log.error("video: the page turned the delay mode on, but it cannot start: \(error)")
            web.videoSwitched(on: false)
        }
    }

    /// Stops the threads (at exit; clips waiting for their post-roll are cut first).
    public func stop() {
        runVideos?.attach(nil)
        clickers?.stop()
        clickers = nil
        video?.stop()
        video = nil
    }
}
