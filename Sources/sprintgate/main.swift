// SPDX-License-Identifier: Apache-2.0
// The sprintgate command: entry point and subcommands.

import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

struct SprintGate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sprintgate",
        abstract: "Photo-finish sprint timing gate.",
        subcommands: [RunCommand.self, StatusCommand.self, SelfTestCommand.self, RecordCommand.self, DemoCommand.self, ReplayCommand.self, SynthCommand.self, RegressCommand.self])
}

/// Prints a one-line error and exits with status 2 (bad input), never a crash.
func fail(_ message: String) -> Never {
    var line = "error: \(message)\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(2)
}

SprintGate.main()
