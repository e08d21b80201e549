// SPDX-License-Identifier: Apache-2.0
// The PM5's notifications: every field at its offset and scale, strict lengths, and
// random bytes that never crash the decoder.

import Rowing
import Testing

@Suite("PM5 notifications")
struct PM5DataTests {
    /// Bytes 0, 1, 2, … so every field's offset shows in its value.
    func counting(_ n: Int, from: UInt8 = 1) -> [UInt8] { (0..<n).map { from &+ UInt8($0) } }

    @Test("general status (0x0031): offsets and scales")
    func generalStatus() throws {
        // 2:05.43 elapsed, 1234.5 m, JustRow with splits, interval type 255, rowing,
        // driving, 1234 m of work, a 2000 m workout (type 0x80), drag factor 120.
        let bytes: [UInt8] = [0xFB, 0x30, 0x00, 0x39, 0x30, 0x00, 1, 255, 1, 1, 2, 0xD2, 0x04, 0x00, 0xD0, 0x07, 0x00, 0x80, 120]
        guard case .generalStatus(let s) = try PM5Data.decode(characteristic: 0x0031, bytes) else { Issue.record("wrong case"); return }
        #expect(s.elapsed == 125.39 && s.distance == 1234.5)
        #expect(s.workoutType == 1 && s.intervalType == 255 && s.state == .workoutRow && s.rowing && s.strokeState == 2)
        #expect(s.totalWorkDistance == 1234 && s.workoutDuration == 2000 && s.workoutDurationType == 0x80 && s.dragFactor == 120)
    }

    @Test("stroke data (0x0035) and its additional data (0x0036): offsets and scales")
    func strokes() throws {
        let bytes: [UInt8] = [0x10, 0x27, 0x00, 0x88, 0x13, 0x00, 142, 78, 0x9A, 0x00, 0x34, 0x03, 0xE8, 0x03, 0x2C, 0x01,
                              0x10, 0x27, 42, 0x00]
        guard case .strokeData(let s) = try PM5Data.decode(characteristic: 0x0035, bytes) else { Issue.record("wrong case"); return }
        #expect(s.elapsed == 100 && s.distance == 500 && s.driveLength == 1.42 && s.driveTime == 0.78)
        #expect(s.recoveryTime == 1.54 && s.strokeDistance == 8.2 && s.peakDriveForce == 100 && s.averageDriveForce == 30)
        #expect(s.workPerStroke == 1000 && s.strokeCount == 42)
        let more: [UInt8] = [0x10, 0x27, 0x00, 0xC8, 0x00, 0x20, 0x03, 42, 0x00, 0xE0, 0x01, 0x00, 0xD0, 0x07, 0x00]
        guard case .additionalStrokeData(let a) = try PM5Data.decode(characteristic: 0x0036, more) else { Issue.record("wrong case"); return }
        #expect(a.strokePower == 200 && a.strokeCaloriesPerHour == 800 && a.strokeCount == 42)
        #expect(a.projectedWorkTime == 480 && a.projectedWorkDistance == 2000)
    }

    @Test("additional status (0x0032): pace in hundredths, heart rate 255 is no belt")
    func additionalStatus() throws {
        let bytes: [UInt8] = [0x10, 0x27, 0x00, 0xD0, 0x07, 28, 255, 0x30, 0x2F, 0x94, 0x2F, 0x00, 0x00, 0x00, 0x00, 0x00, 0]
        guard case .additionalStatus(let s) = try PM5Data.decode(characteristic: 0x0032, bytes) else { Issue.record("wrong case"); return }
        #expect(s.speed == 2 && s.strokeRate == 28 && s.heartRate == nil && s.currentPace == 120.8 && s.averagePace == 121.8)
    }

    @Test("splits and summaries: times in tenths where the PM5 keeps tenths")
    func splitsAndSummary() throws {
        // Split: 500 m in 1:45.3 (tenths), rest 60 s, split number 2.
        let split: [UInt8] = [0x00, 0x00, 0x00, 0x88, 0x13, 0x00, 0x1D, 0x04, 0x00, 0xF4, 0x01, 0x00, 60, 0, 0, 0, 1, 2]
        guard case .splitData(let s) = try PM5Data.decode(characteristic: 0x0037, split) else { Issue.record("wrong case"); return }
        #expect(s.splitTime == 105.3 && s.splitDistance == 500 && s.restTime == 60 && s.splitNumber == 2)
        // Summary: 2000 m in 7:00.0, average pace 1:45.0 (tenths), recovery heart rate not yet (0).
        let summary: [UInt8] = [1, 2, 3, 4, 0x10, 0xA4, 0x00, 0x20, 0x4E, 0x00, 30, 170, 160, 100, 185, 118, 0, 3, 0x1A, 0x04]
        guard case .workoutSummary(let w) = try PM5Data.decode(characteristic: 0x0039, summary) else { Issue.record("wrong case"); return }
        #expect(w.elapsed == 420 && w.distance == 2000 && w.averageStrokeRate == 30 && w.maximumHeartRate == 185)
        #expect(w.recoveryHeartRate == nil && w.workoutType == 3 && w.averagePace == 105)
    }

