// SPDX-License-Identifier: Apache-2.0
// The Concept2 PM5's rowing notifications, decoded strictly from their Bluetooth bytes.

/// What a PM5 notification or read of one characteristic says. Byte layouts follow
/// Concept2's "PM Bluetooth Smart Communication Interface Definition" (rev 1.30):
/// multi-byte values are little-endian, times in hundredths of a second unless named.
public enum PM5Data: Sendable, Hashable {
    case generalStatus(GeneralStatus)
    case additionalStatus(AdditionalStatus)
    case additionalStatus2(AdditionalStatus2)
    case strokeData(StrokeData)
    case additionalStrokeData(AdditionalStrokeData)
    case splitData(SplitData)
    case additionalSplitData(AdditionalSplitData)
    case workoutSummary(WorkoutSummary)
    case additionalWorkoutSummary(AdditionalWorkoutSummary)
    case forceCurve(ForceCurvePacket)

    /// Decodes the value of characteristic `id` (its 16-bit short id, e.g. 0x0031).
    /// A value of the wrong length, or of a characteristic that carries no rowing data,
    /// is an error: it is dropped and counted, never half-read.
    public static func decode(characteristic id: UInt16, _ bytes: [UInt8]) throws(PM5DecodeError) -> PM5Data {
        guard let c = PM5Characteristic(rawValue: id) else { throw PM5DecodeError(.unknownCharacteristic, characteristic: id, length: bytes.count) }
        var r = ByteReader(bytes)
        func need(_ n: Int) throws(PM5DecodeError) {
            guard bytes.count == n else { throw PM5DecodeError(.wrongLength(expected: n), characteristic: id, length: bytes.count) }
        }
        switch c {
        case .generalStatus:
            try need(19)
            return .generalStatus(GeneralStatus(
                elapsed: r.centiseconds(), distance: r.decimetres(), workoutType: r.u8(), intervalType: r.u8(),
                workoutState: r.u8(), rowingState: r.u8(), strokeState: r.u8(), totalWorkDistance: Double(r.u24()),
                workoutDuration: r.u24(), workoutDurationType: r.u8(), dragFactor: r.u8()))
        case .additionalStatus:
            try need(17)
            return .additionalStatus(AdditionalStatus(
                elapsed: r.centiseconds(), speed: Double(r.u16()) / 1000, strokeRate: r.u8(), heartRate: r.heartRate(),
                currentPace: Double(r.u16()) / 100, averagePace: Double(r.u16()) / 100, restDistance: Double(r.u16()),
                restTime: r.centiseconds(), ergMachineType: r.u8()))
        case .additionalStatus2:
            try need(20)
            return .additionalStatus2(AdditionalStatus2(
                elapsed: r.centiseconds(), intervalCount: r.u8(), averagePower: r.u16(), totalCalories: r.u16(),
                splitAveragePace: Double(r.u16()) / 100, splitAveragePower: r.u16(), splitAverageCaloriesPerHour: r.u16(),
                lastSplitTime: Double(r.u24()) / 10, lastSplitDistance: Double(r.u24())))
        case .strokeData:
            try need(20)
            return .strokeData(StrokeData(
                elapsed: r.centiseconds(), distance: r.decimetres(), driveLength: Double(r.u8()) / 100,
                driveTime: Double(r.u8()) / 100, recoveryTime: Double(r.u16()) / 100, strokeDistance: Double(r.u16()) / 100,
                peakDriveForce: Double(r.u16()) / 10, averageDriveForce: Double(r.u16()) / 10,
                workPerStroke: Double(r.u16()) / 10, strokeCount: r.u16()))
        case .additionalStrokeData:
            try need(15)
            return .additionalStrokeData(AdditionalStrokeData(
                elapsed: r.centiseconds(), strokePower: r.u16(), strokeCaloriesPerHour: r.u16(), strokeCount: r.u16(),
                projectedWorkTime: Double(r.u24()), projectedWorkDistance: Double(r.u24())))
        case .splitData:
            try need(18)
            return .splitData(SplitData(
                elapsed: r.centiseconds(), distance: r.decimetres(), splitTime: Double(r.u24()) / 10,
                splitDistance: Double(r.u24()), restTime: Double(r.u16()), restDistance: Double(r.u16()),
                splitType: r.u8(), splitNumber: r.u8()))
        case .additionalSplitData:
            try need(19)
            return .additionalSplitData(AdditionalSplitData(
                elapsed: r.centiseconds(), averageStrokeRate: r.u8(), workHeartRate: r.heartRate(), restHeartRate: r.heartRate(),
                averagePace: Double(r.u16()) / 10, totalCalories: r.u16(), averageCaloriesPerHour: r.u16(),
                speed: Double(r.u16()) / 1000, power: r.u16(), averageDragFactor: r.u8(), splitNumber: r.u8(),
                ergMachineType: r.u8()))
        case .workoutSummary:
            try need(20)
            return .workoutSummary(WorkoutSummary(
                logDate: r.u16(), logTime: r.u16(), elapsed: r.centiseconds(), distance: r.decimetres(),
                averageStrokeRate: r.u8(), endingHeartRate: r.heartRate(), averageHeartRate: r.heartRate(),
                minimumHeartRate: r.heartRate(), maximumHeartRate: r.heartRate(), averageDragFactor: r.u8(),
                recoveryHeartRate: r.heartRate(), workoutType: r.u8(), averagePace: Double(r.u16()) / 10))
        case .additionalWorkoutSummary:
            try need(19)
            return .additionalWorkoutSummary(AdditionalWorkoutSummary(
                logDate: r.u16(), logTime: r.u16(), splitType: r.u8(), splitSize: r.u16(), splitCount: r.u8(),
                totalCalories: r.u16(), power: r.u16(), totalRestDistance: Double(r.u24()), intervalRestTime: Double(r.u16()),
                averageCaloriesPerHour: r.u16()))
        case .forceCurve:
            guard bytes.count >= 2 else { throw PM5DecodeError(.wrongLength(expected: 2), characteristic: id, length: bytes.count) }
            let head = r.u8()
            let packets = Int(head >> 4), words = Int(head & 0x0F)
            // Why: a notification is 20 bytes at most: the two header bytes and up to nine
            // 16-bit points; the header must say exactly what follows.
            guard words <= ForceCurvePacket.maxPoints, bytes.count == 2 + 2 * words else {
                throw PM5DecodeError(.wrongLength(expected: 2 + 2 * min(words, ForceCurvePacket.maxPoints)), characteristic: id, length: bytes.count)
            }
            guard packets >= 1 else { throw PM5DecodeError(.badValue("a force curve of 0 notifications"), characteristic: id, length: bytes.count) }
            let sequence = r.u8()
            var points: [Double] = []
            points.reserveCapacity(words)
            for _ in 0..<words { points.append(Double(r.u16())) }
            return .forceCurve(ForceCurvePacket(packets: packets, sequence: sequence, points: points))
        case .sampleRate, .multiplexed:
            throw PM5DecodeError(.unknownCharacteristic, characteristic: id, length: bytes.count)
        }
    }

