// SPDX-License-Identifier: Apache-2.0
// The sprintgate command: entry point and subcommands.

import ArgumentParser
import Detector
import GateConfig
import GateCore
import LinuxHardware
#if canImport(Glibc)
import Glibc
#endif

struct SprintGate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sprintgate",
        abstract: "Photo-finish sprint timing gate.",
        subcommands: [RunCommand.self, StatusCommand.self, SelfTestCommand.self, RecordCommand.self, DemoCommand.self, ReplayCommand.self, EvaluateCommand.self, SynthCommand.self, RegressCommand.self, CalcCommand.self, ExportCommand.self])
}

/// Prints a one-line error and exits with status 2 (bad input), never a crash. In the
/// journal the line carries priority 3 (err), so `journalctl -p err` shows it.
func fail(_ message: String) -> Never {
    var line = "\(JournalLogHandler.standardErrorIsJournal() ? "<3>" : "")error: \(message)\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(2)
}

/// The detector subject named on the command line, or a one-line error.
func crossingSubject(_ name: String) -> CrossingSubject {
    guard let s = CrossingSubject(rawValue: name) else { fail("--subject \(name) is not athlete or vehicle") }
    return s
}

JournalLogHandler.bootstrapIfJournal()
SprintGate.main()

/// The settings file at `path`, or a one-line error naming file and key and exit 2.
func loadSettings(_ path: String) -> GateSettings {
    do { return try GateSettings(contentsOf: path) } catch { fail(error.description) }
}

/// The camera request a board's `[camera]` table describes.
func cameraRequest(_ cam: CameraConfig) -> CameraRequest {
    var request = CameraRequest(width: cam.width, height: cam.height, fps: Double(cam.fps))
    request.exposureMicroseconds = cam.exposureMicroseconds
    return request
}
