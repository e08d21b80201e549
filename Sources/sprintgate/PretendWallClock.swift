// SPDX-License-Identifier: Apache-2.0
// The demo's stand-in for an offline board's wall clock (--offline-clock-days).

import Foundation
import GateCore
import Synchronization

/// A wall clock that reads this computer's, moved back by `behindMs`, and is never
/// synchronised: what a Pi without a battery clock or network shows after a power cut.
/// Setting it moves only its own offset; this computer's clock is never touched.
final class PretendWallClock: WallClock {
    private let offsetMs: Mutex<Int64>
    private let createdMs = PretendWallClock.hostMs()
    init(behindMs: Int64) { offsetMs = Mutex(-behindMs) }

    private static func hostMs() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    func state() throws(DeviceError) -> WallClockState {
        let host = Self.hostMs()
        return WallClockState(wallMs: host + offsetMs.withLock { $0 }, synchronised: false, sinceBootMs: host - createdMs)
    }

    func set(wallMs: Int64) throws(DeviceError) {
        offsetMs.withLock { $0 = wallMs - Self.hostMs() }
    }
}
