// SPDX-License-Identifier: Apache-2.0
// A non-blocking IPv4 UDP socket for the epoll loop: peers, discovery broadcast, NTP.

import CLinuxSys
public import GateCore
#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 address and UDP port, both in host byte order.
public struct UDPAddress: Hashable, Sendable, CustomStringConvertible {
    /// The IPv4 address, most significant byte first when written as a.b.c.d.
    public var ip: UInt32
    public var port: UInt16

    public init(ip: UInt32, port: UInt16) {
        self.ip = ip
        self.port = port
    }

    /// 255.255.255.255: the limited broadcast, delivered to every host on the link
    /// without knowing the subnet (a phone hotspot's subnet is chosen by the phone).
    public static func broadcast(port: UInt16) -> UDPAddress { UDPAddress(ip: 0xFFFF_FFFF, port: port) }

    /// 127.0.0.1.
    public static func loopback(port: UInt16) -> UDPAddress { UDPAddress(ip: 0x7F00_0001, port: port) }

    /// Parses a dotted-quad IPv4 address, e.g. `"10.0.0.2"`; nil when it is not one.
    public init?(host: String, port: UInt16) {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var ip: UInt32 = 0
        for p in parts {
            guard !p.isEmpty, p.count <= 3, p.allSatisfy({ $0.isASCII && $0.isNumber }), let b = UInt32(p), b <= 255 else {
                return nil
            }
            ip = ip << 8 | b
        }
        self.init(ip: ip, port: port)
    }

    /// Parses `"a.b.c.d:port"`; nil when it is not one.
    public init?(parsing text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else { return nil }
        self.init(host: String(text[..<colon]), port: port)
    }

    public var host: String { "\(ip >> 24).\(ip >> 16 & 0xFF).\(ip >> 8 & 0xFF).\(ip & 0xFF)" }
    public var description: String { "\(host):\(port)" }

    /// The directed broadcast address (address | ~netmask) of every IPv4 interface that is
    /// up, can broadcast and is not loopback, at `port`; sorted, without repeats.
    ///
    /// Why not only 255.255.255.255: Linux routes the limited broadcast address like any
    /// other, so on a network without a default route (a gate LAN on a travel router with
    /// no uplink, a static setup) sending to it fails with ENETUNREACH; a directed
    /// broadcast goes out of its own interface. Reads the interfaces (allocates): call it
    /// while looking for peers, not per frame.
    public static func interfaceBroadcasts(port: UInt16) -> [UDPAddress] {
        var out = Set<UDPAddress>()
        for i in ipv4Interfaces() where i.flags & UInt32(IFF_BROADCAST) != 0 && i.netmask != 0xFFFF_FFFF {
            // (A point-to-point /32 has no broadcast.)
            out.insert(UDPAddress(ip: i.ip | ~i.netmask, port: port))
        }
        return out.sorted { ($0.ip, $0.port) < ($1.ip, $1.port) }
    }

    /// The own address of every IPv4 interface that is up and is not loopback, dotted, in
    /// the kernel's order, without repeats: where a phone on the same network reaches this
    /// machine. Reads the interfaces (allocates).
    public static func interfaceHosts() -> [String] {
        var out: [String] = []
        for i in ipv4Interfaces() {
            let host = UDPAddress(ip: i.ip, port: 0).host
            if !out.contains(host) { out.append(host) }
        }
        return out
    }

    /// Every IPv4 interface that is up and not loopback: its address, netmask and flags.
    private static func ipv4Interfaces() -> [(ip: UInt32, netmask: UInt32, flags: UInt32)] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(first) }
        var out: [(ip: UInt32, netmask: UInt32, flags: UInt32)] = []
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let ifa = cursor {
            cursor = ifa.pointee.ifa_next
            let flags = ifa.pointee.ifa_flags
            guard flags & UInt32(IFF_UP) != 0, flags & UInt32(IFF_LOOPBACK) == 0,
                  let addr = ifa.pointee.ifa_addr, addr.pointee.sa_family == sa_family_t(AF_INET),
                  let mask = ifa.pointee.ifa_netmask else { continue }
            let ip = addr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt32(bigEndian: $0.pointee.sin_addr.s_addr) }
            let netmask = mask.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt32(bigEndian: $0.pointee.sin_addr.s_addr) }
            out.append((ip, netmask, flags))
        }
        return out
    }

    var sockaddr: sockaddr_in {
        var sa = sockaddr_in()
        sa.sin_family = sa_family_t(AF_INET)
        sa.sin_port = port.bigEndian
        sa.sin_addr = in_addr(s_addr: ip.bigEndian)
        return sa
    }

    init(_ sa: sockaddr_in) {
        self.init(ip: UInt32(bigEndian: sa.sin_addr.s_addr), port: UInt16(bigEndian: sa.sin_port))
    }
}

/// A bound, non-blocking IPv4 UDP socket. Lives on the engine thread: its descriptor
/// joins the epoll loop; every datagram read carries the kernel's receive timestamp.
/// Sending and receiving allocate nothing.
public struct UDPTransport: ~Copyable {
    /// The socket, for `EpollLoop.add`.
    public let fileDescriptor: Int32
    /// The port actually bound (the kernel's choice when 0 was asked for).
    public let localPort: UInt16
    /// Datagrams the kernel refused to send for lack of buffer space (`EAGAIN`/`ENOBUFS`),
    /// dropped rather than blocking the loop.
    public private(set) var sendDrops: UInt64 = 0
    /// Datagrams longer than the receive buffer: read truncated and discarded.
    public private(set) var oversizeDrops: UInt64 = 0

