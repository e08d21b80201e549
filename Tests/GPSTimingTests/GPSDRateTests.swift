// SPDX-License-Identifier: Apache-2.0
// Setting the receiver's rate through gpsd: the decision per device, the advice in the
// status, and a real gpsd writing UBX CFG-RATE to a u-blox it identified.

import Foundation
import GPSD
import GPSTiming
import Logging
import Testing

@Suite("the receiver's rate, set through gpsd")
struct GPSDRateTests {
    @Test("what can be done: a u-blox at 1 Hz is set to 10 or 25 Hz; one at the rate already is left; a plain NMEA receiver or a rate beyond the receiver's fastest is advice, not an attempt")
    func decision() {
        let ublox = GPSDDevice(path: "/dev/ttyACM0", driver: "u-blox", cycle: 1, minimumCycle: 0.02, active: true)
        #expect(ublox.rateChange(to: 10) == .set(cycle: 0.1))
        #expect(ublox.rateChange(to: 25) == .set(cycle: 0.04))
        #expect(ublox.rateChange(to: 1) == .already)
        var at10 = ublox
        at10.cycle = 0.1
        #expect(at10.rateChange(to: 10) == .already)
        let nmea = GPSDDevice(path: "/dev/ttyUSB0", driver: "NMEA0183", cycle: 1, minimumCycle: nil, active: true)
        guard case .unsupported(let why) = nmea.rateChange(to: 10) else { Issue.record("NMEA0183 settable"); return }
        #expect(why == "gpsd cannot set the rate of this receiver (NMEA0183): set it to 10 Hz with its maker's tool, or set rate_hz in [gps] to its rate")
        let slow = GPSDDevice(path: "/dev/ttyACM0", driver: "SiRF", cycle: 1, minimumCycle: 0.1, active: true)
        #expect(slow.rateChange(to: 10) == .set(cycle: 0.1))
        guard case .unsupported(let fastest) = slow.rateChange(to: 25) else { Issue.record("25 Hz beyond a 10 Hz receiver"); return }
        #expect(fastest == "the receiver's fastest rate is 10 Hz, below the 25 Hz asked: lower rate_hz in [gps]")
    }

    @Test("the rate warning says what to do in each case: run selftest --fix, wait for gpsd, set it with the maker's tool (or make gpsd writable), or gpsd's reason")
    func advice() {
        var s = ReceiverStatus(wantedRate: 10)
        s.rate = 1
        #expect(s.rateWarning == "the receiver sends 1 fixes a second, not 10: run sprintgate selftest --fix to have gpsd set it")
        s.rateControl = .asked(10)
        #expect(s.rateWarning?.hasSuffix("gpsd was asked to set it and has not answered yet") == true)
        s.rateControl = .set(10)
        #expect(s.rateWarning?.contains("gpsd set it to 10, but the receiver did not change") == true)
        #expect(s.rateWarning?.contains("-b") == true)
        s.rateControl = .refused("lower rate_hz in [gps]")
        #expect(s.rateWarning?.hasSuffix(": lower rate_hz in [gps]") == true)
        s.rate = 10
        #expect(s.rateWarning == nil)
    }

    /// Plays `bytes` through a gpsd that may write to the receiver, the gate's client asking
    /// for `wanted` fixes a second; the status once the log is through, and what gpsd wrote.
    /// (What the client learnt of the rate stays in its status after gpsd stops.)
    private func play(_ bytes: [UInt8], name: String, wanted: Double, setRate: Bool) async throws -> (ReceiverStatus, [UInt8]) {
        let port = GPSFake.freePort()
        let session = try await onOwnThread { try GPSFake.Session(bytes: Data(bytes), name: name, cycle: 0.05, port: port, writable: true) }
        let rx = GPSDReceiver(config: GPSDConfig(port: port, wantedRate: wanted, setRate: setRate), logger: Logger(label: "test")) { _ in }
        rx.start()
        defer { rx.stop() }
        let end = Date().addingTimeInterval(20)
        while rx.status.link == .noDaemon, Date() < end { try await Task.sleep(for: .milliseconds(50)) }
        session.go()
        let sent = try await onOwnThread { session.finish() }
        return (rx.status, sent)
    }

    private static let cfgRate: (UInt8, UInt8) = (0x06, 0x08)

    @Test("a u-blox through a real, writable gpsd: the client asks for 10 Hz, gpsd answers with the new cycle, and writes UBX CFG-RATE with a 100 ms measurement period to the receiver; the log's receiver keeps 1 Hz, so the warning says it did not change")
    func ubloxSetTo10Hz() async throws {
        if let why = GPSFake.skipReason { print("SKIP: \(why)"); return }
        let log = (0 ..< 30).flatMap { UBX.navPVT(seconds: $0) }
        let (s, sent) = try await play(log, name: "ublox", wanted: 10, setRate: true)
        #expect(s.rateControl == .set(10), "\(s)")
        let rates = UBX.frames(in: sent).filter { ($0.cls, $0.id) == Self.cfgRate }
        #expect(rates.count == 1, "CFG-RATE frames: \(rates.map(\.payload))")
        // measRate 100 ms, navRate 1.
        #expect(rates.first.map { Array($0.payload.prefix(4)) } == [100, 0, 1, 0])
        #expect(s.rateWarning?.contains("gpsd set it to 10, but the receiver did not change") == true)
    }

    @Test("without setRate (selftest without --fix) gpsd is never asked: no CFG-RATE written, and the warning points to selftest --fix")
    func notAsked() async throws {
        if let why = GPSFake.skipReason { print("SKIP: \(why)"); return }
        let log = (0 ..< 30).flatMap { UBX.navPVT(seconds: $0) }
        let (s, sent) = try await play(log, name: "ublox-ro", wanted: 10, setRate: false)
        #expect(s.rateControl == nil && s.rate != nil, "\(s)")
        #expect(!UBX.frames(in: sent).contains { ($0.cls, $0.id) == Self.cfgRate })
        #expect(s.rateWarning?.hasSuffix("run sprintgate selftest --fix to have gpsd set it") == true, "\(s)")
    }

    @Test("a plain NMEA receiver through a writable gpsd: not asked, and the warning says to use the maker's tool")
    func nmeaAdvice() async throws {
        if let why = GPSFake.skipReason { print("SKIP: \(why)"); return }
        let epochs = (0 ..< 30).map { NMEAEpoch(time: Double($0), speed: 0, east: 0) }
        let log = NMEALog.write(epochs, header: ["Name: 1 Hz at rest"])
        let (s, sent) = try await play(Array(log.utf8), name: "nmea-rate", wanted: 10, setRate: true)
        guard case .refused(let why) = s.rateControl else { Issue.record("status \(s)"); return }
        #expect(why.hasPrefix("gpsd cannot set the rate of this receiver (NMEA0183)"))
        #expect(!UBX.frames(in: sent).contains { ($0.cls, $0.id) == Self.cfgRate })
    }
}
