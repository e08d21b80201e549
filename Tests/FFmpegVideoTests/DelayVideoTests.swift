// SPDX-License-Identifier: Apache-2.0
// The video thread end to end on a manual clock: frames through the tap, the delayed view,
// a mark cut into an MP4 with its thumbnail, a quick save, and the library on disk.

import FFmpegVideo
import Archery
import Foundation
import GateCore
import Logging
import Synchronization
import Testing
import VideoDelay
import VideoService

/// A clock the test moves.
final class TestClock: Sendable {
    private let ns = Atomic<Int64>(0)
    func set(_ t: MonotonicInstant) { ns.store(t.nanoseconds, ordering: .relaxed) }
    var now: MonotonicInstant { MonotonicInstant(nanoseconds: ns.load(ordering: .relaxed)) }
}

/// Waits up to `seconds` of real time for `condition`.
func eventually(_ seconds: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(1_000)
    }
    return condition()
}

@Suite("Delay video thread", .serialized)
struct DelayVideoTests {
    @Test("10 s of frames: the delayed view shows the frame 1 s old, a mark cuts the 2 s before it and 0.5 s after, a button press marks what the view showed at the press, a quick save keeps the buffer, a part trimmed out of a clip, the library survives a restart")
    func session() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let scene = MovingScene(width: 320, height: 240, fps: 30)
        let clock = TestClock()
        clock.set(scene.time(0))
        let library = try ClipLibrary(directory: dir + "/video")
        let config = DelayVideoConfig(width: 320, height: 240, fps: 30, delay: try DelaySetting(seconds: 1),
                                      roll: try RollSetting(preRollSeconds: 2, postRollSeconds: 0.5), availableMemory: 64 << 20,
                                      viewMaxWidth: 160)
        let video = DelayVideo(config: config, library: library, clock: { clock.now }, log: Logger(label: "test"))
        video.start()
        defer { video.stop() }
        var mark: Mark?
        var delayedChecked = 0
        // The newest frame captured at or before `t` (frames are 33 333 333 ns apart, so the
        // frame 30 back is 10 ns short of a second old and the one before it is due).
        func due(_ t: MonotonicInstant) -> Int { (0..<300).last { scene.time($0) <= t }! }
        for i in 0..<300 {
            clock.set(scene.time(i))
            let luma = scene.luma(i)
            luma.withUnsafeBytes { p in
                let view = FrameView(base: p.baseAddress!, width: 320, height: 240, bytesPerRow: 320, format: .gray8,
                                     sequence: UInt64(i), timestamp: scene.time(i))
                #expect(video.tap.offer(view))
            }
            #expect(eventually { video.status.framesEncoded == UInt64(i + 1) }, "frame \(i) not encoded")
            video.watch()
            if i >= 40 && i % 10 == 0 {
                // The view shows the newest frame captured at least 1 s before now.
                let expected = UInt64(due(scene.time(i) - .seconds(1)))
                #expect(expected == UInt64(i - 31))
                #expect(eventually { video.latest?.sequence == expected }, "frame \(i): shows \(String(describing: video.latest?.sequence))")
                #expect(video.latest?.width == 160 && video.latest?.height == 120)
                delayedChecked += 1
            }
            if i == 150 { mark = video.mark() }
            // A press of the gate's button (or a clicker) at frame 160, taken by the video thread.
            if i == 160 { video.marks.request(at: scene.time(160)) }
        }
        #expect(delayedChecked == 26)
        // The coach marked at frame 150 what the delayed view showed then: 1 s earlier.
        let m = try #require(mark)
        #expect(m.time == scene.time(150) - .seconds(1))
        let markFrame = due(m.time)
        let firstFrame = (0..<300).first { scene.time($0) >= m.time - .seconds(2) }!
        let lastFrame = due(m.time + .milliseconds(500))
        #expect((markFrame, firstFrame, lastFrame) == (119, 60, 134))
        #expect(eventually { video.status.clipsSaved == 2 })
        #expect(video.marks.confirmed == 2)
        let jpeg = try #require(video.latest?.jpeg)
        #expect(Array(jpeg.prefix(2)) == [0xFF, 0xD8])

        video.quickSave()
        #expect(eventually { video.status.clipsSaved == 3 })
        video.endSession()
        #expect(eventually { video.status.session == nil })
        let saved = video.takeSavedClips()
        #expect(saved.map(\.kind) == ["mark", "mark", "buffer"])
        // The press marked what the delayed view showed then: the frame due 1 s before it.
        #expect(saved[1].markNs == scene.time(due(scene.time(160) - .seconds(1))).nanoseconds)
        let clip = saved[0]
        #expect(clip.index == 1 && clip.markSequence == UInt64(markFrame))
        #expect(clip.startNs == scene.time(firstFrame).nanoseconds && clip.endNs == scene.time(lastFrame).nanoseconds)
        #expect(clip.frames == 75 && !clip.truncatedStart)
        #expect(video.status.framesDropped == 0 && video.status.clipsLost == 0)

