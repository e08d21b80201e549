// SPDX-License-Identifier: Apache-2.0
// The systemd notify protocol (READY, WATCHDOG, STATUS) over $NOTIFY_SOCKET, without libsystemd.

#if canImport(Glibc)
import Glibc
#endif

/// Sends state to systemd for a `Type=notify` service. Does nothing when the gate was not
/// started by systemd (no `NOTIFY_SOCKET`).
public struct SystemdNotify: ~Copyable {
    private let fd: Int32
    private var address = sockaddr_un()
    private let length: socklen_t
    /// The watchdog interval systemd asked for (`WATCHDOG_USEC`), if any, in nanoseconds.
    public let watchdogNs: Int64?

    public init(environment: [String: String]) {
        var ok = false
        var len = socklen_t(0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        if let path = environment["NOTIFY_SOCKET"], !path.isEmpty, path.utf8.count < 107 {
            // An abstract socket name starts with '@', sent as a leading NUL.
            let bytes = Array(path.utf8)
            withUnsafeMutableBytes(of: &addr.sun_path) { raw in
                for (i, b) in bytes.enumerated() { raw[i] = (i == 0 && b == UInt8(ascii: "@")) ? 0 : b }
            }
            len = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
            ok = true
        }
        address = addr
        length = len
        fd = ok ? socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) : -1
        watchdogNs = environment["WATCHDOG_USEC"].flatMap { Int64($0) }.map { $0 * 1000 }
    }

    deinit { if fd >= 0 { close(fd) } }

    public var isActive: Bool { fd >= 0 }

    /// Sends `state` lines such as `READY=1`, `WATCHDOG=1` or `STATUS=streaming`.
    @discardableResult
    public func send(_ state: String) -> Bool {
        guard fd >= 0 else { return false }
        var addr = address
        let sent = state.utf8CString.withUnsafeBufferPointer { buf in
            withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, buf.baseAddress, buf.count - 1, Int32(MSG_NOSIGNAL), $0, length)
                }
            }
        }
        return sent >= 0
    }
}
