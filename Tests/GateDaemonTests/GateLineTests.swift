// SPDX-License-Identifier: Apache-2.0
// The gate line moved on the camera view: applied to the detector, the photo-finish ring
// and the camera view between runs, kept for the next start, refused during a run.

import Detector
import Engine
import Foundation
import GateCore
import GateDaemon
import GateSim
import LinuxHardware
import Logging
import PhotoFinish
import SQLiteStore
import Testing
import WebUI

@Suite(.serialized) struct GateLineTests {
    @Test func theFileKeepsTheLineForItsWidthOnly() throws {
        let dir = StateDir()
        #expect(GateLineFile.load(directory: dir.path, frameWidth: 640) == nil)
        try GateLineFile.save(directory: dir.path, x: 412.5, frameWidth: 640)
        #expect(GateLineFile.load(directory: dir.path, frameWidth: 640) == 412.5)
        #expect(GateLineFile.load(directory: dir.path, frameWidth: 1280) == nil, "another camera mode ignores it")
        try "x=700 width=640\n".write(toFile: GateLineFile.path(directory: dir.path), atomically: true, encoding: .utf8)
        #expect(GateLineFile.load(directory: dir.path, frameWidth: 640) == nil, "outside the frame")
        try "garbage".write(toFile: GateLineFile.path(directory: dir.path), atomically: true, encoding: .utf8)
        #expect(GateLineFile.load(directory: dir.path, frameWidth: 640) == nil)
        #expect(WebGate.gateLineText(412.5, frameWidth: 640, movedOnPage: true).contains("moved on the camera view"))
    }

    /// A whole gate with its page: the page's command moves the line in the detector, the
    /// photo-finish ring and the camera view, and writes it for the next start.
    @Test func aMoveFromThePageReachesTheLoopAndIsKept() throws {
        let dir = StateDir()
        let spec = try #require(SceneCatalog.scene("sprint", fps: 120, variant: 2))
        let epoll = try EpollLoop()
        let now = Sys.monotonicNow()
        let storage = GateStorage.start(stateDirectory: dir.path, context: RunContext(preset: nil, startType: .flying), log: LocalRaceTests.log)
        let web = try WebGate(gateName: "test", stateDirectory: dir.path, config: EngineConfig(), preset: nil, speedUnit: .metresPerSecond,
                              details: [:], book: storage.book, wakeFD: epoll.wakeFD, log: LocalRaceTests.log)
        let gate = try LocalGate(spec: spec, engine: EngineConfig(), storage: storage, web: web, peer: nil,
                                 stateDirectory: dir.path, epoll: epoll, now: now, log: LocalRaceTests.log)
        defer { _ = gate.stop() }
        let x = Double(spec.width) * 0.3
        #expect(gate.loop.detector.config.gateX != x)
        #expect(web.bridge.send(.setGateLine(x)))
        gate.step(now: now + .milliseconds(10))
        #expect(gate.loop.detector.config.gateX == x)
        #expect(gate.loop.photoFinish?.config.gateX == x)
        #expect(gate.cameraView?.gateX == x)
        #expect(GateLineFile.load(directory: dir.path, frameWidth: spec.width) == x)
        // The settings view's row says so at once.
        #expect(web.server.settings.details["gate line x"]?.hasPrefix("\(x) px of \(spec.width) (moved on the camera view") == true)
        #expect(web.bridge.snapshot.read().snapshot.settingsVersion == 1)
        // During a run the line stays where it is.
        #expect(web.bridge.send(.arm))
        gate.schedulePass(crossingAt: now + .seconds(1))
        let end = now + .seconds(10)
        var t = now + .milliseconds(20)
        func running() -> Bool { if case .running = gate.loop.engine.phase { true } else { false } }
        while t < end, !running() {
            gate.step(now: t)
            t = t + .milliseconds(5)
        }
        try #require(running(), "the flying start did not start a run")
        #expect(web.bridge.send(.setGateLine(10)))
        gate.step(now: t)
        #expect(gate.loop.detector.config.gateX == x)
        #expect(GateLineFile.load(directory: dir.path, frameWidth: spec.width) == x)
    }
}
