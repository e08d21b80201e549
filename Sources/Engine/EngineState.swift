// SPDX-License-Identifier: Apache-2.0
// The part of the engine's state that must survive a restart of the gate: a run in progress.

import GateCore

extension Engine {
    /// One line of text describing the run in progress, written to the state directory
    /// whenever the phase or the lap count changes. Times are CLOCK_MONOTONIC, valid
    /// only within one boot: the daemon stores the boot id beside it and discards the
    /// state after a reboot.
    public var persistentState: String {
        var s = "v1 phase="
        switch phase {
        case .idle: s += "idle"
        case .armed, .holding, .starting, .inFrame: s += "armed"
        case .running(let start): s += "running start_ns=\(start.nanoseconds)"
        case .finished: s += "finished"
        }
        s += " laps=\(lapCount)"
        if let last = lastLapInstant { s += " last_lap_ns=\(last.nanoseconds)" }
        return s
    }

    /// An engine with `config` continuing from `persistentState`. A start sequence that
    /// was under way (countdown, voice) resumes as armed: its sounds cannot be resumed.
    /// Returns nil for text that is not a state line of this version.
    public init?(config: EngineConfig, restoring text: String) {
        var fields: [Substring: Substring] = [:]
        let tokens = text.split(separator: " ")
        guard tokens.first == "v1" else { return nil }
        for t in tokens.dropFirst() {
            let kv = t.split(separator: "=", maxSplits: 1)
            guard kv.count == 2 else { return nil }
            fields[kv[0]] = kv[1]
        }
        self.init(config: config)
        guard let laps = fields["laps"].flatMap({ Int($0) }), laps >= 0 else { return nil }
        let last = fields["last_lap_ns"].flatMap { Int64($0) }.map { MonotonicInstant(nanoseconds: $0) }
        switch fields["phase"] {
        case "idle": restore(phase: .idle, laps: laps, lastLap: last)
        case "armed": restore(phase: .armed, laps: laps, lastLap: last)
        case "finished": restore(phase: .finished, laps: laps, lastLap: last)
        case "running":
            guard let start = fields["start_ns"].flatMap({ Int64($0) }) else { return nil }
            restore(phase: .running(start: MonotonicInstant(nanoseconds: start)), laps: laps, lastLap: last)
        default:
            return nil
        }
    }
}
