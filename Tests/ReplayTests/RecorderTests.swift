// SPDX-License-Identifier: Apache-2.0
// Recording from a camera port: the clip replays to the same crossing and the log matches.

import GateCore
import GateSim
import Testing

@Suite("Recorder")
struct RecorderTests {
    @Test("a recording of a sprint replays to the scene's crossing, with drops and button edges logged")
    func recordAndReplay() throws {
        let dir = ScratchDirectory()
        let spec = try #require(SceneCatalog.scene("sprint", fps: 60, variant: 1))
        var camera = ReplayFrameSource(spec: spec)
        camera.dropping = [70, 71]
        try camera.open()
        var lines = FakeLines()
        let press = camera.timestamp(ofFrame: 10) + .milliseconds(3)
        lines.pending = [LineEvent(role: .startButton, edge: .rising, timestamp: press, lineSequence: 1, globalSequence: 1)]
        // A virtual clock that advances one frame interval per turn.
        var clock = camera.start
        let summary = try recordSession(
            camera: &camera, fps: spec.fps, seconds: 10, directory: dir.path, header: [("Name", "test")],
            now: { clock },
            waitForFrame: { _ in clock = clock + .seconds(1 / spec.fps) },
            pollLines: { now, body throws(DeviceError) in try lines.readEvents(now: now, body) })
        #expect(summary.frames == spec.frameCount - 2)
        #expect(summary.dropped == 2)
        #expect(summary.lineEvents == 1)
        #expect(summary.stateChanges == 1)  // the clip ends: the camera goes absent

        let log = try ReplayLog(path: summary.logPath)
        let frames = log.events.filter { if case .frame = $0 { return true } else { return false } }
        #expect(frames.count == summary.frames)
        #expect(log.events.contains(.line(lines.pendingFree(press))))
        if case let .frame(seq, _, _, _, dropped) = frames[70] {
            #expect(seq == 72 && dropped == 2)
        } else {
            Issue.record("frame 70 missing")
        }

        let reader = try ClipReader(path: summary.clipPath)
        #expect(reader.fps == spec.fps)
        let found = try replayClip(reader, config: detectorConfig(for: spec))
        #expect(found.count == 1)
        if let c = found.first, let truth = spec.expectedCrossings.first {
            // Frames after the drop shift two frames earlier in the clip's own timeline.
            let shifted = truth.time > 70 / spec.fps ? truth.time - 2 / spec.fps : truth.time
            #expect(abs(c.time - shifted) < 0.004)
        }
    }
}

extension FakeLines {
    /// The event as it was scripted (the test needs it after `pending` was consumed).
    func pendingFree(_ t: MonotonicInstant) -> LineEvent {
        LineEvent(role: .startButton, edge: .rising, timestamp: t, lineSequence: 1, globalSequence: 1)
    }
}
