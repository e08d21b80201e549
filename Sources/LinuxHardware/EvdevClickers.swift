// SPDX-License-Identifier: Apache-2.0
// Presentation clickers, camera remotes and keyboards read through evdev: the keys such
// remotes send become marks for the delayed video.

import CLinuxSys
import Foundation
public import GateCore
public import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Watches `/dev/input/event*` on a thread of its own for devices that can send a mark key
/// and reports each key press with its kernel timestamp on CLOCK_MONOTONIC. Devices come
/// and go (a Bluetooth remote connects late, a USB one is pulled): the directory is read
/// again every two seconds and a device that fails is dropped quietly.
public final class EvdevClickers: @unchecked Sendable {
    /// Keys clickers and camera remotes send: Enter and Space (keyboards, many remotes),
    /// Page Up/Down (presentation clickers), volume up/down (Bluetooth camera shutters),
    /// play/pause, next/previous track and the camera key.
    public static let markKeys: [Int32] = [28, 57, 104, 109, 114, 115, 163, 164, 165, 212]
    /// How often the directory is read again for new devices.
    public static let rescan = Span.seconds(2)

    public let directory: String
    private let onPress: @Sendable (_ key: Int32, _ at: MonotonicInstant, _ device: String) -> Void
    private let log: Logger
    private let stopping = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private var thread: Thread?
    /// Names of the devices open now, for the status and tests.
    private let open = Mutex<[String]>([])

    public init(directory: String = "/dev/input", log: Logger,
                onPress: @escaping @Sendable (_ key: Int32, _ at: MonotonicInstant, _ device: String) -> Void) {
        self.directory = directory
        self.log = log
        self.onPress = onPress
    }

    /// The devices read now ("name (path)").
    public var devices: [String] { open.withLock { $0 } }

    public func start() {
        let t = Thread { [self] in
            run()
            done.signal()
        }
        t.name = "sprintgate.clickers"
        thread = t
        t.start()
    }

    public func stop() {
        guard thread != nil, !stopping.exchange(true, ordering: .relaxed) else { return }
        done.wait()
    }

    private struct Device {
        var fd: Int32
        var path: String
        var name: String
    }

    private func run() {
        var devices: [Device] = []
        var tried: Set<String> = []
        var nextScan = Sys.monotonicNow()
        while !stopping.load(ordering: .relaxed) {
            let now = Sys.monotonicNow()
            if now >= nextScan {
                nextScan = now + Self.rescan
                let present = Set(((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
                    .filter { $0.hasPrefix("event") }.map { directory + "/" + $0 })
                // A node that went away may come back as another device: try it again then.
                tried.formIntersection(present)
                for path in present.sorted() where !tried.contains(path) && !devices.contains(where: { $0.path == path }) {
                    tried.insert(path)
                    if let d = openDevice(path) {
                        devices.append(d)
                        log.notice("clicker: reading \(d.name) (\(path))")
                    }
                }
                open.withLock { $0 = devices.map { "\($0.name) (\($0.path))" } }
            }
            guard !devices.isEmpty else {
                usleep(100_000)
                continue
            }
            var fds = devices.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            // Why 250 ms: stop and the rescan are noticed within it; a press wakes it at once.
            let r = poll(&fds, nfds_t(fds.count), 250)
            guard r > 0 else { continue }
            var gone: [Int] = []
            for (i, p) in fds.enumerated() where p.revents != 0 {
                if !drain(devices[i]) { gone.append(i) }
            }
            for i in gone.reversed() {
                let d = devices.remove(at: i)
                Glibc.close(d.fd)
                // Its node may come back under the same name (plugged in again).
                tried.remove(d.path)
                log.notice("clicker: \(d.name) (\(d.path)) is gone")
            }
            if !gone.isEmpty { open.withLock { $0 = devices.map { "\($0.name) (\($0.path))" } } }
        }
        for d in devices { Glibc.close(d.fd) }
        open.withLock { $0 = [] }
    }

    /// Opens an event node that can send a mark key, its events stamped on CLOCK_MONOTONIC.
    private func openDevice(_ path: String) -> Device? {
        let fd = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        guard Self.markKeys.contains(where: { sprintgate_evdev_has_key(fd, $0) == 1 }),
              sprintgate_evdev_monotonic(fd) == 0 else {
            Glibc.close(fd)
            return nil
        }
        var buf = [CChar](repeating: 0, count: 128)
        let name = sprintgate_evdev_name(fd, &buf, Int32(buf.count)) >= 0
            ? String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : path
        return Device(fd: fd, path: path, name: name)
    }

    /// Reads what the device has; reports key presses (not repeats or releases). False when
    /// the device is gone.
    private func drain(_ d: Device) -> Bool {
        var type: Int32 = 0, code: Int32 = 0, value: Int32 = 0, ns: Int64 = 0
        while true {
            let r = sprintgate_evdev_read(d.fd, &type, &code, &value, &ns)
            if r == 0 { return true }
            if r < 0 { return false }
            // EV_KEY with value 1 is a press; 0 a release, 2 an auto-repeat.
            if type == 1, value == 1, Self.markKeys.contains(code) {
                onPress(code, MonotonicInstant(nanoseconds: ns), d.name)
            }
        }
    }
}
