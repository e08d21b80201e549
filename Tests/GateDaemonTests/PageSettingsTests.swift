// SPDX-License-Identifier: Apache-2.0
// Settings changed on the page: applied to the loop between runs, kept in the state
// directory, and applied again at the next start; refused during a run.

import Detector
import Engine
import Foundation
import GateConfig
import GateCore
import GateDaemon
import GateSim
import LinuxHardware
import PhotoFinish
import Logging
import SQLiteStore
import Testing
import WebUI

@Suite(.serialized) struct PageSettingsTests {
    static let change = EditableSettings(startType: "countdown", marksPause: .init(min: 4, max: 6), setPause: .init(min: 1, max: 1.5),
                                         startSound: "whistle", crossingLED: false, buzzer: false, crossingSound: true,
                                         spokenTime: true, speedUnit: "km/h", fps: 60, minHeight: 0.5)

    @Test func aChangeFromThePageReachesTheLoopAndIsKept() throws {
        let dir = StateDir()
        let spec = try #require(SceneCatalog.scene("sprint", fps: 120, variant: 2))
        let epoll = try EpollLoop()
        let now = Sys.monotonicNow()
        let storage = GateStorage.start(stateDirectory: dir.path, context: RunContext(preset: nil, startType: .flying), log: LocalRaceTests.log)
        let web = try WebGate(gateName: "test", stateDirectory: dir.path, config: EngineConfig(), preset: nil, speedUnit: .metresPerSecond,
                              details: [:], book: storage.book, wakeFD: epoll.wakeFD, log: LocalRaceTests.log, fps: 120)
        let gate = try LocalGate(spec: spec, engine: EngineConfig(), storage: storage, web: web, peer: nil,
                                 stateDirectory: dir.path, epoll: epoll, now: now, log: LocalRaceTests.log,
                                 clip: { SceneCatalog.scene("sprint", fps: $0, variant: 2) })
        defer { _ = gate.stop() }
        #expect(web.bridge.settings.current.startType == "flying")
        #expect(gate.loop.photoFinish?.config.fps == 120)
        #expect(web.bridge.send(.applySettings(Self.change)))
        gate.step(now: now + .milliseconds(10))
        let c = gate.loop.engine.config
        #expect(c.startType == .countdown && c.marksPause == 4...6 && c.setPause == 1...1.5 && c.startSound == .whistle)
        #expect(!c.crossingLED && !c.crossingBuzzer && c.crossingSound && c.spokenTime)
        #expect(gate.loop.detector.config.minCrossingHeight == 0.5, "a new detector for the body size")
        // The page reads them back; the speed unit is the page's. The camera (the clip
        // here) runs at the new frame rate from the next pass, and the photo finish's ring
        // follows it.
        let shown = web.bridge.settings.current
        #expect(shown.startType == "countdown" && shown.speedUnit == "km/h" && shown.fps == 60 && shown.minHeight == 0.5)
        #expect(gate.spec.fps == 60 && web.bridge.settings.runningFPS == 60)
        #expect(gate.loop.photoFinish?.config.fps == 60)
        #expect(web.takeFrameRateChange() == nil, "the change is taken once")
        #expect(web.server.settings.speedUnit == "km/h")
        #expect(web.bridge.snapshot.read().snapshot.settingsVersion == 2, "the settings, then the camera's rate")
        // Kept, and applied over the settings file at the next start.
        let kept = try #require(try PageSettingsFile.load(directory: dir.path, startTypes: StartType.allCases.map(\.rawValue),
                                                          presets: Preset.all.map(\.id)))
        #expect(kept.startType == "countdown" && kept.fps == 60 && kept.minHeight == 0.5 && kept.crossingSound == true)
        var engine = EngineConfig()
        PageSettingsFile.apply(kept, to: &engine)
        #expect(engine == c)
        // A preset sets its start type; one with distances to choose from runs over the one
        // chosen, and a distance alone changes it (kept for the next start too).
        #expect(web.bridge.send(.applySettings(EditableSettings(preset: "flying", distance: 20))))
        gate.step(now: now + .milliseconds(12))
        #expect(web.preset?.id == "flying" && web.preset?.distance == 20 && web.bridge.settings.current.distance == 20)
        #expect(web.bridge.snapshot.read().snapshot.distanceMetres == 20)
        #expect(web.bridge.send(.applySettings(EditableSettings(distance: 30))))
        gate.step(now: now + .milliseconds(14))
        #expect(web.preset?.distance == 30)
        let keptDistance = try #require(try PageSettingsFile.load(directory: dir.path))
        var restarted: Preset?
        var restartedEngine = EngineConfig()
        PageSettingsFile.apply(keptDistance, to: &restartedEngine, preset: &restarted)
        #expect(restarted?.id == "flying" && restarted?.distance == 30)
        #expect(web.bridge.send(.applySettings(EditableSettings(preset: "flying-20m"))))
        gate.step(now: now + .milliseconds(20))
        #expect(gate.loop.engine.config.startType == .flying && web.bridge.settings.current.preset == "flying-20m")
        #expect(web.bridge.settings.current.distance == nil, "a preset of one distance offers none to choose")
        #expect(web.bridge.send(.arm))
        gate.schedulePass(crossingAt: now + .seconds(1))
        var t = now + .milliseconds(30)
        func running() -> Bool { if case .running = gate.loop.engine.phase { true } else { false } }
        while t < now + .seconds(10), !running() {
            gate.step(now: t)
            t = t + .milliseconds(5)
        }
        try #require(running(), "the flying start did not start a run")
        #expect(web.bridge.send(.applySettings(EditableSettings(startType: "voice", speedUnit: "mph"))))
        gate.step(now: t)
        #expect(gate.loop.engine.config.startType == .flying)
        #expect(web.bridge.settings.current.speedUnit == "km/h")
    }

    @Test func aBrokenFileIsNamedAndLeftAlone() throws {
        let dir = StateDir()
        let types = StartType.allCases.map(\.rawValue), presets = Preset.all.map(\.id)
        #expect(try PageSettingsFile.load(directory: dir.path, startTypes: types, presets: presets) == nil)
        try "{ not json".write(toFile: PageSettingsFile.path(directory: dir.path), atomically: true, encoding: .utf8)
        #expect(throws: PageSettingsError.self) { try PageSettingsFile.load(directory: dir.path, startTypes: types, presets: presets) }
        try #"{"fps": 400}"#.write(toFile: PageSettingsFile.path(directory: dir.path), atomically: true, encoding: .utf8)
        do {
            _ = try PageSettingsFile.load(directory: dir.path, startTypes: types, presets: presets)
            Issue.record("400 fps was taken")
        } catch let e as PageSettingsError {
            #expect(e.description.contains("fps"))
        }
        // A rate a webcam offered on its page (25) is kept for the next start, before the
        // camera is open to say what it offers.
        try #"{"fps": 25}"#.write(toFile: PageSettingsFile.path(directory: dir.path), atomically: true, encoding: .utf8)
        #expect(try PageSettingsFile.load(directory: dir.path, startTypes: types, presets: presets)?.fps == 25)
    }

    @Test func aLongExposureIsNamedOnThePage() throws {
        let dir = StateDir()
        let storage = GateStorage.start(stateDirectory: dir.path, context: RunContext(preset: nil, startType: .flying), log: LocalRaceTests.log)
        let web = try WebGate(gateName: "test", stateDirectory: dir.path, config: EngineConfig(), preset: nil, speedUnit: .metresPerSecond,
                              details: [:], book: storage.book, wakeFD: -1, log: LocalRaceTests.log)
        web.setExposure(.microseconds(2000))
        #expect(web.bridge.snapshot.read().snapshot.camera.exposureMs == 2)
        #expect(web.bridge.snapshot.read().snapshot.camera.exposureWarning == nil)
        web.setExposure(.microseconds(8000))
        #expect(web.bridge.snapshot.read().snapshot.camera.exposureWarning == "exposure 8.0 ms blurs a sprinter: set exposure_us to 4000 or less")
        web.setExposure(nil)
        #expect(web.bridge.snapshot.read().snapshot.camera.exposureMs == nil)
        #expect(web.bridge.snapshot.read().snapshot.camera.exposureWarning == nil, "an automatic exposure is not judged")
        storage.stop()
    }
}
