// SPDX-License-Identifier: Apache-2.0
// gpsd's JSON protocol: one report per line (VERSION, DEVICES, DEVICE, WATCH, TPV, SKY, ERROR).

public import GPSTiming
import Foundation

/// A device gpsd reads: its DEVICE or DEVICES report.
public struct GPSDDevice: Sendable, Hashable {
    /// The receiver's path, e.g. /dev/ttyACM0.
    public var path: String
    /// gpsd's driver for it ("u-blox", "NMEA0183"), once identified.
    public var driver: String?
    /// The receiver's fix interval as gpsd sees it, seconds (`cycle`); nil when not said.
    public var cycle: Double?
    /// The shortest interval the receiver can be set to, seconds (`mincycle`).
    public var minimumCycle: Double?
    /// False when gpsd has closed the device (unplugged): DEVICE with `activated` 0.
    public var active: Bool

    public init(path: String, driver: String?, cycle: Double?, minimumCycle: Double?, active: Bool) {
        self.path = path
        self.driver = driver
        self.cycle = cycle
        self.minimumCycle = minimumCycle
        self.active = active
    }
}

/// What the gate can do about a receiver's rate through gpsd.
public enum GPSDRateChange: Sendable, Hashable {
    /// The receiver already runs at the rate asked (within 5 %).
    case already
    /// gpsd can set it: ask for this fix interval, seconds (DEVICE `cycle`).
    case set(cycle: Double)
    /// gpsd cannot set it; what the user can do instead.
    case unsupported(String)
}

extension GPSDDevice {
    /// How to bring this receiver to `hertz` fixes a second. gpsd reports `mincycle` only
    /// for drivers that can change the rate (u-blox, SiRF, and others it speaks binary to);
    /// a receiver read as plain NMEA 0183 keeps whatever rate it was set to.
    public func rateChange(to hertz: Double) -> GPSDRateChange {
        let want = 1 / hertz
        if let cycle, abs(cycle - want) <= 0.05 * want { return .already }
        let rate = ReceiverStatus.hz(hertz)
        guard let minimumCycle, cycle != nil else {
            return .unsupported("gpsd cannot set the rate of this receiver (\(driver ?? "not identified yet")): set it to \(rate) Hz with its maker's tool, or set rate_hz in [gps] to its rate")
        }
        if want < minimumCycle * 0.999 {
            return .unsupported("the receiver's fastest rate is \(ReceiverStatus.hz(1 / minimumCycle)) Hz, below the \(rate) Hz asked: lower rate_hz in [gps]")
        }
        return .set(cycle: want)
    }
}

/// A TPV report: time, position, velocity, and gpsd's error estimates.
public struct GPSDPosition: Sendable, Hashable {
    public var device: String?
    public var mode: FixMode
    /// The fix's time; nil before the receiver has the date and time.
    public var time: GPSTime?
    /// Speed over ground, m/s.
    public var speed: Double?
    /// Error estimates (95 %): speed m/s, horizontal position m, vertical position m.
    public var eps: Double?
    public var eph: Double?
    public var epv: Double?
    public var latitude: Double?
    public var longitude: Double?
    /// Metres above mean sea level (`altMSL`, or `alt` from gpsd before 3.20).
    public var altitude: Double?
    /// Course over ground, degrees true.
    public var track: Double?

    /// The fix the timers take: needs the time and, with a 2D or 3D fix, the speed. A report
    /// without a fix is a fix of mode `.none` (the timer hears that the fix was lost).
    /// `driver` is gpsd's driver for the device (its DEVICE report).
    ///
    /// Why: gpsd's `eps` is the receiver's own speed accuracy only where the driver reads one
    /// (u-blox, SiRF and other binary protocols). With NMEA 0183 gpsd derives it from the
    /// position error over the fix interval, which reads 80 m/s at 10 Hz and says nothing of
    /// a Doppler speed; it is dropped, and the timer assumes a typical receiver's speed noise.
    public func fix(driver: String?) -> GPSFix? {
        guard let time else { return nil }
        if mode >= .twoD, speed == nil { return nil }
        let ownEPS = driver.map { !$0.uppercased().contains("NMEA") } ?? false
        return GPSFix(time: time, mode: mode, speed: mode >= .twoD ? speed! : 0, speedError: ownEPS ? eps : nil,
                      horizontalError: eph, latitude: latitude, longitude: longitude, altitude: altitude)
    }
}

/// A SKY report: the satellites seen and used.
public struct GPSDSky: Sendable, Hashable {
    public var device: String?
    public var seen: Int
    public var used: Int
    public var hdop: Double?

