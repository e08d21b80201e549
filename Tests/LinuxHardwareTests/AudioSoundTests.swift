// SPDX-License-Identifier: Apache-2.0
// WAV parsing and writing, synthesised sounds, spoken numbers and the sound bank, without a device.

import GateCore
import LinuxHardware
import Testing
#if canImport(Glibc)
import Glibc
#endif

private func le16(_ v: Int) -> [UInt8] { [UInt8(v & 255), UInt8((v >> 8) & 255)] }
private func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16((v >> 16) & 0xFFFF) }

/// A WAV file with a chosen format code, channels, rate and bits, and raw data bytes.
private func wav(format: Int = 1, channels: Int = 1, rate: Int = 48_000, bits: Int = 16, data: [UInt8], declaredData: Int? = nil, extra: [UInt8] = []) -> [UInt8] {
    let fmt = le16(format) + le16(channels) + le32(rate) + le32(rate * channels * bits / 8) + le16(channels * bits / 8) + le16(bits)
    let body = Array("WAVE".utf8) + Array("fmt ".utf8) + le32(16) + fmt + extra
        + Array("data".utf8) + le32(declaredData ?? data.count) + data
    return Array("RIFF".utf8) + le32(body.count) + body
}

private func samplesBytes(_ s: [Int16]) -> [UInt8] { s.flatMap { le16(Int(UInt16(bitPattern: $0))) } }

private func tempDir() -> String {
    var t = Array("/tmp/sprintgate-sounds-XXXXXX".utf8CString)
    let p = t.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    return String(cString: p!)
}

private func writeBytes(_ path: String, _ b: [UInt8]) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    _ = b.withUnsafeBytes { write(fd, $0.baseAddress, b.count) }
    close(fd)
}

@Suite("Sounds and WAV files")
struct AudioSoundTests {
    @Test("mono PCM round-trips through encode and decode")
    func roundTrip() throws {
        let s = PCMSound(samples: [0, 1, -1, 32767, -32768, 1234], rate: 22_050)
        let back = try WAV.decode(WAV.encode(s), file: "x.wav")
        #expect(back == s)
    }

    @Test("stereo is averaged to mono; odd chunks before fmt are skipped")
    func stereo() throws {
        let junk = Array("LIST".utf8) + le32(3) + [1, 2, 3, 0]
        var b = wav(channels: 2, data: samplesBytes([100, 300, -50, -150]))
        b.insert(contentsOf: junk, at: 12)
        b.replaceSubrange(4..<8, with: le32(b.count - 8))
        let s = try WAV.decode(b, file: "s.wav")
        #expect(s.samples == [200, -100])
        #expect(s.rate == 48_000)
    }

    @Test("bad files give one clear error each, never a crash", arguments: [
        ("empty", [UInt8](), "only 0 bytes"),
        ("text", Array("hello, this is not a sound file at all".utf8), "no RIFF/WAVE"),
        ("float", wav(format: 3, bits: 32, data: [0, 0, 0, 0]), "floating point"),
        ("mulaw", wav(format: 7, bits: 8, data: [0]), "not linear PCM"),
        ("8-bit", wav(bits: 8, data: [0, 1]), "8-bit"),
        ("six channels", wav(channels: 6, data: [UInt8](repeating: 0, count: 12)), "6 channels"),
        ("rate", wav(rate: 4000, data: [0, 0]), "sample rate 4000"),
        ("truncated data", wav(data: [0, 0, 1, 0], declaredData: 4000), "truncated"),
        ("cut in header", Array(wav(data: [0, 0]).prefix(30)), "fmt "),
    ] as [(String, [UInt8], String)])
    func badFiles(name: String, bytes: [UInt8], expected: String) {
        do {
            _ = try WAV.decode(bytes, file: "\(name).wav")
            Issue.record("\(name) decoded")
        } catch {
            #expect(error.file == "\(name).wav")
            #expect(error.description.contains(expected), "\(error)")
        }
        // Every prefix of a valid file is rejected or decoded, never a trap.
        let valid = wav(data: samplesBytes([1, 2, 3, 4]))
        for n in 0..<valid.count { _ = try? WAV.decode(Array(valid.prefix(n)), file: "p.wav") }
    }

    @Test("resampling keeps length in proportion and the onset at sample 0")
    func resample() {
        let s = PCMSound(samples: [0, 1000, 2000, 3000] + [Int16](repeating: 3000, count: 2396), rate: 24_000)
        let r = s.resampled(to: 48_000)
        #expect(r.rate == 48_000)
        #expect(r.samples.count == 4800)
        #expect(r.samples[0] == 0 && r.samples[1] == 500 && r.samples[2] == 1000)
        #expect(s.resampled(to: 24_000) == s)
    }

    @Test("every gate sound is synthesised: non-empty, below full scale, sharp onset", arguments: GateSound.allCases)
    func synthesised(sound: GateSound) {
        let s = SoundSynth.sound(sound)
        #expect(s.rate == 48_000)
        #expect(s.duration >= 0.09 && s.duration <= 1.0)
        let peak = s.samples.map { abs(Int($0)) }.max() ?? 0
        #expect(peak > 10_000 && peak <= 23_000)
        // Onset: the first sample above a tenth of the peak comes within 1 ms.
        let first = s.samples.firstIndex { abs(Int($0)) > peak / 10 } ?? .max
        #expect(first <= 48)
        #expect(SoundSynth.sound(sound) == s, "deterministic")
    }