        // The clip decodes to the scene's frames 60…135; its thumbnail is the marked frame.
        let file = try MediaFile(path: library.videoPath(clip))
        var first = 0.0, count = 0
        try file.readAll { p, _ in
            if count == 0 { first = psnr(p, scene.luma(60), width: 320) }
            count += 1
        }
        #expect(count == 75)
        #expect(first >= 30)
        let thumb = try Data(contentsOf: URL(fileURLWithPath: library.thumbnailPath(clip)))
        #expect(Array(thumb.prefix(2)) == [0xFF, 0xD8])
        // The quick save holds the whole ring: all 300 frames fit in 64 MB.
        #expect(saved[2].frames == 300)

        // Trim and export: 0.5 s to 1.5 s of the mark's clip, a clip of its own holding the
        // scene's frames 75…105, decoded from the keyframe before (frame 60) behind an edit list.
        #expect(throws: ClipLibraryError.self) { try library.trim(clip.id, from: 2.0, to: 1.0) }
        #expect(throws: ClipLibraryError.self) { try library.trim(clip.id, from: 10, to: 12) }
        #expect(throws: ClipLibraryError.self) { try library.trim("19990101-000000-1", from: 0, to: 1) }
        let part = try library.trim(clip.id, from: 0.5, to: 1.5)
        #expect(part.kind == "trim" && part.index == 4 && part.session == clip.session && part.frames == 31)
        // The file keeps times to the microsecond.
        #expect(abs(part.startNs - scene.time(75).nanoseconds) < 10_000 && abs(part.endNs - scene.time(105).nanoseconds) < 10_000)
        var partFirst = 0.0, partCount = 0
        try MediaFile(path: library.videoPath(part)).readAll { p, t in
            if partCount == 0 {
                partFirst = psnr(p, scene.luma(75), width: 320)
                #expect(abs(t) < 0.001, "the part starts at \(t) s")
            }
            partCount += 1
        }
        #expect(partCount == 31 && partFirst >= 30)
        #expect(FileManager.default.fileExists(atPath: library.thumbnailPath(part)))
        // Nothing is left behind by the refused ones.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir + "/video/" + clip.session).allSatisfy { !$0.hasSuffix(".part") })

        // A restart reads the session back; a clip interrupted by a power cut is cleared.
        FileManager.default.createFile(atPath: dir + "/video/\(clip.session)/6.mp4.part", contents: Data([1, 2, 3]))
        let reopened = try ClipLibrary(directory: dir + "/video")
        #expect(reopened.sessions.count == 1)
        #expect(reopened.sessions[0].endedAt != nil)
        #expect(reopened.clips.map(\.id) == saved.map(\.id) + [part.id])
        #expect(!FileManager.default.fileExists(atPath: dir + "/video/\(clip.session)/6.mp4.part"))
        #expect(reopened.storageBytes > saved[0].bytes)
        // Kept up to date as clips are saved, without statting on each read.
        #expect(library.storageBytes == reopened.storageBytes)
        // Deleting every clip of the ended session removes it.
        #expect(reopened.delete(saved.map(\.id) + [part.id]) == 4)
        #expect(reopened.sessions.isEmpty)
        #expect(reopened.storageBytes == 0)
        #expect(!FileManager.default.fileExists(atPath: library.videoPath(clip)))
    }
}

extension DelayVideoTests {
    @Test("a quick save of a ring that is full and evicts a group at every keyframe: no crash, an MP4 of what was still held, readable whole")
    func quickSaveWhileEvicting() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let scene = MovingScene(width: 320, height: 240, fps: 30)
        let clock = TestClock()
        // 8 Mbit/s into a 1 MiB ring: about a second of video, so every new keyframe group
        // evicts the oldest one while the save copies.
        let rate = 8_000_000
        let config = DelayVideoConfig(width: 320, height: 240, fps: 30, bitsPerSecond: rate, delay: try DelaySetting(seconds: 1),
                                      roll: try RollSetting(preRollSeconds: 1, postRollSeconds: 0),
                                      budget: BufferBudget(availableBytes: 1 << 20, bitsPerSecond: rate, fps: 30))
        let library = try ClipLibrary(directory: dir + "/video")
        let video = DelayVideo(config: config, library: library, clock: { clock.now }, log: Logger(label: "test"))
        video.start()
        defer { video.stop() }
        var asked = false
        for i in 0..<240 {
            clock.set(scene.time(i))
            let luma = scene.luma(i)
            luma.withUnsafeBytes { p in
                _ = video.tap.offer(FrameView(base: p.baseAddress!, width: 320, height: 240, bytesPerRow: 320, format: .gray8,
                                              sequence: UInt64(i), timestamp: scene.time(i)))
            }
            #expect(eventually { video.status.framesEncoded == UInt64(i + 1) })
            if i >= 90 && !asked {
                video.quickSave()
                asked = true
            }
        }
        #expect(eventually { video.status.clipsSaved >= 1 })
        let clip = try #require(video.takeSavedClips().first)
        #expect(clip.kind == "buffer")
        let s = video.status
        #expect(s.bufferBytes <= 1 << 20)
        var count = 0
        try MediaFile(path: library.videoPath(clip)).readAll { _, _ in count += 1 }
        #expect(count >= 10 && count <= 240, "\(count) frames")
    }
}

