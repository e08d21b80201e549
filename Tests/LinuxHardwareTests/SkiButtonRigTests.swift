// SPDX-License-Identifier: Apache-2.0
// `sprintgate run` with the ski track logger on the rig's devices: the start button
// (gpio-sim) starts and stops a track, with a flash and a buzz for each press.

import Foundation
import GateCore
import Testing

extension RigDevices.CommandRigTests {
    /// gpsd is not in the guest: the logger records whatever fixes come (none here), and the
    /// button works all the same, which is what a skier pressing it before the receiver
    /// has its fix expects.
    @Test("run with [ski] button: a press of the start button starts a track of the board's sport, confirmed by a flash of the crossing LED and a buzz; a second press stops it and the track is listed; no sprint is started; gpsd absent is said")
    func buttonTracksSki() throws {
        let board = try RigBoard()
        try board.addSettings("""
            [gps]
            host = "127.0.0.1"
            port = 29471
            [ski]
            button = true
            sport = "snowboard"

            """)
        var progress: [String] = []
        var recording = "", stopped = "", tracks = ""
        var flashes = 0, buzzes = 0
        /// Presses the button and watches the crossing LED and the buzzer until both have come
        /// on, for 2 to 10 s, at real-time priority so that a 100 ms buzz is seen however
        /// busy the guest is. Why so long: the buzz follows the track's write to the store, which
        /// a slow host's emulated CPU has been seen to take more than 2 s over.
        func press() {
            let (flashed, buzzed) = HardwareRig.promptly { () -> (Bool, Bool) in
                HardwareRig.pull("start-button", "pull-down")  // pressed (active low)
                let pressed = Date()
                var flashed = false, buzzed = false, released = false
                // At least 2 s, so that the next press starts with the LED and buzzer off.
                while Date().timeIntervalSince(pressed) < 10 && !(flashed && buzzed && Date().timeIntervalSince(pressed) >= 2) {
                    if !flashed && HardwareRig.value("crossing-led") == 1 { flashed = true }
                    if !buzzed && HardwareRig.value("buzzer") == 1 { buzzed = true }
                    if !released && Date().timeIntervalSince(pressed) > 0.2 {
                        HardwareRig.pull("start-button", "pull-up")
                        released = true
                    }
                    usleep(2_000)
                }
                return (flashed, buzzed)
            }
            if flashed { flashes += 1 }
            if buzzed { buzzes += 1 }
        }
        let r = try sprintgate(["run", "--config", board.settings, "--seconds", "120"]) { run in
            defer { run.terminate() }
            guard Self.framesPass(60, board, within: 90, run) != nil else { progress.append("never streamed"); return }
            press()
            for _ in 0..<40 where run.isRunning {
                recording = Self.page("GET", "/api/ski").body
                if recording.contains("\"recording\":true") { break }
                usleep(250_000)
            }
            progress.append(recording.contains("\"recording\":true") ? "recording" : "not recording after the press")
            press()
            for _ in 0..<40 where run.isRunning {
                stopped = Self.page("GET", "/api/ski").body
                if stopped.contains("\"recording\":false") { break }
                usleep(250_000)
            }
            tracks = Self.page("GET", "/api/ski/tracks").body
            progress.append("flashes \(flashes), buzzes \(buzzes)")
        }
        print(progress.joined(separator: "; "))
        print(r.out.split(separator: "\n").filter { $0.contains("ski") || $0.contains("gpsd") }.joined(separator: "\n"))
        #expect(r.status == 0)
        let on = try JSONSerialization.jsonObject(with: Data(recording.utf8)) as? [String: Any]
        #expect(on?["recording"] as? Bool == true, "\(recording.prefix(300))")
        #expect((on?["track"] as? [String: Any])?["sport"] as? String == "snowboard", "\(recording.prefix(300))")
        let off = try JSONSerialization.jsonObject(with: Data(stopped.utf8)) as? [String: Any]
        #expect(off?["recording"] as? Bool == false, "\(stopped.prefix(300))")
        let list = try JSONSerialization.jsonObject(with: Data(tracks.utf8)) as? [[String: Any]] ?? []
        #expect(list.count == 1, "\(tracks.prefix(300))")
        #expect(list.first?["sport"] as? String == "snowboard" && list.first?["source"] as? String == "gate")
        #expect(list.first.map { !($0["endedWall"] is NSNull) && $0["endedWall"] != nil } == true, "\(tracks.prefix(300))")
        // Each press flashed the crossing LED at once; the start buzzed (the .go cue) and so
        // did the stop (the .done cue).
        #expect(flashes == 2, "\(progress)")
        #expect(buzzes == 2, "\(progress)")
        // The presses did not reach the timing engine, and the missing gpsd was said.
        #expect(!r.out.contains("started at "), "\(r.out.suffix(600))")
        #expect(r.out.contains("gpsd does not answer"), "\(r.out.suffix(600))")
    }
}
