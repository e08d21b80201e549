// SPDX-License-Identifier: Apache-2.0
// Workouts a coach sets on every erg at once, as the PM5's proprietary CSAFE commands.

import GATT

/// A workout to program on a PM5. Times are in seconds (the PM5 keeps hundredths), rests
/// in whole seconds, distances in metres.
public enum PM5Workout: Sendable, Hashable {
    /// Free rowing with splits (the PM5's "Just Row").
    case justRow
    /// A fixed distance, with splits of `split` metres (the PM5's default when nil).
    case distance(metres: Int, split: Int?)
    /// A fixed time, with splits of `split` seconds.
    case time(seconds: Double, split: Double?)
    /// Intervals, each of a distance or a time followed by a rest.
    case intervals([Interval])

    public struct Interval: Sendable, Hashable {
        public enum Work: Sendable, Hashable {
            case metres(Int)
            case seconds(Double)
        }
        public var work: Work
        /// Whole seconds of rest after it (0: none).
        public var restSeconds: Int
        public init(_ work: Work, restSeconds: Int) {
            self.work = work
            self.restSeconds = restSeconds
        }
    }

    // CSAFE ids (Concept2 PM CSAFE Communication Definition rev 0.27).
    static let setPMConfig: UInt8 = 0x76
    static let setWorkoutType: UInt8 = 0x01
    static let setWorkoutDuration: UInt8 = 0x03
    static let setRestDuration: UInt8 = 0x04
    static let setSplitDuration: UInt8 = 0x05
    static let setTargetPace: UInt8 = 0x06
    static let setScreenState: UInt8 = 0x13
    static let configureWorkout: UInt8 = 0x14
    static let setIntervalType: UInt8 = 0x17
    static let setIntervalIndex: UInt8 = 0x18
    /// Duration types.
    static let durationTime: UInt8 = 0x00
    static let durationDistance: UInt8 = 0x80

    /// The PM5's limits for a workout (its CSAFE definition, table 19): what a coach may
    /// ask, checked before anything is sent.
    public func validate() throws(CSAFEError) {
        func distance(_ m: Int, _ what: String) throws(CSAFEError) {
            guard (100...999_999).contains(m) else { throw CSAFEError("\(what) of \(m) m is outside 100 m to 999 999 m") }
        }
        func time(_ s: Double, _ what: String, max: Double) throws(CSAFEError) {
            guard s.isFinite, s >= 20, s <= max else { throw CSAFEError("\(what) of \(s) s is outside 20 s to \(Int(max)) s") }
        }
        switch self {
        case .justRow: return
        case .distance(let m, let split):
            try distance(m, "a distance")
            if let split {
                guard split > 0, split <= m, (m + split - 1) / split <= 50 else {
                    throw CSAFEError("splits of \(split) m make more than 50 splits of \(m) m, or none")
                }
            }
        case .time(let s, let split):
            try time(s, "a time", max: 9 * 3600 + 59 * 60 + 59)
            if let split {
                guard split >= 20, split <= s, (s / split).rounded(.up) <= 50 else {
                    throw CSAFEError("splits of \(split) s make more than 50 splits of \(s) s, or are under 20 s")
                }
            }
        case .intervals(let list):
            guard !list.isEmpty, list.count <= 50 else { throw CSAFEError("\(list.count) intervals: 1 to 50 are possible") }
            for (i, v) in list.enumerated() {
                switch v.work {
                case .metres(let m): try distance(m, "interval \(i + 1)")
                case .seconds(let s): try time(s, "interval \(i + 1)", max: 99 * 3600 + 59 * 60 + 59)
                }
                guard (0...595).contains(v.restSeconds) else {
                    throw CSAFEError("interval \(i + 1)'s rest of \(v.restSeconds) s is outside 0 to 9:55")
                }
            }
        }
    }

