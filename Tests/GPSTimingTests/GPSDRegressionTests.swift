// SPDX-License-Identifier: Apache-2.0
// Real receivers' logs from gpsd's own regression captures, through gpsfake and a real gpsd
// into the gate's client and timer, against golden outputs (gpsd's .chk model).

import Foundation
import GPSD
import GPSTiming
import Testing

@Suite("gpsd's regression captures through the gate's client", .serialized)
struct GPSDRegressionTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("GPSReplays/gpsd")

    /// One line per fix as the timer receives it, and the timer's events; nothing volatile.
    static func golden(_ fixes: [GPSFix]) -> String {
        func f(_ v: Double?, _ digits: Int) -> String { v.map { String(format: "%.\(digits)f", $0) } ?? "null" }
        var out = ""
        var timer = AccelerationRun()
        for fix in fixes {
            out += "{\"t_ns\":\(fix.time.nanoseconds),\"mode\":\(fix.mode.rawValue),\"speed\":\(f(fix.speed, 3)),\"eps\":\(f(fix.speedError, 3)),"
                + "\"eph\":\(f(fix.horizontalError, 3)),\"lat\":\(f(fix.latitude, 9)),\"lon\":\(f(fix.longitude, 9))}\n"
            for e in timer.ingest(fix) {
                switch e {
                case .state(let s, let why): out += "{\"state\":\"\(s.rawValue)\",\"why\":\"\(why)\"}\n"
                default: out += "{\"event\":\"\(e)\"}\n"
                }
            }
        }
        return out
    }

    @Test("each capture's fixes and the timer's states match the golden file (SPRINTGATE_REBUILD_CHK=1 writes it anew); no line gpsd sent is unreadable; a receiver standing still never launches",
          arguments: ["bu353s4.log", "nmea-fuzzy-cases.log"])
    func capture(name: String) async throws {
        if let why = GPSFake.skipReason { print("SKIP: \(why)"); return }
        let log = try String(contentsOf: Self.folder.appendingPathComponent(name), encoding: .utf8)
        let (reports, bad) = try await GPSFake.play(log, name: "capture")
        #expect(bad.isEmpty, "\(bad.prefix(3))")
        let fixes = GPSFake.fixes(reports)
        #expect(!fixes.isEmpty)
        let got = Self.golden(fixes)
        #expect(!got.contains("launched"))
        let chk = Self.folder.appendingPathComponent(name + ".chk")
        if ProcessInfo.processInfo.environment["SPRINTGATE_REBUILD_CHK"] == "1" {
            try got.write(to: chk, atomically: true, encoding: .utf8)
            return
        }
        let want = try #require(try? String(contentsOf: chk, encoding: .utf8), "no \(chk.path): run with SPRINTGATE_REBUILD_CHK=1 and review it")
        #expect(got == want, "\(name): differs from \(chk.lastPathComponent)\n\(got)")
    }
}

@Suite("gpsd's JSON reports")
struct GPSDReportTests {
    @Test("TPV, SKY, DEVICES, DEVICE, VERSION, WATCH and ERROR decode; times to the nanosecond")
    func decodes() throws {
        let tpv = try GPSDReport.decode(#"{"class":"TPV","device":"/dev/ttyACM0","mode":3,"time":"2026-11-27T12:00:02.840Z","speed":12.345,"eps":0.21,"eph":2.5,"lat":51.5,"lon":-0.16,"altMSL":45.0}"#)
        guard case .position(let p) = tpv else { Issue.record("\(tpv)"); return }
        #expect(p.time == GPSDReport.parseTime("2026-11-27T12:00:00Z")! + 2.84)
        let fix = try #require(p.fix(driver: "u-blox"))
        #expect(fix.speed == 12.345 && fix.speedError == 0.21 && fix.horizontalError == 2.5 && fix.mode == .threeD)
        // gpsd's eps with an NMEA receiver is its own guess from the position error: dropped.
        #expect(p.fix(driver: "NMEA0183")?.speedError == nil)
        // No fix yet: a fix of mode none, speed 0; no time: nothing.
        let none = try GPSDReport.decode(#"{"class":"TPV","mode":1,"time":"2026-11-27T12:00:03.000Z"}"#)
        guard case .position(let n) = none else { Issue.record("\(none)"); return }
        #expect(n.fix(driver: nil)?.mode == FixMode.none)
        guard case .position(let untimed) = try GPSDReport.decode(#"{"class":"TPV","mode":3,"speed":1}"#) else { Issue.record("not TPV"); return }
        #expect(untimed.fix(driver: nil) == nil)
        #expect(try GPSDReport.decode(#"{"class":"SKY","satellites":[{"PRN":1,"used":true},{"PRN":2,"used":false},{"PRN":3,"used":true}]}"#)
            == .sky(GPSDSky(device: nil, seen: 3, used: 2, hdop: nil)))
        #expect(try GPSDReport.decode(#"{"class":"SKY","nSat":14,"uSat":9,"hdop":0.8}"#) == .sky(GPSDSky(device: nil, seen: 14, used: 9, hdop: 0.8)))
        #expect(try GPSDReport.decode(#"{"class":"DEVICE","path":"/dev/ttyACM0","activated":0}"#)
            == .device(GPSDDevice(path: "/dev/ttyACM0", driver: nil, cycle: nil, minimumCycle: nil, active: false)))
        #expect(try GPSDReport.decode(#"{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/ttyACM0","driver":"u-blox","activated":"2026-11-27T12:00:00.000Z","cycle":0.10,"mincycle":0.02}]}"#)
            == .devices([GPSDDevice(path: "/dev/ttyACM0", driver: "u-blox", cycle: 0.1, minimumCycle: 0.02, active: true)]))
        #expect(try GPSDReport.decode(#"{"class":"VERSION","release":"3.22","proto_major":3}"#) == .version(release: "3.22"))
        #expect(try GPSDReport.decode(#"{"class":"WATCH","enable":true,"json":true}"#) == .watch(enabled: true))
        #expect(try GPSDReport.decode(#"{"class":"ERROR","message":"Unrecognized request"}"#) == .error("Unrecognized request"))
        #expect(try GPSDReport.decode(#"{"class":"PPS","device":"/dev/pps0"}"#) == .other("PPS"))
        #expect(GPSDReport.parseTime("1970-01-01T00:00:00Z") == GPSTime(nanoseconds: 0))
        #expect(GPSDReport.parseTime("2000-03-01T00:00:00.123456789Z") == GPSTime(nanoseconds: 951_868_800_123_456_789))
    }

