// SPDX-License-Identifier: Apache-2.0
// The delayed view on a TV, through the video thread onto a screen in memory: what is
// shown before the buffer holds the delay, the frame due at each instant, turned and
// mirrored as set, and a display that goes away and comes back.

import FFmpegVideo
import Foundation
import GateCore
import GateSim
import Logging
import Synchronization
import Testing
import VideoDelay
import VideoService

@Suite("TV output", .serialized)
struct TVOutputTests {
    /// The scene's bar (x = 6 i mod 320, 23 px wide, luma 220) found on the screen: its
    /// centre along a row (`vertical`: a column bar) or a column, and the bright pixels
    /// counted off it in that line, in screen pixels.
    static func bar(_ s: (pixels: [UInt8], count: Int), screen: MemoryScreen, vertical: Bool, at line: Int) -> Double? {
        let n = vertical ? screen.width : screen.height
        var hits: [Int] = []
        for k in 0..<n {
            let o = vertical ? line * screen.pitch + k * 4 : k * screen.pitch + line * 4
            // White-ish grey: the bar; the scene elsewhere is at most 40 + 120 + 47.
            if s.pixels[o] > 205 && s.pixels[o + 1] > 205 && s.pixels[o + 2] > 205 { hits.append(k) }
        }
        guard let first = hits.first, let last = hits.last, last - first < 60 else { return nil }
        return Double(first + last) / 2
    }

    /// The scene's frame index whose bar is at scene column `x` among frames near `around`.
    static func frame(barAt x: Double, around: Int) -> Int? {
        (around - 20...around + 20).first { abs(Double(($0 * 6) % 320) - x) <= 2.5 }
    }

    @Test("the screen is black with the time to wait until the buffer holds the delay, then shows the frame captured 1 s before each instant, fitted to 16:9 with bars, captioned; mirrored and turned a quarter")
    func delayedOnScreen() throws {
        for view in [ScreenView(), ScreenView(rotation: 90, flip: true)] {
            let dir = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let scene = MovingScene(width: 320, height: 240, fps: 30)
            let clock = TestClock()
            clock.set(scene.time(0))
            let screen = MemoryScreen(width: 640, height: 360, name: "test TV 640×360")
            let config = DelayVideoConfig(width: 320, height: 240, fps: 30, delay: try DelaySetting(seconds: 1),
                                          roll: try RollSetting(preRollSeconds: 1, postRollSeconds: 0.5), availableMemory: 64 << 20,
                                          tv: TVConfig(view: view) { screen })
            let video = DelayVideo(config: config, library: try ClipLibrary(directory: dir + "/video"), clock: { clock.now },
                                   log: Logger(label: "test"))
            video.start()
            defer { video.stop() }
            var checked = 0
            for i in 0..<120 {
                clock.set(scene.time(i))
                scene.luma(i).withUnsafeBytes { p in
                    _ = video.tap.offer(FrameView(base: p.baseAddress!, width: 320, height: 240, bytesPerRow: 320, format: .gray8,
                                                  sequence: UInt64(i), timestamp: scene.time(i)))
                }
                #expect(eventually { video.status.framesEncoded == UInt64(i + 1) })
                if i == 10 {
                    // Nothing is 1 s old yet: black, with the wait written in the top-left corner.
                    #expect(eventually { screen.presented > 0 })
                    let s = screen.shown()
                    var captionBright = 0, elsewhereBright = 0
                    for y in 0..<screen.height {
                        for x in 0..<screen.width where s.pixels[y * screen.pitch + x * 4 + 1] > 128 {
                            if x < 320 && y < 60 { captionBright += 1 } else { elsewhereBright += 1 }
                        }
                    }
                    #expect(captionBright > 50 && elsewhereBright == 0, "caption \(captionBright), elsewhere \(elsewhereBright)")
                    #expect(video.status.tv == "test TV 640×360")
                }
                guard i >= 40 && i % 8 == 0 else { continue }
                // Due: the newest frame captured at least 1 s ago (frame i − 31, as in the
                // session test).
                let due = i - 31
                var seen: Int?
                let ok = eventually {
                    let s = screen.shown()
                    guard s.count > 0 else { return false }
                    if view.rotation == 0 {
                        // 320×240 fitted into 640×360: 480×360 from x = 80; a column bar, looked
                        // for on the scene's row 100 (its brightest corner is dimmer than the bar).
                        guard let c = Self.bar(s, screen: screen, vertical: true, at: 150) else { return false }
                        seen = Self.frame(barAt: (c - 80) / 1.5, around: due)
                    } else {
                        // Mirrored, then turned clockwise: 240×320 fitted into 640×360 is
                        // 270×360 from x = 185, and the bar is a row at (319 − x) × 1.125.
                        guard let r = Self.bar(s, screen: screen, vertical: false, at: 320) else { return false }
                        seen = Self.frame(barAt: 319 - r / 1.125, around: due)
                    }
                    return seen == due
                }
                #expect(ok, "frame \(i) (\(view)): the screen shows frame \(String(describing: seen)), not \(due)")
                checked += 1
            }
            #expect(checked == 10)
            // Pictures only where the scene is: the bars either side stay black (below the caption).
            let s = screen.shown()
            let side = view.rotation == 0 ? 40 : 90
            #expect((60..<screen.height).allSatisfy { y in s.pixels[y * screen.pitch + side * 4 + 1] < 8 })
        }
    }