    /// The frames that program the workout and bring up its screen, in order. A long
    /// interval list takes several frames, each within the PM5's 120 bytes.
    public func frames(targetPace: Double = 120) throws(CSAFEError) -> [[UInt8]] {
        try validate()
        let prepare = CSAFECommand(Self.setScreenState, [1, 1])
        switch self {
        case .justRow:
            return [Self.wrap([CSAFECommand(Self.setWorkoutType, [1]), prepare])]
        case .distance(let m, let split):
            var c = [CSAFECommand(Self.setWorkoutType, [split == nil ? 2 : 3]),
                     CSAFECommand(Self.setWorkoutDuration, [Self.durationDistance] + Self.be32(UInt32(m)))]
            if let split { c.append(CSAFECommand(Self.setSplitDuration, [Self.durationDistance] + Self.be32(UInt32(split)))) }
            return [Self.wrap(c + [CSAFECommand(Self.configureWorkout, [1]), prepare])]
        case .time(let s, let split):
            var c = [CSAFECommand(Self.setWorkoutType, [split == nil ? 4 : 5]),
                     CSAFECommand(Self.setWorkoutDuration, [Self.durationTime] + Self.be32(Self.hundredths(s)))]
            if let split { c.append(CSAFECommand(Self.setSplitDuration, [Self.durationTime] + Self.be32(Self.hundredths(split)))) }
            return [Self.wrap(c + [CSAFECommand(Self.configureWorkout, [1]), prepare])]
        case .intervals(let list):
            // Why: a PM5's fixed intervals repeat until stopped; a set number of intervals is
            // a variable-interval workout (type 8), each interval defined by its index.
            guard (20...3600).contains(targetPace) else { throw CSAFEError("a target pace of \(targetPace) s per 500 m is outside 20 s to 1 h") }
            var frames: [[UInt8]] = []
            var pending: [CSAFECommand] = []
            for (i, v) in list.enumerated() {
                var c = [CSAFECommand(Self.setIntervalIndex, [UInt8(i)])]
                if i == 0 { c.append(CSAFECommand(Self.setWorkoutType, [8])) }
                switch v.work {
                case .metres(let m):
                    c += [CSAFECommand(Self.setIntervalType, [1]),
                          CSAFECommand(Self.setWorkoutDuration, [Self.durationDistance] + Self.be32(UInt32(m)))]
                case .seconds(let s):
                    c += [CSAFECommand(Self.setIntervalType, [0]),
                          CSAFECommand(Self.setWorkoutDuration, [Self.durationTime] + Self.be32(Self.hundredths(s)))]
                }
                c += [CSAFECommand(Self.setRestDuration, Self.be16(UInt16(v.restSeconds))),
                      CSAFECommand(Self.setTargetPace, Self.be32(Self.hundredths(targetPace))),
                      CSAFECommand(Self.configureWorkout, [1])]
                let last = i == list.count - 1
                if Self.wrap(pending + c + (last ? [prepare] : [])).count > CSAFEFrame.maxFrameBytes, !pending.isEmpty {
                    frames.append(Self.wrap(pending))
                    pending = []
                }
                pending += c
            }
            frames.append(Self.wrap(pending + [prepare]))
            return frames
        }
    }

    /// The frame that ends the workout on the erg (its screen's terminate).
    public static let terminateFrame = wrap([CSAFECommand(setScreenState, [1, 2])])

    /// One frame of proprietary set-config commands (wrapper 0x76).
    static func wrap(_ commands: [CSAFECommand]) -> [UInt8] {
        let inner = CSAFECommand.contents(commands)
        return CSAFEFrame.encode([setPMConfig, UInt8(inner.count)] + inner)
    }

    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
    static func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
    static func hundredths(_ s: Double) -> UInt32 { UInt32((s * 100).rounded()) }

    /// Splits a frame into the writes the control characteristic takes (20 bytes each).
    public static func writes(_ frame: [UInt8], mtu: Int = 20) -> [[UInt8]] {
        stride(from: 0, to: frame.count, by: mtu).map { Array(frame[$0..<min($0 + mtu, frame.count)]) }
    }
}

/// The PM5's answer to a set-config frame: which of its commands it took.
public struct PM5ConfigAnswer: Sendable, Hashable {
    /// The command ids the PM echoed from the wrapper (it echoes ids only, no data).
    public var accepted: [UInt8]
    /// Why the previous frame was not taken, when it was not.
    public var problem: String?

