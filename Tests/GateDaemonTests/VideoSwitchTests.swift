// SPDX-License-Identifier: Apache-2.0
// The delay mode switched from the page on a running loop: the choice reaches the loop's
// owner once, the video thread starts on the loop's frames and the page's routes with it,
// and switched off the loop lets go of it, the session is closed and the routes answer
// that the mode is off. The choice is kept for the next start.

import Detector
import Engine
import Foundation
import GateConfig
import GateCore
import GateDaemon
import GateSim
import LinuxHardware
import SQLiteStore
import Testing
import VideoDelay
import VideoService
import WebUI

@Suite(.serialized) struct VideoSwitchTests {
    @Test func thePageTurnsTheDelayModeOnAndOff() throws {
        let dir = StateDir()
        let spec = try #require(SceneCatalog.scene("sprint", fps: 30, variant: 0))
        let epoll = try EpollLoop()
        let storage = GateStorage.start(stateDirectory: dir.path, context: RunContext(preset: nil, startType: .flying), log: LocalRaceTests.log)
        defer { _ = storage.stop() }
        let web = try WebGate(gateName: "test", stateDirectory: dir.path, config: EngineConfig(), preset: nil, speedUnit: .metresPerSecond,
                              details: [:], book: storage.book, wakeFD: epoll.wakeFD, log: LocalRaceTests.log, fps: 30)
        var camera = ReplayFrameSource(spec: spec)
        try camera.open()
        let start = camera.start
        var loop = GateLoop(camera: camera, lines: FakeLines(), sound: RecordingBeeper(),
                            detector: PhotoFinishDetector(config: detectorConfig(for: spec), inputWidth: spec.width, inputHeight: spec.height),
                            engine: Engine(config: EngineConfig()))
        let switcher = DelayVideoSwitch(web: web, stateDirectory: dir.path, markButton: true, clickers: false, commits: storage.commits) {
            DelayVideoConfig(width: spec.width, height: spec.height, fps: spec.fps, delay: try DelaySetting(seconds: 1),
                             roll: try RollSetting(preRollSeconds: 0.5, postRollSeconds: 0.2), availableMemory: 32 << 20)
        }
        defer { switcher.stop() }
        // Off at start: the settings offer the switch, the routes say the mode is off.
        #expect(web.bridge.settings.current.delayedVideo == false)
        #expect(web.bridge.video.current == nil && loop.videoTap == nil)
        var t = start
        func step() {
            web.applyCommands(to: &loop, now: t)
            switcher.service(&loop)
            loop.camera.readyUntil = t
            loop.iterate(now: t)
            t = t + .seconds(1 / spec.fps)
        }
        // On from the page: the loop's frames reach the video thread; marks from the button.
        #expect(web.bridge.send(.applySettings(EditableSettings(delayedVideo: true))))
        step()
        #expect(web.takeVideoModeChange() == nil, "the change is taken once")
        let video = try #require(switcher.video)
        #expect(loop.videoTap === video.tap && loop.videoMarks === video.marks && loop.buttonPresses === video.marks)
        #expect(web.bridge.video.current != nil && web.bridge.settings.current.delayedVideo == true)
        // Every frame reaches the tap (a slot is free, or it is counted dropped when the
        // encoder, which runs below the loop's priority, is behind on a busy machine).
        for _ in 0..<30 { step() }
        func waitFor(_ condition: () -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(30)
            while !condition() && Date() < deadline { usleep(2_000) }
            return condition()
        }
        #expect(waitFor { video.status.framesIn + video.status.framesDropped == 30 && video.status.framesEncoded == video.status.framesIn })
        #expect(video.status.framesEncoded > 0)
        // A run the store writes while the mode is on gets its clip once the post-roll is in:
        // started 0.6 s into the frames, 0.3 s long, its 0.2 s of post-roll in by frame 33.
        let runVideos = try #require(switcher.runVideos)
        #expect(web.bridge.runVideos.current != nil)
        storage.recordRace(StoredRun(startType: "flying", distance: 30, wallStartMs: 0, startMonoNs: (start + .seconds(0.6)).nanoseconds,
                                     totalNs: Span.seconds(0.3).nanoseconds, gateCount: 2,
                                     splits: [StoredSplit(gateIndex: 1, distance: 30, timeNs: Span.seconds(0.3).nanoseconds,
                                                          segmentNs: Span.seconds(0.3).nanoseconds, segmentSpeed: 100, syncUncertaintyNs: 0)]))
        for _ in 0..<8 { step() }
        #expect(waitFor { !runVideos.shelf.runs(with: .gate).isEmpty }, "the stored run got no clip")
        if let id = runVideos.shelf.runs(with: .gate).first, let clip = runVideos.shelf.video(run: id, source: .gate) {
            // The first frame at or after 0.1 s, the last at or before 1.1 s (frames 1/30 s apart).
            #expect((0.46...0.5001).contains(clip.startSeconds ?? 0) && (0.93...1.0001).contains(clip.seconds), "\(clip)")
        }
        video.startSession()
        _ = waitFor { video.status.session != nil }
        let session = try #require(video.status.session)
        // "Clear all" while the mode is on: the session being recorded goes on.
        #expect(web.bridge.video.deleteEndedSessions() == 0)
        #expect(video.library.sessions.map(\.id) == [session])
        // Off from the page: the loop lets go of the video, the session is closed.
        #expect(web.bridge.send(.applySettings(EditableSettings(delayedVideo: false))))
        step()
        #expect(switcher.video == nil && loop.videoTap == nil && loop.videoMarks == nil && loop.buttonPresses == nil)
        #expect(web.bridge.video.current == nil && web.bridge.settings.current.delayedVideo == false)
        let library = try ClipLibrary(directory: dir.path + "/video")
        #expect(library.sessions.first { $0.id == session }?.endedAt != nil)
        // "Clear all" while the mode is off: the sessions kept on the card go, folders too.
        #expect(FileManager.default.fileExists(atPath: dir.path + "/video/" + session))
        #expect(web.bridge.video.deleteEndedSessions() == 1)
        #expect(try ClipLibrary(directory: dir.path + "/video").sessions.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/video/" + session))
        #expect(web.bridge.video.deleteEndedSessions() == 0)
        for _ in 0..<5 { step() }
        // Kept for the next start: the page's choice wins over the settings file's.
        let kept = try #require(try PageSettingsFile.load(directory: dir.path))
        #expect(kept.delayedVideo == false)
        let board = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("boards/generic-usb.toml").path
        var settings = try GateSettings(toml: "board = \"\(board)\"\n[video]\ndelay_s = 7\nenabled = true", file: "gate.toml")
        #expect(settings.video?.delaySeconds == 7)
        PageSettingsFile.apply(kept, to: &settings)
        #expect(settings.video == nil)
        PageSettingsFile.apply(EditableSettings(delayedVideo: true), to: &settings)
        #expect(settings.video?.delaySeconds == 7, "turned on, the file's [video] values")
        var plain = try GateSettings(toml: "board = \"\(board)\"", file: "gate.toml")
        PageSettingsFile.apply(EditableSettings(delayedVideo: true), to: &plain)
        #expect(plain.video?.delaySeconds == 5, "turned on without a [video] table: the defaults")
        loop.closeCamera()
    }