    /// Binds `host:port` (port 0: any free port). `broadcast` allows sending to the
    /// limited broadcast address (discovery). `reuseAddress` lets a restarted gate bind
    /// again at once.
    public init(host: String = "0.0.0.0", port: UInt16, broadcast: Bool = false) throws(DeviceError) {
        let name = "udp \(host):\(port)"
        guard let bindAddress = UDPAddress(host: host, port: port) else {
            throw DeviceError(operation: "bind", errno: EINVAL, path: name, detail: "not an IPv4 address")
        }
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Sys.fail("socket", name) }
        var one: Int32 = 1
        let size = socklen_t(MemoryLayout<Int32>.size)
        if setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, size) != 0 {
            let e = Sys.fail("setsockopt(SO_REUSEADDR)", name)
            Glibc.close(fd)
            throw e
        }
        // Why kernel receive timestamps: clock sync wants the instant a datagram arrived,
        // not the later instant a busy loop got round to reading it.
        if sprintgate_enable_rx_timestamps(fd) != 0 {
            let e = Sys.fail("setsockopt(SO_TIMESTAMPNS)", name)
            Glibc.close(fd)
            throw e
        }
        if broadcast, setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &one, size) != 0 {
            let e = Sys.fail("setsockopt(SO_BROADCAST)", name)
            Glibc.close(fd)
            throw e
        }
        var sa = bindAddress.sockaddr
        let r = withUnsafePointer(to: &sa) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if r != 0 {
            let e = Glibc.errno
            Glibc.close(fd)
            var error = Sys.fail("bind", name, e)
            if e == EACCES { error.detail += " (ports below 1024 need root or CAP_NET_BIND_SERVICE)" }
            if e == EADDRINUSE { error.detail += " (another process holds the port)" }
            throw error
        }
        var bound = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        fileDescriptor = fd
        localPort = UDPAddress(bound).port
    }

    deinit { Glibc.close(fileDescriptor) }

    /// Sends one datagram without blocking. A full send buffer or a missing route is
    /// counted and reported as `.wouldBlock` (the datagram is dropped: peer messages are
    /// retransmitted by the protocol, not by the socket). Other failures throw.
    public mutating func send(_ bytes: UnsafeRawBufferPointer, to address: UDPAddress) throws(DeviceError) -> IOResult<Int> {
        var sa = address.sockaddr
        while true {
            let n = withUnsafePointer(to: &sa) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fileDescriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT), $0,
                           socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            if n >= 0 { return .processed(n) }
            let e = Glibc.errno
            if e == EINTR { continue }
            // Why: on Wi-Fi a transient loss of the link gives ENETUNREACH/EHOSTUNREACH and
            // an ICMP port unreachable from a restarting peer comes back as ECONNREFUSED;
            // none of these should stop the gate.
            if e == EAGAIN || e == ENOBUFS || e == ENETUNREACH || e == EHOSTUNREACH || e == ECONNREFUSED
                || e == ENETDOWN
            {
                sendDrops &+= 1
                return .wouldBlock
            }
            throw Sys.fail("sendto", "udp \(address)", e)
        }
    }

    /// Sends the bytes of an array (configuration-time convenience; the array is not copied).
    public mutating func send(_ bytes: [UInt8], to address: UDPAddress) throws(DeviceError) -> IOResult<Int> {
        let r: Result<IOResult<Int>, DeviceError> = bytes.withUnsafeBytes { p in
            do throws(DeviceError) { return .success(try send(p, to: address)) } catch { return .failure(error) }
        }
        return try r.get()
    }

    /// Reads one pending datagram into `buffer` without blocking: its length, sender and
    /// arrival instant (the kernel's receive timestamp on CLOCK_MONOTONIC), or
    /// `.wouldBlock` when none is queued. A datagram larger than the buffer is counted
    /// and skipped (the next one is read instead).
    public mutating func receive(into buffer: UnsafeMutableRawBufferPointer) throws(DeviceError)
        -> IOResult<(count: Int, from: UDPAddress, at: MonotonicInstant)>
    {
        while true {
            var sa = sockaddr_in()
            var rx: Int64 = 0
            let n = sprintgate_recv_timestamped(fileDescriptor, buffer.baseAddress, UInt(buffer.count), &sa, &rx)
            if n >= 0 {
                if n > buffer.count {
                    oversizeDrops &+= 1
                    continue
                }
                return .processed((n, UDPAddress(sa), MonotonicInstant(nanoseconds: rx)))
            }
            let e = Glibc.errno
            if e == EINTR { continue }
            if e == EAGAIN { return .wouldBlock }
            // Why: Linux reports an earlier ICMP port unreachable on the next recvmsg;
            // it says nothing about the datagrams still queued.
            if e == ECONNREFUSED { continue }
            throw Sys.fail("recvmsg", "udp :\(localPort)", e)
        }
    }
}
