// SPDX-License-Identifier: Apache-2.0
// The results journal: records survive, a torn last line from a power cut is skipped.

import Foundation
import GateCore
import GateSim
import Testing

@Suite("Result journal")
struct ResultJournalTests {
    @Test("records are appended durably and read back; a torn last line is left out")
    func appendAndTear() throws {
        let dir = ScratchDirectory()
        let path = dir.file("results.jsonl")
        do {
            let j = try ResultJournal(path: path)
            try j.append(ResultJournal.record(for: .started(at: MonotonicInstant(nanoseconds: 5), by: "flying")))
            try j.append(ResultJournal.record(for: .finished(at: MonotonicInstant(nanoseconds: 9), time: Span(nanoseconds: 4))))
        }
        // Reopening appends after what is there.
        let again = try ResultJournal(path: path)
        try again.append(ResultJournal.record(for: .falseStart(reason: "movement", at: MonotonicInstant(nanoseconds: 11))))
        // A power cut in the middle of a write leaves a partial line.
        let h = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        h.seekToEndOfFile()
        h.write(Data("{\"event\":\"lap\",\"num".utf8))
        try h.close()
        let lines = try ResultJournal.read(path: path)
        #expect(lines.count == 3)
        #expect(lines[0] == "{\"event\":\"started\",\"at_ns\":5,\"by\":\"flying\"}")
        #expect(lines[1] == "{\"event\":\"finished\",\"at_ns\":9,\"time_ns\":4}")
        #expect(lines[2].contains("false_start"))
    }
}
