// SPDX-License-Identifier: Apache-2.0
// Where the coach put the gate line on the page, kept in the state directory so it
// survives a restart.

import Foundation

/// The gate line as moved on the page: one line `x=<input pixels> width=<frame width>` in
/// `STATE_DIR/gate-line`. It overrides the settings file's `gate_x` for a camera of the
/// same width; another width (a different camera mode) ignores it.
public enum GateLineFile {
    public static func path(directory: String) -> String { directory + "/gate-line" }

    /// The stored line for frames `frameWidth` wide; nil when none is stored, it is
    /// unreadable, or it was set for another width.
    public static func load(directory: String, frameWidth: Int) -> Double? {
        guard let text = try? String(contentsOfFile: path(directory: directory), encoding: .utf8) else { return nil }
        var x: Double?, width: Int?
        for field in text.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            let kv = field.split(separator: "=", maxSplits: 1)
            guard kv.count == 2 else { continue }
            if kv[0] == "x" { x = Double(kv[1]) }
            if kv[0] == "width" { width = Int(kv[1]) }
        }
        guard let x, let width, width == frameWidth, x.isFinite, x >= 0, x < Double(frameWidth) else { return nil }
        return x
    }

    /// Stores `x` for frames `frameWidth` wide (written whole beside it, then renamed into place).
    public static func save(directory: String, x: Double, frameWidth: Int) throws {
        try "x=\(x) width=\(frameWidth)\n".write(toFile: path(directory: directory), atomically: true, encoding: .utf8)
    }
}
