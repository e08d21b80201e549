// SPDX-License-Identifier: Apache-2.0
// `sprintgate run` with the delay mode on the rig's devices: the start button (gpio-sim)
// marks the delayed video, the crossing LED flashes for it, and the clip is cut and listed.

import Foundation
import GateCore
import Testing

extension RigDevices.CommandRigTests {
    @Test("run with [video] mark_button: a press of the start button marks the delayed video, flashes the crossing LED, and its clip is listed on the page; switched off on the page, the video routes answer that it is off")
    func buttonMarksVideo() throws {
        let board = try RigBoard()
        try board.addSettings("""
            [video]
            delay_s = 1
            pre_roll_s = 1
            post_roll_s = 0.5
            memory_mb = 64
            mark_button = true
            clickers = false
            # The rig's one emulated CPU cannot paint its display and encode at once; the
            # TV is tested on its own (TVRigTests).
            tv = "off"

            """)
        var progress: [String] = []
        var flashed = false
        var sessions = ""
        var switchedOff = false
        var pageAnswered = false, starved = false
        let r = try sprintgate(["run", "--config", board.settings, "--seconds", "150"]) { run in
            defer { run.terminate() }
            guard Self.framesPass(120, board, within: 90, run) != nil else { progress.append("never streamed"); return }
            // Why wait on the page, not a fixed time: on a slow host the encoder takes many
            // seconds to start in the rig's emulated CPU, and a mark before its ring holds the
            // pre-roll has nothing to cut. The ring is asked for more than delay and pre-roll.
            var buffered = 0.0
            for _ in 0..<60 where run.isRunning && buffered < 2.5 {
                let status = Self.page("GET", "/api/video")
                if status.status != 0 { pageAnswered = true }
                let json = try? JSONSerialization.jsonObject(with: Data(status.body.utf8)) as? [String: Any]
                buffered = (json?["bufferSeconds"] as? NSNumber)?.doubleValue ?? 0
                if buffered < 2.5 { usleep(1_500_000) }
            }
            progress.append(String(format: "%.1f s in the ring before the press", buffered))
            // Why stop here: on a slow host x264 takes the rig's one emulated CPU whole, the
            // ring never holds the pre-roll and the page stops answering; nothing about the
            // button can be learnt then.
            if buffered < 2.5 {
                starved = true
                return
            }
            HardwareRig.pull("start-button", "pull-down")  // pressed (active low)
            let pressed = Date()
            while Date().timeIntervalSince(pressed) < 3 && !flashed {
                flashed = HardwareRig.value("crossing-led") == 1
                if !flashed { usleep(2_000) }
            }
            let feedback = Date().timeIntervalSince(pressed)
            HardwareRig.pull("start-button", "pull-up")
            progress.append(flashed ? String(format: "flashed %.0f ms after the press", feedback * 1000) : "no flash")
            for _ in 0..<60 where run.isRunning {
                sessions = Self.page("GET", "/api/video/sessions").body
                if sessions.contains("\"kind\":\"mark\"") { break }
                usleep(1_000_000)
            }
            // Switched off on the page: the video routes answer that the mode is off.
            let pin = ((try? String(contentsOfFile: board.dir + "/web.pin", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            let put = Self.page("PUT", "/api/settings", pin: pin, json: #"{"delayedVideo":false}"#)
            for _ in 0..<40 where run.isRunning && put.status == 202 {
                if Self.page("GET", "/api/video").status == 404 { switchedOff = true; break }
                usleep(500_000)
            }
            progress.append(switchedOff ? "switched off" : "PUT /api/settings answered \(put.status); still on")
        }
        print(progress.joined(separator: "; "))
        print(r.out.split(separator: "\n").filter { $0.contains("video") }.joined(separator: "\n"))
        if starved {
            print("SKIP: the ring never held the pre-roll (the page \(pageAnswered ? "answered, then stopped" : "never answered")): the encoder took the rig's emulated CPU; this host is too slow for this test")
            return
        }
        #expect(r.status == 0)
        #expect(flashed, "the crossing LED never lit for the mark")
        let list = try JSONSerialization.jsonObject(with: Data(sessions.utf8)) as? [[String: Any]]
        let clips = list?.first?["clips"] as? [[String: Any]] ?? []
        #expect(clips.count == 1 && clips.first?["kind"] as? String == "mark", "\(sessions.prefix(400))")
        #expect((clips.first?["frames"] as? Int ?? 0) > 0)
        #expect(switchedOff, "\(progress)")
        #expect(r.out.contains("the delay mode is off"))
        // The press did not reach the timing engine: nothing started.
        #expect(!r.out.contains("started at "), "\(r.out.suffix(600))")
    }
}