    /// The elapsed time the notification carries (all but the summaries' and the force
    /// curve's), seconds since the workout's (or interval's) start.
    public var elapsed: Double? {
        switch self {
        case .generalStatus(let v): v.elapsed
        case .additionalStatus(let v): v.elapsed
        case .additionalStatus2(let v): v.elapsed
        case .strokeData(let v): v.elapsed
        case .additionalStrokeData(let v): v.elapsed
        case .splitData(let v): v.elapsed
        case .additionalSplitData(let v): v.elapsed
        case .workoutSummary(let v): v.elapsed
        case .additionalWorkoutSummary, .forceCurve: nil
        }
    }
}

/// The PM5's characteristics that carry rowing data, by short id. The full UUID is
/// `PM5UUID.full(id)`.
public enum PM5Characteristic: UInt16, Sendable, Hashable, CaseIterable {
    case generalStatus = 0x0031
    case additionalStatus = 0x0032
    case additionalStatus2 = 0x0033
    /// Written, not notified: how often the status notifications come (`PM5SampleRate`).
    case sampleRate = 0x0034
    case strokeData = 0x0035
    case additionalStrokeData = 0x0036
    case splitData = 0x0037
    case additionalSplitData = 0x0038
    case workoutSummary = 0x0039
    case additionalWorkoutSummary = 0x003A
    case forceCurve = 0x003D
    case multiplexed = 0x0080
}

/// How often the PM5 sends its status notifications; the value written to 0x0034.
public enum PM5SampleRate: UInt8, Sendable, Hashable, CaseIterable {
    case oneSecond = 0
    case halfSecond = 1
    case quarterSecond = 2
    case tenthSecond = 3

    /// Seconds between notifications.
    public var interval: Double {
        switch self {
        case .oneSecond: 1
        case .halfSecond: 0.5
        case .quarterSecond: 0.25
        case .tenthSecond: 0.1
        }
    }
}