    public init(device: String?, seen: Int, used: Int, hdop: Double?) {
        self.device = device
        self.seen = seen
        self.used = used
        self.hdop = hdop
    }
}

/// The devices' drivers as gpsd's DEVICES and DEVICE reports name them, so each position
/// becomes a fix with what its driver can be trusted for.
public struct GPSDDrivers: Sendable {
    public private(set) var devices: [String: GPSDDevice] = [:]
    public init() {}

    /// Takes a report; returns the fix when it is a position with one.
    public mutating func fix(_ report: GPSDReport) -> GPSFix? {
        switch report {
        case .devices(let list): devices = Dictionary(list.map { ($0.path, $0) }, uniquingKeysWith: { $1 })
        case .device(let d): devices[d.path] = d.active ? d : nil
        case .position(let p): return p.fix(driver: p.device.flatMap { devices[$0]?.driver } ?? devices.values.first?.driver)
        default: break
        }
        return nil
    }
}

/// One line from gpsd.
public enum GPSDReport: Sendable, Hashable {
    case version(release: String)
    case devices([GPSDDevice])
    case device(GPSDDevice)
    case watch(enabled: Bool)
    case position(GPSDPosition)
    case sky(GPSDSky)
    /// gpsd refused a request; the message as it said it.
    case error(String)
    /// A report class the gate does not use (GST, ATT, PPS, TOFF, ...).
    case other(String)

    /// The longest line gpsd sends (its GPS_JSON_RESPONSE_MAX is 4096; SKY with many
    /// satellites is the longest report), with room to spare.
    public static let maximumLine = 16384

