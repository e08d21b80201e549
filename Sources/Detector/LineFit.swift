// SPDX-License-Identifier: Apache-2.0
// Least-squares line through (time, position) samples held in caller-owned storage.

/// Fits position = intercept + slope · (t − tMean) to up to `capacity` samples kept in
/// storage the detector allocated once; adding and fitting never allocate.
struct LineFit {
    private let ts: UnsafeMutablePointer<Double>
    private let us: UnsafeMutablePointer<Double>
    private let keep: UnsafeMutablePointer<Bool>
    let capacity: Int
    private(set) var count = 0
    /// Time origin of the samples, nanoseconds on the frame clock.
    private(set) var originNs: Int64 = 0

    /// Uses `storage`, which must hold at least `2 * capacity` doubles, and `flags`,
    /// at least `capacity` booleans.
    init(storage: UnsafeMutablePointer<Double>, flags: UnsafeMutablePointer<Bool>, capacity: Int) {
        ts = storage
        us = storage + capacity
        keep = flags
        self.capacity = capacity
    }

    mutating func add(timeNs: Int64, position: Double) {
        guard count < capacity else { return }
        if count == 0 { originNs = timeNs }
        ts[count] = Double(timeNs &- originNs) * 1e-9
        us[count] = position
        keep[count] = true
        count += 1
    }

    /// Result of a fit, t in seconds from `originNs`.
    struct Line {
        var slope: Double
        var intercept: Double
        var tMean: Double
        var stt: Double
        var n: Int
        var residualRMS: Double

        func position(at t: Double) -> Double { intercept + slope * (t - tMean) }
    }

    private func fitKept() -> Line? {
        var n = 0.0, st = 0.0, su = 0.0
        for i in 0..<count where keep[i] { n += 1; st += ts[i]; su += us[i] }
        guard n >= 2 else { return nil }
        let tm = st / n, um = su / n
        var stt = 0.0, stu = 0.0
        for i in 0..<count where keep[i] {
            let dt = ts[i] - tm
            stt += dt * dt
            stu += dt * (us[i] - um)
        }
        guard stt > 0 else { return nil }
        let slope = stu / stt
        var sse = 0.0
        for i in 0..<count where keep[i] {
            let r = us[i] - (um + slope * (ts[i] - tm))
            sse += r * r
        }
        let rms = n > 2 ? (sse / (n - 2)).squareRoot() : 0
        return Line(slope: slope, intercept: um, tMean: tm, stt: stt, n: Int(n), residualRMS: rms)
    }

    /// Fits a line, then repeatedly drops the worst sample while it lies further than
    /// `outlierPixels` and three deviations of the rest from the line, keeping at least
    /// three samples and dropping at most a quarter of them.
    mutating func fit(outlierPixels: Double) -> Line? {
        for i in 0..<count { keep[i] = true }
        guard var line = fitKept() else { return nil }
        var dropped = 0
        while count - dropped > 3 && dropped * 4 < count {
            var worst = -1
            var worstR = 0.0
            for i in 0..<count where keep[i] {
                let r = abs(us[i] - line.position(at: ts[i]))
                if r > worstR { worstR = r; worst = i }
            }
            guard worst >= 0, worstR > outlierPixels else { break }
            keep[worst] = false
            guard let refit = fitKept(), worstR > 3 * refit.residualRMS else {
                keep[worst] = true
                break
            }
            line = refit
            dropped += 1
        }
        return line
    }
}
