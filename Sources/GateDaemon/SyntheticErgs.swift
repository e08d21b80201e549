// SPDX-License-Identifier: Apache-2.0
// A row of synthetic PM5s for the demo and the tests: each rows steady pieces and
// workouts of intervals (`PM5Piece`) played in real time, or faster, into a rowing hub,
// and takes workouts as a PM5 does, from the CSAFE frames the hub writes.

import Foundation
public import Rowing

/// Synthetic ergs, numbered from 1, on a thread of their own. Every erg starts a 2000 m
/// piece at once; a workout set from the page starts a new piece of its length on each erg
/// that took it (a time is rowed at the erg's pace; intervals with their rests, as a PM5
/// reports them), after a 3-second countdown. Erg 2 sends every 37th stroke cut short;
/// erg 3 is out of reach for 8 seconds of each piece. Status comes ten times a second. Between pieces an erg reports its
/// status once a second, as an idle PM5 does.
public final class SyntheticErgs: ErgControl, @unchecked Sendable {
    public let count: Int
    /// Piece seconds per hub second.
    public let speed: Double
    private let deliver: @Sendable (PM5LogEvent) -> Void
    private let clock: @Sendable () -> Double
    private let lock = NSLock()
    /// Guarded by `lock`: each erg's events still to send, in time order, and its readers.
    private var queues: [Int: [PM5LogEvent]] = [:]
    private var readers: [Int: PM5WorkoutReader] = [:]
    private var lastStatus: [Int: (t: Double, elapsed: Double, distance: Double, type: UInt8)] = [:]
    private var thread: Thread?
    private var stopping = false

    /// A PM5's name as it advertises it.
    public static func name(_ erg: Int) -> String { String(format: "PM5 4300000%02d", erg) }

    public init(count: Int, speed: Double = 1, clock: @escaping @Sendable () -> Double, deliver: @escaping @Sendable (PM5LogEvent) -> Void) {
        self.count = count
        self.speed = speed
        self.clock = clock
        self.deliver = deliver
    }

    /// The erg's piece of `metres`, or its workout of `intervals`, starting at hub time `start`.
    func piece(erg: Int, metres: Double, intervals: [PM5Workout.Interval] = [], start: Double) -> [PM5LogEvent] {
        var p = PM5Piece()
        p.erg = erg
        p.distance = metres
        p.intervals = intervals
        // Each erg a little slower than the one before it, at its own rate.
        p.pace = 100 + 2.5 * Double(erg - 1)
        p.strokeRate = 30 - Double((erg - 1) % 4)
        p.start = 0
        // The PM5's fastest status rate, as a coach's board asks for it.
        p.sampleRate = .tenthSecond
        if erg == 2 { p.malformedEvery = 37 }
        if erg == 3 {
            let rests = Double(intervals.reduce(0) { $0 + $1.restSeconds })
            let mid = (metres / (500 / p.pace) + rests) / 2
            p.outOfReach = mid...(mid + 8)
        }
        // Piece seconds to hub seconds.
        return p.events().events.map { e in
            let t = start + e.t / speed
            switch e {
            case .connected: return .connected(t: t, erg: erg)
            case .disconnected: return .disconnected(t: t, erg: erg)
            case .notification(_, _, let c, let bytes): return .notification(t: t, erg: erg, characteristic: c, bytes: bytes)
            }
        }
    }

    public func start() {
        let now = clock()
        lock.withLock {
            for erg in 1...count { queues[erg] = piece(erg: erg, metres: 2000, start: now + 0.2 * Double(erg - 1)) }
        }
        let t = Thread { [self] in run() }
        t.name = "synthetic-ergs"
        thread = t
        t.start()
    }

    public func stop() {
        lock.withLock { stopping = true }
        while thread?.isFinished == false { usleep(5_000) }
        // Why: the thread's block holds this object; letting go of the thread frees both.
        thread = nil
    }

    private func run() {
        while true {
            let now = clock()
            var due: [PM5LogEvent] = []
            let stop: Bool = lock.withLock {
                for erg in 1...count {
                    var q = queues[erg] ?? []
                    let n = q.prefix { $0.t <= now }.count
                    due += q.prefix(n)
                    q.removeFirst(n)
                    queues[erg] = q
                    for e in due where e.erg == erg {
                        if case .notification(let t, _, let c, let bytes) = e, c == PM5Characteristic.generalStatus.rawValue,
                           case .generalStatus(let g)? = try? PM5Data.decode(characteristic: c, bytes) {
                            lastStatus[erg] = (t, g.elapsed, g.distance, g.workoutType)
                        }
                    }
                    // Idle between pieces: its status once a second.
                    if q.isEmpty, let last = lastStatus[erg], now - last.t >= 1 {
                        let g = GeneralStatus(elapsed: last.elapsed, distance: last.distance, workoutType: last.type, intervalType: 1,
                                              workoutState: PM5WorkoutState.workoutEnd.rawValue, rowingState: 0, strokeState: 0,
                                              totalWorkDistance: last.distance, workoutDuration: 0, workoutDurationType: 0x80, dragFactor: 120)
                        let (c, bytes) = PM5Data.generalStatus(g).encoded
                        due.append(.notification(t: now, erg: erg, characteristic: c, bytes: bytes))
                        lastStatus[erg] = (now, last.elapsed, last.distance, last.type)
                    }
                }
                return stopping
            }
            if stop { return }
            for e in due.sorted(by: { $0.t < $1.t }) { deliver(e) }
            usleep(5_000)
        }
    }

    /// Reads the frames as the erg's PM5 would; a complete workout starts its piece.
    public func program(erg: Int, frames: [[UInt8]]) throws -> [[UInt8]] {
        guard (1...count).contains(erg) else { throw SyntheticErgError(description: "no synthetic erg \(erg)") }
        return try lock.withLock {
            var reader = readers[erg] ?? PM5WorkoutReader()
            defer { readers[erg] = reader }
            var answers: [[UInt8]] = []
            for f in frames {
                let (outcome, answer) = try reader.take(f)
                answers.append(answer)
                switch outcome {
                case .pending: break
                case .terminated: queues[erg] = []
                case .workout(let w):
                    let pace = 100 + 2.5 * Double(erg - 1)
                    func metres(_ work: PM5Workout.Interval.Work) -> Double {
                        switch work {
                        case .metres(let m): Double(m)
                        case .seconds(let s): (s / pace * 500).rounded()
                        }
                    }
                    let length: Double = switch w {
                    case .justRow: 2000
                    case .distance(let m, _): Double(m)
                    case .time(let s, _): metres(.seconds(s))
                    case .intervals(let list): list.reduce(0) { $0 + metres($1.work) }
                    }
                    // The countdown on the PM5's screen, then the piece.
                    let intervals: [PM5Workout.Interval] = if case .intervals(let list) = w { list } else { [] }
                    queues[erg] = piece(erg: erg, metres: length, intervals: intervals, start: clock() + 3)
                }
            }
            return answers
        }
    }
}

struct SyntheticErgError: Error, CustomStringConvertible {
    var description: String
}
