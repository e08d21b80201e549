// SPDX-License-Identifier: Apache-2.0
// Runs told from lifts and stops on synthetic ski days with exact truth.

import Foundation
import GPSTiming
import SkiRuns
import Testing

@Suite("Ski days")
struct SkiDayTests {
    /// The detected run overlapping a truth span, if any.
    static func overlapping(_ runs: [SkiRun], _ start: Double, _ end: Double) -> [SkiRun] {
        runs.filter { $0.start.seconds - SkiDaySynth.origin < end && $0.end.seconds - SkiDaySynth.origin > start }
    }

    @Test("20 synthetic days at 1 Hz (altitude noise 3 m, position 2 m, speed 0.2 m/s), 120 runs with pauses, uphill stretches and traverses: every run found once, no lift or uphill stretch counted as a run, every lift found, vertical within 2 % and distance within 3 % of truth")
    func days() {
        var worstVertical = 0.0, worstDistance = 0.0, runs = 0
        for seed in UInt64(1) ... 20 {
            let d = SkiDaySynth.day(seed: seed)
            let day = SkiDayAnalysis.analyse(d.fixes)
            #expect(day.runs.count == d.runs.count, "seed \(seed): \(day.runs.count) runs for \(d.runs.count)")
            #expect(day.lifts.count == d.lifts.count, "seed \(seed): \(day.lifts.count) lifts for \(d.lifts.count)")
            for truth in d.runs {
                let found = Self.overlapping(day.runs, truth.start, truth.end)
                guard found.count == 1, let r = found.first else {
                    Issue.record("seed \(seed): the run at \(Int(truth.start)) s found \(found.count) times")
                    continue
                }
                runs += 1
                worstVertical = max(worstVertical, abs(r.vertical - truth.vertical) / truth.vertical)
                worstDistance = max(worstDistance, abs(r.distance - truth.distance) / truth.distance)
            }
            for lift in d.lifts {
                #expect(Self.overlapping(day.runs, lift.start, lift.end).isEmpty, "seed \(seed): a lift counted as a run")
            }
        }
        print("ski days: \(runs) runs found of 120; worst vertical error \(String(format: "%.2f", worstVertical * 100)) %, worst distance error \(String(format: "%.2f", worstDistance * 100)) %")
        #expect(runs == 120)
        #expect(worstVertical <= 0.02)
        #expect(worstDistance <= 0.03)
    }

    @Test("at 10 Hz (a receiver in a backpack logging fast) and with 30 s of no fixes inside a run: the same runs, vertical within 2 %")
    func rates() {
        for seed in UInt64(21) ... 23 {
            var d = SkiDaySynth.day(seed: seed, rate: 10)
            // A dropout under trees in the second run.
            let r = d.runs[1]
            d.fixes.removeAll { $0.time.seconds - SkiDaySynth.origin > r.start + 30 && $0.time.seconds - SkiDaySynth.origin < r.start + 60 }
            let day = SkiDayAnalysis.analyse(d.fixes)
            #expect(day.runs.count == 6 && day.lifts.count == 6, "seed \(seed): \(day.runs.count) runs, \(day.lifts.count) lifts")
            for truth in d.runs {
                let found = Self.overlapping(day.runs, truth.start, truth.end)
                #expect(found.count == 1 && abs(found[0].vertical - truth.vertical) <= 0.02 * truth.vertical)
            }
        }
    }

    @Test("a two-minute sit-down halfway: one run for a snowboarder, two for a skier (whose pauses split after 90 s)")
    func sitDown() {
        var d = SkiDaySynth(seed: 5)
        d.stand(60)
        d.run(vertical: 400, speed: 10, pause: 120)
        d.stand(300)
        #expect(SkiDayAnalysis.analyse(d.fixes, settings: .snowboard).runs.count == 1)
        #expect(SkiDayAnalysis.analyse(d.fixes, settings: .ski).runs.count == 2)
    }

    @Test("a zigzag hike uphill (1.2 m/s, climbing 0.4 m/s for 5 minutes) is no lift; the run after it is a run")
    func hike() {
        var d = SkiDaySynth(seed: 9)
        d.stand(60)
        d.move(seconds: 300, v: { _ in 1.2 }, vz: 0.4, heading: { s in 1.2 * sin(2 * .pi * s / 60) })
        d.stand(60)
        d.run(vertical: 150, speed: 9)
        d.stand(120)
        let day = SkiDayAnalysis.analyse(d.fixes)
        #expect(day.lifts.isEmpty)
        #expect(day.runs.count == 1)
    }

    @Test("a run's figures: duration, top speed and where, average speed and slope from the track; the day's totals")
    func figures() throws {
        let d = SkiDaySynth.day(seed: 3)
        let day = SkiDayAnalysis.analyse(d.fixes)
        let r = try #require(day.runs.first)
        let truth = d.runs[0]
        #expect(abs(r.seconds - (truth.end - truth.start)) < 20)
        #expect(r.topSpeed >= r.averageSpeed && r.topSpeed < 20)
        #expect(r.topSpeedAt.time >= r.start && r.topSpeedAt.time <= r.end)
        #expect(abs(r.averageSpeed - r.distance / r.seconds) < 1e-9)
        // The runs drop 0.3 m for each metre/s of speed, at 0.85 of it on average: 19.4 degrees.
        #expect(abs(r.slope - atan(0.3 / 0.85) * 180 / .pi) < 1, "\(r.slope)")
        #expect(abs(day.totalVertical - d.runs.reduce(0) { $0 + $1.vertical }) < 0.02 * day.totalVertical)
        #expect(day.secondsOnLifts > 0 && day.secondsOnRuns > 0 && day.topSpeed == day.runs.map(\.topSpeed).max())
    }

    @Test("fixes without a 3D fix are left out; an empty or a standing day has no runs")
    func sparse() {
        #expect(SkiDayAnalysis.analyse([GPSFix]()).runs.isEmpty)
        var d = SkiDaySynth(seed: 2)
        d.stand(600)
        #expect(SkiDayAnalysis.analyse(d.fixes).runs.isEmpty)
        let twoD = d.fixes.map { f in var f = f; f.mode = .twoD; return f }
        #expect(SkiDayAnalysis.analyse(twoD).points.isEmpty)
    }
}
