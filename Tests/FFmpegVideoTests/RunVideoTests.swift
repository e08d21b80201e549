// SPDX-License-Identifier: Apache-2.0
// Timed runs' videos: the video thread cuts a run's clip from the pre-roll before its start
// to the post-roll after its finish, with no session; the shelf keeps it across a restart,
// draws the run's times on it once per choice of parts, takes a phone video (refusing what
// is not one), and draws that from the start the coach marks.

import FFmpegVideo
import Foundation
import GateCore
import Logging
import Testing
import VideoDelay
import VideoService

/// The video thread as the run-clip tests use it: 320×240 at 30 fps, a 1 s delay, 1 s of
/// pre-roll and 0.5 s of post-roll, fed a moving scene on a test clock, with its run shelf
/// and clip library under `directory`. Started on creation.
private struct RunClipRig {
    let scene = MovingScene(width: 320, height: 240, fps: 30)
    let clock = TestClock()
    let shelf: RunVideoShelf
    let video: DelayVideo

    init(directory dir: String) throws {
        clock.set(scene.time(0))
        shelf = try RunVideoShelf(directory: dir + "/run-videos")
        let config = DelayVideoConfig(width: 320, height: 240, fps: 30, delay: try DelaySetting(seconds: 1),
                                      roll: try RollSetting(preRollSeconds: 1, postRollSeconds: 0.5), availableMemory: 64 << 20)
        let clock = self.clock
        video = DelayVideo(config: config, library: try ClipLibrary(directory: dir + "/video"), runVideos: shelf,
                           clock: { clock.now }, log: Logger(label: "test"))
        video.start()
    }

    /// Offers frame `i` at its capture time and waits until the thread has encoded it.
    func feed(_ i: Int) {
        clock.set(scene.time(i))
        scene.luma(i).withUnsafeBytes { p in
            #expect(video.tap.offer(FrameView(base: p.baseAddress!, width: 320, height: 240, bytesPerRow: 320, format: .gray8,
                                              sequence: UInt64(i), timestamp: scene.time(i))))
        }
        #expect(eventually { video.status.framesEncoded == UInt64(i + 1) }, "frame \(i) not encoded")
    }
}

@Suite("Run videos", .serialized)
struct RunVideoTests {
    static let facts = RunOverlayFacts(title: "Flying 30 m", athlete: "Ada", total: 1.0,
                                       splits: [.init(label: "10 m", seconds: 0.4, speed: "9.1 m/s")], speed: "8.52 m/s")

