// SPDX-License-Identifier: Apache-2.0
// Synthetic ski days with exact truth: lifts, runs in turns, stops, an uphill stretch, a traverse.

import Foundation
import GateCore
import GateSim
import GPSTiming

struct SkiDaySynth {
    struct TruthRun { var start: Double; var end: Double; var vertical: Double; var distance: Double }
    struct TruthSpan { var start: Double; var end: Double }
    var fixes: [GPSFix] = []
    var runs: [TruthRun] = []
    var lifts: [TruthSpan] = []
    /// Time (s from the day's start), east and north (m), elevation (m), path so far (m).
    var t = 0.0, e = 0.0, n = 0.0, z = 1500.0, path = 0.0
    var rng: SplitMix64
    let rate: Double
    let altitudeNoise = 3.0, positionNoise = 2.0, speedNoise = 0.2
    static let origin = 1_800_000_000.0

    init(seed: UInt64, rate: Double = 1) {
        rng = SplitMix64(seed: seed)
        self.rate = rate
    }

    mutating func emit(speed: Double) {
        let lat0 = 46.0, lon0 = 7.0
        let lat = lat0 + (n + positionNoise * rng.normal()) / 111_194.9
        let lon = lon0 + (e + positionNoise * rng.normal()) / (111_194.9 * cos(lat0 * .pi / 180))
        fixes.append(GPSFix(time: GPSTime(seconds: Self.origin + t), mode: .threeD, speed: max(0, speed + speedNoise * rng.normal()),
                            horizontalError: 4, latitude: lat, longitude: lon, altitude: z + altitudeNoise * rng.normal()))
    }

    /// Moves for `seconds` at horizontal speed `v(s)` on heading `heading(s)` (radians from
    /// east), climbing at `vz` m/s; a fix every 1/rate s.
    mutating func move(seconds: Double, v: (Double) -> Double, vz: Double, heading: (Double) -> Double) {
        var s = 0.0
        while s < seconds - 1e-9 {
            let step = min(1 / rate, seconds - s)
            let speed = v(s)
            e += speed * cos(heading(s)) * step
            n += speed * sin(heading(s)) * step
            z += vz * step
            path += speed * step
            s += step
            t += step
            emit(speed: speed)
        }
    }

    mutating func stand(_ seconds: Double) { move(seconds: seconds, v: { _ in 0 }, vz: 0, heading: { _ in 0 }) }

    /// A chairlift: straight up at 4.5 m/s along the ground, climbing `vertical` metres at
    /// 2 m/s, stopped for 20 s halfway.
    mutating func lift(vertical: Double) {
        let start = t
        let heading = .pi / 2 + 0.3 * rng.unit()
        move(seconds: vertical / 4, v: { _ in 4.5 }, vz: 2, heading: { _ in heading })
        move(seconds: 20, v: { _ in 0.2 }, vz: 0, heading: { _ in heading })
        move(seconds: vertical / 4, v: { _ in 4.5 }, vz: 2, heading: { _ in heading })
        lifts.append(TruthSpan(start: start, end: t))
    }

    /// A run dropping `vertical` metres in turns at about `speed`; with a pause of `pause`
    /// seconds standing, a short uphill stretch (20 s skating up 8 m) or a 45 s traverse.
    mutating func run(vertical: Double, speed: Double, pause: Double = 0, uphill: Bool = false, traverse: Bool = false) {
        let start = t, top = z, path0 = path
        let base = -Double.pi / 2 + 0.4 * (rng.unit() - 0.5)
        let turns = { (s: Double) in base + 0.8 * sin(2 * .pi * s / 8) }
        // Vertical speed at about a 17 degree slope.
        let drop = speed * 0.3
        let legs = 1 + (pause > 0 ? 1 : 0) + (uphill ? 1 : 0) + (traverse ? 1 : 0)
        let piece = vertical / Double(legs)
        var left = vertical
        descend(piece, speed: speed, drop: drop, turns: turns); left -= piece
        if pause > 0 { stand(pause); descend(piece, speed: speed, drop: drop, turns: turns); left -= piece }
        if uphill {
            move(seconds: 20, v: { _ in 3 }, vz: 0.4, heading: { _ in base })
            descend(piece + 8, speed: speed, drop: drop, turns: turns); left -= piece
        }
        if traverse {
            move(seconds: 45, v: { _ in 7 }, vz: -0.05, heading: { _ in base + 1.2 })
            descend(piece - 45 * 0.05, speed: speed, drop: drop, turns: turns); left -= piece
        }
        if left > 0.5 { descend(left, speed: speed, drop: drop, turns: turns) }
        runs.append(TruthRun(start: start, end: t, vertical: top - z, distance: path - path0))
    }

    private mutating func descend(_ metres: Double, speed: Double, drop: Double, turns: (Double) -> Double) {
        move(seconds: metres / drop, v: { s in speed * (0.85 + 0.15 * sin(s)) }, vz: -drop, heading: turns)
    }

    /// A day of six lifts and six runs, with queues, stops at the top, pauses in some runs,
    /// uphill stretches and traverses in others, then a walk on the flat and lunch.
    static func day(seed: UInt64, rate: Double = 1) -> SkiDaySynth {
        var d = SkiDaySynth(seed: seed, rate: rate)
        d.stand(120)
        for k in 0 ..< 6 {
            d.stand(60 + 120 * d.rng.unit())
            let vertical = 250 + 300 * d.rng.unit()
            d.lift(vertical: vertical)
            d.stand(30 + 60 * d.rng.unit())
            d.run(vertical: vertical, speed: 8 + 6 * d.rng.unit(), pause: k % 2 == 0 ? 40 : 0, uphill: k % 3 == 1, traverse: k % 3 == 2)
        }
        d.move(seconds: 120, v: { _ in 1.2 }, vz: 0, heading: { _ in 0 })
        d.stand(1200)
        return d
    }
}