    /// Reads the answer frame to one of `PM5Workout.frames`.
    public init(frame: [UInt8]) throws(CSAFEError) {
        let r = try CSAFEResponse(contents: CSAFEFrame.decode(frame))
        problem = r.previousFrameProblem
        guard let w = r.answers.first(where: { $0.id == PM5Workout.setPMConfig }) else {
            accepted = []
            if problem == nil { problem = "the PM answered without the workout's commands" }
            return
        }
        accepted = w.data
    }
}

extension CSAFECommand {
    /// Splits a frame's contents back into commands (what a PM reads): each long command's
    /// byte count is checked.
    public static func commands(in contents: [UInt8]) throws(CSAFEError) -> [CSAFECommand] {
        var out: [CSAFECommand] = []
        var i = 0
        while i < contents.count {
            let id = contents[i]
            if id >= 0x80 {
                out.append(CSAFECommand(id))
                i += 1
                continue
            }
            guard i + 1 < contents.count else { throw CSAFEError("command 0x\(hex(id)) has no byte count") }
            let n = Int(contents[i + 1])
            guard i + 2 + n <= contents.count else { throw CSAFEError("command 0x\(hex(id)) says \(n) bytes, \(contents.count - i - 2) follow") }
            out.append(CSAFECommand(id, Array(contents[(i + 2)..<(i + 2 + n)])))
            i += 2 + n
        }
        return out
    }
}

/// The erg's side of programming a workout: what a PM5 makes of the frames a hub writes,
/// frame by frame, and the answer it sends back. The hub's workouts are read back from
/// their frames, so an emulated erg runs exactly what the coach set.
public struct PM5WorkoutReader: Sendable {
    /// What a frame did.
    public enum Outcome: Sendable, Hashable {
        /// Part of a workout; more frames follow.
        case pending
        /// The workout is set and its screen brought up.
        case workout(PM5Workout)
        /// The workout on the erg was ended.
        case terminated
    }

    private var type: UInt8?
    private var duration: (type: UInt8, value: UInt32)?
    private var split: (type: UInt8, value: UInt32)?
    private var intervals: [Int: PM5Workout.Interval] = [:]
    private var index = 0
    private var intervalType: UInt8 = 0
    private var rest = 0

    public init() {}

    /// Reads one frame written to the control characteristic; `answer` is the frame the
    /// PM sends back (the wrapper's command ids echoed).
    public mutating func take(_ frame: [UInt8]) throws(CSAFEError) -> (outcome: Outcome, answer: [UInt8]) {
        let top = try CSAFECommand.commands(in: CSAFEFrame.decode(frame))
        guard let wrapper = top.first, top.count == 1, wrapper.id == PM5Workout.setPMConfig else {
            throw CSAFEError("a workout frame holds one set-config wrapper (0x76)")
        }
        let inner = try CSAFECommand.commands(in: wrapper.data)
        var outcome = Outcome.pending
        func be(_ d: ArraySlice<UInt8>) -> UInt32 { d.reduce(0) { $0 << 8 | UInt32($1) } }
        for c in inner {
            switch c.id {
            case PM5Workout.setWorkoutType:
                guard c.data.count == 1 else { throw CSAFEError("workout type: 1 byte expected") }
                type = c.data[0]
            case PM5Workout.setWorkoutDuration:
                guard c.data.count == 5 else { throw CSAFEError("workout duration: 5 bytes expected") }
                duration = (c.data[0], be(c.data[1...]))
            case PM5Workout.setSplitDuration:
                guard c.data.count == 5 else { throw CSAFEError("split duration: 5 bytes expected") }
                split = (c.data[0], be(c.data[1...]))
            case PM5Workout.setIntervalIndex:
                guard c.data.count == 1 else { throw CSAFEError("interval index: 1 byte expected") }
                index = Int(c.data[0])
            case PM5Workout.setIntervalType:
                guard c.data.count == 1 else { throw CSAFEError("interval type: 1 byte expected") }
                intervalType = c.data[0]
            case PM5Workout.setRestDuration:
                guard c.data.count == 2 else { throw CSAFEError("rest duration: 2 bytes expected") }
                rest = Int(be(c.data[...]))
            case PM5Workout.setTargetPace:
                guard c.data.count == 4 else { throw CSAFEError("target pace: 4 bytes expected") }
            case PM5Workout.configureWorkout:
                // In a variable-interval workout each interval is closed by its configure.
                if type == 8 {
                    guard let d = duration else { throw CSAFEError("interval \(index + 1) has no duration") }
                    let work: PM5Workout.Interval.Work = d.type == PM5Workout.durationDistance ? .metres(Int(d.value)) : .seconds(Double(d.value) / 100)
                    intervals[index] = PM5Workout.Interval(work, restSeconds: rest)
                    duration = nil
                    rest = 0
                }
            case PM5Workout.setScreenState:
                guard c.data.count == 2, c.data[0] == 1 else { throw CSAFEError("screen state: workout screen expected") }
                if c.data[1] == 2 {
                    outcome = .terminated
                } else {
                    outcome = .workout(try built())
                    self = PM5WorkoutReader()
                }
            default:
                throw CSAFEError("command 0x\(hex(c.id)) is not one a workout is set with")
            }
        }
        let answer = CSAFEFrame.encode(CSAFEResponse(status: 0x01, answers: [CSAFECommand(PM5Workout.setPMConfig, inner.map(\.id))]).contents)
        return (outcome, answer)
    }