    @Test("a run's clip spans the pre-roll before its start to the post-roll after its finish, waits for the post-roll, opens no session, and is kept across a restart")
    func clipOfARun() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let rig = try RunClipRig(directory: dir)
        let (scene, shelf, video) = (rig.scene, rig.shelf, rig.video)
        defer { video.stop() }
        // The run: started 5 ms after frame 45, finished 5 ms after frame 75; stored (and so
        // asked for) at frame 80, before its post-roll is in.
        let start = scene.time(45) + .milliseconds(5), finish = scene.time(75) + .milliseconds(5)
        for i in 0..<120 {
            rig.feed(i)
            if i == 80 { video.clipRun(id: 7, start: start, finish: finish) }
            if i == 88 {
                usleep(50_000)
                #expect(shelf.video(run: 7, source: .gate) == nil, "cut before its post-roll was captured")
            }
        }
        #expect(eventually { shelf.video(run: 7, source: .gate) != nil })
        let record = try #require(shelf.video(run: 7, source: .gate))
        // Frames 16 (the first at or after start − 1 s) to 90 (the last at or before finish + 0.5 s).
        #expect(record.frames == 75 && !record.truncatedStart && !record.truncatedEnd)
        #expect(abs((record.startSeconds ?? 0) - start.since(scene.time(16)).seconds) < 1e-6)
        #expect(abs(record.seconds - scene.time(90).since(scene.time(16)).seconds) < 1e-6)
        #expect(record.width == 320 && record.height == 240)
        #expect(video.status.session == nil, "a run's clip needs no session")
        var first: Double?
        let count = try MediaFile(path: shelf.path(run: 7, source: .gate)).readAll { p, t in
            if first == nil { first = psnr(p, scene.luma(16), width: 320) }
            _ = t
        }
        #expect(count == 75 && (first ?? 0) >= 30, "\(count) pictures, the first at \(first ?? 0) dB against frame 16")
        // Kept across a restart.
        let again = try RunVideoShelf(directory: dir + "/run-videos")
        #expect(again.video(run: 7, source: .gate) == record)
        #expect(again.runs(with: .gate) == [7])
    }

    @Test("a run whose post-roll is not yet recorded when video goes off is cut with what the buffer holds, and its end is marked cut")
    func clipCutWhenVideoGoesOff() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let rig = try RunClipRig(directory: dir)
        let (scene, shelf, video) = (rig.scene, rig.shelf, rig.video)
        // Finished 5 ms after frame 75, its post-roll running to frame 90; video goes off after frame 81.
        let start = scene.time(45) + .milliseconds(5), finish = scene.time(75) + .milliseconds(5)
        for i in 0..<82 {
            rig.feed(i)
            if i == 80 { video.clipRun(id: 9, start: start, finish: finish) }
        }
        video.stop()
        let record = try #require(shelf.video(run: 9, source: .gate))
        // Frames 16 to 81: the end is cut, the start is whole.
        #expect(record.frames == 66 && record.truncatedEnd && !record.truncatedStart)
        #expect(abs(record.seconds - scene.time(81).since(scene.time(16)).seconds) < 1e-6)
        #expect(try RunVideoShelf(directory: dir + "/run-videos").video(run: 9, source: .gate)?.truncatedEnd == true)
    }

    @Test("drawn once per choice of parts and kept; a phone upload that is not a video is refused and deleted; a phone video is drawn from its marked start, upright and trimmed around the run")
    func drawingAndImport() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let shelf = try RunVideoShelf(directory: dir + "/run-videos")
        // A 3 s clip stands in for the gate's, its run starting at 1 s.
        let scene = MovingScene(width: 320, height: 240, fps: 30)
        try OverlayTests().writeClip(scene, frames: 90, to: shelf.partPath(run: 3, source: .gate))
        try shelf.add(RunVideoRecord(runID: 3, source: .gate, startSeconds: 1, width: 320, height: 240, seconds: 3, frames: 90,
                                     bytes: 1, savedAt: 0))
        let all = Set(OverlayPart.allCases)
        let path = try shelf.drawn(run: 3, source: .gate, facts: Self.facts, parts: all)
        #expect(run("/usr/bin/ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                         "stream=codec_name,width,height,nb_read_frames", "-of", "csv=p=0", path])?
            .trimmingCharacters(in: .whitespacesAndNewlines) == "h264,320,240,90")
        let made = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
        usleep(20_000)
        #expect(try shelf.drawn(run: 3, source: .gate, facts: Self.facts, parts: all) == path)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date == made, "drawn again")
        let timeOnly = try shelf.drawn(run: 3, source: .gate, facts: Self.facts, parts: [.time])
        #expect(timeOnly != path && !FileManager.default.fileExists(atPath: path), "the copy of the old choice is kept")
        #expect(throws: ClipLibraryError.self) { try shelf.drawn(run: 4, source: .gate, facts: Self.facts, parts: all) }

        // Not a video: refused with what was wrong, the upload deleted.
        let text = dir + "/run-videos/upload-1.part"
        try Data("lane 4, 10.93\n".utf8).write(to: URL(fileURLWithPath: text))
        let e = #expect(throws: ClipLibraryError.self) { try shelf.importVideo(run: 3, from: text) }
        #expect(e?.kind == .invalid && e?.description.contains("not a video") == true)
        #expect(!FileManager.default.fileExists(atPath: text) && shelf.video(run: 3, source: .phone) == nil)

        // A phone's: stored sideways (display matrix), 3 s; drawn only once its start is marked.
        let flat = dir + "/flat.mp4", phone = dir + "/run-videos/upload-2.part"
        try OverlayTests().writeClip(scene, frames: 90, to: flat)
        #expect(run("/usr/bin/ffmpeg", ["-v", "error", "-i", flat, "-c", "copy", "-metadata:s:v:0", "rotate=90", "-f", "mp4", phone]) != nil)
        let imported = try shelf.importVideo(run: 3, from: phone)
        #expect(imported.width == 240 && imported.height == 320 && imported.startSeconds == nil && imported.frames == 90)
        let unmarked = #expect(throws: ClipLibraryError.self) { try shelf.drawn(run: 3, source: .phone, facts: Self.facts, parts: all) }
        #expect(unmarked?.kind == .conflict && unmarked?.description.contains("mark the frame") == true)
        #expect(throws: ClipLibraryError.self) { try shelf.setStart(run: 3, seconds: -1) }
        #expect(throws: ClipLibraryError.self) { try shelf.setStart(run: 3, seconds: 3.5) }
        #expect(throws: ClipLibraryError.self) { try shelf.setStart(run: 9, seconds: 1) }
        #expect(try shelf.setStart(run: 3, seconds: 0.1).startSeconds == 0.1)
        // Upright, from the video's start (0.1 s − 3 s is before it) to 3 s after the finish (past its end).
        let drawnPhone = try shelf.drawn(run: 3, source: .phone, facts: Self.facts, parts: all)
        #expect(run("/usr/bin/ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                         "stream=width,height,nb_read_frames", "-of", "csv=p=0", drawnPhone])?
            .trimmingCharacters(in: .whitespacesAndNewlines) == "240,320,90")
        // Marked again: a new copy. Deleted: the video, its record and its copies go.
        #expect(try shelf.setStart(run: 3, seconds: 0.5).startSeconds == 0.5)
        #expect(!FileManager.default.fileExists(atPath: drawnPhone))
        shelf.delete(run: 3, source: .phone)
        #expect(shelf.video(run: 3, source: .phone) == nil && shelf.videos(run: 3).map(\.source) == [.gate])
        #expect(try RunVideoShelf(directory: dir + "/run-videos").videos(run: 3).map(\.source) == [.gate])
    }

    @Test("the overlay's layout: the athlete and type at the top, each split from its crossing, the clock until the finish and the time from it, scaled to the short side")
    func layout() {
        let texts = Self.facts.texts(width: 1280, height: 720, start: 2, parts: Set(OverlayPart.allCases))
        func find(_ s: String) -> OverlayText? { texts.first { if case let .fixed(t) = $0.content { return t == s } else { return false } } }
        #expect(find("Ada")?.y == 28 && find("Flying 30 m") != nil)
        #expect(abs((find("10 m  0.400  9.1 m/s")?.from ?? 0) - 2.4) < 1e-9)
        #expect(find("8.52 m/s")?.from == 3)
        let clock = texts.first { if case .clock = $0.content { return true } else { return false } }
        #expect(clock?.until == 3 && clock?.size == 96)
        #expect(find("1.000")?.from == 3)
        // Parts left out are not drawn; a portrait video's sizes follow its width.
        let only = Self.facts.texts(width: 360, height: 640, start: 0, parts: [.time])
        #expect(only.count == 2 && only.allSatisfy { $0.size == 48 })
        #expect(RunOverlayFacts.time(62.3456) == "1:02.346" && RunOverlayFacts.time(9.5) == "9.500")
    }
}
