// SPDX-License-Identifier: Apache-2.0
// CSAFE frames: the PM5's command protocol over its control characteristics.

import GATT

/// A standard CSAFE frame as the PM5 takes it on 0x0021 and answers on 0x0022: a start
/// flag, the contents with the flag bytes escaped, an XOR checksum of the contents, and a
/// stop flag.
public enum CSAFEFrame {
    public static let start: UInt8 = 0xF1
    public static let extendedStart: UInt8 = 0xF0
    public static let stop: UInt8 = 0xF2
    public static let escape: UInt8 = 0xF3
    /// The PM5 takes frames of at most 120 bytes, flags and escapes included.
    public static let maxFrameBytes = 120

    /// The frame of `contents` (commands with their byte counts and data). Each of the
    /// bytes 0xF0–0xF3 is sent as 0xF3 followed by its low two bits; so is the checksum.
    public static func encode(_ contents: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [start]
        var check: UInt8 = 0
        for b in contents {
            check ^= b
            stuff(b, into: &out)
        }
        stuff(check, into: &out)
        out.append(stop)
        return out
    }

    private static func stuff(_ b: UInt8, into out: inout [UInt8]) {
        if b >= 0xF0 && b <= 0xF3 { out += [escape, b & 0x03] } else { out.append(b) }
    }

    /// The contents of one standard frame: flags, escapes and checksum checked and
    /// removed. Bytes after the stop flag are an error (one frame per notification).
    public static func decode(_ frame: [UInt8]) throws(CSAFEError) -> [UInt8] {
        guard frame.count >= 3 else { throw CSAFEError("a frame of \(frame.count) bytes is too short") }
        guard frame.count <= maxFrameBytes else { throw CSAFEError("a frame of \(frame.count) bytes is over \(maxFrameBytes)") }
        guard frame[0] == start else {
            throw CSAFEError(frame[0] == extendedStart ? "an extended frame (addressed) is not expected from a PM5 over Bluetooth"
                                                       : "no start flag (0x\(hex(frame[0])))")
        }
        guard frame[frame.count - 1] == stop else { throw CSAFEError("no stop flag at the end") }
        var body: [UInt8] = []
        var i = 1
        while i < frame.count - 1 {
            let b = frame[i]
            switch b {
            case escape:
                guard i + 1 < frame.count - 1, frame[i + 1] <= 0x03 else { throw CSAFEError("a bad escape at byte \(i)") }
                body.append(0xF0 | frame[i + 1])
                i += 2
            case start, extendedStart, stop:
                throw CSAFEError("a flag byte 0x\(hex(b)) inside the frame at byte \(i)")
            default:
                body.append(b)
                i += 1
            }
        }
        guard let check = body.popLast() else { throw CSAFEError("no checksum") }
        let sum = body.reduce(UInt8(0), ^)
        guard sum == check else { throw CSAFEError("checksum 0x\(hex(check)), the contents give 0x\(hex(sum))") }
        return body
    }
}

/// A bad CSAFE frame or answer.
public struct CSAFEError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    init(_ why: String) { description = "CSAFE: " + why }
}

/// One command of a frame's contents: its id, and its data (a long command's byte count
/// is written by `contents`). Ids from 0x80 up are short commands with no data.
public struct CSAFECommand: Sendable, Hashable {
    public var id: UInt8
    public var data: [UInt8]

    public init(_ id: UInt8, _ data: [UInt8] = []) {
        self.id = id
        self.data = data
    }

    /// The commands one after another, each long one with its byte count.
    public static func contents(_ commands: [CSAFECommand]) -> [UInt8] {
        var out: [UInt8] = []
        for c in commands {
            out.append(c.id)
            if c.id < 0x80 {
                out.append(UInt8(c.data.count))
                out += c.data
            }
        }
        return out
    }
}

/// The PM5's answer to a frame: its status byte and each command's answer.
public struct CSAFEResponse: Sendable, Hashable {
    /// Bit 7 toggles with each frame; bits 4–5 say whether the previous frame was taken
    /// (0: ok, 1: rejected, 2: bad, 3: not ready); bits 0–3 are the PM's state.
    public var status: UInt8
    public var answers: [CSAFECommand]

    /// What the previous frame did: nil when it was taken.
    public var previousFrameProblem: String? {
        switch (status >> 4) & 0x03 {
        case 0: nil
        case 1: "the PM rejected the previous frame"
        case 2: "the PM found the previous frame bad"
        default: "the PM was not ready for the previous frame"
        }
    }

    /// Splits a frame's contents into the status byte and the answers (id, byte count,
    /// data), checking every count.
    public init(contents: [UInt8]) throws(CSAFEError) {
        guard let first = contents.first else { throw CSAFEError("an answer without a status byte") }
        status = first
        answers = []
        var i = 1
        while i < contents.count {
            let id = contents[i]
            guard i + 1 < contents.count else { throw CSAFEError("answer 0x\(hex(id)) has no byte count") }
            let n = Int(contents[i + 1])
            guard i + 2 + n <= contents.count else {
                throw CSAFEError("answer 0x\(hex(id)) says \(n) bytes, \(contents.count - i - 2) follow")
            }
            answers.append(CSAFECommand(id, Array(contents[(i + 2)..<(i + 2 + n)])))
            i += 2 + n
        }
    }

    public init(status: UInt8, answers: [CSAFECommand]) {
        self.status = status
        self.answers = answers
    }

    /// The contents a PM would send for this answer (what an emulator writes).
    public var contents: [UInt8] {
        var out: [UInt8] = [status]
        for a in answers { out += [a.id, UInt8(a.data.count)] + a.data }
        return out
    }
}