    private func built() throws(CSAFEError) -> PM5Workout {
        func metres(_ d: (type: UInt8, value: UInt32)?) throws(CSAFEError) -> Int {
            guard let d, d.type == PM5Workout.durationDistance else { throw CSAFEError("a distance workout without its distance") }
            return Int(d.value)
        }
        func seconds(_ d: (type: UInt8, value: UInt32)?) throws(CSAFEError) -> Double {
            guard let d, d.type == PM5Workout.durationTime else { throw CSAFEError("a time workout without its time") }
            return Double(d.value) / 100
        }
        let w: PM5Workout
        switch type {
        case 1: w = .justRow
        case 2: w = .distance(metres: try metres(duration), split: nil)
        case 3: w = .distance(metres: try metres(duration), split: try metres(split))
        case 4: w = .time(seconds: try seconds(duration), split: nil)
        case 5: w = .time(seconds: try seconds(duration), split: try seconds(split))
        case 8:
            guard !intervals.isEmpty, intervals.keys.sorted() == Array(0..<intervals.count) else {
                throw CSAFEError("intervals \(intervals.keys.sorted().map { $0 + 1 }) are not 1 to \(intervals.count)")
            }
            w = .intervals((0..<intervals.count).map { intervals[$0]! })
        default: throw CSAFEError("workout type \(type.map(String.init) ?? "none") is not one this reader knows")
        }
        try w.validate()
        return w
    }
}

extension PM5Workout: CustomStringConvertible {
    /// As the coach's page names it: "2000 m", "20:00", "4 × 500 m / 1:00r".
    public var description: String {
        func clock(_ s: Double) -> String {
            let t = Int(s.rounded())
            return t >= 3600 ? "\(t / 3600):" + String(t / 60 % 60).leftPadded(to: 2) + ":" + String(t % 60).leftPadded(to: 2)
                             : "\(t / 60):" + String(t % 60).leftPadded(to: 2)
        }
        func work(_ w: Interval.Work) -> String {
            switch w {
            case .metres(let m): "\(m) m"
            case .seconds(let s): clock(s)
            }
        }
        switch self {
        case .justRow: return "just row"
        case .distance(let m, _): return "\(m) m"
        case .time(let s, _): return clock(s)
        case .intervals(let list):
            let parts = list.map { work($0.work) + ($0.restSeconds > 0 ? " / " + clock(Double($0.restSeconds)) + "r" : "") }
            if Set(parts).count == 1 { return "\(list.count) × " + parts[0] }
            return parts.joined(separator: ", ")
        }
    }
}