    @Test("bad lines are errors that say what was wrong, never a crash or a made-up fix",
          arguments: [
            ("not json", "not JSON"), ("[1,2]", "not a JSON object"), (#"{"mode":3}"#, "no class"),
            (#"{"class":"TPV","time":"2026-11-27T12:00:00Z"}"#, "no mode"), (#"{"class":"TPV","mode":"3"}"#, "mode of the wrong type"),
            (#"{"class":"TPV","mode":7}"#, "TPV mode 7"), (#"{"class":"TPV","mode":3,"time":"yesterday"}"#, "TPV time"),
            (#"{"class":"TPV","mode":3,"time":"2026-13-27T12:00:00Z"}"#, "TPV time"), (#"{"class":"TPV","mode":3,"speed":-4}"#, "TPV speed"),
            (#"{"class":"TPV","mode":3,"speed":true}"#, "speed of the wrong type"), (#"{"class":"DEVICE","driver":"x"}"#, "a device without a path"),
            (#"{"class":"SKY","satellites":[1,2]}"#, "of the wrong type"), (#"{"class":"TPV","mode":3,"speed":1e999}"#, "not JSON"),
          ])
    func bad(line: String, reason: String) {
        do {
            let r = try GPSDReport.decode(line)
            Issue.record("\(line) decoded as \(r)")
        } catch {
            #expect(error.reason.contains(reason), "\(line): \(error.reason)")
        }
    }

    @Test("selftest's verdict: no gpsd or no receiver fails with what to do; no fix yet or a rate below the board's warns; a fix at the rate passes with mode, satellites, accuracy, rate and device")
    func verdict() {
        var s = ReceiverStatus(wantedRate: 10)
        s.detail = "gpsd does not answer on 127.0.0.1:2947 (Connection refused): is it installed and running? (systemctl status gpsd.socket)"
        #expect(s.verdict.ok == false && s.verdict.detail == s.detail)
        s.link = .noReceiver
        #expect(s.verdict.ok == false)
        s.link = .noFix
        #expect(s.verdict.ok == nil)
        s.link = .fix
        s.mode = .threeD
        s.satellitesUsed = 9
        s.satellitesSeen = 14
        s.horizontalError = 2.4
        s.rate = 10
        s.device = "/dev/ttyACM0"
        s.driver = "u-blox"
        #expect(s.verdict.ok == true)
        #expect(s.verdict.detail == "3D fix, 9 of 14 satellites, ±2 m, 10 fixes/s, /dev/ttyACM0 (u-blox)")
        s.rate = 5
        #expect(s.verdict.ok == nil && s.verdict.detail.hasSuffix("the receiver sends 5 fixes a second, not 10: run sprintgate selftest --fix to have gpsd set it"))
    }

    @Test("the fix rate is the median interval's: 10 Hz with a dropped fix and a late one is still 10 Hz; a 5 Hz receiver asked for 10 is warned about")
    func rate() {
        var r = FixRate()
        let t0 = GPSTime(seconds: 1000)
        for i in [0, 1, 2, 3, 5, 6, 7, 8, 9, 10] { r.note(t0 + Double(i) / 10) }
        #expect(abs(r.hertz! - 10) < 1e-6)
        var s = ReceiverStatus(wantedRate: 10)
        var five = FixRate()
        for i in 0 ..< 10 { five.note(t0 + Double(i) / 5) }
        s.rate = five.hertz
        #expect(s.rateWarning == "the receiver sends 5 fixes a second, not 10: run sprintgate selftest --fix to have gpsd set it")
        s.wantedRate = 5
        #expect(s.rateWarning == nil)
    }
}
