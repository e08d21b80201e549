// SPDX-License-Identifier: Apache-2.0
// Small deterministic random numbers for synthetic scenes (same seed, same pixels).

/// SplitMix64: fast, deterministic and good enough for sensor noise and scene variation.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    /// Uniform in `range`.
    public mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + (range.upperBound - range.lowerBound) * unit()
    }

    /// Approximately normal with mean 0 and deviation 1 (sum of four uniforms, scaled);
    /// cheap enough for per-pixel noise.
    public mutating func gaussianish() -> Double {
        let r = next()
        let a = Double(r & 0xFFFF), b = Double((r >> 16) & 0xFFFF)
        let c = Double((r >> 32) & 0xFFFF), d = Double(r >> 48)
        // Sum of four U(0,65535] has mean 131070 and deviation 65535·sqrt(4/12).
        return (a + b + c + d - 131_070) / 37_836.6
    }
}
