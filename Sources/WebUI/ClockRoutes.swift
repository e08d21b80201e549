// SPDX-License-Identifier: Apache-2.0
// The gate's wall clock from the page: an offline board (no battery clock, no time
// service) takes the date and time of day from a coach's phone.

import Foundation
public import GateCore
import SQLiteStore
import Hummingbird
import Logging
import Synchronization

/// The gate's wall clock, connected by the daemon (the kernel's on a board, a pretend one
/// in the demo), and the last step the page made.
public final class WallClockSlot: Sendable {
    /// A step the page made: when (the new wall time) and by how much.
    public struct Step: Sendable, Hashable, Codable {
        public var atWallMs: Int64
        public var stepMs: Int64
    }
    private let clock = Mutex<(any WallClock)?>(nil)
    private let last = Mutex<Step?>(nil)
    public init() {}
    public func connect(_ c: any WallClock) { clock.withLock { $0 = c } }
    public var current: (any WallClock)? { clock.withLock { $0 } }
    public var lastStep: Step? { last.withLock { $0 } }
    func record(_ s: Step) { last.withLock { $0 = s } }
}

/// What `GET /api/clock` answers (and `POST`, with what the step moved).
struct ClockView: Encodable {
    var wallMs: Int64
    var synchronised: Bool
    /// The last time the page set the clock, since the gate started.
    var setFromPhone: WallClockSlot.Step?
    /// The stored records whose dates the step moved (`POST` only).
    var moved: WallShift?
    /// The wall times this boot stamped: from the boot to now, as the clock read.
    var bootWindow: ClosedRange<Int64>

    private enum CodingKeys: String, CodingKey { case wallMs, synchronised, setFromPhone, moved }
}

extension WebServer {
    /// Why these bounds: a phone's time before this release was built, or a century on,
    /// is a phone whose own clock is wrong; the gate keeps what it has rather than that.
    static let earliestPlausibleWallMs: Int64 = 1_767_225_600_000  // 2026-01-01 UTC
    static let latestPlausibleWallMs: Int64 = 4_102_444_800_000  // 2100-01-01 UTC

    func wallClock() throws -> any WallClock {
        guard let c = bridge.wallClock.current else {
            throw APIError(.notFound, field: "clock", reason: "this gate does not manage its clock")
        }
        return c
    }

    func clockView(_ c: any WallClock) throws -> ClockView {
        do {
            let s = try c.state()
            return ClockView(wallMs: s.wallMs, synchronised: s.synchronised, setFromPhone: bridge.wallClock.lastStep,
                             bootWindow: (s.wallMs - s.sinceBootMs)...s.wallMs)
        } catch {
            throw APIError(.serviceUnavailable, field: "clock", reason: "the clock cannot be read: \(error)")
        }
    }

    func addClockRoutes(to router: Router<WebContext>) {
        let s = self
        router.get("/api/clock") { _, _ in try s.json(try s.clockView(try s.wallClock())) }
        // The page sends the phone's time; a gate whose clock a time service keeps says so
        // and keeps it (a phone is not a better source than NTP).
        router.post("/api/clock") { request, context in
            let body = try await s.body(request, context)
            guard let n = Self.number(body["wallMs"]), n.isFinite, abs(n) < 1e15 else {
                throw APIError.invalid("wallMs", "must be the phone's time in milliseconds since 1970 (Date.now())")
            }
            let wallMs = Int64(n.rounded())
            guard wallMs >= Self.earliestPlausibleWallMs, wallMs < Self.latestPlausibleWallMs else {
                throw APIError.invalid("wallMs", "\(Self.isoDate(wallMs)) is not a plausible date: check the phone's own clock")
            }
            let clock = try s.wallClock()
            let before = try s.clockView(clock)
            guard !before.synchronised else {
                throw APIError(.conflict, field: "clock",
                               reason: "the gate's clock is kept by a time service (NTP) and is synchronised; it was not changed")
            }
            do { try clock.set(wallMs: wallMs) } catch {
                s.logger.error("the wall clock was not set from the page: \(error)")
                throw APIError(.serviceUnavailable, field: "clock", reason: "the clock was not set: \(error)")
            }
            let step = wallMs - before.wallMs
            s.bridge.wallClock.record(.init(atWallMs: wallMs, stepMs: step))
            s.logger.notice("wall clock set from the page (\(s.client(context))): it read \(Self.isoDate(before.wallMs)), now \(Self.isoDate(wallMs)) (a step of \(Double(step) / 1000) s)")
            // What this boot stored was stamped by the clock just stepped: it moves by the
            // same step. (Records from earlier boots keep their dates.)
            var moved: WallShift?
            do {
                moved = try s.book.shiftWallTimes(in: before.bootWindow, by: step)
                s.hub.bookChanged()
                if let m = moved, m != WallShift() {
                    s.logger.notice("dates moved by the clock's step: \(m.runs) runs, \(m.sessions) sessions, \(m.gpsRuns) GPS runs, \(m.skiTracks) ski tracks, \(m.ergSessions) erg sessions")
                }
            } catch {
                s.logger.warning("the dates stored since the gate started were not moved by the clock's step: \(error)")
            }
            var view = try s.clockView(clock)
            view.moved = moved
            return try s.json(view)
        }
    }

    static func isoDate(_ wallMs: Int64) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        return f.string(from: Date(timeIntervalSince1970: Double(wallMs) / 1000))
    }
}
