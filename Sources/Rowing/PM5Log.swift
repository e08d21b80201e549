// SPDX-License-Identifier: Apache-2.0
// A recorded (or synthesised) stream of PM5 notifications for several ergs, as text, and
// its replay into recorders: the gpsd-style regression for the rowing hub.

import GATT

/// One event of a log: a notification's bytes from an erg's characteristic, or the erg
/// going out of reach or coming back. Times are seconds on the hub's clock.
public enum PM5LogEvent: Sendable, Hashable {
    case notification(t: Double, erg: Int, characteristic: UInt16, bytes: [UInt8])
    case disconnected(t: Double, erg: Int)
    case connected(t: Double, erg: Int)

    public var t: Double {
        switch self {
        case .notification(let t, _, _, _), .disconnected(let t, _), .connected(let t, _): t
        }
    }
    public var erg: Int {
        switch self {
        case .notification(_, let e, _, _), .disconnected(_, let e), .connected(_, let e): e
        }
    }
}

/// The text form, one event per line, ordered by time:
///
/// ```
/// # Name: 2000 m at 24 strokes a minute, out of reach for 20 s
/// C t=0.000 erg=1
/// N t=0.500 erg=1 c=0031 v=a00f0000...
/// D t=120.000 erg=1
/// ```
///
/// `#` lines are comments (gpsd's `# Name:`, `# Submitter:` headers).
public enum PM5Log {
    public static func write(_ events: [PM5LogEvent], header: [String] = []) -> String {
        var out = header.map { "# " + $0 + "\n" }.joined()
        for e in events {
            let t = fixed3(e.t)
            switch e {
            case .notification(_, let erg, let c, let bytes):
                out += "N t=\(t) erg=\(erg) c=\(String(c, radix: 16).leftPadded(to: 4)) v=\(bytes.map { hex($0).lowercased() }.joined())\n"
            case .disconnected(_, let erg): out += "D t=\(t) erg=\(erg)\n"
            case .connected(_, let erg): out += "C t=\(t) erg=\(erg)\n"
            }
        }
        return out
    }

    /// Reads a log; a malformed line is an error naming it. (A notification whose bytes are
    /// wrong for its characteristic is not: that is what the recorder counts and drops.)
    public static func read(_ text: String) throws(PM5LogError) -> [PM5LogEvent] {
        var events: [PM5LogEvent] = []
        var lineNumber = 0
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = raw.drop { $0 == " " }
            if line.isEmpty || line.hasPrefix("#") { continue }
            let parts = line.split(separator: " ")
            var fields: [Substring: Substring] = [:]
            for p in parts.dropFirst() {
                guard let eq = p.firstIndex(of: "=") else { throw PM5LogError(line: lineNumber, "\"\(p)\" is not key=value") }
                fields[p[..<eq]] = p[p.index(after: eq)...]
            }
            guard let ts = fields["t"], let t = Double(ts), t.isFinite, t >= 0 else { throw PM5LogError(line: lineNumber, "no time t=") }
            guard let es = fields["erg"], let erg = Int(es), erg >= 0 else { throw PM5LogError(line: lineNumber, "no erg=") }
            if let last = events.last, t < last.t { throw PM5LogError(line: lineNumber, "time goes back (\(t) after \(last.t))") }
            switch parts[0] {
            case "C": events.append(.connected(t: t, erg: erg))
            case "D": events.append(.disconnected(t: t, erg: erg))
            case "N":
                guard let cs = fields["c"], let c = UInt16(cs, radix: 16) else { throw PM5LogError(line: lineNumber, "no characteristic c=") }
                guard let vs = fields["v"], vs.count % 2 == 0 else { throw PM5LogError(line: lineNumber, "no value v= of whole bytes") }
                var bytes: [UInt8] = []
                var i = vs.startIndex
                while i < vs.endIndex {
                    let j = vs.index(i, offsetBy: 2)
                    guard let b = UInt8(vs[i..<j], radix: 16) else { throw PM5LogError(line: lineNumber, "\"\(vs[i..<j])\" is not a hex byte") }
                    bytes.append(b)
                    i = j
                }
                events.append(.notification(t: t, erg: erg, characteristic: c, bytes: bytes))
            default:
                throw PM5LogError(line: lineNumber, "\"\(parts[0])\" is not an event (N, C or D)")
            }
        }
        return events
    }

    /// Plays the events into one recorder per erg, as the hub would.
    public static func replay(_ events: [PM5LogEvent]) -> [Int: ErgRecorder] {
        var ergs: [Int: ErgRecorder] = [:]
        for e in events {
            var r = ergs[e.erg] ?? ErgRecorder()
            switch e {
            case .connected(let t, _): r.connected(at: t)
            case .disconnected(let t, _): r.disconnected(at: t)
            case .notification(let t, _, let c, let bytes): r.receive(characteristic: c, bytes, at: t)
            }
            ergs[e.erg] = r
        }
        return ergs
    }

    static func fixed3(_ v: Double) -> String {
        let ms = Int64((v * 1000).rounded())
        return "\(ms / 1000)." + String(ms % 1000).leftPadded(to: 3)
    }
}

/// A malformed log line.
public struct PM5LogError: Error, Sendable, CustomStringConvertible {
    public var line: Int
    public var why: String
    init(line: Int, _ why: String) {
        self.line = line
        self.why = why
    }
    public var description: String { "line \(line): \(why)" }
}
