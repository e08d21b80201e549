// SPDX-License-Identifier: Apache-2.0
// CSAFE frames and the workouts a coach sets: the worked examples of Concept2's CSAFE
// definition (rev 0.27) byte for byte, escapes, checksums and the PM5's answers.

import Rowing
import Testing

@Suite("CSAFE")
struct CSAFETests {
    func bytes(_ hex: String) -> [UInt8] { hex.split(whereSeparator: { $0 == " " || $0 == "\n" }).map { UInt8($0, radix: 16)! } }

    // Why the checksums of some frames differ from the definition's printed ones: the
    // printed checksum of the fixed-time interval (0A), of the variable intervals (C6) and
    // of terminate (62) do not match the XOR of their own bytes; the XOR is used.
    @Test("the definition's workout examples, byte for byte", arguments: [
        (PM5Workout.justRow, "F1 76 07 01 01 01 13 02 01 01 61 F2"),
        (.distance(metres: 2000, split: 400),
         "F1 76 18 01 01 03 03 05 80 00 00 07 D0 05 05 80 00 00 01 90 14 01 01 13 02 01 01 28 F2"),
        (.time(seconds: 1200, split: 240),
         "F1 76 18 01 01 05 03 05 00 00 01 D4 C0 05 05 00 00 00 5D C0 14 01 01 13 02 01 01 E0 F2"),
    ])
    func examples(workout: PM5Workout, frame: String) throws {
        #expect(try workout.frames() == [bytes(frame)])
    }

    @Test("variable intervals (500 m / 1:00, 3:00 / 0, 1000 m / 0, 5:00 / 2:00 at 1:40) match the definition's 116-byte frame")
    func variableIntervals() throws {
        let w = PM5Workout.intervals([.init(.metres(500), restSeconds: 60), .init(.seconds(180), restSeconds: 0),
                                      .init(.metres(1000), restSeconds: 0), .init(.seconds(300), restSeconds: 120)])
        let expected = bytes("""
            F1 76 6F 18 01 00 01 01 08 17 01 01 03 05 80 00 00 01 F4 04 02 00 3C 06 04 00 00 27 10 14 01 01 \
            18 01 01 17 01 00 03 05 00 00 00 46 50 04 02 00 00 06 04 00 00 27 10 14 01 01 \
            18 01 02 17 01 01 03 05 80 00 00 03 E8 04 02 00 00 06 04 00 00 27 10 14 01 01 \
            18 01 03 17 01 00 03 05 00 00 00 75 30 04 02 00 78 06 04 00 00 27 10 14 01 01 13 02 01 01 09 F2
            """)
        let frames = try w.frames(targetPace: 100)
        #expect(frames == [expected])
        #expect(frames[0].count == 116)
    }

    @Test("eight intervals take two frames, each within 120 bytes, the screen prepared in the last")
    func longIntervalList() throws {
        let w = PM5Workout.intervals(Array(repeating: .init(.metres(500), restSeconds: 60), count: 8))
        let frames = try w.frames()
        #expect(frames.count == 2)
        for f in frames {
            #expect(f.count <= 120)
            _ = try CSAFEFrame.decode(f)
        }
        let last = try CSAFEFrame.decode(frames[1])
        #expect(Array(last.suffix(4)) == [0x13, 0x02, 0x01, 0x01])
    }

    @Test("terminate, and the escapes: a checksum of 0xF2 goes as F3 02")
    func escapes() throws {
        #expect(PM5Workout.terminateFrame == bytes("F1 76 04 13 02 01 02 60 F2"))
        // GET_WORKOUTSTATE in the proprietary get-config wrapper: its checksum is 0xF2.
        let frame = CSAFEFrame.encode([0x7E, 0x01, 0x8D])
        #expect(frame == bytes("F1 7E 01 8D F3 02 F2"))
        #expect(try CSAFEFrame.decode(frame) == [0x7E, 0x01, 0x8D])
        // Every flag value inside the contents.
        let all: [UInt8] = [0xF0, 0xF1, 0xF2, 0xF3, 0x00, 0xEF]
        let f = CSAFEFrame.encode(all)
        #expect(!f.dropFirst().dropLast().contains { $0 == 0xF0 || $0 == 0xF1 || $0 == 0xF2 })
        #expect(try CSAFEFrame.decode(f) == all)
    }

    @Test("bad frames are refused with the reason", arguments: [
        ("F1 76 07 01 01 01 13 02 01 01 62 F2", "checksum"),
        ("F1 76 07 01", "no stop flag"),
        ("76 07 01 F2", "no start flag"),
        ("F0 00 FD 01 01 F2", "extended frame"),
        ("F1 76 F3 07 00 F2", "bad escape"),
        ("F1 76 F1 00 F2", "flag byte"),
        ("F1 F2", "too short"),
    ])
    func badFrames(frame: String, why: String) {
        do {
            _ = try CSAFEFrame.decode(bytes(frame))
            Issue.record("\(frame) was taken")
        } catch {
            #expect(error.description.contains(why), "\(error.description)")
        }
    }

    @Test("the PM5's answers: the commands taken, and a previous frame refused")
    func answers() throws {
        let ok = try PM5ConfigAnswer(frame: CSAFEFrame.encode([0x81, 0x76, 0x02, 0x01, 0x13]))
        #expect(ok.accepted == [0x01, 0x13] && ok.problem == nil)
        let rejected = try PM5ConfigAnswer(frame: CSAFEFrame.encode([0x11]))
        #expect(rejected.problem == "the PM rejected the previous frame" && rejected.accepted.isEmpty)
        #expect(throws: CSAFEError.self) { try CSAFEResponse(contents: [0x01, 0x76, 0x05, 0x01]) }
        // A get answer: stroke state 4 (recovery) in the public wrapper.
        let r = try CSAFEResponse(contents: try CSAFEFrame.decode(bytes("F1 09 1A 03 BF 01 04 AA F2")))
        #expect(r.answers == [CSAFECommand(0x1A, [0xBF, 0x01, 0x04])])
        #expect(r.contents == [0x09, 0x1A, 0x03, 0xBF, 0x01, 0x04])
    }

    @Test("workouts outside the PM5's limits are refused before anything is sent", arguments: [
        PM5Workout.distance(metres: 50, split: nil), .distance(metres: 10_000, split: 100), .time(seconds: 10, split: nil),
        .time(seconds: 40_000, split: nil), .intervals([]), .intervals([.init(.metres(500), restSeconds: 700)]),
    ])
    func limits(workout: PM5Workout) {
        #expect(throws: CSAFEError.self) { try workout.frames() }
    }

    @Test("a frame goes to the control characteristic in writes of 20 bytes")
    func writes() throws {
        let frame = try PM5Workout.distance(metres: 2000, split: 500).frames()[0]
        let parts = PM5Workout.writes(frame)
        #expect(parts.count == 2 && parts[0].count == 20 && parts.joined().elementsEqual(frame))
    }
}
