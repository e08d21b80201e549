// SPDX-License-Identifier: Apache-2.0
// The converter's flying sprint, 100 m predictor and stagger modes against known values.

import Testing
import Calculators

@Suite struct SprintConvertersTests {
    @Test func flyingSprintAsSpeedAndOtherDistances() throws {
        let c = try FlyingSprint.convert(distance: 30, time: 3.0)
        #expect(c.metresPerSecond == 10)
        #expect(abs(c.kilometresPerHour - 36) < 1e-9)
        #expect(abs(c.milesPerHour - 22.369) < 0.001)
        #expect(c.equivalents.map { CalcText.fixed($0.time, 3) } == ["1.000", "2.000", "3.000", "3.658", "4.000", "5.000"])
        #expect(throws: CalculatorError.self) { try FlyingSprint.convert(distance: 0, time: 3) }
        #expect(throws: CalculatorError.self) { try FlyingSprint.convert(distance: 30, time: 0) }
        // 30 m in 1 s is 30 m/s: a typing error.
        #expect(throws: CalculatorError.self) { try FlyingSprint.convert(distance: 30, time: 1) }
    }

    @Test func hundredFromThirtyAndFlyingTen() throws {
        // The race the model's factor comes from gives its own time back.
        let bolt = try HundredPredictor.predict(thirty: 3.78, flyingTen: 0.81)
        #expect(CalcText.fixed(bolt.hundred, 2) == "9.58")
        #expect(abs(bolt.topSpeed - 12.346) < 0.001)
        // A club sprinter: 4.30 s and 1.00 s: 4.30 + 7.00 × 1.023.
        #expect(CalcText.fixed(try HundredPredictor.predict(thirty: 4.30, flyingTen: 1.00).hundred, 3) == "11.461")
        for (t30, f10) in [(2.0, 1.0), (4.3, 0.5), (4.3, 1.5)] {
            #expect(throws: CalculatorError.self, "\(t30) \(f10)") { try HundredPredictor.predict(thirty: t30, flyingTen: f10) }
        }
    }

    @Test func staggersOfAStandardTrack() throws {
        // World Athletics' 400 m staggers (Track and Field Facilities Manual): 7.04 m in
        // lane 2, 53.03 m in lane 8.
        let s400 = try Stagger.staggers(event: "400m", laneCount: 8).map { CalcText.fixed($0, 2) }
        #expect(s400 == ["0.00", "7.04", "14.70", "22.37", "30.03", "37.70", "45.36", "53.03"])
        let s200 = try Stagger.staggers(event: "200m", laneCount: 8).map { CalcText.fixed($0, 2) }
        #expect(s200 == ["0.00", "3.52", "7.35", "11.18", "15.02", "18.85", "22.68", "26.52"])
        #expect(CalcText.fixed(try Stagger.staggers(event: "4x400m", laneCount: 2)[1], 2) == "10.56")
        #expect(throws: CalculatorError.self) { try Stagger.staggers(event: "100m", laneCount: 8) }
        #expect(throws: CalculatorError.self) { try Stagger.staggers(event: "400m", laneCount: 12) }
    }
}
