// SPDX-License-Identifier: Apache-2.0
// The status file `sprintgate status` reads, and the run-in-progress state file.

import Foundation
public import Logging

/// `status.txt` in the state directory: what the appliance is doing, rewritten each second.
public struct StatusFile: Sendable {
    public let path: String

    public init(stateDirectory: String) { path = stateDirectory + "/status.txt" }

    /// Replaces the file's text atomically (a reader never sees half of it).
    public func write(_ text: String) { try? text.write(toFile: path, atomically: true, encoding: .utf8) }
}

/// The run-in-progress state file: the engine's state line and the boot it belongs to.
public enum RunState {
    public static func bootID() -> String {
        (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown"
    }

    /// The saved state line, if it was written during this boot (monotonic instants
    /// do not carry over a reboot).
    public static func load(path: String) -> String? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let lines = text.split(separator: "\n")
        guard lines.count == 2, lines[0] == "boot \(bootID())" else { return nil }
        return String(lines[1])
    }

    /// Writes atomically (temporary file and rename), so power loss leaves old or new.
    public static func save(_ state: String, path: String, log: Logger) {
        do {
            try ("boot \(bootID())\n" + state + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            log.error("cannot save the run state to \(path): \(error) (check the state directory's permissions)")
        }
    }
}
