// SPDX-License-Identifier: Apache-2.0
// The gate's wall clock from the page: an offline gate takes the phone's time, a
// synchronised one keeps its own.

import Foundation
import GateCore
import HTTPTypes
import Synchronization
import Testing
@testable import WebUI

/// A wall clock with a settable reading and state that records each step, and can refuse
/// as a process without CAP_SYS_TIME does.
final class FakeWallClock: WallClock {
    let reading: Mutex<WallClockState>
    let steps = Mutex<[Int64]>([])
    let refuses: Bool
    init(wallMs: Int64, synchronised: Bool, sinceBootMs: Int64 = 3_600_000, refuses: Bool = false) {
        reading = Mutex(WallClockState(wallMs: wallMs, synchronised: synchronised, sinceBootMs: sinceBootMs))
        self.refuses = refuses
    }
    func state() throws(DeviceError) -> WallClockState { reading.withLock { $0 } }
    func set(wallMs: Int64) throws(DeviceError) {
        if refuses { throw DeviceError(operation: "clock_settime", errno: 1, path: "CLOCK_REALTIME", detail: "needs CAP_SYS_TIME") }
        steps.withLock { $0.append(wallMs) }
        reading.withLock { $0.wallMs = wallMs }
    }
}

@Suite("Wall clock from the page")
struct ClockRouteTests {
    /// 2025-11-01, what an offline Pi might read after a power cut; and the phone's 2026-12-06.
    static let stale: Int64 = 1_761_955_200_000
    static let phone: Int64 = 1_796_560_000_000

    @Test("an unsynchronised gate reads its clock to anyone, and takes the phone's time with the PIN")
    func offlineGateTakesThePhonesTime() async throws {
        let f = Fixture()
        let clock = FakeWallClock(wallMs: Self.stale, synchronised: false)
        f.bridge.wallClock.connect(clock)
        try await f.test { client in
            try await client.execute(uri: "/api/clock", method: .get) { r in
                #expect(r.status == .ok)
                #expect(r.json["synchronised"] as? Bool == false)
                #expect((r.json["wallMs"] as? NSNumber)?.int64Value == Self.stale)
                #expect(r.json["setFromPhone"] == nil)
            }
            // Without the PIN: refused, the clock untouched.
            try await client.execute(uri: "/api/clock", method: .post, headers: jsonHeader, body: body("{\"wallMs\": \(Self.phone)}")) { r in
                #expect(r.status == .unauthorized)
            }
            #expect(clock.steps.withLock { $0 }.isEmpty)
            try await client.execute(uri: "/api/clock", method: .post, headers: pinHeader, body: body("{\"wallMs\": \(Self.phone)}")) { r in
                #expect(r.status == .ok)
                #expect((r.json["wallMs"] as? NSNumber)?.int64Value == Self.phone)
                let step = try #require(r.json["setFromPhone"] as? [String: Any])
                #expect((step["stepMs"] as? NSNumber)?.int64Value == Self.phone - Self.stale)
                #expect((step["atWallMs"] as? NSNumber)?.int64Value == Self.phone)
            }
            #expect(clock.steps.withLock { $0 } == [Self.phone])
            try await client.execute(uri: "/api/clock", method: .get) { r in
                #expect(r.json["setFromPhone"] != nil)
            }
        }
    }

    @Test("the runs this boot stored on the unset clock move by the step; an earlier boot's stay; the answer says what moved")
    func storedRunsMoveWithTheClock() async throws {
        let f = Fixture()
        // Up for an hour on the stale clock: two runs in it, one from before the boot.
        let clock = FakeWallClock(wallMs: Self.stale, synchronised: false, sinceBootMs: 3_600_000)
        f.bridge.wallClock.connect(clock)
        let old = try f.book.record(f.run(3.30, at: Double(Self.stale - 172_800_000) / 1000))
        let a = try f.book.record(f.run(3.20, at: Double(Self.stale - 1_800_000) / 1000))
        let b = try f.book.record(f.run(3.10, at: Double(Self.stale - 60_000) / 1000))
        try await f.test { client in
            try await client.execute(uri: "/api/clock", method: .post, headers: pinHeader, body: body("{\"wallMs\": \(Self.phone)}")) { r in
                #expect(r.status == .ok)
                let moved = try #require(r.json["moved"] as? [String: Any])
                #expect(moved["runs"] as? Int == 2 && moved["sessions"] as? Int == 1)
            }
        }
        let step = Double(Self.phone - Self.stale) / 1000
        #expect(try f.book.run(id: a.id).wallTime == Double(Self.stale - 1_800_000) / 1000 + step)
        #expect(try f.book.run(id: b.id).wallTime == Double(Self.stale - 60_000) / 1000 + step)
        #expect(try f.book.run(id: old.id).wallTime == Double(Self.stale - 172_800_000) / 1000)
    }

    @Test("a gate a time service keeps is not moved by a phone")
    func synchronisedGateKeepsItsClock() async throws {
        let f = Fixture()
        let clock = FakeWallClock(wallMs: Self.phone + 3_000, synchronised: true)
        f.bridge.wallClock.connect(clock)
        try await f.test { client in
            try await client.execute(uri: "/api/clock", method: .post, headers: pinHeader, body: body("{\"wallMs\": \(Self.phone)}")) { r in
                #expect(r.status == .conflict)
                #expect(r.errorField == "clock")
                #expect(r.text.contains("NTP"))
            }
        }
        #expect(clock.steps.withLock { $0 }.isEmpty)
    }

    @Test("a phone's implausible time, a missing or non-numeric one, is refused with what to check",
          arguments: ["{\"wallMs\": 0}", "{\"wallMs\": 1700000000000}", "{\"wallMs\": 5000000000000}", "{\"wallMs\": \"now\"}",
                      "{\"wallMs\": true}", "{}", "{\"wallMs\": 1e300}"])
    func implausibleTimesAreRefused(_ json: String) async throws {
        let f = Fixture()
        let clock = FakeWallClock(wallMs: Self.stale, synchronised: false)
        f.bridge.wallClock.connect(clock)
        try await f.test { client in
            try await client.execute(uri: "/api/clock", method: .post, headers: pinHeader, body: body(json)) { r in
                #expect(r.status == .badRequest)
                #expect(r.errorField == "wallMs")
            }
        }
        #expect(clock.steps.withLock { $0 }.isEmpty)
    }

    @Test("a clock the process may not set says what to change, and the gate's reading stays")
    func refusedStepSaysWhy() async throws {
        let f = Fixture()
        let clock = FakeWallClock(wallMs: Self.stale, synchronised: false, refuses: true)
        f.bridge.wallClock.connect(clock)
        try await f.test { client in
            try await client.execute(uri: "/api/clock", method: .post, headers: pinHeader, body: body("{\"wallMs\": \(Self.phone)}")) { r in
                #expect(r.status == .serviceUnavailable)
                #expect(r.text.contains("CAP_SYS_TIME"))
            }
            try await client.execute(uri: "/api/clock", method: .get) { r in
                #expect((r.json["wallMs"] as? NSNumber)?.int64Value == Self.stale)
                #expect(r.json["setFromPhone"] == nil)
            }
        }
    }

    @Test("a gate with no clock to manage answers 404, so the page shows no clock")
    func noClockIsNotFound() async throws {
        let f = Fixture()
        try await f.test { client in
            try await client.execute(uri: "/api/clock", method: .get) { r in
                #expect(r.status == .notFound)
            }
        }
    }
}
