// SPDX-License-Identifier: Apache-2.0
// The delay mode on an MJPEG camera: the camera's JPEGs kept in the ring as they came (no
// encoding), the delayed view from them, and a mark's clip encoded to H.264 when it is cut.

import CMJPEG
import FFmpegVideo
import Foundation
import GateCore
import Logging
import Testing
import VideoDelay
import VideoService

@Suite("MJPEG in the ring", .serialized)
struct MJPEGRingTests {
    /// A frame as a UVC camera sends it: baseline JPEG, 4:2:2 with neutral chroma.
    static func jpeg(_ luma: [UInt8], width: Int, height: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: width * height * 2)
        var length = 0
        let r = luma.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { sprintgate_luma_to_jpeg(src.baseAddress, Int32(width), Int32(height), Int32(width), 85, 1, $0.baseAddress, $0.count, &length) }
        }
        precondition(r == 0, "JPEG encoding failed")
        return Array(out.prefix(length))
    }

    @Test("5 s of a camera's JPEGs: kept without encoding (the status says so), the delayed view shows the frame 1 s old, a mark's clip is H.264 holding its window's frames, each within JPEG and H.264 error of the scene")
    func cameraJPEGRing() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let scene = MovingScene(width: 320, height: 240, fps: 30)
        let clock = TestClock()
        clock.set(scene.time(0))
        let config = DelayVideoConfig(width: 320, height: 240, fps: 30, delay: try DelaySetting(seconds: 1),
                                      roll: try RollSetting(preRollSeconds: 1, postRollSeconds: 0.5), availableMemory: 64 << 20,
                                      cameraJPEG: true)
        let video = DelayVideo(config: config, library: try ClipLibrary(directory: dir + "/video"), clock: { clock.now },
                               log: Logger(label: "test"))
        #expect(video.tap.keepsCompressed)
        #expect(video.status.encoder == "MJPEG as the camera sends it")
        video.start()
        defer { video.stop() }
        func due(_ t: MonotonicInstant) -> Int { (0..<150).last { scene.time($0) <= t }! }
        var mark: Mark?
        var checked = 0
        for i in 0..<150 {
            clock.set(scene.time(i))
            let luma = scene.luma(i)
            let jpeg = Self.jpeg(luma, width: 320, height: 240)
            luma.withUnsafeBytes { l in
                jpeg.withUnsafeBytes { j in
                    var view = FrameView(base: l.baseAddress!, width: 320, height: 240, bytesPerRow: 320, format: .gray8,
                                         sequence: UInt64(i), timestamp: scene.time(i))
                    view.compressed = j
                    #expect(video.tap.offer(view))
                }
            }
            #expect(eventually { video.status.framesEncoded == UInt64(i + 1) }, "frame \(i) not kept")
            video.watch()
            if i >= 40 && i % 10 == 0 {
                let expected = UInt64(due(scene.time(i) - .seconds(1)))
                #expect(eventually { video.latest?.sequence == expected }, "frame \(i): shows \(String(describing: video.latest?.sequence))")
                checked += 1
            }
            if i == 100 { mark = video.mark() }
        }
        #expect(checked == 11)
        // The ring holds JPEGs: far more bytes a frame than H.264 would take.
        #expect(video.status.bufferBytes > 150 * 4000)
        let m = try #require(mark)
        #expect(eventually(20) { video.status.clipsSaved == 1 }, "\(video.status)")
        let clip = try #require(video.takeSavedClips().first)
        let first = (0..<150).first { scene.time($0) >= m.time - .seconds(1) }!
        let last = due(m.time + .milliseconds(500))
        #expect(clip.startNs == scene.time(first).nanoseconds && clip.endNs == scene.time(last).nanoseconds)
        let file = try MediaFile(path: video.library.videoPath(clip))
        #expect(file.info.codec == "h264" && file.info.width == 320 && file.info.height == 240)
        var n = 0, worst = Double.infinity
        try file.readAll { p, _ in
            worst = min(worst, psnr(p, scene.luma(first + n), width: 320))
            n += 1
        }
        #expect(n == last - first + 1)
        #expect(worst >= 30, "worst frame \(worst) dB")
        #expect(video.status.framesDropped == 0 && video.status.problem == nil)
    }

    @Test("with the ring keeping JPEGs, a frame that comes without one (the camera changed format) is not kept and the page says what to set")
    func uncompressedFrameRefused() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = DelayVideoConfig(width: 64, height: 48, fps: 30, delay: try DelaySetting(seconds: 1),
                                      roll: try RollSetting(preRollSeconds: 1, postRollSeconds: 0.5), availableMemory: 16 << 20,
                                      cameraJPEG: true)
        let video = DelayVideo(config: config, library: try ClipLibrary(directory: dir + "/video"),
                               clock: { MonotonicInstant(nanoseconds: 1) }, log: Logger(label: "test"))
        video.start()
        defer { video.stop() }
        let luma = [UInt8](repeating: 100, count: 64 * 48)
        luma.withUnsafeBytes { l in
            _ = video.tap.offer(FrameView(base: l.baseAddress!, width: 64, height: 48, bytesPerRow: 64, format: .gray8, sequence: 0,
                                          timestamp: MonotonicInstant(nanoseconds: 1)))
        }
        #expect(eventually { video.status.problem?.contains("not MJPEG: set [video] encoder to auto or libx264") == true }, "\(video.status)")
        #expect(video.status.framesEncoded == 0)
    }
}
