// SPDX-License-Identifier: Apache-2.0
// The values of the PM5's rowing notifications, in SI units and seconds.

/// 0x0031: where the workout stands. `workoutDuration` is hundredths of a second when
/// `workoutDurationType` is time (0), else metres, calories or watt-minutes.
public struct GeneralStatus: Sendable, Hashable {
    public var elapsed: Double
    /// Metres.
    public var distance: Double
    public var workoutType: UInt8
    public var intervalType: UInt8
    public var workoutState: UInt8
    public var rowingState: UInt8
    public var strokeState: UInt8
    /// Metres.
    public var totalWorkDistance: Double
    public var workoutDuration: UInt32
    public var workoutDurationType: UInt8
    public var dragFactor: UInt8

    public var state: PM5WorkoutState? { PM5WorkoutState(rawValue: workoutState) }
    /// The flywheel is turning (rowing state 1).
    public var rowing: Bool { rowingState == 1 }

    public init(elapsed: Double, distance: Double, workoutType: UInt8, intervalType: UInt8, workoutState: UInt8,
                rowingState: UInt8, strokeState: UInt8, totalWorkDistance: Double, workoutDuration: UInt32,
                workoutDurationType: UInt8, dragFactor: UInt8) {
        self.elapsed = elapsed
        self.distance = distance
        self.workoutType = workoutType
        self.intervalType = intervalType
        self.workoutState = workoutState
        self.rowingState = rowingState
        self.strokeState = strokeState
        self.totalWorkDistance = totalWorkDistance
        self.workoutDuration = workoutDuration
        self.workoutDurationType = workoutDurationType
        self.dragFactor = dragFactor
    }
}

/// 0x0032: speed, rate, heart rate and pace.
public struct AdditionalStatus: Sendable, Hashable {
    public var elapsed: Double
    /// Metres per second.
    public var speed: Double
    /// Strokes per minute.
    public var strokeRate: UInt8
    /// Beats per minute; nil without a belt.
    public var heartRate: UInt8?
    /// Seconds per 500 m.
    public var currentPace: Double
    /// Seconds per 500 m.
    public var averagePace: Double
    /// Metres.
    public var restDistance: Double
    /// Seconds.
    public var restTime: Double
    public var ergMachineType: UInt8

    public init(elapsed: Double, speed: Double, strokeRate: UInt8, heartRate: UInt8? = nil, currentPace: Double,
                averagePace: Double, restDistance: Double, restTime: Double, ergMachineType: UInt8) {
        self.elapsed = elapsed
        self.speed = speed
        self.strokeRate = strokeRate
        self.heartRate = heartRate
        self.currentPace = currentPace
        self.averagePace = averagePace
        self.restDistance = restDistance
        self.restTime = restTime
        self.ergMachineType = ergMachineType
    }
}

/// 0x0033: power, calories and the last split.
public struct AdditionalStatus2: Sendable, Hashable {
    public var elapsed: Double
    public var intervalCount: UInt8
    /// Watts.
    public var averagePower: UInt16
    public var totalCalories: UInt16
    /// Seconds per 500 m.
    public var splitAveragePace: Double
    /// Watts.
    public var splitAveragePower: UInt16
    public var splitAverageCaloriesPerHour: UInt16
    /// Seconds.
    public var lastSplitTime: Double
    /// Metres.
    public var lastSplitDistance: Double

    public init(elapsed: Double, intervalCount: UInt8, averagePower: UInt16, totalCalories: UInt16,
                splitAveragePace: Double, splitAveragePower: UInt16, splitAverageCaloriesPerHour: UInt16,
                lastSplitTime: Double, lastSplitDistance: Double) {
        self.elapsed = elapsed
        self.intervalCount = intervalCount
        self.averagePower = averagePower
        self.totalCalories = totalCalories
        self.splitAveragePace = splitAveragePace
        self.splitAveragePower = splitAveragePower
        self.splitAverageCaloriesPerHour = splitAverageCaloriesPerHour
        self.lastSplitTime = lastSplitTime
        self.lastSplitDistance = lastSplitDistance
    }
}

/// 0x0035: one stroke, sent at the end of its drive.
public struct StrokeData: Sendable, Hashable {
    public var elapsed: Double
    /// Metres.
    public var distance: Double
    /// Metres.
    public var driveLength: Double
    /// Seconds.
    public var driveTime: Double
    /// Seconds (the previous stroke's recovery).
    public var recoveryTime: Double
    /// Metres.
    public var strokeDistance: Double
    /// Pounds of force, as the PM5 reports them.
    public var peakDriveForce: Double
    /// Pounds of force.
    public var averageDriveForce: Double
    /// Joules.
    public var workPerStroke: Double
    public var strokeCount: UInt16

