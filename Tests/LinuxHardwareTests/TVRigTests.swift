// SPDX-License-Identifier: Apache-2.0
// The TV output on a real DRM/KMS driver in the qemu rig (run --display: the guest kernel's
// bochs driver on qemu's bochs-display), checked on qemu's own picture of the screen: a
// pattern painted through DRMScreen comes out exactly; the console comes back on close; a
// display already held is refused with what to do; and vivid's frames reach the TV
// through the video thread, the frame captured 1 s earlier on the screen, turned as set.

import FFmpegVideo
import Foundation
import GateCore
import LinuxHardware
import Logging
import Testing
import VideoDelay
import VideoService

/// A picture of the rig's screen: qemu's screendump (PPM, RGB).
struct ScreenDump {
    let width: Int, height: Int
    let rgb: [UInt8]

    /// Asks the host for a picture of the screen now (scripts/rig/screendump-server).
    static func take(_ name: String) throws -> ScreenDump {
        let out = try #require(Rig.out, "the rig's --display needs --out")
        let path = out + "/" + name
        try? FileManager.default.removeItem(atPath: path)
        FileManager.default.createFile(atPath: path + ".screendump-request", contents: nil)
        let deadline = Sys.monotonicNow() + .seconds(30)
        while FileManager.default.fileExists(atPath: path + ".screendump-request") && Sys.monotonicNow() < deadline { usleep(20_000) }
        if let e = try? String(contentsOfFile: path + ".error", encoding: .utf8) { throw DumpError(reason: e) }
        let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        try? FileManager.default.removeItem(atPath: path)
        // P6\n<w> <h>\n255\n<rgb>
        var fields: [String] = [], i = 0, current = ""
        while fields.count < 4 && i < data.count {
            let c = data[i]
            i += 1
            if c == 0x20 || c == 0x0A {
                if !current.isEmpty { fields.append(current); current = "" }
            } else {
                current.append(Character(UnicodeScalar(c)))
            }
        }
        guard fields.count == 4, fields[0] == "P6", let w = Int(fields[1]), let h = Int(fields[2]), data.count - i >= w * h * 3 else {
            throw DumpError(reason: "not a PPM: \(fields)")
        }
        return ScreenDump(width: w, height: h, rgb: Array(data[i..<(i + w * h * 3)]))
    }

    struct DumpError: Error { let reason: String }

    func pixel(_ x: Int, _ y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
        let o = (y * width + x) * 3
        return (rgb[o], rgb[o + 1], rgb[o + 2])
    }
}

extension RigDevices {
    @Suite(.serialized, .enabled(if: Rig.available && Rig.env("RIG_DISPLAY") != nil, "needs the qemu rig with a display (scripts/sim-tier)"))
    struct TVRigTests {
        @Test("DRMScreen on the bochs driver: the first connected display in its preferred mode; four colours painted into the buffer (rows a pitch apart, XRGB) come out exactly on the screen, twice (both buffers, flipped); a second opener is told the display is in use; closing gives the console back")
        func paintsTheScreen() throws {
            let before = try ScreenDump.take("console.ppm")
            let white: (UInt8, UInt8, UInt8) = (255, 255, 255)
            // The screen lives in this scope only: leaving it closes the screen.
            try paintQuadrants(white: white)
            let after = try ScreenDump.take("console-again.ppm")
            #expect(after.width == before.width && after.height == before.height)
            let stillPattern = stride(from: 0, to: after.rgb.count, by: 3 * 97).filter {
                (after.rgb[$0], after.rgb[$0 + 1], after.rgb[$0 + 2]) == white || after.rgb[$0] == 250
            }.count
            #expect(stillPattern < 50, "the pattern is still on the screen after close (\(stillPattern) samples)")
        }

