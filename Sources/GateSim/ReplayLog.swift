// SPDX-License-Identifier: Apache-2.0
// The event log of a recording: a header of `# Key: value` lines and one event per line.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
public import GateCore

/// One line of a recording's event log, ordered by `t_ns` (CLOCK_MONOTONIC).
///
/// - `F seq=41 t_ns=… kts_ns=… off=… dropped=0`: a frame; `off` is its index in the
///   recording's clip, `kts_ns` the driver's timestamp before conversion.
/// - `G t_ns=… line=start-button edge=rising lseq=17 gseq=90`: a GPIO edge.
/// - `S t_ns=… state=absent`: a device state change (`dev=camera` or `dev=audio`).
public enum ReplayEvent: Sendable, Hashable {
    case frame(sequence: UInt64, time: MonotonicInstant, kernelTime: Int64, offset: Int, dropped: UInt64)
    case line(LineEvent)
    case state(device: String, time: MonotonicInstant, state: String)

    /// The event's instant on the monotonic clock.
    public var time: MonotonicInstant {
        switch self {
        case .frame(_, let t, _, _, _): return t
        case .line(let e): return e.timestamp
        case .state(_, let t, _): return t
        }
    }

    /// The log line, without the newline.
    public var line: String {
        switch self {
        case let .frame(seq, t, kts, off, dropped):
            return "F seq=\(seq) t_ns=\(t.nanoseconds) kts_ns=\(kts) off=\(off) dropped=\(dropped)"
        case let .line(e):
            return "G t_ns=\(e.timestamp.nanoseconds) line=\(e.role.rawValue) edge=\(e.edge) lseq=\(e.lineSequence) gseq=\(e.globalSequence)"
        case let .state(dev, t, state):
            return "S t_ns=\(t.nanoseconds) dev=\(dev) state=\(state.replacingSpaces())"
        }
    }

    /// Parses one log line; `nil` for a comment or blank line. Throws on a malformed line.
    public static func parse(_ text: Substring, lineNumber: Int) throws(ClipError) -> ReplayEvent? {
        let trimmed = text.drop { $0 == " " }
        guard let kind = trimmed.first, kind != "#" else { return nil }
        var fields: [Substring: Substring] = [:]
        for token in trimmed.dropFirst().split(separator: " ") {
            guard let eq = token.firstIndex(of: "=") else {
                throw ClipError("line \(lineNumber): '\(token)' is not key=value")
            }
            fields[token[..<eq]] = token[token.index(after: eq)...]
        }
        func int(_ k: Substring) throws(ClipError) -> Int64 {
            guard let v = fields[k], let n = Int64(v) else { throw ClipError("line \(lineNumber): missing or bad \(k)=") }
            return n
        }
        switch kind {
        case "F":
            return .frame(sequence: UInt64(try int("seq")), time: MonotonicInstant(nanoseconds: try int("t_ns")),
                          kernelTime: try int("kts_ns"), offset: Int(try int("off")), dropped: UInt64(try int("dropped")))
        case "G":
            guard let name = fields["line"], let role = GPIORole(rawValue: String(name)) else {
                throw ClipError("line \(lineNumber): unknown line= (roles: \(GPIORole.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            guard let e = fields["edge"], e == "rising" || e == "falling" else {
                throw ClipError("line \(lineNumber): edge= must be rising or falling")
            }
            return .line(LineEvent(role: role, edge: e == "rising" ? .rising : .falling,
                                   timestamp: MonotonicInstant(nanoseconds: try int("t_ns")),
                                   lineSequence: UInt32(truncatingIfNeeded: try int("lseq")),
                                   globalSequence: UInt32(truncatingIfNeeded: try int("gseq"))))
        case "S":
            guard let dev = fields["dev"], let st = fields["state"] else { throw ClipError("line \(lineNumber): S needs dev= and state=") }
            return .state(device: String(dev), time: MonotonicInstant(nanoseconds: try int("t_ns")), state: String(st))
        default:
            throw ClipError("line \(lineNumber): unknown event kind '\(kind)'")
        }
    }
}

extension String {
    fileprivate func replacingSpaces() -> String { String(map { $0 == " " ? "_" : $0 }) }
}

/// Writes a recording's event log: the header, then events as they happen.
public final class ReplayLogWriter {
    private let file: UnsafeMutablePointer<FILE>
    public let path: String

    /// Creates `path` and writes `header` as `# Key: value` lines (gpsd style; e.g. Name,
    /// Board, Camera, Recorded, Notes) followed by `# Clock: CLOCK_MONOTONIC`.
    public init(path: String, header: [(String, String)]) throws(ClipError) {
        guard let f = fopen(path, "w") else { throw ClipError("\(path): cannot create (\(String(cString: strerror(errno))))") }
        file = f
        self.path = path
        for (k, v) in header { fputs("# \(k): \(v)\n", f) }
        fputs("# Clock: CLOCK_MONOTONIC\n", f)
    }

    public func append(_ event: ReplayEvent) {
        fputs(event.line + "\n", file)
    }

    public func close() throws(ClipError) {
        guard fflush(file) == 0 else { throw ClipError("\(path): write failed") }
    }

    deinit { fclose(file) }
}

/// Reads a recording's event log.
public struct ReplayLog: Sendable {
    public var header: [(key: String, value: String)]
    public var events: [ReplayEvent]

    public init(path: String) throws(ClipError) {
        try self.init(text: readTextFile(path), name: path)
    }

    public init(text: String, name: String) throws(ClipError) {
        header = []
        events = []
        var number = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            if line.hasPrefix("# "), let colon = line.firstIndex(of: ":") {
                let key = line[line.index(line.startIndex, offsetBy: 2)..<colon]
                let value = line[line.index(after: colon)...].drop { $0 == " " }
                header.append((String(key), String(value)))
                continue
            }
            do {
                if let e = try ReplayEvent.parse(line, lineNumber: number) { events.append(e) }
            } catch {
                throw ClipError("\(name): \(error.description)")
            }
        }
        for i in events.indices.dropFirst() where events[i].time < events[i - 1].time {
            throw ClipError("\(name): events are not ordered by t_ns (line of event \(i + 1))")
        }
    }
}

/// The whole file at `path` as UTF-8 text.
func readTextFile(_ path: String) throws(ClipError) -> String {
    guard let f = fopen(path, "r") else { throw ClipError("\(path): cannot open (\(String(cString: strerror(errno))))") }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buf, 1, buf.count, f)
        if n <= 0 { break }
        bytes += buf[0..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
}
