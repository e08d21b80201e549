// SPDX-License-Identifier: Apache-2.0
// The erg's side of a workout: what a PM5 makes of the hub's CSAFE frames, read back to the
// workout the coach set, with the answers the hub checks.

import Rowing
import Testing

@Suite struct WorkoutReaderTests {
    static let workouts: [PM5Workout] = [
        .justRow,
        .distance(metres: 2000, split: 500), .distance(metres: 5000, split: nil),
        .time(seconds: 1200, split: 240), .time(seconds: 1800, split: nil),
        .intervals([.init(.metres(500), restSeconds: 60), .init(.seconds(180), restSeconds: 0),
                    .init(.metres(1000), restSeconds: 0), .init(.seconds(300), restSeconds: 120)]),
        .intervals((0..<50).map { PM5Workout.Interval($0 % 2 == 0 ? .metres(250 + 10 * $0) : .seconds(30 + Double($0)), restSeconds: $0 % 7) }),
    ]

    @Test("every workout is read back from its frames as it was set, and each frame is answered with its commands", arguments: workouts)
    func roundTrip(workout: PM5Workout) throws {
        var reader = PM5WorkoutReader()
        let frames = try workout.frames()
        var outcomes: [PM5WorkoutReader.Outcome] = []
        for f in frames {
            let (outcome, answer) = try reader.take(f)
            outcomes.append(outcome)
            let a = try PM5ConfigAnswer(frame: answer)
            #expect(a.problem == nil && !a.accepted.isEmpty)
        }
        #expect(outcomes.dropLast().allSatisfy { $0 == .pending })
        #expect(outcomes.last == .workout(workout))
        // The reader is ready for the next workout.
        #expect(try reader.take(PM5Workout.distance(metres: 1000, split: nil).frames()[0]).outcome == .workout(.distance(metres: 1000, split: nil)))
        #expect(try reader.take(PM5Workout.terminateFrame).outcome == .terminated)
    }

    @Test("frames that are not a workout are refused with the reason")
    func refused() {
        var reader = PM5WorkoutReader()
        // A standard command outside the set-config wrapper.
        #expect(throws: CSAFEError.self) { try reader.take(CSAFEFrame.encode([0x80])) }
        // The wrapper's count runs past the end.
        #expect(throws: CSAFEError.self) { try reader.take(CSAFEFrame.encode([0x76, 9, 0x01, 1, 3])) }
        // A workout type with no duration, then its screen.
        #expect(throws: CSAFEError.self) { try reader.take(CSAFEFrame.encode([0x76, 7, 0x01, 1, 3, 0x13, 2, 1, 1])) }
        // A checksum that does not match.
        var bad = try! PM5Workout.distance(metres: 2000, split: 500).frames()[0]
        bad[3] ^= 0x01
        #expect(throws: CSAFEError.self) { try reader.take(bad) }
    }

    @Test("a workout's name as the page shows it")
    func names() {
        #expect(PM5Workout.distance(metres: 2000, split: 500).description == "2000 m")
        #expect(PM5Workout.time(seconds: 1200, split: nil).description == "20:00")
        #expect(PM5Workout.time(seconds: 3725, split: nil).description == "1:02:05")
        #expect(PM5Workout.intervals(Array(repeating: .init(.metres(500), restSeconds: 60), count: 4)).description == "4 × 500 m / 1:00r")
        #expect(PM5Workout.intervals([.init(.metres(500), restSeconds: 0), .init(.seconds(240), restSeconds: 90)]).description == "500 m, 4:00 / 1:30r")
        #expect(PM5Workout.justRow.description == "just row")
    }
}
