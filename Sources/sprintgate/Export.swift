// SPDX-License-Identifier: Apache-2.0
// `sprintgate export`: the results database as CSV or JSON, to a file or standard output.

import ArgumentParser
import Foundation
import Logging
import SQLiteStore

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export runs, athletes, sessions and bests as CSV or JSON.",
        discussion: """
            Reads the results database (sprintgate.sqlite in the state directory) while the \
            gate may be running. CSV has one row per run with its splits as column groups; \
            JSON holds everything except the photo-finish images.
            """)

    @Option(help: "csv or json.")
    var format: String

    @Option(help: "State directory holding sprintgate.sqlite.")
    var stateDir: String = "/var/lib/sprintgate"

    @Option(help: "Write to this file (replaced atomically); standard output by default.")
    var out: String?

    func run() throws {
        guard let fmt = ExportFormat(rawValue: format.lowercased()) else {
            fail("--format \(format) is not a format (csv or json)")
        }
        let path = stateDir + "/" + RunStore.fileName
        guard FileManager.default.fileExists(atPath: path) else {
            fail("no results database at \(path) (give the gate's state directory with --state-dir)")
        }
        let text: String
        do {
            let store = try RunStore(path: path, logger: Logger(label: "sprintgate.store"))
            text = try store.export(fmt)
        } catch {
            fail(error.description)
        }
        if let out {
            do { try text.write(toFile: out, atomically: true, encoding: .utf8) } catch {
                fail("cannot write \(out): \(error.localizedDescription)")
            }
        } else {
            var t = text
            t.withUTF8 { buf in
                var off = 0
                while off < buf.count {
                    let n = write(1, buf.baseAddress! + off, buf.count - off)
                    if n <= 0 { fail("cannot write to standard output") }
                    off += n
                }
            }
        }
    }
}
