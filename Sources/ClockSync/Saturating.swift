// SPDX-License-Identifier: Apache-2.0
// Conversion of computed nanosecond values to Int64 that never traps.

extension Int64 {
    /// `value` rounded to the nearest integer and clamped to ±9e18 ns (about ±285 years);
    /// NaN gives 0. Why: samples come from the network, and a hostile or broken peer can
    /// send timestamps whose fits overflow; conversions must stay total.
    @inlinable init(saturating value: Double) {
        guard !value.isNaN else { self = 0; return }
        self = Int64(Swift.min(Swift.max(value.rounded(), -9e18), 9e18))
    }
}
