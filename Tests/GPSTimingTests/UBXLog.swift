// SPDX-License-Identifier: Apache-2.0
// A u-blox receiver's binary output (UBX NAV-PVT), for gpsd to identify it as a u-blox,
// and UBX frames read back out of what gpsd wrote to it.

/// UBX frames: sync 0xB5 0x62, class, id, little-endian length, payload, Fletcher checksum.
enum UBX {
    static func frame(_ cls: UInt8, _ id: UInt8, _ payload: [UInt8]) -> [UInt8] {
        let body = [cls, id, UInt8(payload.count & 0xFF), UInt8(payload.count >> 8)] + payload
        var a: UInt8 = 0, b: UInt8 = 0
        for c in body { a = a &+ c; b = b &+ a }
        return [0xB5, 0x62] + body + [a, b]
    }

    /// Every well-formed frame in `bytes` (checksum correct), in order; other bytes (gpsd's
    /// NMEA and other vendors' probes) are passed over.
    static func frames(in bytes: [UInt8]) -> [(cls: UInt8, id: UInt8, payload: [UInt8])] {
        var out: [(UInt8, UInt8, [UInt8])] = []
        var i = 0
        while i + 8 <= bytes.count {
            guard bytes[i] == 0xB5, bytes[i + 1] == 0x62 else { i += 1; continue }
            let n = Int(bytes[i + 4]) | Int(bytes[i + 5]) << 8
            guard i + 8 + n <= bytes.count else { break }
            let payload = Array(bytes[i + 6 ..< i + 6 + n])
            if frame(bytes[i + 2], bytes[i + 3], payload) == Array(bytes[i ..< i + 8 + n]) {
                out.append((bytes[i + 2], bytes[i + 3], payload))
                i += 8 + n
            } else {
                i += 1
            }
        }
        return out
    }

    /// NAV-PVT (class 1, id 7, 92 bytes): a 3D fix standing at one place, `seconds` after
    /// 10:00:00 on 27 November 2026.
    static func navPVT(seconds: Int) -> [UInt8] {
        var p: [UInt8] = []
        func u(_ v: Int64, _ n: Int) { for k in 0 ..< n { p.append(UInt8(truncatingIfNeeded: v >> (8 * Int64(k)))) } }
        u(Int64((36_000 + seconds) * 1000), 4)           // iTOW, ms
        u(2026, 2); u(11, 1); u(27, 1)                       // year, month, day
        u(Int64(10 + seconds / 3600), 1); u(Int64(seconds / 60 % 60), 1); u(Int64(seconds % 60), 1)
        u(0x07, 1)                                           // date and time valid, resolved
        u(10, 4); u(0, 4)                                    // tAcc ns, nano
        u(3, 1); u(0x01, 1); u(0, 1); u(12, 1)               // 3D, gnssFixOK, flags2, satellites
        u(-10_000_000, 4); u(520_000_000, 4)                 // lon, lat (1e-7 degrees)
        u(100_000, 4); u(50_000, 4)                          // height, hMSL (mm)
        u(2000, 4); u(3000, 4)                               // hAcc, vAcc (mm)
        u(0, 4); u(0, 4); u(0, 4); u(0, 4); u(0, 4)          // velN, velE, velD, gSpeed, headMot
        u(200, 4); u(500_000, 4); u(100, 2)                  // sAcc mm/s, headAcc, pDOP
        while p.count < 92 { p.append(0) }
        return frame(0x01, 0x07, p)
    }
}
