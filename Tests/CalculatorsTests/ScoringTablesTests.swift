// SPDX-License-Identifier: Apache-2.0
// Scoring tables against known table values, an independent fit, and their inverse.

import Calculators
import Testing

@Suite("Scoring tables")
struct ScoringTablesTests {
    @Test("known values: men's 100 m 9.58 s is 1356 points, 10.00 s is 1206")
    func knownValues() throws {
        #expect(try ScoringTables.points(.m100, .men, time: 9.58).points == 1356)
        #expect(try ScoringTables.points(.m100, .men, time: 10.00).points == 1206)
    }

    /// J. Chen's fit to the 2022 tables (points = a·t² + b·t + c), made independently of
    /// the constants in the module; the two must agree to a point over each event's range.
    @Test("agrees with an independent fit of the 2022 tables within one point", arguments: [
        (TrackEvent.m100, Sex.men, 24.64221166330755, -837.7135408254784, 7119.312511439365, 9.5, 16.0),
        (.m200, .men, 5.08332962570729, -360.82603806429427, 6403.154333108175, 19.0, 33.0),
        (.m400, .men, 1.0210130425533885, -161.30922380614925, 6371.289298870831, 42.0, 75.0),
        (.hurdles110, .men, 7.665206127559826, -395.41766965273115, 5099.5225522446335, 12.5, 24.0),
        (.m60, .men, 68.62032200466908, -1468.37607988026, 7854.9239964072685, 6.2, 10.0),
        (.hurdles60, .men, 23.916324270583324, -698.1956612354879, 5095.488749123108, 7.2, 14.0),
        (.m100, .women, 9.927426450755508, -436.6751262150741, 4802.020943910302, 10.5, 20.0),
        (.hurdles100, .women, 3.982296326194273, -238.8619577729478, 3581.9054393060505, 12.0, 27.0),
        (.m60, .women, 24.911775442690292, -697.4127036588199, 4880.840624159163, 6.9, 13.0),
    ])
    func independentFit(event: TrackEvent, sex: Sex, a: Double, b: Double, c: Double, fastest: Double, slowest: Double) throws {
        var h = Int(fastest * 100)
        var checked = 0
        while h <= Int(slowest * 100) {
            let t = Double(h) / 100
            let reference = Int((a * t * t + b * t + c).rounded())
            if (ScoringTables.minimumPoints...ScoringTables.maximumPoints).contains(reference) {
                let p = try ScoringTables.points(event, sex, time: t).points
                #expect(abs(p - reference) <= 1, "\(sex) \(event) \(t) s: \(p) vs \(reference)")
                checked += 1
            }
            h += 1
        }
        #expect(checked > 100)
    }

    @Test("the mark for a score is the slowest hundredth reaching it, for every event and score")
    func inverse() throws {
        for sex in Sex.allCases {
            for event in ScoringTables.events(for: sex) {
                for p in stride(from: 100, through: 1300, by: 7) {
                    let m = try ScoringTables.mark(event, sex, points: p)
                    #expect(m.points >= p)
                    let slower = m.time + 0.01
                    if let s = try? ScoringTables.points(event, sex, time: slower) { #expect(s.points < p, "\(sex) \(event) \(p)") }
                }
            }
        }
    }

    @Test("equivalent: men's 100 m 10.50 s converts to a 200 m of the same points")
    func equivalent() throws {
        let e = try ScoringTables.equivalent(from: .m100, time: 10.50, to: .m200, sex: .men)
        // 24.6422116633·(10.50 − 16.9975315583)² − 0.2187 = 1040.12
        #expect(e.from.points == 1040)
        #expect(e.to.points >= e.from.points)
        #expect(try ScoringTables.points(.m200, .men, time: e.to.time + 0.01).points < e.from.points)
        // 5.0833296257·(t − 35.4911115974)² + 0.0957 = 1039.5 at t = 21.1918: 21.19 s
        #expect(e.to.time == 21.19)
        // Round trip lands back on the same time when the target has a hundredth per point or finer.
        let back = try ScoringTables.equivalent(from: .m200, time: e.to.time, to: .m100, sex: .men)
        #expect(back.to.time == 10.50)
    }

    @Test("times round up to the hundredth before scoring")
    func rounding() throws {
        #expect(try ScoringTables.points(.m100, .men, time: 10.001).time == 10.01)
        #expect(try ScoringTables.points(.m100, .men, time: 10.05).time == 10.05)
        #expect(try ScoringTables.points(.m100, .men, time: 10.001).points == (try ScoringTables.points(.m100, .men, time: 10.01)).points)
    }

    @Test("bad input is an error: no such table, out of the table, nonsense times, points out of range")
    func badInput() {
        #expect(throws: CalculatorError.self) { try ScoringTables.points(.hurdles110, .women, time: 13.0) }
        #expect(throws: CalculatorError.self) { try ScoringTables.points(.hurdles100, .men, time: 13.0) }
        #expect(throws: CalculatorError.self) { try ScoringTables.points(.m100, .men, time: 30.0) }
        #expect(throws: CalculatorError.self) { try ScoringTables.points(.m100, .men, time: 5.0) }
        #expect(throws: CalculatorError.self) { try ScoringTables.points(.m100, .men, time: -1) }
        #expect(throws: CalculatorError.self) { try ScoringTables.points(.m100, .men, time: .infinity) }
        #expect(throws: CalculatorError.self) { try ScoringTables.mark(.m100, .men, points: 0) }
        #expect(throws: CalculatorError.self) { try ScoringTables.mark(.m100, .men, points: 1401) }
    }

    @Test("event names as coaches type them")
    func parsing() {
        #expect(TrackEvent(parsing: "100m") == .m100)
        #expect(TrackEvent(parsing: "100") == .m100)
        #expect(TrackEvent(parsing: "60mh") == .hurdles60)
        #expect(TrackEvent(parsing: "110H") == .hurdles110)
        #expect(TrackEvent(parsing: "200m sh") == .m200Indoor)
        #expect(TrackEvent(parsing: "400m-indoor") == .m400Indoor)
        #expect(TrackEvent(parsing: "800m") == nil)
        #expect(TrackEvent(parsing: "abc") == nil)
        #expect(Sex(parsing: "Women") == .women)
        #expect(Sex(parsing: "x") == nil)
    }

    @Test("fixed-point text and parsing")
    func text() {
        #expect(CalcText.fixed(10.125, 2) == "10.13")
        #expect(CalcText.fixed(-0.04, 1) == "0.0")
        #expect(CalcText.signed(1.8, 1) == "+1.8")
        #expect(CalcText.signed(-1.8, 1) == "-1.8")
        #expect(CalcText.parse("+1.8") == 1.8)
        #expect(CalcText.parse("-0.4") == -0.4)
        #expect(CalcText.parse("1e3") == nil)
        #expect(CalcText.parse("1.2.3") == nil)
        #expect(CalcText.parse("") == nil)
        #expect(CalcText.parseTime("1:02.35") == 62.35)
        #expect(CalcText.parseTime("1:75") == nil)
    }
}
