// SPDX-License-Identifier: Apache-2.0
// ALSABeeper on snd-aloop in the rig: the onset play() reports against the onset recorded on the loopback.

import GateCore
import LinuxHardware
import Testing

private func ms3(_ x: Double) -> String {
    let r = (x * 1000).rounded() / 1000
    return (r >= 0 ? "+" : "") + String(r)
}

private func stats(_ v: [Double]) -> String {
    guard !v.isEmpty else { return "no samples" }
    let mean: Double = v.reduce(0, +) / Double(v.count)
    let maxAbs: Double = v.map { abs($0) }.max() ?? 0
    let sorted = v.sorted()
    let parts: [String] = [
        "mean \(ms3(mean)) ms", "max |e| \(ms3(maxAbs)) ms", "min \(ms3(sorted[0]))",
        "median \(ms3(sorted[sorted.count / 2]))", "max \(ms3(sorted[sorted.count - 1]))", "n=\(v.count)",
    ]
    return parts.joined(separator: ", ")
}

extension RigDevices {
    @Suite("Audio on snd-aloop", .serialized, .enabled(if: HardwareRig.audioAvailable))
    struct AudioRigTests {
        @Test("the onset play() returns matches the onset recorded on the loopback capture")
        func onset() throws {
            let playDevice = HardwareRig.env("RIG_ALSA_PLAYBACK")!, captureDevice = HardwareRig.env("RIG_ALSA_CAPTURE")!
            let bank = SoundBank()
            var beeper = ALSABeeper(config: AudioConfig(device: playDevice), sounds: bank)
            let state = beeper.state, warning = beeper.warning ?? ""
            try #require(state == .streaming, "\(warning)")
            let capture = try ALSAPCM(device: captureDevice, direction: .capture, rate: beeper.rate, channelChoices: [beeper.channels])
            let rate = Double(capture.rate), ch = capture.channels
            let chunk = 4096
            let buf = UnsafeMutablePointer<Int16>.allocate(capacity: chunk * ch)
            defer { buf.deallocate() }
            var recorded: [Int16] = []
            recorded.reserveCapacity(capture.rate * 30)
            // Capture time origin per play: min over status snapshots of htstamp − (frames read +
            // delay) / rate, i.e. the CLOCK_MONOTONIC instant of captured frame 0. The minimum
            // removes the lag of snapshots taken between the driver's position steps.
            var origin = Int64.max

            func pump(_ ms: Double, beeper: inout ALSABeeper) throws {
                let end = Sys.monotonicNow() + .milliseconds(ms)
                while Sys.monotonicNow() < end {
                    try beeper.service()
                    while case .processed(let n) = try capture.read(into: buf, frames: chunk), n > 0 {
                        for i in 0..<n { recorded.append(buf[i * ch]) }
                    }
                    let st = try capture.currentStatus()
                    if st.isRunning && st.timestampIsFresh {
                        let o = st.timestamp.nanoseconds - Int64((Double(recorded.count + st.delay) / rate * 1e9).rounded())
                        origin = min(origin, o)
                    }
                    HardwareRig.sleepMs(0.5)
                }
            }

            // Where the detector below finds the onset within the sound itself.
            let threshold = 1000
            let source = bank[.beep].samples
            let sourceOnset = source.firstIndex { abs(Int($0)) > threshold }!

            try capture.start()
            try pump(300, beeper: &beeper)
            var first: [Double] = [], refined: [Double] = [], refined20: [Double] = [], lateness: [Double] = []
            for k in 0..<20 {
                let startIndex = recorded.count
                let now = Sys.monotonicNow()
                let onset = try beeper.play(.beep, now: now)
                let last = beeper.lastPlay
                let timing = try #require(last)
                lateness.append(Sys.monotonicNow().since(now).milliseconds)
                try pump(20, beeper: &beeper)
                let after20 = beeper.refinedOnset!
                try pump(680, beeper: &beeper)
                guard let hit = recorded[startIndex...].firstIndex(where: { abs(Int($0)) > threshold }) else {
                    Issue.record("play \(k): no sound captured")
                    continue
                }
                let measured = origin + Int64((Double(hit - sourceOnset) / rate * 1e9).rounded())
                first.append(Double(onset.nanoseconds - measured) / 1e6)
                refined.append(Double(beeper.refinedOnset!.nanoseconds - measured) / 1e6)
                refined20.append(Double(after20.nanoseconds - measured) / 1e6)
                if k == 0 {
                    print("audio: status at start: delay \(timing.status.delay) frames, written \(timing.written), "
                          + "htstamp − trigger \(timing.status.timestamp.since(timing.status.trigger).milliseconds) ms, "
                          + "onset − trigger \(onset.since(timing.status.trigger).milliseconds) ms")
                }
            }
            print("audio onset error, play() return (first snapshot): \(stats(first))")
            print("audio onset error, refinedOnset (after service):   \(stats(refined))")
            print("audio onset error, refinedOnset 20 ms after play(): \(stats(refined20))")
            print("audio play() call duration: \(stats(lateness))")
            #expect(first.count == 20)
            #expect(refined.allSatisfy { abs($0) < 1.0 }, "refined onset within 1 ms")
            #expect(first.allSatisfy { abs($0) < 5.0 }, "first estimate within one 4 ms timer tick")
        }

        @Test("a sound longer than the buffer plays whole through service()")
        func longSound() throws {
            let playDevice = HardwareRig.env("RIG_ALSA_PLAYBACK")!, captureDevice = HardwareRig.env("RIG_ALSA_CAPTURE")!
            var beeper = ALSABeeper(config: AudioConfig(device: playDevice), sounds: SoundBank())
            let state = beeper.state
            try #require(state == .streaming)
            let capture = try ALSAPCM(device: captureDevice, direction: .capture, rate: beeper.rate, channelChoices: [beeper.channels])
            let ch = capture.channels
            let buf = UnsafeMutablePointer<Int16>.allocate(capacity: 4096 * ch)
            defer { buf.deallocate() }
            // 1 s of a constant-level square wave, five times the 200 ms buffer.
            let n = beeper.rate
            let wave = (0..<n).map { Int16($0 / 24 % 2 == 0 ? 8000 : -8000) }
            try capture.start()
            var recorded: [Int16] = []
            _ = try beeper.play(samples: wave, now: Sys.monotonicNow())
            let end = Sys.monotonicNow() + .milliseconds(1500)
            while Sys.monotonicNow() < end {
                try beeper.service()
                while case .processed(let k) = try capture.read(into: buf, frames: 4096), k > 0 {
                    for i in 0..<k { recorded.append(buf[i * ch]) }
                }
                HardwareRig.sleepMs(2)
            }
            let playing = beeper.isPlaying
            #expect(!playing)
            let loud = recorded.filter { abs(Int($0)) == 8000 }.count
            print("audio long sound: \(loud) of \(n) frames captured at full level")
            #expect(loud >= n - 48, "no gap or dropout while refilling")
        }
    }
}
