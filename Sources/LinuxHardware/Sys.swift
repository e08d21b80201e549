// SPDX-License-Identifier: Apache-2.0
// The one call site per system call used by the adapters: EINTR retried, EAGAIN as a value.

import CLinuxSys
import CV4L2
public import GateCore
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// The outcome of a non-blocking call: done with a value, or it would have blocked.
public enum IOResult<T> {
    case processed(T)
    case wouldBlock
}

/// Thin wrappers over the system calls the adapters make (the swift-system model):
/// `EINTR` is retried, `EAGAIN` becomes `.wouldBlock`, `EBADF`/`EFAULT` are programming
/// errors and trap, and every other failure throws `DeviceError` naming the operation.
public enum Sys {
    /// Standard output line by line even into a pipe or file (a log reader, a test), so
    /// what a command prints is seen as it happens.
    public static func lineBufferedStandardOutput() { sprintgate_stdout_line_buffered() }

    static func fail(_ op: String, _ path: String, _ e: Int32 = Glibc.errno) -> DeviceError {
        precondition(e != EBADF && e != EFAULT, "\(op) on \(path): bad descriptor or address (errno \(e))")
        return DeviceError(operation: op, errno: e, path: path, detail: Errno(rawValue: e).description)
    }

    /// `ioctl` through libv4l2 (so emulated formats and controls work), with a pointer argument.
    public static func ioctl<T>(_ fd: Int32, _ request: UInt, _ arg: inout T, op: String, path: String)
        throws(DeviceError) -> IOResult<Void>
    {
        while true {
            let r = withUnsafeMutablePointer(to: &arg) { CV4L2_ioctl(fd, request, $0) }
            if r >= 0 { return .processed(()) }
            let e = Glibc.errno
            if e == EINTR { continue }
            if e == EAGAIN { return .wouldBlock }
            throw fail(op, path, e)
        }
    }

    /// Opens a video device node (non-blocking, close-on-exec). The descriptor is not
    /// registered with libv4l2's format emulation: the adapter decodes MJPEG itself, and
    /// libv4l2 would log every empty non-blocking dequeue.
    public static func openVideo(_ path: String) throws(DeviceError) -> Int32 {
        while true {
            let fd = Glibc.open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
            if fd >= 0 { return fd }
            let e = Glibc.errno
            if e == EINTR { continue }
            throw fail("open", path, e)
        }
    }

    public static func closeVideo(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// Maps `length` bytes of a device buffer at `offset`, read-only and shared.
    public static func mmap(_ fd: Int32, length: Int, offset: Int, path: String) throws(DeviceError) -> UnsafeRawPointer {
        guard let p = v4l2_mmap(nil, length, PROT_READ, MAP_SHARED, fd, Int64(offset)), p != MAP_FAILED else {
            throw fail("mmap", path)
        }
        return UnsafeRawPointer(p)
    }

    public static func munmap(_ p: UnsafeRawPointer, length: Int) {
        _ = v4l2_munmap(UnsafeMutableRawPointer(mutating: p), length)
    }

    /// Waits up to `timeoutMs` for `fd` to become readable. True when it is.
    public static func waitReadable(_ fd: Int32, timeoutMs: Int32) throws(DeviceError) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while true {
            let r = poll(&p, 1, timeoutMs)
            if r >= 0 { return r > 0 && p.revents & Int16(POLLIN) != 0 }
            let e = Glibc.errno
            if e == EINTR { continue }
            throw fail("poll", "fd \(fd)", e)
        }
    }

    /// CLOCK_MONOTONIC now.
    public static func monotonicNow() -> MonotonicInstant {
        MonotonicInstant(nanoseconds: sprintgate_monotonic_ns())
    }
}