    public init(elapsed: Double, distance: Double, driveLength: Double, driveTime: Double, recoveryTime: Double,
                strokeDistance: Double, peakDriveForce: Double, averageDriveForce: Double, workPerStroke: Double,
                strokeCount: UInt16) {
        self.elapsed = elapsed
        self.distance = distance
        self.driveLength = driveLength
        self.driveTime = driveTime
        self.recoveryTime = recoveryTime
        self.strokeDistance = strokeDistance
        self.peakDriveForce = peakDriveForce
        self.averageDriveForce = averageDriveForce
        self.workPerStroke = workPerStroke
        self.strokeCount = strokeCount
    }

    /// The stroke data a PM5 sends as a rest ends, with its values all 0: not a stroke.
    public var zeroed: Bool { strokeCount == 0 && elapsed == 0 && distance == 0 && driveLength == 0 && workPerStroke == 0 }
}

/// 0x0036: the stroke's power and calories, and where the workout is heading.
public struct AdditionalStrokeData: Sendable, Hashable {
    public var elapsed: Double
    /// Watts.
    public var strokePower: UInt16
    public var strokeCaloriesPerHour: UInt16
    public var strokeCount: UInt16
    /// Seconds.
    public var projectedWorkTime: Double
    /// Metres.
    public var projectedWorkDistance: Double

    public init(elapsed: Double, strokePower: UInt16, strokeCaloriesPerHour: UInt16, strokeCount: UInt16,
                projectedWorkTime: Double, projectedWorkDistance: Double) {
        self.elapsed = elapsed
        self.strokePower = strokePower
        self.strokeCaloriesPerHour = strokeCaloriesPerHour
        self.strokeCount = strokeCount
        self.projectedWorkTime = projectedWorkTime
        self.projectedWorkDistance = projectedWorkDistance
    }
}

/// 0x0037: a split or interval just finished.
public struct SplitData: Sendable, Hashable {
    public var elapsed: Double
    /// Metres.
    public var distance: Double
    /// Seconds.
    public var splitTime: Double
    /// Metres.
    public var splitDistance: Double
    /// Seconds.
    public var restTime: Double
    /// Metres.
    public var restDistance: Double
    public var splitType: UInt8
    public var splitNumber: UInt8

    public init(elapsed: Double, distance: Double, splitTime: Double, splitDistance: Double, restTime: Double,
                restDistance: Double, splitType: UInt8, splitNumber: UInt8) {
        self.elapsed = elapsed
        self.distance = distance
        self.splitTime = splitTime
        self.splitDistance = splitDistance
        self.restTime = restTime
        self.restDistance = restDistance
        self.splitType = splitType
        self.splitNumber = splitNumber
    }
}

/// 0x0038: the finished split's averages.
public struct AdditionalSplitData: Sendable, Hashable {
    public var elapsed: Double
    public var averageStrokeRate: UInt8
    public var workHeartRate: UInt8?
    public var restHeartRate: UInt8?
    /// Seconds per 500 m.
    public var averagePace: Double
    public var totalCalories: UInt16
    public var averageCaloriesPerHour: UInt16
    /// Metres per second.
    public var speed: Double
    /// Watts.
    public var power: UInt16
    public var averageDragFactor: UInt8
    public var splitNumber: UInt8
    public var ergMachineType: UInt8

    public init(elapsed: Double, averageStrokeRate: UInt8, workHeartRate: UInt8? = nil, restHeartRate: UInt8? = nil,
                averagePace: Double, totalCalories: UInt16, averageCaloriesPerHour: UInt16, speed: Double,
                power: UInt16, averageDragFactor: UInt8, splitNumber: UInt8, ergMachineType: UInt8) {
        self.elapsed = elapsed
        self.averageStrokeRate = averageStrokeRate
        self.workHeartRate = workHeartRate
        self.restHeartRate = restHeartRate
        self.averagePace = averagePace
        self.totalCalories = totalCalories
        self.averageCaloriesPerHour = averageCaloriesPerHour
        self.speed = speed
        self.power = power
        self.averageDragFactor = averageDragFactor
        self.splitNumber = splitNumber
        self.ergMachineType = ergMachineType
    }
}

