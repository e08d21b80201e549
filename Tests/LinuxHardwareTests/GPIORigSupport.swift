// SPDX-License-Identifier: Apache-2.0
// gpio-sim sysfs helpers for the GPIO and audio rig tests: press a line, read an output's value.

#if canImport(Glibc)
import Glibc
#endif

/// The rig's simulated lines and sound devices, on top of `Rig` (Rig.swift).
enum HardwareRig {
    static func env(_ name: String) -> String? { Rig.env(name) }

    /// True inside the rig (`scripts/sim-tier` sets SPRINTGATE_RIG=1).
    static var gpioAvailable: Bool { Rig.available && !Rig.gpioSimSysfs.isEmpty }
    static var audioAvailable: Bool { Rig.available && !Rig.alsaPlayback.isEmpty }

    static var chipLabel: String { Rig.gpioChipLabel }
    static var lineNames: [String] {
        Rig.gpioLines.isEmpty ? ["start-button", "ready-led", "armed-led", "crossing-led", "buzzer"] : Rig.gpioLines
    }

    /// The gpio-sim offset of a named line.
    static func offset(_ line: String) -> Int { lineNames.firstIndex(of: line)! }

    /// Sets the simulated external pull of a line ("pull-up" or "pull-down").
    static func pull(_ line: String, _ value: String) {
        writeFile("\(Rig.gpioSimSysfs)/sim_gpio\(offset(line))/pull", value)
    }

    /// The simulated line's electrical value (0 or 1) as gpio-sim shows it.
    static func value(_ line: String) -> Int {
        Int(readFile("\(Rig.gpioSimSysfs)/sim_gpio\(offset(line))/value").filter { $0.isNumber }) ?? -1
    }

    /// Runs `body` with the calling thread at real-time priority, then puts it back.
    /// Why: the rig's guest has one emulated CPU, shared with the gate under test; a watcher
    /// polling an output at normal priority can be kept off the CPU for longer than a
    /// 100 ms buzz and miss it on a slow host. A real-time thread runs as soon as its sleep
    /// ends, and it sleeps between reads, so the gate keeps the CPU otherwise.
    static func promptly<T>(_ body: () -> T) -> T {
        var policy: Int32 = 0
        var saved = sched_param()
        pthread_getschedparam(pthread_self(), &policy, &saved)
        var realTime = sched_param()
        realTime.sched_priority = 10
        let raised = pthread_setschedparam(pthread_self(), SCHED_FIFO, &realTime) == 0
        defer { if raised { pthread_setschedparam(pthread_self(), policy, &saved) } }
        return body()
    }

    static func writeFile(_ path: String, _ text: String) {
        let fd = open(path, O_WRONLY)
        precondition(fd >= 0, "cannot open \(path)")
        _ = text.withCString { write(fd, $0, strlen($0)) }
        close(fd)
    }

    static func readFile(_ path: String) -> String {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var buf = [UInt8](repeating: 0, count: 64)
        let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress, 64) }
        return String(decoding: buf.prefix(max(n, 0)), as: UTF8.self)
    }

    static func sleepMs(_ ms: Double) { usleep(UInt32(ms * 1000)) }
}
