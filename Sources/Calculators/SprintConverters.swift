// SPDX-License-Identifier: Apache-2.0
// The converter's other modes: a flying sprint as speed and as other flying distances, a
// 100 m predicted from a 30 m block start and a flying 10 m, and lane staggers.

/// A flying sprint (timed from a running start) is an average speed over its distance;
/// the same speed gives the time over the other flying distances coaches test.
public struct FlyingConversion: Sendable, Hashable {
    public struct Equivalent: Sendable, Hashable {
        public let distance: Double
        public let time: Double
    }
    public let distance: Double
    public let time: Double
    public let metresPerSecond: Double
    public var kilometresPerHour: Double { metresPerSecond * 3.6 }
    public var milesPerHour: Double { metresPerSecond * 3600 / 1609.344 }
    /// The time over `FlyingSprint.distances` at the same average speed.
    public let equivalents: [Equivalent]
}

public enum FlyingSprint {
    /// Flying distances coaches test: 10, 20, 30, 40 m, 40 yd (36.576 m) and 50 m.
    public static let distances: [Double] = [10, 20, 30, 36.576, 40, 50]
    public static let distanceRange: ClosedRange<Double> = 1...200
    /// Why 13 m/s: above the fastest speeds ever measured in a sprint (about 12.3 m/s),
    /// so a faster entry is a typing error, not an athlete.
    public static let speedRange: ClosedRange<Double> = 1...13

    public static func convert(distance: Double, time: Double) throws(CalculatorError) -> FlyingConversion {
        guard distance.isFinite, distanceRange.contains(distance) else { throw .outOfRange("distance", distance, distanceRange, " m") }
        guard time.isFinite, time > 0 else { throw .notAPositiveTime(time) }
        let v = distance / time
        guard speedRange.contains(v) else {
            throw .inconsistent("time \(CalcText.fixed(time, 3)) s over \(CalcText.fixed(distance, 1)) m is \(CalcText.fixed(v, 2)) m/s, "
                + "outside \(CalcText.fixed(speedRange.lowerBound, 0))...\(CalcText.fixed(speedRange.upperBound, 0)) m/s")
        }
        return FlyingConversion(distance: distance, time: time, metresPerSecond: v,
                                equivalents: distances.map { .init(distance: $0, time: $0 / v) })
    }
}

/// A 100 m predicted from a 30 m from blocks and a flying 10 m (the athlete's top speed).
public struct HundredPrediction: Sendable, Hashable {
    public let thirty: Double
    public let flyingTen: Double
    public let topSpeed: Double
    /// The 70 m after the first 30, seconds.
    public let lastSeventy: Double
    public var hundred: Double { thirty + lastSeventy }
}

public enum HundredPredictor {
    /// The last 70 m take this much longer than at top speed all the way: a sprinter
    /// reaches top speed near 60 m and slows towards the line. Why 1.023: Bolt's 9.58 s in
    /// Berlin 2009, 3.78 s at 30 m and 0.81 s for his fastest 10 m, gives 5.80 s for the
    /// 70 m against 5.67 s at top speed. One race, so the prediction is a guide: athletes
    /// with less speed endurance run slower than it.
    public static let speedEndurance = 1.023
    public static let thirtyRange: ClosedRange<Double> = 3...8
    public static let flyingTenRange: ClosedRange<Double> = 0.7...2.5

    /// Both times on the same clock as the 30 m (from the gun, or from first movement:
    /// then so is the prediction).
    public static func predict(thirty: Double, flyingTen: Double) throws(CalculatorError) -> HundredPrediction {
        guard thirty.isFinite, thirtyRange.contains(thirty) else { throw .outOfRange("thirty", thirty, thirtyRange, " s") }
        guard flyingTen.isFinite, flyingTenRange.contains(flyingTen) else { throw .outOfRange("flyingTen", flyingTen, flyingTenRange, " s") }
        // A flying 10 m slower than the 30 m's own average pace cannot be the top speed.
        guard 10 / flyingTen > 30 / thirty else {
            throw .inconsistent("flyingTen \(CalcText.fixed(flyingTen, 2)) s is slower than the 30 m's average pace "
                + "(\(CalcText.fixed(thirty / 3, 2)) s per 10 m); the flying 10 m is the fastest part of the run")
        }
        let v = 10 / flyingTen
        return HundredPrediction(thirty: thirty, flyingTen: flyingTen, topSpeed: v, lastSeventy: 70 / v * speedEndurance)
    }
}

/// Lane staggers on a standard 400 m track (World Athletics: 36.50 m inner radius,
/// lanes 1.22 m wide, measured 0.30 m out from the kerb in lane 1 and 0.20 m out from
/// the lane line in the others), so every lane runs the same distance.
public enum Stagger {
    public static let innerRadius = 36.5
    public static let laneWidth = 1.22
    public static let lanes = 1...9

    /// Events run in lanes and the bends each runs in its lane: 200 m one, 400 m two,
    /// 4×400 m relay three (its first leg and the second's first bend).
    public static let bends: [String: Int] = ["200m": 1, "400m": 2, "4x400m": 3]

    /// The radius of the line a runner in `lane` is measured on, metres.
    public static func runningRadius(lane: Int) -> Double {
        lane == 1 ? innerRadius + 0.30 : innerRadius + laneWidth * Double(lane - 1) + 0.20
    }

    /// How far ahead of lane 1's start lane `lane` starts, metres.
    public static func stagger(lane: Int, bends: Int) -> Double {
        Double(bends) * Double.pi * (runningRadius(lane: lane) - runningRadius(lane: 1))
    }

    /// The staggers of lanes 1...`laneCount` for `event` (a key of `bends`).
    public static func staggers(event: String, laneCount: Int) throws(CalculatorError) -> [Double] {
        guard let b = bends[event] else {
            throw .inconsistent("event '\(event)' is not run in lanes with a stagger; one of \(bends.keys.sorted().joined(separator: ", "))")
        }
        guard lanes.contains(laneCount) else { throw .outOfRange("lanes", Double(laneCount), 1...9, "") }
        return (1...laneCount).map { stagger(lane: $0, bends: b) }
    }
}
