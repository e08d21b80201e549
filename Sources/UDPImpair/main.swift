// SPDX-License-Identifier: Apache-2.0
// UDP impairment proxy for multi-gate tests: delay, jitter, loss, duplication, reordering.
//
// Clients send to the proxy's listen address; each client gets its own upstream socket
// towards the target, so replies find their way back. Each direction has its own
// impairment, so asymmetric paths can be built. The random stream is seeded: the same
// seed and the same traffic give the same decisions.

import CLinuxSys
import GateCore
#if canImport(Glibc)
import Glibc
#endif

/// Impairment of one direction. Delays in nanoseconds.
struct Impairment {
    var delayNs: Int64 = 0
    var jitterNs: Int64 = 0
    var loss = 0.0
    var duplicate = 0.0
    var reorder = 0.0
    /// Extra hold of a reordered datagram. Why 2 ms beyond the jitter: long enough that
    /// datagrams sent after it overtake it even at the widest jitter.
    var reorderExtraNs: Int64 = 2_000_000

    var summary: String {
        "delay \(Double(delayNs) / 1e6) ms ± \(Double(jitterNs) / 1e6) ms, loss \(loss), dup \(duplicate), reorder \(reorder)"
    }
}

struct Pending {
    var due: Int64
    var order: UInt64
    var socket: Int32
    var to: sockaddr_in
    var bytes: [UInt8]
}

func usage(_ message: String) -> Never {
    var err = "udpimpair: \(message)\n"
    err += """
        usage: UDPImpair --listen [HOST:]PORT --target HOST:PORT [options]
          --delay-ms D      one-way delay, both directions (default 0)
          --jitter-ms J     uniform jitter ± J ms (default 0)
          --loss P          loss probability 0…1 (default 0)
          --dup P           duplication probability 0…1 (default 0)
          --reorder P       probability a datagram is held back and overtaken (default 0)
          --up-delay-ms, --up-jitter-ms, --up-loss, --up-dup, --up-reorder
                            client → target only
          --down-delay-ms, --down-jitter-ms, --down-loss, --down-dup, --down-reorder
                            target → client only
          --seed N          random seed (default 1)
          --stats-seconds S print counters every S seconds (default 0: only at exit)

        """
    eprint(err)
    exit(2)
}

func orUsage<T>(_ value: T?, _ message: String) -> T {
    guard let value else { usage(message) }
    return value
}

/// Writes to standard error (unbuffered, like stderr).
func eprint(_ text: String) {
    var t = text
    t.withUTF8 { b in _ = write(2, b.baseAddress, b.count) }
}

func parseAddress(_ text: String, defaultHost: String) -> sockaddr_in? {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    let host: String, portText: Substring
    switch parts.count {
    case 1: (host, portText) = (defaultHost, parts[0])
    case 2: (host, portText) = (String(parts[0]), parts[1])
    default: return nil
    }
    guard let port = UInt16(portText) else { return nil }
    var sa = sockaddr_in()
    sa.sin_family = sa_family_t(AF_INET)
    sa.sin_port = port.bigEndian
    guard inet_pton(AF_INET, host, &sa.sin_addr) == 1 else { return nil }
    return sa
}

func describe(_ sa: sockaddr_in) -> String {
    let ip = UInt32(bigEndian: sa.sin_addr.s_addr)
    return "\(ip >> 24).\(ip >> 16 & 0xFF).\(ip >> 8 & 0xFF).\(ip & 0xFF):\(UInt16(bigEndian: sa.sin_port))"
}

func udpSocket(bindTo sa: sockaddr_in?) -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { usage("socket: errno \(errno)") }
    if var a = sa {
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let r = withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard r == 0 else { usage("bind \(describe(a)): errno \(errno)") }
    }
    return fd
}

// MARK: - Arguments

var listenAddress: sockaddr_in?
var targetAddress: sockaddr_in?
var up = Impairment(), down = Impairment()
var seed: UInt64 = 1
var statsSeconds = 0.0
var args = Array(CommandLine.arguments.dropFirst())
while !args.isEmpty {
    let flag = args.removeFirst()
    if flag == "-h" || flag == "--help" { usage("help") }
    guard let value = args.first else { usage("\(flag) needs a value") }
    args.removeFirst()
    func number() -> Double {
        guard let v = Double(value), v.isFinite, v >= 0 else { usage("\(flag) \(value): not a non-negative number") }
        return v
    }
    func probability() -> Double {
        let p = number()
        guard p <= 1 else { usage("\(flag) \(value): a probability is between 0 and 1") }
        return p
    }
    func ns() -> Int64 { Int64(number() * 1e6) }
    switch flag {
    case "--listen": listenAddress = orUsage(parseAddress(value, defaultHost: "0.0.0.0"), "--listen \(value): not [HOST:]PORT")
    case "--target": targetAddress = orUsage(parseAddress(value, defaultHost: "127.0.0.1"), "--target \(value): not HOST:PORT")
    case "--delay-ms": (up.delayNs, down.delayNs) = (ns(), ns())
    case "--jitter-ms": (up.jitterNs, down.jitterNs) = (ns(), ns())
    case "--loss": (up.loss, down.loss) = (probability(), probability())
    case "--dup": (up.duplicate, down.duplicate) = (probability(), probability())
    case "--reorder": (up.reorder, down.reorder) = (probability(), probability())
    case "--up-delay-ms": up.delayNs = ns()
    case "--up-jitter-ms": up.jitterNs = ns()
    case "--up-loss": up.loss = probability()
    case "--up-dup": up.duplicate = probability()
    case "--up-reorder": up.reorder = probability()
    case "--down-delay-ms": down.delayNs = ns()
    case "--down-jitter-ms": down.jitterNs = ns()
    case "--down-loss": down.loss = probability()
    case "--down-dup": down.duplicate = probability()
    case "--down-reorder": down.reorder = probability()
    case "--seed": seed = orUsage(UInt64(value), "--seed \(value): not an unsigned integer")
    case "--stats-seconds": statsSeconds = number()
    default: usage("unknown option \(flag)")
    }
}
guard let listenSA = listenAddress, let targetSA = targetAddress else { usage("--listen and --target are required") }
for d in [up, down] where d.jitterNs > d.delayNs {
    usage("jitter (\(Double(d.jitterNs) / 1e6) ms) larger than delay (\(Double(d.delayNs) / 1e6) ms) would send before receiving")
}