extension DelayVideoTests {
    @Test("Start session opens one with no mark; stop closes it; start pressed while it closes opens the next one after it; start on an open session keeps it")
    func sessionButtons() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let clock = TestClock()
        let library = try ClipLibrary(directory: dir + "/video")
        // The settings file's archery defaults reach the page through the status.
        let defaults = ScoreSheet(face: .wa40, bow: .compound, arrowDiameter: 9.3, arrowsPerEnd: 3)
        let config = DelayVideoConfig(width: 320, height: 240, fps: 30, delay: try DelaySetting(seconds: 1),
                                      roll: try RollSetting(preRollSeconds: 1, postRollSeconds: 0), availableMemory: 16 << 20,
                                      archery: defaults)
        let video = DelayVideo(config: config, library: library, clock: { clock.now }, log: Logger(label: "test"))
        video.start()
        defer { video.stop() }
        #expect(video.status.archery == defaults)
        #expect(video.status.session == nil)
        video.startSession()
        #expect(eventually { video.status.session != nil })
        let first = try #require(video.status.session)
        #expect(library.sessions.map(\.id) == [first])
        video.startSession()
        usleep(50_000)
        #expect(video.status.session == first && library.sessions.count == 1)
        // Stop, then start at once: the first closes, then a second opens.
        video.endSession()
        video.startSession()
        #expect(eventually { video.status.session != nil && video.status.session != first })
        #expect(library.sessions.count == 2)
        #expect(library.sessions.first { $0.id == first }?.endedAt != nil)
        video.endSession()
        #expect(eventually { video.status.session == nil })
        #expect(library.sessions.allSatisfy { $0.endedAt != nil && $0.clips.isEmpty })
    }
}

extension DelayVideoTests {
    @Test("a session's archery score is kept in the session history (SQLite): placed, dragged and undone arrows read back after a restart, the face locked once arrows are on it, then the session deleted whole; a session an older version kept in its folder's manifest moves into the history")
    func archeryScoreKept() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let clock = TestClock()
        let library = try ClipLibrary(directory: dir + "/video")
        let config = DelayVideoConfig(width: 320, height: 240, fps: 30, delay: try DelaySetting(seconds: 1),
                                      roll: try RollSetting(preRollSeconds: 1, postRollSeconds: 0), availableMemory: 16 << 20)
        let video = DelayVideo(config: config, library: library, clock: { clock.now }, log: Logger(label: "test"))
        video.start()
        video.startSession()
        #expect(eventually { video.status.session != nil })
        let id = try #require(video.status.session)
        video.endSession()
        #expect(eventually { video.status.session == nil })
        video.stop()

        #expect(try library.scoreCard(id) == nil)
        #expect(throws: ClipLibraryError.self) { try library.changeScore(id, .place(FacePoint(x: 0, y: 0))) }
        #expect(throws: ClipLibraryError.self) { try library.scoreCard("19990101-000000") }
        #expect(throws: ClipLibraryError.self) { try library.setUpScore(id, face: .vegas3, bow: .compound, arrowDiameter: 11, arrowsPerEnd: 3) }
        try library.setUpScore(id, face: .vegas3, bow: .compound, arrowDiameter: 9.3, arrowsPerEnd: 3)
        // The 3-spot's top-left spot is centred at (-110, 63.5); a compound archer's ten there
        // is the inner ring only (10 mm), and a 9.3 mm shaft reaches it from 14.65 mm out.
        let spot = TargetFace.vegas3.spotCentres[0]
        try library.changeScore(id, .place(spot))
        try library.changeScore(id, .place(FacePoint(x: spot.x + 14.65, y: spot.y)))
        try library.changeScore(id, .place(FacePoint(x: spot.x + 14.7, y: spot.y)))
        try library.changeScore(id, .move(index: 0, to: FacePoint(x: 0, y: 0)))
        let card = try library.changeScore(id, .undo)
        #expect(card.arrows.map(\.score.label) == ["X", "X", "9"] && card.total == 29)
        let conflict = #expect(throws: ClipLibraryError.self) { try library.setUpScore(id, face: .wa40, bow: .recurve, arrowDiameter: 5.5, arrowsPerEnd: 3) }
        #expect(conflict?.kind == .conflict)

