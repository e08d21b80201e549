// SPDX-License-Identifier: Apache-2.0
// GPX 1.1 tracks: written for other apps, and read (with libxml2) from any device's file.

import CXMLReader
import GateCore
public import GPSTiming

/// A track read from a GPX file.
public struct GPXTrack: Sendable {
    /// The track's name in the file (`trk/name`, else `metadata/name`); empty without one.
    public var name: String
    /// Its points in time order, one per instant.
    public var points: [TrackPoint]
    /// Track points left out: no time or no elevation (the runs need both).
    public var skipped: Int
    /// True when the file gave no speeds and they were worked out from the positions.
    public var speedsFromPositions: Bool
}

/// A GPX file that cannot be read, and why, with the line where that is known.
public struct GPXError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

public enum GPX {
    /// The largest file read: a 1 Hz day of 10 hours is about 5 MB of GPX, a 10 Hz one 40 MB.
    public static let maxBytes = 48 << 20
    /// The most points kept from one file (25 Hz for 10 hours).
    public static let maxPoints = 900_000

    // MARK: writing

    /// A GPX 1.1 file of one track. Speeds go in Garmin's TrackPointExtension (v2), which
    /// the common apps read; GPX 1.1 itself has no speed.
    public static func write(name: String, points: [TrackPoint]) -> String {
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="SprintGate" xmlns="http://www.topografix.com/GPX/1/1" \
            xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v2">

            """
        out += "<metadata><name>\(XMLText.escape(name))</name>"
        if let first = points.first { out += "<time>\(time(first.time))</time>" }
        out += "</metadata>\n<trk><name>\(XMLText.escape(name))</name><trkseg>\n"
        for p in points {
            out += "<trkpt lat=\"\(fixed(p.latitude, 7))\" lon=\"\(fixed(p.longitude, 7))\"><ele>\(fixed(p.altitude, 1))</ele>"
            out += "<time>\(time(p.time))</time><extensions><gpxtpx:TrackPointExtension><gpxtpx:speed>\(fixed(p.speed, 2))"
            out += "</gpxtpx:speed></gpxtpx:TrackPointExtension></extensions></trkpt>\n"
        }
        out += "</trkseg></trk>\n</gpx>\n"
        return out
    }

    /// `v` with `digits` decimals, as XML Schema's decimal type wants it (no exponent).
    static func fixed(_ v: Double, _ digits: Int) -> String {
        guard v.isFinite else { return "0" }
        var scale = 1.0
        for _ in 0 ..< digits { scale *= 10 }
        let n = Int64((abs(v) * scale).rounded())
        let whole = n / Int64(scale), frac = n % Int64(scale)
        var f = String(frac)
        while f.count < digits { f = "0" + f }
        let sign = v < 0 && n != 0 ? "-" : ""
        return digits == 0 ? "\(sign)\(whole)" : "\(sign)\(whole).\(f)"
    }

    /// ISO 8601 in UTC with milliseconds: 2026-01-15T09:12:03.100Z.
    public static func time(_ t: GPSTime) -> String {
        let ms = t.nanoseconds >= 0 ? (t.nanoseconds + 500_000) / 1_000_000 : (t.nanoseconds - 500_000) / 1_000_000
        var days = ms / 86_400_000, rest = ms % 86_400_000
        if rest < 0 { rest += 86_400_000; days -= 1 }
        let (y, m, d) = civil(days)
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let milli = rest % 1000
        let msText = milli < 10 ? "00\(milli)" : milli < 100 ? "0\(milli)" : "\(milli)"
        return "\(y)-\(two(m))-\(two(d))T\(two(rest / 3_600_000)):\(two(rest / 60_000 % 60)):\(two(rest / 1000 % 60)).\(msText)Z"
    }

    /// An ISO 8601 date-time as GPX has it (`2026-01-15T09:12:03Z`, with optional fraction
    /// and offset; no offset is UTC), else nil.
    public static func parseTime(_ text: some StringProtocol) -> GPSTime? {
        let b = Array(text.utf8)
        var i = 0
        func number(_ count: Int) -> Int64? {
            guard i + count <= b.count else { return nil }
            var v: Int64 = 0
            for k in i ..< i + count {
                guard (48 ... 57).contains(b[k]) else { return nil }
                v = v * 10 + Int64(b[k] - 48)
            }
            i += count
            return v
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }
        guard let y = number(4), expect(45), let mo = number(2), expect(45), let d = number(2), i < b.count, b[i] == 84 || b[i] == 116 else {
            return nil
        }
        i += 1
        guard let h = number(2), expect(58), let mi = number(2), expect(58), let s = number(2),
              (1 ... 12).contains(mo), (1 ... 31).contains(d), h <= 23, mi <= 59, s <= 60 else { return nil }
        var ns: Int64 = 0
        if i < b.count, b[i] == 46 {
            i += 1
            var scale: Int64 = 100_000_000, digits = 0
            while i < b.count, (48 ... 57).contains(b[i]) {
                ns += Int64(b[i] - 48) * scale
                scale /= 10
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
        }
        var offset: Int64 = 0
        if i < b.count {
            if b[i] == 90 || b[i] == 122 {
                i += 1
            } else if b[i] == 43 || b[i] == 45 {
                let sign: Int64 = b[i] == 45 ? -1 : 1
                i += 1
                guard let oh = number(2), expect(58), let om = number(2), oh <= 14, om <= 59 else { return nil }
                offset = sign * (oh * 3600 + om * 60)
            } else {
                return nil
            }
        }
        guard i == b.count else { return nil }
        let seconds = days(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s - offset
        return GPSTime(nanoseconds: seconds * 1_000_000_000 + ns)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func days(_ y: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y - 1 : y
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The date of a day since 1970-01-01.
    static func civil(_ z: Int64) -> (Int64, Int64, Int64) {
        let z = z + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    // MARK: reading

    private static let initialised: Bool = {
        sg_xml_init()
        return true
    }()

    /// Reads a GPX file's tracks (all `trk/trkseg/trkpt`, in time order). Points without a
    /// time or an elevation are skipped and counted; a file that is not GPX, is not
    /// well-formed XML, has a position out of range, or has no usable point is an error
    /// naming the line.
    public static func read(_ bytes: [UInt8]) throws(GPXError) -> GPXTrack {
        guard bytes.count <= maxBytes else { throw GPXError("the file is larger than \(maxBytes >> 20) MB") }
        guard !bytes.isEmpty else { throw GPXError("the file is empty: choose a .gpx file") }
        // XML starts with "<" after any byte-order mark and blank space.
        let text = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? bytes.dropFirst(3) : bytes[...]
        guard text.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "<") else {
            throw GPXError("the file is not XML: a GPX file begins with <?xml or <gpx")
        }
        _ = initialised
        let result: Result<GPXTrack, GPXError> = bytes.withUnsafeBufferPointer { buf in
            buf.withMemoryRebound(to: CChar.self) { chars in
                // The reader fetches nothing and expands no entity (see CXMLReader).
                guard let reader = sg_xml_open(chars.baseAddress, Int32(chars.count)) else {
                    return .failure(GPXError("the file could not be read as XML"))
                }
                defer { sg_xml_close(reader) }
                var pass = Reader(reader)
                return pass.read()
            }
        }
        return try result.get()
    }

    /// One pass of libxml2's streaming reader over the file.
    private struct Reader {
        let r: OpaquePointer
        var path: [String] = []
        var name = ""
        var metadataName = ""
        var points: [TrackPoint] = []
        var speeds: [Double?] = []
        var skipped = 0
        // The track point being read.
        var inPoint = false
        var lat = 0.0, lon = 0.0
        var ele: Double?, time: GPSTime?, speed: Double?
        var text = ""

        init(_ r: OpaquePointer) { self.r = r }

        /// The line of the element being read (where the parser stored it, not where its
        /// reading has got to).
        var line: Int { Int(sg_xml_line(r)) }

        func value() -> String {
            guard let v = sg_xml_value(r) else { return "" }
            return String(cString: v)
        }

        func localName() -> String {
            guard let v = sg_xml_local_name(r) else { return "" }
            return String(cString: v)
        }

        func attribute(_ name: String) -> String? {
            guard sg_xml_move_to_attribute(r, name) == 1 else { return nil }
            defer { sg_xml_move_to_element(r) }
            return value()
        }

        mutating func read() -> Result<GPXTrack, GPXError> {
            sg_xml_reset_last_error()
            while true {
                let status = sg_xml_read(r)
                if status == 0 { break }
                if status < 0 {
                    var why = "it is not well-formed XML"
                    if let m = sg_xml_last_error_message() {
                        why = String(cString: m).trimmingCharacters()
                    }
                    let at = sg_xml_last_error_message() != nil ? Int(sg_xml_last_error_line()) : line
                    return .failure(GPXError("line \(at): \(why)"))
                }
                do throws(GPXError) { try node() } catch { return .failure(error) }
            }
            guard sawRoot else { return .failure(GPXError("the file has no XML in it: choose a .gpx file")) }
            guard !points.isEmpty || skipped > 0 else {
                return .failure(GPXError("the file has no track points (trk/trkseg/trkpt)"))
            }
            return finish()
        }

        var sawRoot = false

        mutating func node() throws(GPXError) {
            switch sg_xml_node_type(r) {
            case Int32(SG_XML_ELEMENT):
                let n = localName()
                if !sawRoot {
                    sawRoot = true
                    guard n == "gpx" else { throw GPXError("not a GPX file: its first element is <\(n)>, not <gpx>") }
                }
                let empty = sg_xml_is_empty_element(r) == 1
                if n == "trkpt" {
                    try startPoint()
                    if empty { endPoint() }
                    if !empty { path.append(n) }
                    return
                }
                text = ""
                if !empty { path.append(n) }
            case Int32(SG_XML_TEXT), Int32(SG_XML_CDATA):
                text += value()
            case Int32(SG_XML_END_ELEMENT):
                guard let n = path.popLast() else { return }
                let parent = path.last
                if n == "trkpt" { endPoint(); return }
                let t = text.trimmingCharacters()
                if inPoint {
                    switch n {
                    case "ele": ele = Double(t).flatMap { $0.isFinite ? $0 : nil }
                    case "time": time = GPX.parseTime(t)
                    // GPX 1.0's own speed, or an extension's (Garmin's TrackPointExtension).
                    case "speed": speed = Double(t).flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
                    default: break
                    }
                } else if n == "name", parent == "trk", name.isEmpty {
                    name = t
                } else if n == "name", parent == "metadata" {
                    metadataName = t
                }
                text = ""
            default:
                break
            }
        }

        mutating func startPoint() throws(GPXError) {
            guard path.last == "trkseg" else {
                throw GPXError("line \(line): <trkpt> belongs in <trkseg>")
            }
            guard let la = attribute("lat"), let lo = attribute("lon") else {
                throw GPXError("line \(line): <trkpt> needs lat and lon")
            }
            guard let a = Double(la.trimmingCharacters()), (-90 ... 90).contains(a) else {
                throw GPXError("line \(line): lat \"\(la)\" is not a latitude (-90 to 90)")
            }
            guard let o = Double(lo.trimmingCharacters()), (-180 ... 180).contains(o) else {
                throw GPXError("line \(line): lon \"\(lo)\" is not a longitude (-180 to 180)")
            }
            guard points.count < GPX.maxPoints else {
                throw GPXError("the file has more than \(GPX.maxPoints) track points")
            }
            inPoint = true
            lat = a
            lon = o
            ele = nil
            time = nil
            speed = nil
        }

        mutating func endPoint() {
            inPoint = false
            guard let ele, let time else {
                skipped += 1
                return
            }
            points.append(TrackPoint(time: time, latitude: lat, longitude: lon, altitude: ele, speed: speed ?? 0))
            speeds.append(speed)
        }

        func finish() -> Result<GPXTrack, GPXError> {
            // In time order, one point per instant (the first kept).
            var order = Array(points.indices)
            order.sort { points[$0].time < points[$1].time || (points[$0].time == points[$1].time && $0 < $1) }
            var p: [TrackPoint] = [], given: [Double?] = []
            p.reserveCapacity(points.count)
            for i in order where p.last?.time != points[i].time {
                p.append(points[i])
                given.append(speeds[i])
            }
            guard p.count >= 2 else {
                if points.count >= 2 {
                    // Why: some devices write every point with one time (a clock never set).
                    return .failure(GPXError("the file's \(points.count) track points all have the same time "
                        + "(\(GPX.time(points[0].time))): the device's clock was not set, so the runs cannot be timed"))
                }
                return .failure(GPXError(skipped > 0
                    ? "the file has no track points with both a time and an elevation (\(skipped) without)"
                    : "the file has fewer than two track points"))
            }
            let derived = given.contains { $0 == nil }
            if derived { GPX.fillSpeeds(&p, given: given) }
            return .success(GPXTrack(name: name.isEmpty ? metadataName : name, points: p, skipped: skipped,
                                     speedsFromPositions: !given.contains { $0 != nil }))
        }
    }

    /// Why 2 s: a consumer receiver's position wanders by a metre or two from fix to fix;
    /// over 4 s at skiing speeds that is a small part of the distance covered.
    static let speedHalfWindow = 2.0

    /// Speeds the file did not give, from the positions: the straight distance between the
    /// points about 2 s either side over the time between them.
    static func fillSpeeds(_ p: inout [TrackPoint], given: [Double?]) {
        let n = p.count
        var lo = 0, hi = 0
        var derived = [Double](repeating: 0, count: n)
        for i in 0 ..< n {
            // The earliest point within the window before, and the latest within it after;
            // at least the neighbours.
            while lo < i - 1, p[i].time - p[lo].time > speedHalfWindow { lo += 1 }
            hi = max(hi, min(n - 1, i + 1))
            while hi + 1 < n, p[hi + 1].time - p[i].time <= speedHalfWindow { hi += 1 }
            let a = min(lo, max(0, i - 1))
            let dt = p[hi].time - p[a].time
            derived[i] = dt > 0 ? SkiDayAnalysis.distance(p[a], p[hi]) / dt : 0
        }
        for i in 0 ..< n where given[i] == nil { p[i].speed = derived[i] }
    }
}

extension String {
    /// Without the spaces and line breaks around it.
    func trimmingCharacters() -> String {
        let s = unicodeScalars
        guard let a = s.firstIndex(where: { !$0.properties.isWhitespace }),
              let b = s.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(s[a ... b])
    }
}