    @Test("force curve (0x003D): header nibbles, points, and a header that disagrees with the length")
    func forceCurve() throws {
        let bytes: [UInt8] = [0x33, 7, 10, 0, 50, 0, 90, 0]
        guard case .forceCurve(let p) = try PM5Data.decode(characteristic: 0x003D, bytes) else { Issue.record("wrong case"); return }
        #expect(p.packets == 3 && p.sequence == 7 && p.points == [10, 50, 90])
        #expect(throws: PM5DecodeError.self) { try PM5Data.decode(characteristic: 0x003D, [0x33, 7, 10, 0, 50, 0]) }
        #expect(throws: PM5DecodeError.self) { try PM5Data.decode(characteristic: 0x003D, [0x0A] + counting(21)) }
        #expect(throws: PM5DecodeError.self) { try PM5Data.decode(characteristic: 0x003D, [0x01, 0]) }
    }

    @Test("every characteristic refuses a value one byte short or long, and says which and why")
    func strictLengths() {
        let lengths: [UInt16: Int] = [0x31: 19, 0x32: 17, 0x33: 20, 0x35: 20, 0x36: 15, 0x37: 18, 0x38: 19, 0x39: 20, 0x3A: 19]
        for (id, n) in lengths {
            #expect((try? PM5Data.decode(characteristic: id, counting(n))) != nil, "0x\(id) at \(n) bytes")
            for bad in [n - 1, n + 1, 0] {
                do {
                    _ = try PM5Data.decode(characteristic: id, counting(bad))
                    Issue.record("0x\(String(id, radix: 16)) took \(bad) bytes")
                } catch {
                    #expect(error.kind == .wrongLength(expected: n))
                    #expect(error.description.contains("\(bad) bytes, expected \(n)"))
                }
            }
        }
        #expect(throws: PM5DecodeError.self) { try PM5Data.decode(characteristic: 0x0011, counting(16)) }
    }

    @Test("decoding what was encoded gives the same values, for every characteristic")
    func roundTrip() throws {
        let lengths: [UInt16: Int] = [0x31: 19, 0x32: 17, 0x33: 20, 0x35: 20, 0x36: 15, 0x37: 18, 0x38: 19, 0x39: 20, 0x3A: 19]
        for (id, n) in lengths {
            for start in [UInt8(1), 77, 200] {
                let v = try PM5Data.decode(characteristic: id, counting(n, from: start))
                let (c, bytes) = v.encoded
                #expect(c == id)
                #expect(try PM5Data.decode(characteristic: c, bytes) == v)
            }
        }
    }

    @Test("400 000 random notifications: each decoded or refused, never a crash, and what decodes re-decodes the same")
    func randomBytes() {
        var rng = SplitMix(seed: 0x5EED_F00D)
        let ids: [UInt16] = [0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3A, 0x3D, 0x80, 0x11]
        var decoded = 0
        for _ in 0..<400_000 {
            let id = ids[Int(rng.next() % UInt64(ids.count))]
            let n = Int(rng.next() % 24)
            let bytes = (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            guard let v = try? PM5Data.decode(characteristic: id, bytes) else { continue }
            decoded += 1
            let again = try? PM5Data.decode(characteristic: v.encoded.characteristic, v.encoded.bytes)
            if again != v { Issue.record("0x\(String(id, radix: 16)) \(bytes) did not re-decode the same"); return }
        }
        #expect(decoded > 10_000)
    }

    @Test("the PM5's UUIDs")
    func uuids() {
        #expect(PM5UUID.full(0x0031) == "CE060031-43E5-11E4-916C-0800200C9A66")
        #expect(PM5UUID.rowingService == "CE060030-43E5-11E4-916C-0800200C9A66")
        #expect(PM5SampleRate.tenthSecond.rawValue == 3 && PM5SampleRate.tenthSecond.interval == 0.1)
    }
}

/// A small seeded generator (SplitMix64), so a failure can be replayed.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
