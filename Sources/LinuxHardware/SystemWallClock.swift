// SPDX-License-Identifier: Apache-2.0
// The kernel's wall clock: its synchronisation state (adjtimex) and a step (clock_settime).

import CLinuxSys
public import GateCore
import Glibc

/// CLOCK_REALTIME as the kernel keeps it. `synchronised` is the kernel's own flag, which
/// chrony, ntpd and systemd-timesyncd clear once they have a source (what `timedatectl`
/// shows as "System clock synchronized").
public struct SystemWallClock: WallClock {
    public init() {}

    public func state() throws(DeviceError) -> WallClockState {
        var wallMs: Int64 = 0, bootMs: Int64 = 0
        let synced = sprintgate_wall_clock_read(&wallMs, &bootMs)
        guard synced >= 0 else { throw DeviceError(operation: "adjtimex", errno: errno, path: "CLOCK_REALTIME") }
        return WallClockState(wallMs: wallMs, synchronised: synced == 1, sinceBootMs: bootMs)
    }

    public func set(wallMs: Int64) throws(DeviceError) {
        guard sprintgate_wall_clock_set_ms(wallMs) == 0 else {
            let e = errno
            throw DeviceError(operation: "clock_settime", errno: e, path: "CLOCK_REALTIME",
                              detail: e == EPERM
                                ? "the gate may not set the clock: its service needs CAP_SYS_TIME (AmbientCapabilities in sprintgate.service)"
                                : "the kernel refused the time")
        }
    }
}