        // A restart reads the sheet back from the database.
        #expect(FileManager.default.fileExists(atPath: dir + "/video/sessions.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: dir + "/video/" + id + "/session.json"))
        let reopened = try ClipLibrary(directory: dir + "/video")
        let back = try #require(try reopened.scoreCard(id))
        #expect(back.face == .vegas3 && back.bow == .compound && back.arrowDiameter == 9.3 && back.arrowsPerEnd == 3)
        #expect(back.arrows == card.arrows)
        #expect(reopened.sessions.first?.endedAt != nil)
        try reopened.deleteSession(id)
        #expect(reopened.sessions.isEmpty && !FileManager.default.fileExists(atPath: dir + "/video/" + id))
        #expect(throws: ClipLibraryError.self) { try reopened.deleteSession(id) }
        #expect(try ClipLibrary(directory: dir + "/video").sessions.isEmpty, "deleted from the database too")

        // An older version's session: a folder with its manifest and a clip. It is read into
        // the database once and then kept there (the manifest is no longer needed).
        let old = "20260101-101500"
        try FileManager.default.createDirectory(atPath: dir + "/video/" + old, withIntermediateDirectories: true)
        let clip = ClipRecord(id: old + "-1", session: old, index: 1, kind: "mark", markNs: 5, markSequence: 9, startNs: 1, endNs: 9,
                              frames: 3, bytes: 4, truncatedStart: false, savedAt: 7)
        let legacy = SessionRecord(id: old, startedAt: 1_767_262_500, endedAt: 1_767_262_600, delaySeconds: 5, preRollSeconds: 5,
                                   postRollSeconds: 2, clips: [clip], archery: card.sheet)
        try JSONEncoder().encode(legacy).write(to: URL(fileURLWithPath: dir + "/video/" + old + "/session.json"))
        FileManager.default.createFile(atPath: dir + "/video/" + old + "/1.mp4", contents: Data([0, 0, 0, 8]))
        #expect(try ClipLibrary(directory: dir + "/video").sessions == [legacy])
        try FileManager.default.removeItem(atPath: dir + "/video/" + old + "/session.json")
        let moved = try ClipLibrary(directory: dir + "/video")
        #expect(moved.sessions == [legacy] && moved.clip(old + "-1") == clip)
        #expect(try moved.scoreCard(old)?.total == 29)
    }

    @Test("a session history written before clips said whether their end was cut opens with every session and clip, each not cut at its end")
    func olderSessionHistoryOpens() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // sessions.sqlite as the release before kept it: the first migration only, one session
        // with a marked clip and a quick save whose start the buffer had cut.
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("StoreFixtures/video-sessions-v1.sqlite").path
        try FileManager.default.createDirectory(atPath: dir + "/video/20261101-093000", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: fixture, toPath: dir + "/video/sessions.sqlite")
        for i in 1...2 { FileManager.default.createFile(atPath: dir + "/video/20261101-093000/\(i).mp4", contents: Data([0, 0, 0, 8])) }
        let library = try ClipLibrary(directory: dir + "/video")
        let session = try #require(library.sessions.first)
        #expect(library.sessions.count == 1 && session.delaySeconds == 5 && session.endedAt == 1_793_526_000)
        #expect(session.clips.map(\.id) == ["20261101-093000-1", "20261101-093000-2"])
        #expect(session.clips.map(\.truncatedStart) == [false, true])
        #expect(session.clips.map(\.truncatedEnd) == [false, false])
        #expect(session.clips.map(\.frames) == [210, 150] && session.clips.map(\.bytes) == [123_456, 65_432])
        let cut = ClipRecord(id: "20261101-093000-3", session: "20261101-093000", index: 3, kind: "mark", markNs: 12_000_000_000,
                             markSequence: 360, startNs: 10_000_000_000, endNs: 12_300_000_000, frames: 69, bytes: 4_000,
                             truncatedStart: false, truncatedEnd: true, savedAt: 1_793_525_430)
        // A record from a release without the key decodes as not cut at its end.
        var json = String(decoding: try JSONEncoder().encode(cut), as: UTF8.self)
        json = json.replacingOccurrences(of: "\"truncatedEnd\":true,", with: "").replacingOccurrences(of: ",\"truncatedEnd\":true", with: "")
        #expect(!json.contains("truncatedEnd"))
        #expect(try JSONDecoder().decode(ClipRecord.self, from: Data(json.utf8)).truncatedEnd == false)
    }
}
