// SPDX-License-Identifier: Apache-2.0
// The wind model against the figures published with it and hand-worked examples.

import Calculators
import Testing

@Suite("Wind adjustment")
struct WindAdjustmentTests {
    @Test("the published advantages of a +2.0 m/s tail wind: 0.140 s over 200 m, 0.146 s over the hurdles")
    func publishedAdvantages() throws {
        #expect(abs(try WindAdjustment.correction(.m200, time: 20.50, wind: 2.0) - 0.140) < 1e-9)
        #expect(abs(try WindAdjustment.correction(.hurdles110, time: 13.50, wind: 2.0) - 0.146) < 1e-9)
        #expect(abs(try WindAdjustment.correction(.hurdles100, time: 12.90, wind: 2.0) - 0.146) < 1e-9)
    }

    @Test("a 13 s 100 m runner gains 69 % more from +2.0 m/s than a 10 s one, as published")
    func performanceLevel() throws {
        let elite = try WindAdjustment.correction(.m100, time: 10.0, wind: 2.0)
        let amateur = try WindAdjustment.correction(.m100, time: 13.0, wind: 2.0)
        #expect(abs(amateur / elite - 1.69) < 0.005)
    }

    @Test("worked example: 10.05 s with +1.8 m/s is 10.127 s in still air")
    func workedExample() throws {
        // Δ = (−0.0449 + 0.009459·10.05)·1.8 − 0.0042·1.8² = 0.09029331 − 0.013608 = 0.07668531
        let still = try WindAdjustment.stillAirTime(.m100, time: 10.05, wind: 1.8)
        #expect(abs(still - 10.12668531) < 1e-9)
        #expect(CalcText.fixed(still, 2) == "10.13")
        // A head wind makes the still-air time faster: 20.60 s into −1.5 m/s.
        // Δ = 0.090·(−1.5) − 0.010·2.25 = −0.1575
        #expect(abs(try WindAdjustment.stillAirTime(.m200, time: 20.60, wind: -1.5) - 20.4425) < 1e-9)
    }

    @Test("the reverse is the exact inverse at every wind in range")
    func inverse() throws {
        for event in WindEvent.allCases {
            for tenths in -40...40 {
                let w = Double(tenths) / 10
                let run = 12.34
                let still = try WindAdjustment.stillAirTime(event, time: run, wind: w)
                let back = try WindAdjustment.time(event, stillAirTime: still, wind: w)
                #expect(abs(back - run) < 1e-9, "\(event) at \(w)")
            }
        }
        let line = try WindAdjustment.adjust(.m100, time: 10.05, wind: 1.8)
        #expect(line.legal && line.atLegalLimit < line.time)
        #expect(!(try WindAdjustment.adjust(.m100, time: 10.05, wind: 2.1)).legal)
    }

    @Test("no wind, no change; tail wind makes still air slower, head wind faster")
    func signs() throws {
        for event in WindEvent.allCases {
            #expect(try WindAdjustment.stillAirTime(event, time: 11.0, wind: 0) == 11.0)
            #expect(try WindAdjustment.stillAirTime(event, time: 11.0, wind: 1.0) > 11.0)
            #expect(try WindAdjustment.stillAirTime(event, time: 11.0, wind: -1.0) < 11.0)
        }
    }

    @Test("wind outside ±4.0 m/s and non-positive times are errors with a message")
    func badInput() {
        #expect(throws: CalculatorError.self) { try WindAdjustment.stillAirTime(.m100, time: 10.0, wind: 4.1) }
        #expect(throws: CalculatorError.self) { try WindAdjustment.stillAirTime(.m100, time: 10.0, wind: -4.5) }
        #expect(throws: CalculatorError.self) { try WindAdjustment.stillAirTime(.m100, time: 0, wind: 1) }
        #expect(throws: CalculatorError.self) { try WindAdjustment.stillAirTime(.m100, time: .nan, wind: 1) }
        #expect(throws: CalculatorError.self) { try WindAdjustment.time(.m200, stillAirTime: -3, wind: 1) }
        do {
            _ = try WindAdjustment.stillAirTime(.m100, time: 10.0, wind: 5)
            Issue.record("no error")
        } catch {
            #expect(error.description == "wind +5.0 m/s is outside the model's range -4.0...+4.0 m/s")
        }
        #expect(WindAdjustment.validWind.contains(4.0) && WindAdjustment.validWind.contains(-4.0))
    }

    @Test("event names as coaches type them")
    func parsing() {
        #expect(WindEvent(parsing: "100m") == .m100)
        #expect(WindEvent(parsing: "200") == .m200)
        #expect(WindEvent(parsing: "100mH") == .hurdles100)
        #expect(WindEvent(parsing: "110 H") == .hurdles110)
        #expect(WindEvent(parsing: "400m") == nil)
    }
}