    @Test("times become words: numbers to ninety-nine, then point and two digits")
    func words() {
        #expect(SoundBank.words(forSeconds: 10.42) == ["ten", "point", "four", "two"])
        #expect(SoundBank.words(forSeconds: 61.05) == ["sixty", "one", "point", "zero", "five"])
        #expect(SoundBank.words(forSeconds: 9.999) == ["ten", "point", "zero", "zero"])
        #expect(SoundBank.words(forSeconds: 20) == ["twenty", "point", "zero", "zero"])
        #expect(SoundBank.words(forSeconds: 125.5) == ["one", "two", "five", "point", "five", "zero"])
        for t in stride(from: 0.0, to: 100.0, by: 0.37) {
            #expect(SoundBank.words(forSeconds: t).allSatisfy(SoundBank.vocabulary.contains))
        }
        #expect(SoundBank.vocabulary.count == 29)
    }

    @Test("the bank loads files over synthesis, words, and rejects a bad file")
    func bank() throws {
        let dir = tempDir()
        defer {
            for f in ["set.wav", "word-ten.wav", "word-point.wav", "beep.wav"] { unlink(dir + "/" + f) }
            rmdir(dir)
        }
        writeBytes(dir + "/set.wav", WAV.encode(PCMSound(samples: [Int16](repeating: 5, count: 2205), rate: 22_050)))
        writeBytes(dir + "/word-ten.wav", WAV.encode(PCMSound(samples: [Int16](repeating: 7, count: 480), rate: 48_000)))
        let bank = try SoundBank(directory: dir)
        #expect(bank[.set].samples.count == 4800)
        #expect(bank.origins[.set] == dir + "/set.wav")
        #expect(bank.origins[.beep] == "synthesised")
        #expect(bank[.beep] == SoundSynth.sound(.beep))
        #expect(bank.words["ten"]?.samples.count == 480)
        #expect(bank.speech(forSeconds: 10) == nil, "no word file for point")
        writeBytes(dir + "/word-point.wav", WAV.encode(PCMSound(samples: [1], rate: 48_000)))
        writeBytes(dir + "/word-zero.wav", WAV.encode(PCMSound(samples: [2], rate: 48_000)))
        defer { unlink(dir + "/word-zero.wav") }
        let speech = try #require(try SoundBank(directory: dir).speech(forSeconds: 10))
        #expect(speech.samples.count == 480 + 1 + 1 + 1 + 4 * 2880)
        writeBytes(dir + "/beep.wav", Array("RIFF".utf8))
        #expect(throws: SoundError.self) { try SoundBank(directory: dir) }
        #expect(try SoundBank(directory: dir + "/missing")[.beep] == SoundSynth.sound(.beep))
    }

    @Test("countdown: ticks one interval apart and the start sound at count x interval")
    func countdown() {
        let bank = SoundBank()
        let (s, offset) = bank.countdown(from: 3, interval: .seconds(1), start: .gunshot)
        #expect(offset == 3 * 48_000)
        #expect(s.samples.count == offset + bank[.gunshot].samples.count)
        #expect(Array(s.samples[offset...]) == bank[.gunshot].samples)
        let tick = bank[.countdownTick].samples
        #expect(Array(s.samples[48_000..<48_000 + tick.count]) == tick)
    }

    @Test("a missing audio device leaves the beeper absent with a warning; play throws")
    func missingDevice() {
        var beeper = ALSABeeper(config: AudioConfig(device: "hw:CARD=NoSuchSprintGateCard,DEV=0"), sounds: SoundBank())
        let state = beeper.state, warning = beeper.warning ?? ""
        #expect(state == .absent)
        #expect(warning.contains("the gate still times"))
        #expect(warning.contains("NoSuchSprintGateCard"))
        var threw = false
        do { _ = try beeper.play(.beep, now: MonotonicInstant(nanoseconds: 0)) } catch { threw = true }
        #expect(threw)
    }

    // Why: not inside the qemu rig, where espeak-ng under software emulation takes minutes.
    @Test("scripts/make-sounds renders prompts and words that the bank loads", .enabled(if:
        access("/usr/bin/espeak-ng", X_OK) == 0 && access("scripts/make-sounds", X_OK) == 0 && HardwareRig.env("SPRINTGATE_RIG") == nil))
    func makeSounds() throws {
        let dir = tempDir()
        #expect(system("scripts/make-sounds \(dir) >/dev/null") == 0)
        let bank = try SoundBank(directory: dir)
        #expect(bank.origins[.onYourMarks] == dir + "/on-your-marks.wav")
        #expect(bank.origins[.set] == dir + "/set.wav")
        #expect(bank[.onYourMarks].duration > 0.4 && bank[.onYourMarks].duration < 2.5)
        #expect(Set(bank.words.keys) == Set(SoundBank.vocabulary))
        let speech = try #require(bank.speech(forSeconds: 10.42))
        #expect(speech.duration > 1 && speech.duration < 4)
        // The trimmed prompt starts speaking at once.
        #expect((bank[.set].samples.prefix(48).map { abs(Int($0)) }.max() ?? 0) >= 256)
        for name in FileList.names(dir) { unlink(dir + "/" + name) }
        rmdir(dir)
    }
}

/// Directory listing for test clean-up.
enum FileList {
    static func names(_ dir: String) -> [String] {
        guard let d = opendir(dir) else { return [] }
        defer { closedir(d) }
        var out: [String] = []
        while let e = readdir(d) {
            let n = withUnsafeBytes(of: e.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if n != "." && n != ".." { out.append(n) }
        }
        return out
    }
}