    /// Decodes one line. Throws `GPSDDecodeError` naming what was wrong; the caller counts
    /// it and reads on.
    public static func decode(_ line: some StringProtocol) throws(GPSDDecodeError) -> GPSDReport {
        let data = Data(line.utf8)
        let decoder = JSONDecoder()
        func read<T: Decodable>(_ type: T.Type) throws(GPSDDecodeError) -> T {
            do { return try decoder.decode(type, from: data) } catch {
                throw GPSDDecodeError(Self.reason(error), line)
            }
        }
        let cls = try read(Wire.Head.self).class
        switch cls {
        case "VERSION":
            return .version(release: try read(Wire.Version.self).release)
        case "DEVICES":
            return .devices(try read(Wire.Devices.self).devices.map { (d) throws(GPSDDecodeError) in try device(d, line) })
        case "DEVICE":
            return .device(try device(try read(Wire.Device.self), line))
        case "WATCH":
            return .watch(enabled: try read(Wire.Watch.self).enable ?? false)
        case "TPV":
            return .position(try position(try read(Wire.TPV.self), line))
        case "SKY":
            let w = try read(Wire.Sky.self)
            let sats = w.satellites ?? []
            // Newer gpsd states the counts; older lists the satellites only.
            return .sky(GPSDSky(device: w.device, seen: w.nSat ?? sats.count, used: w.uSat ?? sats.filter { $0.used == true }.count,
                                hdop: w.hdop))
        case "ERROR":
            return .error(try read(Wire.Failure.self).message ?? "(no message)")
        default:
            return .other(cls)
        }
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted: return "not JSON"
        case DecodingError.keyNotFound(let key, _): return "no \(key.stringValue)"
        case DecodingError.typeMismatch(_, let c) where c.codingPath.isEmpty: return "not a JSON object"
        case DecodingError.typeMismatch(_, let c), DecodingError.valueNotFound(_, let c):
            return "\(c.codingPath.map(\.stringValue).joined(separator: ".")) of the wrong type"
        default: return "not a gpsd report"
        }
    }

    /// The reports' fields as gpsd's JSON protocol names them (gpsd_json(5)).
    private enum Wire {
        struct Head: Decodable { var `class`: String }
        struct Version: Decodable { var release: String }
        struct Devices: Decodable { var devices: [Device] }
        struct Device: Decodable {
            var path: String?
            var driver: String?
            var activated: Activated?
            var cycle: Double?
            var mincycle: Double?
        }
        /// A time string while the device is open; 0 when gpsd has closed it.
        enum Activated: Decodable {
            case at(String), closed
            init(from decoder: any Decoder) throws {
                let c = try decoder.singleValueContainer()
                if let s = try? c.decode(String.self), !s.isEmpty { self = .at(s) } else { self = .closed }
            }
        }
        struct Watch: Decodable { var enable: Bool? }
        struct TPV: Decodable {
            var device: String?
            var mode: Int
            var time: String?
            var speed: Double?
            var eps: Double?
            var eph: Double?
            var epx: Double?
            var epy: Double?
            var epv: Double?
            var lat: Double?
            var lon: Double?
            var altMSL: Double?
            var alt: Double?
            var track: Double?
        }
        struct Sky: Decodable {
            struct Satellite: Decodable { var used: Bool? }
            var device: String?
            var satellites: [Satellite]?
            var nSat: Int?
            var uSat: Int?
            var hdop: Double?
        }
        struct Failure: Decodable { var message: String? }
    }

    private static func device(_ d: Wire.Device, _ line: some StringProtocol) throws(GPSDDecodeError) -> GPSDDevice {
        guard let path = d.path else { throw GPSDDecodeError("a device without a path", line) }
        let active: Bool
        switch d.activated {
        case .at: active = true
        case .closed: active = false
        case nil: active = d.driver != nil
        }
        return GPSDDevice(path: path, driver: d.driver, cycle: d.cycle, minimumCycle: d.mincycle, active: active)
    }

    private static func position(_ w: Wire.TPV, _ line: some StringProtocol) throws(GPSDDecodeError) -> GPSDPosition {
        // gpsd's mode 0 is "not seen yet"; it is no fix as far as timing goes.
        guard (0 ... 3).contains(w.mode), let mode = FixMode(rawValue: max(1, w.mode)) else {
            throw GPSDDecodeError("TPV mode \(w.mode)", line)
        }
        var time: GPSTime?
        if let s = w.time {
            guard let t = parseTime(s) else { throw GPSDDecodeError("TPV time \"\(s)\"", line) }
            time = t
        }
        var eph = w.eph
        if eph == nil, let x = w.epx, let y = w.epy { eph = (x * x + y * y).squareRoot() }
        if let s = w.speed, !(0 ... 1000).contains(s) { throw GPSDDecodeError("TPV speed \(s)", line) }
        return GPSDPosition(device: w.device, mode: mode, time: time, speed: w.speed, eps: w.eps, eph: eph, epv: w.epv,
                            latitude: w.lat, longitude: w.lon, altitude: w.altMSL ?? w.alt, track: w.track)
    }

    /// gpsd's ISO 8601 UTC time, "2026-11-27T12:00:02.800Z", to the nanosecond (no
    /// floating point on the way: a 25 Hz receiver's 40 ms steps stay exact).
    public static func parseTime(_ s: String) -> GPSTime? {
        let b = Array(s.utf8)
        guard b.count >= 20, b.last == UInt8(ascii: "Z") else { return nil }
        func digits(_ from: Int, _ n: Int) -> Int? {
            var v = 0
            for i in from ..< from + n {
                guard i < b.count, b[i] >= 48, b[i] <= 57 else { return nil }
                v = v * 10 + Int(b[i] - 48)
            }
            return v
        }
        guard let y = digits(0, 4), b[4] == 45, let mo = digits(5, 2), b[7] == 45, let d = digits(8, 2), b[10] == 84,
              let h = digits(11, 2), b[13] == 58, let mi = digits(14, 2), b[16] == 58, let sec = digits(17, 2),
              (1 ... 12).contains(mo), (1 ... 31).contains(d), h < 24, mi < 60, sec <= 60 else { return nil }
        var nanos: Int64 = 0
        var i = 19
        if b[i] == UInt8(ascii: ".") {
            i += 1
            var scale: Int64 = 100_000_000
            while i < b.count - 1 {
                guard b[i] >= 48, b[i] <= 57 else { return nil }
                nanos += Int64(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
        }
        guard i == b.count - 1 else { return nil }
        // Days from 1970-01-01 (Howard Hinnant's days_from_civil).
        let yy = mo <= 2 ? y - 1 : y
        let era = (yy >= 0 ? yy : yy - 399) / 400
        let yoe = yy - era * 400
        let doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = Int64(era * 146_097 + doe - 719_468)
        let seconds = days * 86400 + Int64(h * 3600 + mi * 60 + sec)
        return GPSTime(nanoseconds: seconds * 1_000_000_000 + nanos)
    }
}

/// A line from gpsd that could not be read, and why.
public struct GPSDDecodeError: Error, CustomStringConvertible {
    public let reason: String
    /// The start of the line, for the log.
    public let excerpt: String
    init(_ reason: String, _ line: some StringProtocol) {
        self.reason = reason
        excerpt = String(line.prefix(80))
    }
    public var description: String { "gpsd sent a line that could not be read (\(reason)): \(excerpt)" }
}