/// The PM5's 128-bit UUIDs: Concept2's base with the short id in its first group.
public enum PM5UUID {
    /// "CE06xxxx-43E5-11E4-916C-0800200C9A66" with `short` in place of xxxx, upper case.
    public static func full(_ short: UInt16) -> String {
        let hex = Array("0123456789ABCDEF")
        let digits = (0..<4).map { hex[Int((short >> (12 - 4 * UInt16($0))) & 0xF)] }
        return "CE06" + String(digits) + "-43E5-11E4-916C-0800200C9A66"
    }
    /// The rowing service (status, strokes, splits, summaries, force curve).
    public static let rowingService = full(0x0030)
    /// The service a PM5 advertises: the discovery service.
    public static let discoveryService = full(0x0000)
    /// Device information: model, serial, hardware and firmware revision, maker, machine type.
    public static let deviceInformationService = full(0x0010)
    /// The control service: CSAFE frames written to 0x0021, answers notified on 0x0022.
    public static let controlService = full(0x0020)
}

/// Why a notification was dropped.
public struct PM5DecodeError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        case unknownCharacteristic
        case wrongLength(expected: Int)
        case badValue(String)
    }
    public var kind: Kind
    public var characteristic: UInt16
    public var length: Int

    init(_ kind: Kind, characteristic: UInt16, length: Int) {
        self.kind = kind
        self.characteristic = characteristic
        self.length = length
    }

    public var description: String {
        let id = "0x" + String(characteristic, radix: 16, uppercase: true).leftPadded(to: 4)
        switch kind {
        case .unknownCharacteristic: return "characteristic \(id) carries no rowing data (\(length) bytes dropped)"
        case .wrongLength(let n): return "characteristic \(id): \(length) bytes, expected \(n); dropped"
        case .badValue(let why): return "characteristic \(id): \(why); dropped"
        }
    }
}

extension String {
    func leftPadded(to n: Int) -> String { count >= n ? self : String(repeating: "0", count: n - count) + self }
}

/// Reads little-endian fields in order; lengths are checked before it is used.
struct ByteReader {
    let bytes: [UInt8]
    var at = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    mutating func u8() -> UInt8 { defer { at += 1 }; return bytes[at] }
    mutating func u16() -> UInt16 { UInt16(u8()) | UInt16(u8()) << 8 }
    mutating func u24() -> UInt32 { UInt32(u8()) | UInt32(u8()) << 8 | UInt32(u8()) << 16 }
    /// A 24-bit time in hundredths of a second, as seconds.
    mutating func centiseconds() -> Double { Double(u24()) / 100 }
    /// A 24-bit distance in tenths of a metre, as metres.
    mutating func decimetres() -> Double { Double(u24()) / 10 }
    /// A heart rate, nil for 255 (no belt) and 0 (no reading).
    mutating func heartRate() -> UInt8? {
        let v = u8()
        return v == 255 || v == 0 ? nil : v
    }
}

