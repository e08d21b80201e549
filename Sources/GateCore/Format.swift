// SPDX-License-Identifier: Apache-2.0
// Decimal formatting for logs, tables and JSON without Foundation.

/// `v` with exactly `digits` decimals, rounded half away from zero (e.g. `-0.50`).
public func fixedPoint(_ v: Double, digits: Int) -> String {
    guard v.isFinite else { return v.isNaN ? "nan" : (v < 0 ? "-inf" : "inf") }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let n = Int64((abs(v) * scale).rounded())
    let whole = n / Int64(scale), frac = n % Int64(scale)
    var fs = String(frac)
    while fs.count < digits { fs = "0" + fs }
    return (v < 0 && n != 0 ? "-" : "") + String(whole) + (digits > 0 ? "." + fs : "")
}
