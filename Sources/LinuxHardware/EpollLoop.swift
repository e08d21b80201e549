// SPDX-License-Identifier: Apache-2.0
// The real-time wait of the gate's event loop: epoll over camera, GPIO and socket
// descriptors plus a timer, one timestamp per wake-up.

import CLinuxSys
public import GateCore
#if canImport(Glibc)
import Glibc
#endif

/// Waits on a set of descriptors and a deadline with epoll and reads CLOCK_MONOTONIC
/// once per wake-up. Lives on the engine thread; allocation-free after `add`.
public struct EpollLoop: ~Copyable {
    private let epfd: Int32
    private let events: UnsafeMutablePointer<epoll_event>
    private let capacity = 16
    /// An eventfd other threads write to so a command wakes the loop at once.
    public let wakeFD: Int32
    /// Wake-ups and those that came from the timeout only.
    public private(set) var wakeups: UInt64 = 0
    public private(set) var timeouts: UInt64 = 0

    public init() throws(DeviceError) {
        let fd = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard fd >= 0 else { throw Sys.fail("epoll_create1", "epoll") }
        let wake = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard wake >= 0 else {
            Glibc.close(fd)
            throw Sys.fail("eventfd", "epoll")
        }
        var ev = sprintgate_epoll_event_make(wake, EPOLLIN.rawValue)
        guard epoll_ctl(fd, EPOLL_CTL_ADD, wake, &ev) == 0 else {
            let error = Sys.fail("epoll_ctl(ADD)", "eventfd")
            Glibc.close(fd)
            Glibc.close(wake)
            throw error
        }
        epfd = fd
        wakeFD = wake
        events = .allocate(capacity: 16)
        events.initialize(repeating: epoll_event(), count: 16)
    }

    deinit {
        Glibc.close(epfd)
        Glibc.close(wakeFD)
        events.deallocate()
    }

    /// Watches `fd` for readability; a negative descriptor (device closed) is ignored.
    public func add(_ fd: Int32) throws(DeviceError) {
        guard fd >= 0 else { return }
        var ev = sprintgate_epoll_event_make(fd, EPOLLIN.rawValue | EPOLLERR.rawValue | EPOLLHUP.rawValue)
        if epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0 && Glibc.errno != EEXIST {
            throw Sys.fail("epoll_ctl(ADD)", "fd \(fd)")
        }
    }

    /// Stops watching `fd` (before closing it, e.g. a camera pulled out).
    public func remove(_ fd: Int32) {
        guard fd >= 0 else { return }
        _ = epoll_ctl(epfd, EPOLL_CTL_DEL, fd, nil)
    }

    /// Wakes a waiting loop from another thread (async-signal-safe).
    public static func wake(_ wakeFD: Int32) {
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD, &one, 8)
    }

    /// Makes SIGTERM, SIGINT and SIGHUP wake this loop instead of ending the process, so
    /// the loop can stop in order (queued results written, state saved). Call once, on
    /// the loop's owner, before the loop starts; `stopSignal` then reports the signal.
    public func catchStopSignals() throws(DeviceError) {
        guard sprintgate_stop_signals_install(wakeFD) == 0 else { throw Sys.fail("sigaction", "stop signals") }
    }

    /// The stop signal received since `catchStopSignals` (SIGTERM 15, SIGINT 2, SIGHUP 1),
    /// nil when none came.
    public static var stopSignal: Int32? {
        let s = sprintgate_stop_signal()
        return s == 0 ? nil : s
    }

    /// Waits until a descriptor is readable or `deadline` passes, then returns the one
    /// timestamp of this iteration and how many descriptors were ready.
    public mutating func wait(until deadline: MonotonicInstant) -> (now: MonotonicInstant, ready: Int) {
        let before = Sys.monotonicNow()
        let ms = max(0, Int32(clamping: (deadline.nanoseconds - before.nanoseconds + 999_999) / 1_000_000))
        var n: Int32
        repeat {
            n = epoll_wait(epfd, events, Int32(capacity), ms)
        } while n < 0 && Glibc.errno == EINTR
        let now = Sys.monotonicNow()
        wakeups += 1
        if n <= 0 { timeouts += 1 }
        for i in 0..<max(0, Int(n)) where sprintgate_epoll_event_fd(events + i) == wakeFD {
            var v: UInt64 = 0
            _ = Glibc.read(wakeFD, &v, 8)
        }
        return (now, max(0, Int(n)))
    }
}
