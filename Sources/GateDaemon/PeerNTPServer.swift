// SPDX-License-Identifier: Apache-2.0
// The gate's NTP server: answers NTPv4 client requests on a UDP port from the epoll loop.

public import GateCore
public import LinuxHardware
public import Logging
public import PeerWire
#if canImport(Glibc)
import Glibc
#endif

/// Serves the gate's clock to standard NTP clients (chrony, ntpd, sntp, phones' apps) on
/// one UDP socket. Lives on the engine thread; the socket joins the epoll loop.
///
/// The served clock is a function of local CLOCK_MONOTONIC given by the caller
/// (`served`), in nanoseconds since the Unix epoch: the daemon maps monotonic time to the
/// NTP era through an anchor read once at start, so a step of CLOCK_REALTIME (a phone
/// setting the date, a GPS fix) never makes the served clock jump during a race.
public final class NTPServer {
    private(set) var transport: UDPTransport
    private(set) var responder: NTPResponder
    /// The clock served (monotonic mapped to the NTP era, skewed in tests).
    public let clock: ServedClock
    private let buffer: UnsafeMutableRawBufferPointer
    private let reply: UnsafeMutableRawBufferPointer
    /// Datagrams larger than this are not NTP requests a server answers. Why 1200: the
    /// largest NTS request fits; anything larger is discarded unread.
    public static let receiveCapacity = 1200

    /// Binds `host:port` (123 needs root or CAP_NET_BIND_SERVICE; tests use a high port).
    public init(host: String = "0.0.0.0", port: UInt16, clock: ServedClock, responder: NTPResponder = NTPResponder())
        throws(DeviceError)
    {
        self.clock = clock
        transport = try UDPTransport(host: host, port: port)
        self.responder = responder
        buffer = .allocate(byteCount: Self.receiveCapacity, alignment: 8)
        reply = .allocate(byteCount: NTPPacket.length, alignment: 8)
    }

    deinit {
        buffer.deallocate()
        reply.deallocate()
    }

    /// The socket, for `EpollLoop.add`.
    public var fileDescriptor: Int32 { transport.fileDescriptor }
    /// The bound port.
    public var localPort: UInt16 { transport.localPort }

    /// Answers every queued request and returns how many datagrams were read.
    ///
    /// - Parameters:
    ///   - now: the loop iteration's timestamp (local CLOCK_MONOTONIC): the clock of the
    ///     rate limit. Each request's receive time is its kernel arrival timestamp.
    ///   - transmitClock: reads CLOCK_MONOTONIC for the transmit timestamp. Why a second
    ///     reading: RFC 5905 §8 wants T3 as late as possible; using the iteration's
    ///     timestamp would count the loop's work as network delay.
    public func service(now: MonotonicInstant, transmitClock: () -> MonotonicInstant = Sys.monotonicNow) throws(DeviceError) -> Int {
        var count = 0
        while case let .processed((n, from, arrival)) = try transport.receive(into: buffer) {
            count += 1
            // T2 is the request's arrival (kernel timestamp), not the iteration's `now`.
            let receiveNTP = NTPTimestamp(unixNanoseconds: clock.unixNanoseconds(at: arrival))
            let answer = responder.respond(to: UnsafeRawBufferPointer(rebasing: buffer[0..<n]), client: from.ip,
                                           now: now, receive: receiveNTP)
            var packet: NTPPacket
            switch answer {
            case let .reply(p), let .kissOfDeath(p): packet = p
            case .ignore: continue
            }
            packet.transmit = NTPTimestamp(unixNanoseconds: clock.unixNanoseconds(at: transmitClock()))
            let length: Int
            do throws(NTPPacketError) { length = try packet.encode(into: reply) } catch {
                preconditionFailure("reply buffer holds \(NTPPacket.length) bytes: \(error)")
            }
            _ = try transport.send(UnsafeRawBufferPointer(rebasing: reply[0..<length]), to: from)
        }
        return count
    }
}

extension NTPServer {
    /// NTP's well-known port.
    public static let wellKnownPort = 123

    /// The server the daemon's options ask for, bound and logged; nil when turned off.
    /// `port` nil means the default: 123 when running as root, off otherwise (an
    /// unprivileged daemon cannot bind it). A bind failure is logged, not fatal: the gate
    /// still times without serving NTP.
    /// `host` is the address it binds (every interface by default).
    public static func start(port: Int?, host: String = "0.0.0.0", skew: ClockSkew, now: MonotonicInstant, log: Logger) -> NTPServer? {
        let chosen = port ?? (geteuid() == 0 ? wellKnownPort : 0)
        guard chosen != 0 else { return nil }
        guard (1...65535).contains(chosen) else {
            log.error("NTP server not started: port \(chosen) is not a port (1...65535, 0 turns it off)")
            return nil
        }
        do {
            let server = try NTPServer(host: host, port: UInt16(chosen), clock: ServedClock(skew: skew, now: now))
            log.notice("NTP server on udp \(host):\(server.localPort) (stratum 10, local clock)")
            return server
        } catch {
            log.error("NTP server not started: \(error.description)")
            return nil
        }
    }
}
