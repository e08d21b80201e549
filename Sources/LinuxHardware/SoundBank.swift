// SPDX-License-Identifier: Apache-2.0
// The gate's sounds: WAV files from a directory, synthesised tones where none is present, spoken numbers.

public import GateCore
#if canImport(Glibc)
import Glibc
#endif

/// Every sound the gate plays, as mono 16-bit PCM at `SoundBank.rate`, loaded once at start.
///
/// For each `GateSound`, the file `<raw value>.wav` in the directory (e.g. `beep.wav`,
/// `on-your-marks.wav`) is used when present; otherwise the sound is synthesised
/// (`SoundSynth`). Spoken words for results come from `word-<word>.wav` files
/// (`scripts/make-sounds` renders them with espeak-ng). Files at other rates are resampled;
/// files that are not 16-bit PCM WAV are errors, never silently skipped.
public struct SoundBank: Sendable {
    /// The rate every sound is held at. Why: 48 kHz is the native rate of USB and HDMI audio
    /// and of the Pi's headphone output, so no device resamples it.
    public static let rate = 48_000

    private var sounds: [PCMSound]
    /// Where each sound came from: a file path, or `"synthesised"`.
    public private(set) var origins: [GateSound: String]
    /// Spoken words by word (`"ten"`, `"point"`), from `word-*.wav` files.
    public private(set) var words: [String: PCMSound]

    /// Only synthesised sounds and no words.
    public init() {
        sounds = GateSound.allCases.map { SoundSynth.sound($0) }
        origins = Dictionary(uniqueKeysWithValues: GateSound.allCases.map { ($0, "synthesised") })
        words = [:]
    }

    /// Loads the sounds in `directory`, synthesising the missing ones. A missing directory
    /// is not an error (all sounds are synthesised); an unreadable or malformed file is.
    public init(directory: String) throws(SoundError) {
        self.init()
        guard let names = FileBytes.list(directory) else { return }
        for sound in GateSound.allCases where names.contains("\(sound.rawValue).wav") {
            let path = directory + "/" + sound.rawValue + ".wav"
            sounds[sound.index] = try WAV.read(path: path).resampled(to: Self.rate)
            origins[sound] = path
        }
        for name in names where name.hasPrefix("word-") && name.hasSuffix(".wav") {
            let word = String(name.dropFirst(5).dropLast(4))
            words[word] = try WAV.read(path: directory + "/" + name).resampled(to: Self.rate)
        }
    }

    /// A sound's samples at `rate`.
    public subscript(sound: GateSound) -> PCMSound { sounds[sound.index] }

    /// Replaces a sound (e.g. with a test signal).
    public mutating func replace(_ sound: GateSound, with pcm: PCMSound) {
        sounds[sound.index] = pcm.resampled(to: Self.rate)
        origins[sound] = "replaced"
    }

    /// The spoken words for a time in seconds rounded to hundredths: 10.42 gives
    /// `["ten", "point", "four", "two"]`, 61.05 `["sixty", "one", "point", "zero", "five"]`.
    /// Whole seconds from 0 to 99 are spoken as numbers; above that, digit by digit.
    public static func words(forSeconds seconds: Double) -> [String] {
        let hundredths = Int((max(seconds, 0) * 100).rounded())
        let whole = hundredths / 100, frac = hundredths % 100
        var out = numberWords(whole)
        out.append("point")
        out.append(digitWords[frac / 10])
        out.append(digitWords[frac % 10])
        return out
    }

    static let digitWords = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
    static let teenWords = ["ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
    static let tensWords = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]

    /// Every word `words(forSeconds:)` can produce, which `scripts/make-sounds` renders.
    public static let vocabulary: [String] = digitWords + teenWords + tensWords.filter { !$0.isEmpty } + ["point"]

    static func numberWords(_ n: Int) -> [String] {
        if n < 10 { return [digitWords[n]] }
        if n < 20 { return [teenWords[n - 10]] }
        if n < 100 { return n % 10 == 0 ? [tensWords[n / 10]] : [tensWords[n / 10], digitWords[n % 10]] }
        return String(n).map { digitWords[Int(String($0))!] }
    }

    /// The spoken form of `seconds` as one sound (words with 60 ms gaps), or `nil` when a
    /// word file is missing.
    public func speech(forSeconds seconds: Double) -> PCMSound? {
        var out: [Int16] = []
        for w in Self.words(forSeconds: seconds) {
            guard let s = words[w] else { return nil }
            out += s.samples
            out += [Int16](repeating: 0, count: Self.rate * 60 / 1000)
        }
        return PCMSound(samples: out, rate: Self.rate)
    }

