// SPDX-License-Identifier: Apache-2.0
// Per-pixel sensor noise for synthetic scenes from GateCore's seedable generator (same seed, same pixels).

public import GateCore
import Glibc

extension SplitMix64 {
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

extension SplitMix64 {
    /// Standard normal (Box–Muller, one deviate from two uniforms): for synthetic receiver
    /// noise, where the tails matter.
    public mutating func normal() -> Double {
        let u = max(unit(), 1e-12), w = unit()
        return (-2 * log(u)).squareRoot() * cos(2 * Double.pi * w)
    }
}