extension PM5Data {
    /// The characteristic and bytes a PM5 sends for this value: what an emulator or a
    /// recorded log writes. A heart rate of nil is sent as 255 (no belt), a recovery
    /// heart rate of nil as 0 (not yet measured).
    public var encoded: (characteristic: UInt16, bytes: [UInt8]) {
        var w = ByteWriter()
        switch self {
        case .generalStatus(let v):
            w.centiseconds(v.elapsed); w.decimetres(v.distance)
            w.u8(v.workoutType); w.u8(v.intervalType); w.u8(v.workoutState); w.u8(v.rowingState); w.u8(v.strokeState)
            w.u24(UInt32(v.totalWorkDistance)); w.u24(v.workoutDuration); w.u8(v.workoutDurationType); w.u8(v.dragFactor)
            return (PM5Characteristic.generalStatus.rawValue, w.bytes)
        case .additionalStatus(let v):
            w.centiseconds(v.elapsed); w.u16(UInt16((v.speed * 1000).rounded())); w.u8(v.strokeRate); w.u8(v.heartRate ?? 255)
            w.u16(UInt16((v.currentPace * 100).rounded())); w.u16(UInt16((v.averagePace * 100).rounded()))
            w.u16(UInt16(v.restDistance)); w.centiseconds(v.restTime); w.u8(v.ergMachineType)
            return (PM5Characteristic.additionalStatus.rawValue, w.bytes)
        case .additionalStatus2(let v):
            w.centiseconds(v.elapsed); w.u8(v.intervalCount); w.u16(v.averagePower); w.u16(v.totalCalories)
            w.u16(UInt16((v.splitAveragePace * 100).rounded())); w.u16(v.splitAveragePower); w.u16(v.splitAverageCaloriesPerHour)
            w.u24(UInt32((v.lastSplitTime * 10).rounded())); w.u24(UInt32(v.lastSplitDistance))
            return (PM5Characteristic.additionalStatus2.rawValue, w.bytes)
        case .strokeData(let v):
            w.centiseconds(v.elapsed); w.decimetres(v.distance)
            w.u8(UInt8((v.driveLength * 100).rounded())); w.u8(UInt8((v.driveTime * 100).rounded()))
            w.u16(UInt16((v.recoveryTime * 100).rounded())); w.u16(UInt16((v.strokeDistance * 100).rounded()))
            w.u16(UInt16((v.peakDriveForce * 10).rounded())); w.u16(UInt16((v.averageDriveForce * 10).rounded()))
            w.u16(UInt16((v.workPerStroke * 10).rounded())); w.u16(v.strokeCount)
            return (PM5Characteristic.strokeData.rawValue, w.bytes)
        case .additionalStrokeData(let v):
            w.centiseconds(v.elapsed); w.u16(v.strokePower); w.u16(v.strokeCaloriesPerHour); w.u16(v.strokeCount)
            w.u24(UInt32(v.projectedWorkTime)); w.u24(UInt32(v.projectedWorkDistance))
            return (PM5Characteristic.additionalStrokeData.rawValue, w.bytes)
        case .splitData(let v):
            w.centiseconds(v.elapsed); w.decimetres(v.distance); w.u24(UInt32((v.splitTime * 10).rounded()))
            w.u24(UInt32(v.splitDistance)); w.u16(UInt16(v.restTime)); w.u16(UInt16(v.restDistance)); w.u8(v.splitType); w.u8(v.splitNumber)
            return (PM5Characteristic.splitData.rawValue, w.bytes)
        case .additionalSplitData(let v):
            w.centiseconds(v.elapsed); w.u8(v.averageStrokeRate); w.u8(v.workHeartRate ?? 255); w.u8(v.restHeartRate ?? 255)
            w.u16(UInt16((v.averagePace * 10).rounded())); w.u16(v.totalCalories); w.u16(v.averageCaloriesPerHour)
            w.u16(UInt16((v.speed * 1000).rounded())); w.u16(v.power); w.u8(v.averageDragFactor); w.u8(v.splitNumber); w.u8(v.ergMachineType)
            return (PM5Characteristic.additionalSplitData.rawValue, w.bytes)
        case .workoutSummary(let v):
            w.u16(v.logDate); w.u16(v.logTime); w.centiseconds(v.elapsed); w.decimetres(v.distance); w.u8(v.averageStrokeRate)
            w.u8(v.endingHeartRate ?? 255); w.u8(v.averageHeartRate ?? 255); w.u8(v.minimumHeartRate ?? 255); w.u8(v.maximumHeartRate ?? 255)
            w.u8(v.averageDragFactor); w.u8(v.recoveryHeartRate ?? 0); w.u8(v.workoutType); w.u16(UInt16((v.averagePace * 10).rounded()))
            return (PM5Characteristic.workoutSummary.rawValue, w.bytes)
        case .additionalWorkoutSummary(let v):
            w.u16(v.logDate); w.u16(v.logTime); w.u8(v.splitType); w.u16(v.splitSize); w.u8(v.splitCount); w.u16(v.totalCalories)
            w.u16(v.power); w.u24(UInt32(v.totalRestDistance)); w.u16(UInt16(v.intervalRestTime)); w.u16(v.averageCaloriesPerHour)
            return (PM5Characteristic.additionalWorkoutSummary.rawValue, w.bytes)
        case .forceCurve(let v):
            w.u8(UInt8(v.packets & 0x0F) << 4 | UInt8(v.points.count & 0x0F)); w.u8(v.sequence)
            for p in v.points { w.u16(UInt16(p)) }
            return (PM5Characteristic.forceCurve.rawValue, w.bytes)
        }
    }
}

/// Writes little-endian fields in order.
struct ByteWriter {
    var bytes: [UInt8] = []
    mutating func u8(_ v: UInt8) { bytes.append(v) }
    mutating func u16(_ v: UInt16) { bytes += [UInt8(v & 0xFF), UInt8(v >> 8)] }
    mutating func u24(_ v: UInt32) { bytes += [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF), UInt8((v >> 16) & 0xFF)] }
    mutating func centiseconds(_ s: Double) { u24(UInt32((s * 100).rounded())) }
    mutating func decimetres(_ m: Double) { u24(UInt32((m * 10).rounded())) }
}
