// SPDX-License-Identifier: Apache-2.0
// Writes NMEA 0183 logs of synthetic drives, for gpsfake to feed a real gpsd.

import Foundation
import GPSD
import GateCore
import GateSim
import GPSTiming

/// One receiver epoch: what a receiver at `time` would say.
struct NMEAEpoch {
    /// Seconds after the log's first second (12:00:00 UTC on 2026-11-27).
    var time: Double
    var speed: Double
    /// Metres east of the start line.
    var east: Double
    /// Metres north of it, and above mean sea level.
    var north = 0.0
    var altitude = 45.0
    /// 0 no fix, 1 GPS, 2 DGPS (GGA's quality).
    var quality = 2
    var hdop = 0.6
    var satellites = 12
}

enum NMEALog {
    /// The log's first second: 2026-11-27T12:00:00Z.
    static let base = GPSDReport.parseTime("2026-11-27T12:00:00Z")!
    static let latitude = 51.5, longitude = -0.1667, metresPerDegree = 111_319.49

    /// gpsd's horizontal error for a DGPS fix is 4.75 m per unit of HDOP (its UERE with
    /// DGPS, at 95 %); this HDOP gives `eph` metres.
    static func hdop(eph: Double, quality: Int = 2) -> Double { eph / (quality == 2 ? 4.75 : 19) }

    static func checksum(_ body: String) -> String {
        let x = body.utf8.reduce(UInt8(0)) { $0 ^ $1 }
        return String(format: "%02X", x)
    }

    static func sentence(_ body: String) -> String { "$\(body)*\(checksum(body))\r\n" }

    static func clock(_ t: Double) -> String {
        let cs = Int((t * 100).rounded())
        let h = 12 + cs / 360_000, m = cs / 6000 % 60, s = cs / 100 % 60, c = cs % 100
        return String(format: "%02d%02d%02d.%02d", h, m, s, c)
    }

    static func angle(_ deg: Double, width: Int) -> String {
        let a = abs(deg)
        let d = Int(a)
        let minutes = (a - Double(d)) * 60
        return String(format: "%0\(width)d%09.6f", d, minutes)
    }

    static func write(_ epochs: [NMEAEpoch], header: [String]) -> String {
        var out = header.map { "# \($0)\n" }.joined()
        for e in epochs {
            let time = clock(e.time)
            let lat = latitude + e.north / metresPerDegree
            let lon = longitude + e.east / (metresPerDegree * cos(latitude * .pi / 180))
            let fix = e.quality > 0
            let latText = fix ? "\(angle(lat, width: 2)),N" : ","
            let lonText = fix ? "\(angle(lon, width: 3)),\(lon < 0 ? "W" : "E")" : ","
            out += sentence("GPGGA,\(time),\(latText),\(lonText),\(e.quality),\(String(format: "%02d", fix ? e.satellites : 0)),"
                + (fix ? String(format: "%.2f", e.hdop) : "") + ",\(fix ? String(format: "%.1f", e.altitude) : ""),M,47.0,M,,")
            let used = (1 ... max(1, min(12, e.satellites))).map { String(format: "%02d", $0) }
            let slots = (fix ? used : []) + Array(repeating: "", count: 12 - (fix ? used.count : 0))
            out += sentence("GPGSA,A,\(fix ? 3 : 1),\(slots.joined(separator: ",")),"
                + (fix ? String(format: "%.2f,%.2f,%.2f", e.hdop * 1.6, e.hdop, e.hdop * 1.3) : ",,"))
            // The satellites in view, once a second as receivers send them (gpsd's SKY).
            if fix, Int((e.time * 100).rounded()) % 100 == 0 {
                let sats: [String] = (1 ... e.satellites).map { (n: Int) -> String in
                    let elevation = 15 + n * 5, azimuth = n * 29 % 360, snr = 38 + n % 8
                    return String(format: "%02d,%02d,%03d,%02d", n, elevation, azimuth, snr)
                }
                let pages = (sats.count + 3) / 4
                for page in 0 ..< pages {
                    let chunk = sats[(page * 4) ..< min(sats.count, page * 4 + 4)].joined(separator: ",")
                    out += sentence("GPGSV,\(pages),\(page + 1),\(String(format: "%02d", sats.count)),\(chunk)")
                }
            }
            let knots = e.speed / 0.514444
            out += sentence("GPRMC,\(time),\(fix ? "A" : "V"),\(latText),\(lonText),\(fix ? String(format: "%.3f", knots) : ""),"
                + "\(fix ? "90.0" : ""),271126,,,\(fix ? (e.quality == 2 ? "D" : "A") : "N")")
        }
        return out
    }

    /// A receiver sampling a drive: `still` seconds at rest (launch at that instant, not on
    /// the fix grid), then the drive; fix times on the receiver's grid of `rate` Hz, as
    /// real receivers align them. Speeds with Gaussian noise of `sigma`.
    static func epochs(_ truth: Truth, rate: Double, still: Double, sigma: Double = 0, eph: Double = 3,
                       seed: UInt64 = 1) -> [NMEAEpoch] {
        var noise = SplitMix64(seed: seed)
        var out: [NMEAEpoch] = []
        let end = still + truth.samples.last!.t
        var i = 0
        while Double(i) / rate < end {
            let t = Double(i) / rate
            let tau = t - still
            let v = tau <= 0 ? 0 : truth.speed(at: tau)
            let d = tau <= 0 ? 0 : truth.distance(at: tau)
            let measured = sigma > 0 ? abs(v + sigma * noise.normal()) : v
            out.append(NMEAEpoch(time: t, speed: measured, east: d, hdop: hdop(eph: eph)))
            i += 1
        }
        return out
    }
}
