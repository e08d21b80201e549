// SPDX-License-Identifier: Apache-2.0
// Results appended to a journal file, one JSON object per line, flushed to disk each time.

#if canImport(Glibc)
import Glibc
#endif
public import GateCore

/// An append-only file of results (starts, laps, finishes, false starts, crossings).
/// Each record is written with one `write` and made durable with `fdatasync`, so a power
/// cut loses at most the record being written and never corrupts earlier ones; a torn
/// last line is skipped when reading. Used from the storage thread, never the engine loop.
public final class ResultJournal {
    public let path: String
    private let fd: Int32

    public init(path: String) throws(ClipError) {
        let f = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard f >= 0 else { throw ClipError("\(path): cannot open for appending (\(String(cString: strerror(errno))))") }
        fd = f
        self.path = path
    }

    deinit { close(fd) }

    /// Appends one record (a JSON object without the newline) and syncs it.
    public func append(_ json: String) throws(ClipError) {
        var line = json + "\n"
        let ok = line.withUTF8 { buf in write(fd, buf.baseAddress, buf.count) == buf.count }
        guard ok, fdatasync(fd) == 0 else { throw ClipError("\(path): write failed (\(String(cString: strerror(errno))))") }
    }

    /// The complete records in a journal file; a torn last line (power cut) is left out.
    public static func read(path: String) throws(ClipError) -> [String] {
        let text = try readTextFile(path)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // The last element is a torn line, or empty after a final newline: never a record.
        lines.removeLast()
        return lines.filter { $0.hasPrefix("{") && $0.hasSuffix("}") }
    }

    /// The JSON record for a timing event, or nil for events that are not results.
    public static func record(for event: ReplayJournalEvent) -> String {
        switch event {
        case let .started(at, by): return "{\"event\":\"started\",\"at_ns\":\(at.nanoseconds),\"by\":\"\(by)\"}"
        case let .lap(n, at, split, lap):
            return "{\"event\":\"lap\",\"number\":\(n),\"at_ns\":\(at.nanoseconds),\"split_ns\":\(split.nanoseconds),\"lap_ns\":\(lap.nanoseconds)}"
        case let .finished(at, time): return "{\"event\":\"finished\",\"at_ns\":\(at.nanoseconds),\"time_ns\":\(time.nanoseconds)}"
        case let .falseStart(reason, at): return "{\"event\":\"false_start\",\"at_ns\":\(at.nanoseconds),\"reason\":\"\(reason)\"}"
        case let .crossing(c):
            return "{\"event\":\"crossing\",\"time_ns\":\(c.time.nanoseconds),\"uncertainty_ns\":\(c.uncertainty.nanoseconds),\"direction\":\"\(c.direction)\",\"blob_height\":\(fixedPoint(c.blobHeight, digits: 3))}"
        }
    }
}

/// What the journal records (engine events reduced to plain values).
public enum ReplayJournalEvent: Sendable, Hashable {
    case started(at: MonotonicInstant, by: String)
    case lap(number: Int, at: MonotonicInstant, split: Span, lap: Span)
    case finished(at: MonotonicInstant, time: Span)
    case falseStart(reason: String, at: MonotonicInstant)
    case crossing(Crossing)
}