    /// Switched on and off ten times, the mode gives back all it took each time: the video
    /// (its threads' owner), its packet ring and its frame tap are freed, and resident
    /// memory ends where it started, give or take a few MB, not ten rings higher.
    @Test func onAndOffTenTimesFreesTheRingEachTime() throws {
        let dir = StateDir()
        let spec = try #require(SceneCatalog.scene("sprint", fps: 30, variant: 0))
        let epoll = try EpollLoop()
        let storage = GateStorage.start(stateDirectory: dir.path, context: RunContext(preset: nil, startType: .flying), log: LocalRaceTests.log)
        defer { _ = storage.stop() }
        let web = try WebGate(gateName: "test", stateDirectory: dir.path, config: EngineConfig(), preset: nil, speedUnit: .metresPerSecond,
                              details: [:], book: storage.book, wakeFD: epoll.wakeFD, log: LocalRaceTests.log, fps: 30)
        var camera = ReplayFrameSource(spec: spec)
        try camera.open()
        var t = camera.start
        var loop = GateLoop(camera: camera, lines: FakeLines(), sound: RecordingBeeper(),
                            detector: PhotoFinishDetector(config: detectorConfig(for: spec), inputWidth: spec.width, inputHeight: spec.height),
                            engine: Engine(config: EngineConfig()))
        let switcher = DelayVideoSwitch(web: web, stateDirectory: dir.path, markButton: true, clickers: false, commits: storage.commits) {
            DelayVideoConfig(width: spec.width, height: spec.height, fps: spec.fps, delay: try DelaySetting(seconds: 1),
                             roll: try RollSetting(preRollSeconds: 0.5, postRollSeconds: 0.2), availableMemory: 256 << 20)
        }
        defer { switcher.stop() }
        func step() {
            web.applyCommands(to: &loop, now: t)
            switcher.service(&loop)
            loop.camera.readyUntil = t
            loop.iterate(now: t)
            t = t + .seconds(1 / spec.fps)
        }
        var before = 0.0
        for round in 0 ..< 10 {
            #expect(web.bridge.send(.applySettings(EditableSettings(delayedVideo: true))))
            step()
            weak let video = switcher.video
            weak let tap = switcher.video?.tap
            #expect(video != nil, "round \(round): the mode did not turn on")
            for _ in 0 ..< 10 { step() }
            #expect(web.bridge.send(.applySettings(EditableSettings(delayedVideo: false))))
            step()
            #expect(switcher.video == nil)
            // Its threads have ended; each lets go of it as it exits, a moment later.
            let deadline = Date().addingTimeInterval(5)
            while video != nil || tap != nil, Date() < deadline { usleep(1_000) }
            #expect(video == nil && tap == nil, "round \(round): the delay video outlived the mode")
            if round == 0 { before = residentMB() }
        }
        let after = residentMB()
        print("delay mode on and off 10 times: resident \(Int(before)) MB after the first, \(Int(after)) MB after the tenth")
        #expect(after - before < 32, "resident memory grew \(Int(after - before)) MB over nine more rounds")
        loop.closeCamera()
    }
}