        func paintQuadrants(white: (UInt8, UInt8, UInt8)) throws {
            let s = try DRMScreen()
            #expect(s.path == Rig.env("RIG_DISPLAY"))
            #expect(s.name.hasPrefix("Virtual-1 "), "\(s.name)")
            #expect(s.width <= DRMScreen.maxWidth && s.height <= DRMScreen.maxHeight && s.width > 0)
            let colours: [(UInt8, UInt8, UInt8)] = [(250, 20, 30), (10, 200, 40), (20, 30, 240), white]
            for round in 0..<2 {
                // Quadrants, each turn a different way round, so both buffers are checked.
                try s.present { p, pitch in
                    for y in 0..<s.height {
                        let row = (p + y * pitch).assumingMemoryBound(to: UInt8.self)
                        for x in 0..<s.width {
                            let q = ((y * 2 / s.height) * 2 + x * 2 / s.width + round) % 4
                            let (r, g, b) = colours[q]
                            row[x * 4] = b
                            row[x * 4 + 1] = g
                            row[x * 4 + 2] = r
                            row[x * 4 + 3] = 0
                        }
                    }
                }
                let d = try ScreenDump.take("pattern\(round).ppm")
                #expect(d.width == s.width && d.height == s.height)
                var wrong = 0
                for y in stride(from: 0, to: d.height, by: 7) {
                    for x in stride(from: 0, to: d.width, by: 7) {
                        let q = ((y * 2 / s.height) * 2 + x * 2 / s.width + round) % 4
                        let p = d.pixel(x, y)
                        if (p.r, p.g, p.b) != colours[q] { wrong += 1 }
                    }
                }
                #expect(wrong == 0, "round \(round): \(wrong) pixels differ")
            }
            // Another program (here a second opener) cannot take the display while it is held.
            do {
                _ = try DRMScreen(path: s.path)
                Issue.record("a second DRMScreen opened the held display")
            } catch {
                #expect(error.detail.contains("another program"), "\(error)")
            }
        }

        @Test("vivid → video thread → TV: the screen shows the frame captured 1 s earlier, turned half a turn, fitted with bars")
        func delayedViewOnTheTV() throws {
            let (width, height) = (640, 480)
            let numbered = NumberedFrames(width: width, height: height)
            let dir = NSTemporaryDirectory() + "sprintgate-tv-rig"
            defer { try? FileManager.default.removeItem(atPath: dir) }
            var sink = try V4L2FrameSink(path: Rig.videoOutput, format: .gray8, width: width, height: height)
            defer { sink.close() }
            var cam = V4L2FrameSource(path: Rig.videoCapture, request: CameraRequest(width: width, height: height, formats: [.gray8]),
                                      logger: Logger(label: "sprintgate.camera"))
            try cam.open()
            defer { cam.close() }
            let clock = FrameClock()
            let delay = try DelaySetting(seconds: 1)
            let video = DelayVideo(config: DelayVideoConfig(width: width, height: height, fps: 60, delay: delay,
                                                            roll: try RollSetting(preRollSeconds: 1, postRollSeconds: 0.5),
                                                            availableMemory: 64 << 20,
                                                            tv: TVConfig(view: ScreenView(rotation: 180)) { try DRMScreen() }),
                                   library: try ClipLibrary(directory: dir), clock: { clock.now }, log: Logger(label: "sprintgate.video"))
            video.start()
            defer { video.stop() }
            var times: [MonotonicInstant] = []
            var checked: [Int] = []
            for i in 0..<75 {
                #expect(try numbered.frame(i).withUnsafeBytes { try sink.write(frame: $0) })
                let captured = try numbered.capture(i, from: &cam) { view in
                    clock.set(view.timestamp)
                    times.append(view.timestamp)
                    #expect(video.tap.offer(view), "frame \(i) dropped at the tap")
                }
                try #require(captured, "frame \(i) never came back from vivid")
                let encoded = Sys.monotonicNow() + .seconds(30)
                while video.status.framesEncoded < UInt64(i + 1) && Sys.monotonicNow() < encoded { usleep(2_000) }
                guard i % 15 == 14, let due = times.lastIndex(where: { $0 <= clock.now - delay.delay }) else { continue }
                // The clock stands still until the next frame: the screen settles on the due frame.
                var shown = -1
                let until = Sys.monotonicNow() + .seconds(30)
                while shown != due && Sys.monotonicNow() < until {
                    let d = try ScreenDump.take("tv-\(i).ppm")
                    // Where camera pixel (x, y) lands: turned half a turn, scaled to fit, centred.
                    let scale = min(Double(d.width) / Double(width), Double(d.height) / Double(height))
                    let ox = (Double(d.width) - Double(width) * scale) / 2, oy = (Double(d.height) - Double(height) * scale) / 2
                    shown = numbered.number { x, y in
                        let sx = Int(ox + (Double(width - 1 - x) + 0.5) * scale), sy = Int(oy + (Double(height - 1 - y) + 0.5) * scale)
                        return d.pixel(min(d.width - 1, sx), min(d.height - 1, sy)).g
                    }
                }
                #expect(shown == due, "at frame \(i) the TV shows frame \(shown), not \(due)")
                checked.append(due)
            }
            #expect(checked.count >= 3)
            let tv = video.status.tv ?? "none"
            #expect(tv.hasPrefix("Virtual-1"), "\(tv)")
            print("tv rig: \(tv); frames \(checked) seen on the screen 1 s after capture")
        }
    }
}
