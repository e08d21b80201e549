// SPDX-License-Identifier: Apache-2.0
// Turns the engine's timing events into run records: one record per finished run or false start.

public import GateCore

/// A timing event as the store needs it: the engine's `LoopEvent`s reduced to plain values
/// (the daemon maps them; this module does not depend on the engine). Instants are local
/// CLOCK_MONOTONIC; `wallMs` is the wall clock of the same instant, milliseconds since the
/// Unix epoch, for display only.
public enum RunEvent: Sendable, Hashable {
    /// The clock started (`startType`: the engine's `StartType` raw value).
    case started(at: MonotonicInstant, startType: String, wallMs: Int64)
    /// The start instant became known more exactly (start sound onset).
    case startCorrected(at: MonotonicInstant)
    /// A timed crossing: lap `number` (1-based), time since the start and since the previous lap.
    case lap(number: Int, at: MonotonicInstant, split: Span, lap: Span)
    case finished(at: MonotonicInstant, time: Span)
    case falseStart(reason: String, at: MonotonicInstant, wallMs: Int64)
    case crossing(Crossing)
    /// Timing stopped without a finish (disarmed, reset, solo laps ended): a run with laps
    /// is stored with its last lap as its time; a run without any is dropped.
    case stopped
    /// The course changed (a preset, distance or start type chosen on the page): the runs
    /// that start after it, and false starts after it, are stored with the new context.
    case course(RunContext)
}

/// What the assembler needs to know about the course, beyond the events.
public struct RunContext: Sendable, Hashable {
    /// Preset in use, if any (stored with the run).
    public var preset: StoredPreset?
    /// Distance from the start line to the finish, metres; nil when unknown.
    public var distance: Double?
    /// Timing gates on the course (1 for a lone gate).
    public var gateCount: Int
    /// The engine's start type (`StartType` raw value), for false starts, which carry none;
    /// nil falls back to the preset's.
    public var startType: String?
    /// Distance from the start of each successive timed crossing, metres. When nil, a
    /// single-crossing run's crossing is at `distance` and laps have no distance.
    public var splitDistances: [Double]?

    public init(preset: StoredPreset? = nil, distance: Double? = nil, gateCount: Int = 1, splitDistances: [Double]? = nil,
                startType: String? = nil) {
        self.preset = preset
        self.startType = startType
        self.distance = distance ?? preset?.distance
        self.gateCount = gateCount
        self.splitDistances = splitDistances
    }
}

/// Folds `RunEvent`s into `StoredRun`s. Value type, deterministic, no I/O; feed it events
/// in the order the loop reported them and store each run it returns.
public struct RunAssembler: Sendable {
    public var context: RunContext
    private var draft: StoredRun?
    private var startAt: MonotonicInstant?
    /// Crossings seen since the last start, for the record and each split's uncertainty.
    private var lastCrossing: Crossing?
    /// Cap on crossings kept per run. Why: a solo session left running for an hour at a
    /// busy track must not grow without bound; the splits hold the timing anyway.
    public static let maxCrossingsPerRun = 512

    public init(context: RunContext) {
        self.context = context
    }

    /// Whether a run is in progress (started, not yet finished or stopped).
    public var inProgress: Bool { draft != nil }

    /// Consumes one event; returns a run that is complete and should be stored, if any.
    public mutating func consume(_ event: RunEvent) -> StoredRun? {
        switch event {
        case let .started(at, startType, wallMs):
            let previous = closeDraft()
            startAt = at
            var run = StoredRun(startType: startType, presetID: context.preset?.id, distance: context.distance,
                                wallStartMs: wallMs, startMonoNs: at.nanoseconds, totalNs: nil,
                                gateCount: context.gateCount)
            // A flying or in-frame start is itself a crossing, reported just before the start.
            if let c = lastCrossing, c.time == at { run.crossings.append(StoredCrossing(c)) }
            draft = run
            return previous
        case let .startCorrected(at):
            guard draft != nil, let old = startAt else { return nil }
            draft?.wallStartMs += (at.nanoseconds - old.nanoseconds) / 1_000_000
            draft?.startMonoNs = at.nanoseconds
            startAt = at
            return nil
        case let .crossing(c):
            lastCrossing = c
            if draft != nil, (draft?.crossings.count ?? 0) < Self.maxCrossingsPerRun {
                draft?.crossings.append(StoredCrossing(c))
            }
            return nil
        case let .lap(number, at, split, lap):
            guard draft != nil else { return nil }
            addSplit(number: number, at: at, split: split, lap: lap)
            return nil
        case let .finished(at, time):
            guard let last = draft?.splits.last?.timeNs ?? (draft != nil ? 0 : nil) else { return nil }
            // A normal run reports `.lap(1)` and `.finished` for the same crossing; a finish
            // without its lap still gets a split.
            if draft?.splits.isEmpty == true || last != time.nanoseconds {
                addSplit(number: (draft?.splits.last?.gateIndex ?? 0) + 1, at: at, split: time,
                         lap: Span(nanoseconds: time.nanoseconds - last))
            }
            guard var run = draft else { return nil }
            run.totalNs = time.nanoseconds
            draft = nil
            startAt = nil
            return run
        case let .falseStart(reason, at, wallMs):
            draft = nil
            startAt = nil
            return StoredRun(startType: context.startType ?? context.preset?.startType ?? "unknown", presetID: context.preset?.id,
                             distance: context.distance, wallStartMs: wallMs, startMonoNs: at.nanoseconds, totalNs: nil,
                             falseStart: true, falseStartReason: reason, gateCount: context.gateCount)
        case .stopped:
            return closeDraft()
        case let .course(c):
            context = c
            return nil
        }
    }

    /// Ends the run in progress: with laps it is a result (the last lap's time), without it is dropped.
    private mutating func closeDraft() -> StoredRun? {
        defer { draft = nil; startAt = nil }
        guard var run = draft, let last = run.splits.last else { return nil }
        run.totalNs = last.timeNs
        return run
    }

    private mutating func addSplit(number: Int, at: MonotonicInstant, split: Span, lap: Span) {
        guard var run = draft else { return }
        let distance: Double?
        if let list = context.splitDistances {
            distance = number >= 1 && number <= list.count ? list[number - 1] : nil
        } else {
            distance = number == 1 && context.preset?.id != "solo" ? context.distance : nil
        }
        let previousDistance: Double? = number == 1 ? 0 : run.splits.last?.distance
        var speed: Double?
        if let d = distance, let p = previousDistance, lap.nanoseconds > 0, d > p { speed = (d - p) / lap.seconds }
        let uncertainty = lastCrossing.map { $0.time == at ? $0.uncertainty.nanoseconds : 0 } ?? 0
        // Why: the engine numbers laps from 1; a repeated number (replayed event) replaces nothing.
        guard number > (run.splits.last?.gateIndex ?? 0) else { return }
        run.splits.append(StoredSplit(gateIndex: number, distance: distance, timeNs: split.nanoseconds,
                                      segmentNs: lap.nanoseconds, segmentSpeed: speed, syncUncertaintyNs: uncertainty))
        draft = run
    }
}