/// 0x0039: the workout's summary, sent when it ends (and again with the recovery heart
/// rate a minute later).
public struct WorkoutSummary: Sendable, Hashable {
    /// The PM5's log date and time words, as it packs them.
    public var logDate: UInt16
    public var logTime: UInt16
    public var elapsed: Double
    /// Metres.
    public var distance: Double
    public var averageStrokeRate: UInt8
    public var endingHeartRate: UInt8?
    public var averageHeartRate: UInt8?
    public var minimumHeartRate: UInt8?
    public var maximumHeartRate: UInt8?
    public var averageDragFactor: UInt8
    public var recoveryHeartRate: UInt8?
    public var workoutType: UInt8
    /// Seconds per 500 m.
    public var averagePace: Double

    public init(logDate: UInt16, logTime: UInt16, elapsed: Double, distance: Double, averageStrokeRate: UInt8,
                endingHeartRate: UInt8? = nil, averageHeartRate: UInt8? = nil, minimumHeartRate: UInt8? = nil,
                maximumHeartRate: UInt8? = nil, averageDragFactor: UInt8, recoveryHeartRate: UInt8? = nil,
                workoutType: UInt8, averagePace: Double) {
        self.logDate = logDate
        self.logTime = logTime
        self.elapsed = elapsed
        self.distance = distance
        self.averageStrokeRate = averageStrokeRate
        self.endingHeartRate = endingHeartRate
        self.averageHeartRate = averageHeartRate
        self.minimumHeartRate = minimumHeartRate
        self.maximumHeartRate = maximumHeartRate
        self.averageDragFactor = averageDragFactor
        self.recoveryHeartRate = recoveryHeartRate
        self.workoutType = workoutType
        self.averagePace = averagePace
    }
}

/// 0x003A: the rest of the summary.
public struct AdditionalWorkoutSummary: Sendable, Hashable {
    public var logDate: UInt16
    public var logTime: UInt16
    public var splitType: UInt8
    public var splitSize: UInt16
    public var splitCount: UInt8
    public var totalCalories: UInt16
    /// Watts.
    public var power: UInt16
    /// Metres.
    public var totalRestDistance: Double
    /// Seconds.
    public var intervalRestTime: Double
    public var averageCaloriesPerHour: UInt16

    public init(logDate: UInt16, logTime: UInt16, splitType: UInt8, splitSize: UInt16, splitCount: UInt8,
                totalCalories: UInt16, power: UInt16, totalRestDistance: Double, intervalRestTime: Double,
                averageCaloriesPerHour: UInt16) {
        self.logDate = logDate
        self.logTime = logTime
        self.splitType = splitType
        self.splitSize = splitSize
        self.splitCount = splitCount
        self.totalCalories = totalCalories
        self.power = power
        self.totalRestDistance = totalRestDistance
        self.intervalRestTime = intervalRestTime
        self.averageCaloriesPerHour = averageCaloriesPerHour
    }
}

/// 0x003D: one notification of a stroke's force curve, which comes in `packets` parts
/// numbered by a running `sequence`.
public struct ForceCurvePacket: Sendable, Hashable {
    /// The most points one notification holds (20 bytes less the 2-byte header).
    public static let maxPoints = 9
    public var packets: Int
    public var sequence: UInt8
    /// Pounds of force, at equal intervals along the drive.
    public var points: [Double]

    public init(packets: Int, sequence: UInt8, points: [Double]) {
        self.packets = packets
        self.sequence = sequence
        self.points = points
    }
}

/// The PM5's workout state (general status byte 8).
public enum PM5WorkoutState: UInt8, Sendable, Hashable {
    case waitToBegin = 0
    case workoutRow = 1
    case countdownPause = 2
    case intervalRest = 3
    case intervalWorkTime = 4
    case intervalWorkDistance = 5
    case intervalRestEndToWorkTime = 6
    case intervalRestEndToWorkDistance = 7
    case intervalWorkTimeToRest = 8
    case intervalWorkDistanceToRest = 9
    case workoutEnd = 10
    case terminate = 11
    case workoutLogged = 12
    case rearm = 13

    /// The erg is resting between intervals.
    public var resting: Bool { self == .intervalRest }
    /// The workout is over.
    public var finished: Bool { self == .workoutEnd || self == .terminate || self == .workoutLogged }
}

/// The PM5's workout types (general status byte 6) that are made of intervals: fixed time,
/// fixed distance, variable, variable with undefined rest, and fixed calories.
public enum PM5WorkoutType {
    public static let intervalTypes: Set<UInt8> = [6, 7, 8, 9, 12]
    public static func isIntervals(_ type: UInt8) -> Bool { intervalTypes.contains(type) }
}
