// SPDX-License-Identifier: Apache-2.0
// A client's socket to gpsd: connect, WATCH, and read its reports a line at a time.

import Glibc

/// Why gpsd could not be reached or read, in words the user can act on.
public struct GPSDError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ d: String) { description = d }
}

/// A TCP connection to gpsd's JSON port (2947), blocking with timeouts. One thread reads and
/// writes; `shutdown` may come from another (a syscall on the descriptor, which is safe).
public final class GPSDConnection: @unchecked Sendable {
    private var fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    public let endpoint: String

    /// Connects within `timeout` seconds. `host` is a name or address; gpsd listens on
    /// loopback by default.
    public init(host: String = "127.0.0.1", port: UInt16 = 2947, timeout: Double = 2) throws(GPSDError) {
        endpoint = "\(host):\(port)"
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
            throw GPSDError("gpsd's host \"\(host)\" is not known: check [gps] host")
        }
        defer { freeaddrinfo(list) }
        var lastError = ECONNREFUSED
        var node: UnsafeMutablePointer<addrinfo>? = first
        var connected: Int32 = -1
        while let a = node, connected < 0 {
            node = a.pointee.ai_next
            let s = socket(a.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard s >= 0 else { lastError = errno; continue }
            if Glibc.connect(s, a.pointee.ai_addr, a.pointee.ai_addrlen) == 0 {
                connected = s
            } else if errno == EINPROGRESS, Self.wait(s, Int16(POLLOUT), timeout) {
                var err: Int32 = 0
                var len = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len)
                if err == 0 { connected = s } else { lastError = err; close(s) }
            } else {
                lastError = errno == EINPROGRESS ? ETIMEDOUT : errno
                close(s)
            }
        }
        guard connected >= 0 else {
            let why = String(cString: strerror(lastError))
            throw GPSDError("gpsd does not answer on \(endpoint) (\(why)): is it installed and running? (systemctl status gpsd.socket)")
        }
        fd = connected
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Stops a `nextLine` waiting on another thread: it returns `closed`.
    public func shutdown() { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }

    /// Asks for JSON reports from every receiver gpsd has.
    public func watch() throws(GPSDError) { try send("?WATCH={\"enable\":true,\"json\":true};\n") }

    /// Asks gpsd to set the receiver at `path` to one fix every `cycle` seconds. gpsd answers
    /// with the device's DEVICE report, whose `cycle` says whether it took.
    public func setCycle(path: String, cycle: Double) throws(GPSDError) {
        let quoted = path.unicodeScalars.map { c -> String in
            switch c {
            case "\"": return "\\\""
            case "\\": return "\\\\"
            default:
                guard c.value < 0x20 else { return String(c) }
                let hex = String(c.value, radix: 16)
                return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }.joined()
        let ms = Int((cycle * 1000).rounded())
        let fraction = String(ms % 1000)
        let seconds = "\(ms / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
        try send("?DEVICE={\"path\":\"\(quoted)\",\"cycle\":\(seconds)};\n")
    }

    public func send(_ command: String) throws(GPSDError) {
        var bytes = Array(command.utf8)
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.send(fd, $0.baseAddress! + off, $0.count - off, Int32(MSG_NOSIGNAL)) }
            if n > 0 { off += n; continue }
            if n < 0, errno == EINTR { continue }
            if n < 0, errno == EAGAIN || errno == EWOULDBLOCK, Self.wait(fd, Int16(POLLOUT), 2) { continue }
            throw GPSDError("gpsd on \(endpoint) stopped taking requests (\(String(cString: strerror(errno))))")
        }
    }

    public enum Read {
        case line(String)
        case timedOut
    }

    /// The next line from gpsd, without its newline, or `.timedOut` after `timeout` seconds
    /// without one. Throws when gpsd closes the connection. A line longer than
    /// `GPSDReport.maximumLine` is cut there (the decoder then rejects it).
    public func nextLine(timeout: Double) throws(GPSDError) -> Read {
        while true {
            if let nl = buffer[start...].firstIndex(of: 10) {
                let line = String(decoding: buffer[start ..< nl], as: UTF8.self)
                start = nl + 1
                if start > 65536 { buffer.removeFirst(start); start = 0 }
                return .line(line.hasSuffix("\r") ? String(line.dropLast()) : line)
            }
            if buffer.count - start > GPSDReport.maximumLine {
                let line = String(decoding: buffer[start ..< start + GPSDReport.maximumLine], as: UTF8.self)
                buffer.removeAll(keepingCapacity: true)
                start = 0
                return .line(line)
            }
            guard Self.wait(fd, Int16(POLLIN), timeout) else { return .timedOut }
            var chunk = [UInt8](repeating: 0, count: 8192)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                buffer.append(contentsOf: chunk[0 ..< n])
            } else if n == 0 {
                throw GPSDError("gpsd on \(endpoint) closed the connection")
            } else if errno != EINTR, errno != EAGAIN, errno != EWOULDBLOCK {
                throw GPSDError("reading from gpsd on \(endpoint) failed (\(String(cString: strerror(errno))))")
            }
        }
    }

    /// Waits for `events` on `fd`; false on timeout.
    private static func wait(_ fd: Int32, _ events: Int16, _ timeout: Double) -> Bool {
        var p = pollfd(fd: fd, events: events, revents: 0)
        let ms = Int32(max(0, min(timeout, 3600)) * 1000)
        while true {
            let r = poll(&p, 1, ms)
            if r < 0, errno == EINTR { continue }
            return r > 0
        }
    }
}