    /// "3, 2, 1, start": `count` ticks (or spoken numbers when the word files exist) one
    /// `interval` apart, then `start` at `count × interval`. Returns the sound and the offset
    /// in frames of the start sound's first sample, so its onset is the play onset plus
    /// `startOffset / rate`.
    public func countdown(from count: Int, interval: Span, start: GateSound, spoken: Bool = true) -> (sound: PCMSound, startOffset: Int) {
        let step = Int(interval.nanoseconds * Int64(Self.rate) / 1_000_000_000)
        let startSound = self[start].samples
        let startOffset = max(count, 0) * step
        var out = [Int16](repeating: 0, count: startOffset + startSound.count)
        func mix(_ s: [Int16], at o: Int) {
            for (i, v) in s.prefix(max(0, min(step, out.count - o))).enumerated() { out[o + i] = v }
        }
        for k in 0..<max(count, 0) {
            let n = count - k
            let cue = spoken && n < 10 ? words[Self.digitWords[n]]?.samples : nil
            mix(cue ?? self[.countdownTick].samples, at: k * step)
        }
        for (i, v) in startSound.enumerated() { out[startOffset + i] = v }
        return (PCMSound(samples: out, rate: Self.rate), startOffset)
    }
}

extension GateSound {
    /// Dense index for tables by sound.
    var index: Int {
        switch self {
        case .beep: return 0
        case .countdownTick: return 1
        case .gunshot: return 2
        case .whistle: return 3
        case .crossing: return 4
        case .onYourMarks: return 5
        case .set: return 6
        }
    }
}

/// Synthesised stand-ins for the gate's sounds, deterministic, at `SoundBank.rate`.
///
/// Every sound starts at full level within 1 ms (a 48-sample raised-cosine attack), so its
/// onset is sharp: the start sound's first sample is the instant the race clock starts.
public enum SoundSynth {
    /// Peak level as a fraction of full scale. Why: −3 dBFS leaves headroom for the
    /// resampling in plug devices without clipping.
    static let level = 0.7
    /// Attack and release ramps in samples (1 ms at 48 kHz). Why: a hard step clicks in
    /// small speakers, and 1 ms keeps the onset sharp.
    static let ramp = 48

    /// The synthesised form of a sound.
    public static func sound(_ s: GateSound) -> PCMSound {
        switch s {
        case .beep: return tone(hz: 1000, ms: 400)
        case .countdownTick: return tone(hz: 800, ms: 120)
        case .crossing: return tone(hz: 1500, ms: 100)
        case .gunshot: return gunshot()
        case .whistle: return whistle()
        case .onYourMarks: return concat([tone(hz: 660, ms: 150), silence(ms: 80), tone(hz: 660, ms: 150)])
        case .set: return tone(hz: 880, ms: 200)
        }
    }

    /// A sine tone with 1 ms ramps.
    public static func tone(hz: Double, ms: Int) -> PCMSound {
        shaped(count: SoundBank.rate * ms / 1000) { i in sin(2 * Double.pi * hz * Double(i) / Double(SoundBank.rate)) }
    }

    /// Silence.
    public static func silence(ms: Int) -> PCMSound {
        PCMSound(samples: [Int16](repeating: 0, count: SoundBank.rate * ms / 1000), rate: SoundBank.rate)
    }

    /// A starter's pistol: white noise with an instant attack and a 60 ms exponential decay.
    static func gunshot() -> PCMSound {
        var x: UInt64 = 0x9E37_79B9_7F4A_7C15  // fixed seed: the same shot every time
        var lowpassed = 0.0
        return shaped(count: SoundBank.rate * 450 / 1000, release: false) { i in
            x ^= x << 13; x ^= x >> 7; x ^= x << 17
            let white = Double(Int64(bitPattern: x) >> 11) / Double(1 << 52)
            lowpassed += 0.6 * (white - lowpassed)
            let t = Double(i) / Double(SoundBank.rate)
            return min(max(2.2 * lowpassed * exp(-t / 0.060), -1), 1)
        }
    }

    /// A pea whistle: 2.8 kHz warbling at 25 Hz by ±150 Hz.
    static func whistle() -> PCMSound {
        var phase = 0.0
        return shaped(count: SoundBank.rate * 600 / 1000) { i in
            let t = Double(i) / Double(SoundBank.rate)
            phase += 2 * Double.pi * (2800 + 150 * sin(2 * Double.pi * 25 * t)) / Double(SoundBank.rate)
            return sin(phase)
        }
    }

    static func concat(_ parts: [PCMSound]) -> PCMSound {
        PCMSound(samples: parts.flatMap(\.samples), rate: SoundBank.rate)
    }

    private static func shaped(count: Int, release: Bool = true, _ wave: (Int) -> Double) -> PCMSound {
        var out = [Int16](repeating: 0, count: count)
        for i in 0..<count {
            var g = level
            if i < ramp { g *= 0.5 - 0.5 * cos(Double.pi * Double(i + 1) / Double(ramp)) }
            if release && count - 1 - i < ramp { g *= 0.5 - 0.5 * cos(Double.pi * Double(count - i) / Double(ramp)) }
            out[i] = Int16(clamping: Int((wave(i) * g * 32767).rounded()))
        }
        return PCMSound(samples: out, rate: SoundBank.rate)
    }
}