// MARK: - Proxy

signal(SIGPIPE, SIG_IGN)
nonisolated(unsafe) var stop: sig_atomic_t = 0
signal(SIGTERM) { _ in stop = 1 }
signal(SIGINT) { _ in stop = 1 }

let listenFD = udpSocket(bindTo: listenSA)
/// One upstream socket per client address, keyed by (ip << 16 | port).
var upstreamByClient: [UInt64: Int32] = [:]
var clientByUpstream: [Int32: sockaddr_in] = [:]
var rng = SplitMix64(seed: seed)
var queue: [Pending] = []
var order: UInt64 = 0
var counters = (received: 0, dropped: 0, duplicated: 0, reordered: 0, sent: 0)
var buffer = [UInt8](repeating: 0, count: 65536)
eprint("udpimpair: \(describe(listenSA)) → \(describe(targetSA)); up: \(up.summary); down: \(down.summary); seed \(seed)\n")

@MainActor func enqueue(_ bytes: [UInt8], via fd: Int32, to: sockaddr_in, impairment d: Impairment, now: Int64) {
    counters.received += 1
    if rng.unit() < d.loss {
        counters.dropped += 1
        return
    }
    let copies = rng.unit() < d.duplicate ? 2 : 1
    if copies == 2 { counters.duplicated += 1 }
    for _ in 0..<copies {
        var delay = d.delayNs
        if d.jitterNs > 0 { delay += Int64((rng.unit() * 2 - 1) * Double(d.jitterNs)) }
        if rng.unit() < d.reorder {
            delay += d.jitterNs + d.reorderExtraNs
            counters.reordered += 1
        }
        order += 1
        queue.append(Pending(due: now + delay, order: order, socket: fd, to: to, bytes: bytes))
    }
}

@MainActor func flushDue(now: Int64) {
    queue.sort { ($0.due, $0.order) < ($1.due, $1.order) }
    var sent = 0
    for p in queue {
        if p.due > now { break }
        var to = p.to
        _ = p.bytes.withUnsafeBytes { b in
            withUnsafePointer(to: &to) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(p.socket, b.baseAddress, b.count, Int32(MSG_DONTWAIT), $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        counters.sent += 1
        sent += 1
    }
    queue.removeFirst(sent)
}

@MainActor func printStats() {
    eprint("udpimpair: received \(counters.received) dropped \(counters.dropped) duplicated \(counters.duplicated) reordered \(counters.reordered) sent \(counters.sent) clients \(upstreamByClient.count)\n")
}

var nextStats = sprintgate_monotonic_ns() + Int64(statsSeconds * 1e9)
while stop == 0 {
    var fds = [pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)]
    for fd in clientByUpstream.keys { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
    let now0 = sprintgate_monotonic_ns()
    var timeoutMs: Int32 = 100
    if let first = queue.min(by: { $0.due < $1.due }) {
        timeoutMs = Int32(clamping: max(0, (first.due - now0 + 999_999) / 1_000_000))
    }
    // Why poll with a ms timeout and then a short spin: poll's resolution is 1 ms, and
    // a 5 ms ± 3 ms profile needs sub-millisecond release times.
    let r = poll(&fds, nfds_t(fds.count), min(timeoutMs, 100) > 1 ? min(timeoutMs, 100) - 1 : 0)
    if r < 0 && errno != EINTR { usage("poll: errno \(errno)") }
    let now = sprintgate_monotonic_ns()
    for p in fds where p.revents & Int16(POLLIN) != 0 {
        while true {
            var from = sockaddr_in()
            var len = socklen_t(MemoryLayout<sockaddr_in>.size)
            let n = buffer.withUnsafeMutableBytes { b in
                withUnsafeMutablePointer(to: &from) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(p.fd, b.baseAddress, b.count, 0, $0, &len) }
                }
            }
            if n < 0 { break }
            let bytes = Array(buffer[0..<n])
            if p.fd == listenFD {
                let key = UInt64(UInt32(bigEndian: from.sin_addr.s_addr)) << 16 | UInt64(UInt16(bigEndian: from.sin_port))
                let upFD: Int32
                if let fd = upstreamByClient[key] {
                    upFD = fd
                } else {
                    upFD = udpSocket(bindTo: nil)
                    upstreamByClient[key] = upFD
                    clientByUpstream[upFD] = from
                }
                enqueue(bytes, via: upFD, to: targetSA, impairment: up, now: now)
            } else if let client = clientByUpstream[p.fd] {
                enqueue(bytes, via: listenFD, to: client, impairment: down, now: now)
            }
        }
    }
    // Spin the last millisecond to the next release.
    if let first = queue.min(by: { $0.due < $1.due }), first.due - sprintgate_monotonic_ns() < 1_000_000 {
        while sprintgate_monotonic_ns() < first.due {}
    }
    flushDue(now: sprintgate_monotonic_ns())
    if statsSeconds > 0, now >= nextStats {
        nextStats = now + Int64(statsSeconds * 1e9)
        printStats()
    }
}
printStats()
