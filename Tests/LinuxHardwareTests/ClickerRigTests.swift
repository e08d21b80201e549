// SPDX-License-Identifier: Apache-2.0
// Clickers through evdev in the qemu rig: a USB clicker made with uinput (the kernel sees
// a real input device), read by the gate's evdev reader.

import CLinuxSys
import Foundation
import GateCore
import LinuxHardware
import Logging
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension RigDevices {
    @Suite(.serialized, .enabled(if: Rig.available, "needs the qemu rig (scripts/sim-tier)"))
    struct ClickerRigTests {
        func eventually(_ seconds: Double, _ condition: () -> Bool) -> Bool {
            let deadline = Sys.monotonicNow() + .seconds(seconds)
            while Sys.monotonicNow() < deadline {
                if condition() { return true }
                usleep(5_000)
            }
            return condition()
        }

        func keyboard(_ name: String, _ keys: [Int32]) throws -> Int32 {
            let fd = keys.withUnsafeBufferPointer { sprintgate_uinput_keyboard(name, $0.baseAddress, Int32($0.count)) }
            try #require(fd >= 0, "cannot create \(name) through /dev/uinput: errno \(errno)")
            return fd
        }

        @Test("a clicker (uinput, volume keys) is found; its presses arrive with their kernel time on CLOCK_MONOTONIC, releases do not; a keyboard without mark keys is left alone; unplugged it is dropped, plugged again it is read again")
        func clicker() throws {
            let presses = Mutex<[(key: Int32, at: MonotonicInstant, device: String)]>([])
            let plain = try keyboard("rig plain keys", [30, 31])  // A and S: no mark key
            defer { Glibc.close(plain) }
            var remote = try keyboard("rig clicker", [114, 115])
            let clickers = EvdevClickers(log: Logger(label: "sprintgate.video")) { key, at, device in
                presses.withLock { $0.append((key, at, device)) }
            }
            clickers.start()
            defer { clickers.stop() }
            #expect(eventually(10) { clickers.devices.contains { $0.hasPrefix("rig clicker (") } }, "found: \(clickers.devices)")
            #expect(!clickers.devices.contains { $0.hasPrefix("rig plain keys") })

            let before = Sys.monotonicNow()
            #expect(sprintgate_uinput_tap(plain, 30) == 0)
            #expect(sprintgate_uinput_tap(remote, 115) == 0)
            let after = Sys.monotonicNow()
            #expect(eventually(5) { presses.withLock { $0.count } == 1 })
            let first = try #require(presses.withLock { $0.first })
            #expect(first.key == 115 && first.device == "rig clicker")
            #expect(first.at >= before && first.at <= after, "press at \(first.at), tapped between \(before) and \(after)")
            usleep(300_000)
            #expect(presses.withLock { $0.count } == 1, "a release or the plain keyboard counted as a press")

            // Unplugged: the reader lets it go; plugged again: read again.
            Glibc.close(remote)
            #expect(eventually(10) { !clickers.devices.contains { $0.hasPrefix("rig clicker (") } }, "still reading: \(clickers.devices)")
            remote = try keyboard("rig clicker", [114, 115])
            defer { Glibc.close(remote) }
            #expect(eventually(10) { clickers.devices.contains { $0.hasPrefix("rig clicker (") } }, "not found again: \(clickers.devices)")
            #expect(sprintgate_uinput_tap(remote, 114) == 0)
            #expect(eventually(5) { presses.withLock { $0.count } == 2 })
            #expect(presses.withLock { $0.last?.key } == 114)
            print("clicker rig: presses \(presses.withLock { $0.map { "\($0.key)" } }), devices \(clickers.devices)")
        }
    }
}