    @Test("no display at first: the page says why; one found 3 s later is used; one that fails is closed, said, and used again when it is back")
    func displayComesAndGoes() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let scene = MovingScene(width: 320, height: 240, fps: 30)
        let clock = TestClock()
        clock.set(scene.time(0))
        let screen = MemoryScreen(width: 320, height: 180, name: "HDMI test")
        let plugged = Atomic<Bool>(false)
        let opened = Atomic<Int>(0)
        let unplugged = DeviceError(operation: "find a display", errno: 19, path: "/dev/dri/card0", detail: "no display connected: plug the TV in")
        let config = DelayVideoConfig(width: 320, height: 240, fps: 30, delay: try DelaySetting(seconds: 1),
                                      roll: try RollSetting(preRollSeconds: 1, postRollSeconds: 0.5), availableMemory: 64 << 20,
                                      tv: TVConfig {
                                          guard plugged.load(ordering: .relaxed) else { throw unplugged }
                                          opened.add(1, ordering: .relaxed)
                                          return screen
                                      })
        let video = DelayVideo(config: config, library: try ClipLibrary(directory: dir + "/video"), clock: { clock.now },
                               log: Logger(label: "test"))
        video.start()
        defer { video.stop() }
        func feed(_ range: Range<Int>) {
            for i in range {
                clock.set(scene.time(i))
                scene.luma(i).withUnsafeBytes { p in
                    _ = video.tap.offer(FrameView(base: p.baseAddress!, width: 320, height: 240, bytesPerRow: 320, format: .gray8,
                                                  sequence: UInt64(i), timestamp: scene.time(i)))
                }
                _ = eventually { video.status.framesEncoded == UInt64(i + 1) }
            }
        }
        feed(0..<45)
        #expect(eventually { video.status.tv?.contains("no display connected: plug the TV in") == true }, "\(String(describing: video.status.tv))")
        #expect(screen.presented == 0)
        // Plugged in: found at the next try, within 3 s of the last.
        plugged.store(true, ordering: .relaxed)
        feed(45..<60)
        #expect(opened.load(ordering: .relaxed) == 0)
        feed(60..<150)
        #expect(eventually { opened.load(ordering: .relaxed) == 1 && screen.presented > 0 })
        #expect(video.status.tv == "HDMI test")
        // The display fails: said on the page, tried again 3 s later, used again.
        screen.fail(with: DeviceError(operation: "page flip", errno: 19, path: "/dev/dri/card0", detail: "No such device"))
        feed(150..<160)
        #expect(eventually { video.status.tv?.contains("page flip") == true }, "\(String(describing: video.status.tv))")
        screen.fail(with: nil)
        let before = screen.presented
        feed(160..<260)
        #expect(eventually { opened.load(ordering: .relaxed) == 2 && screen.presented > before })
        #expect(video.status.tv == "HDMI test")
        #expect(video.status.framesDropped == 0)
    }
}

extension TVOutputTests {
    @Test("versus: the newest frame in the left half and the frame captured 1 s before in the right, each fitted to its half")
    func versusOnScreen() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let scene = MovingScene(width: 320, height: 240, fps: 30)
        let clock = TestClock()
        clock.set(scene.time(0))
        // Halves of 320×240: each picture fills its half exactly.
        let screen = MemoryScreen(width: 640, height: 240, name: "versus TV")
        let config = DelayVideoConfig(width: 320, height: 240, fps: 30, delay: try DelaySetting(seconds: 1),
                                      roll: try RollSetting(preRollSeconds: 1, postRollSeconds: 0.5), availableMemory: 64 << 20,
                                      tv: TVConfig(versus: true) { screen })
        let video = DelayVideo(config: config, library: try ClipLibrary(directory: dir + "/video"), clock: { clock.now },
                               log: Logger(label: "test"))
        video.start()
        defer { video.stop() }
        var checked = 0
        for i in 0..<100 {
            clock.set(scene.time(i))
            scene.luma(i).withUnsafeBytes { p in
                _ = video.tap.offer(FrameView(base: p.baseAddress!, width: 320, height: 240, bytesPerRow: 320, format: .gray8,
                                              sequence: UInt64(i), timestamp: scene.time(i)))
            }
            #expect(eventually { video.status.framesEncoded == UInt64(i + 1) })
            // Frames whose bars (live, and 1 s before) are clear of the picture's edges.
            guard [45, 63, 72, 81, 90, 99].contains(i) else { continue }
            var seen: (Int?, Int?)
            let ok = eventually {
                let s = screen.shown()
                guard s.count > 0 else { return false }
                // One row of the scene (row 100), each half on its own.
                let row = Array(s.pixels[(100 * screen.pitch)..<(100 * screen.pitch + 640 * 4)])
                func bar(_ from: Int) -> Double? {
                    let hits = (from..<(from + 320)).filter { row[$0 * 4] > 215 && row[$0 * 4 + 1] > 215 && row[$0 * 4 + 2] > 215 }
                    guard let a = hits.first, let b = hits.last, b - a < 40 else { return nil }
                    return Double(a + b) / 2 - Double(from)
                }
                seen = (bar(0).flatMap { Self.frame(barAt: $0, around: i) }, bar(320).flatMap { Self.frame(barAt: $0, around: i - 31) })
                // Live is the newest frame in the ring when the picture was painted: this one,
                // or (the thread painted while it was on its way in) one or two before.
                guard let live = seen.0 else { return false }
                return (i - 2...i).contains(live) && seen.1 == i - 31
            }
            #expect(ok, "frame \(i): live \(String(describing: seen.0)), delayed \(String(describing: seen.1))")
            checked += 1
        }
        #expect(checked == 6)
    }
}
