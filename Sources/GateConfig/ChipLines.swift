// SPDX-License-Identifier: Apache-2.0
// Line-name lists of GPIO chips (boards/chips/<label>.lines) and checks of board files against them.

public import GateCore

/// The line names of one GPIO chip in offset order, as `gpioinfo` prints them.
///
/// A `.lines` file holds one name per line; blank lines and lines starting with `#` are
/// skipped, so the n-th name is the line at offset n.
public struct ChipLines: Sendable, Hashable {
    /// The chip label, e.g. `pinctrl-bcm2711`; also the file's base name.
    public var label: String
    /// Line names; the index is the line offset. Unnamed lines appear as the kernel shows them.
    public var names: [String]

    /// Creates a list from names in offset order.
    public init(label: String, names: [String]) {
        self.label = label
        self.names = names
    }

    /// Parses the text of a `.lines` file.
    public init(label: String, parsing text: String) {
        var names: [String] = []
        for row in text.split(whereSeparator: \.isNewline) {
            let name = row.trimmingWhitespace()
            if name.isEmpty || name.hasPrefix("#") { continue }
            names.append(String(name))
        }
        self.init(label: label, names: names)
    }

    /// Reads `<directory>/<label>.lines`; throws `.unreadable` if there is no such file.
    public init(label: String, directory: String) throws(ConfigError) {
        try self.init(label: label, parsing: readTextFile(Self.path(label: label, directory: directory)))
    }

    /// The path of a chip's list inside `directory`.
    public static func path(label: String, directory: String) -> String {
        "\(directory)/\(label).lines"
    }

    /// The offset of the line called `name`, or nil if no line, or more than one, has that name.
    public func offset(of name: String) -> Int? {
        guard let first = names.firstIndex(of: name), names.lastIndex(of: name) == first else { return nil }
        return first
    }
}

extension BoardConfig {
    /// Checks that every GPIO line names exactly one line of its chip.
    ///
    /// - Parameter chips: Line lists by chip label.
    /// - Throws: `ConfigError` naming `source` and `gpio.<role>.chip` when a chip has no list, or
    ///   `gpio.<role>.line` when the name is not on the chip or is shared by several lines.
    public func validateLineNames(against chips: [String: ChipLines]) throws(ConfigError) {
        for role in GPIORole.allCases {
            guard let line = gpio[role] else { continue }
            guard let chip = chips[line.chip] else {
                let known = chips.keys.sorted().joined(separator: ", ")
                throw ConfigError(
                    code: .unknownChip,
                    file: source,
                    keyPath: "gpio.\(role).chip",
                    message: "no line list for chip \"\(line.chip)\"; known chips: \(known)"
                )
            }
            guard chip.offset(of: line.line) != nil else {
                let count = chip.names.filter { $0 == line.line }.count
                let problem = count == 0 ? "is not a line of" : "names \(count) lines of"
                throw ConfigError(
                    code: .unknownLine,
                    file: source,
                    keyPath: "gpio.\(role).line",
                    message: "\"\(line.line)\" \(problem) \(chip.label); expected a unique name from its .lines list"
                )
            }
        }
    }

    /// Checks line names against the `.lines` files in `directory` (normally `boards/chips`).
    ///
    /// - Throws: `ConfigError` naming `source` and `gpio.<role>.chip` when the chip's file is
    ///   missing, or `gpio.<role>.line` as `validateLineNames(against:)` does.
    public func validateLineNames(chipsDirectory directory: String) throws(ConfigError) {
        var chips: [String: ChipLines] = [:]
        for role in GPIORole.allCases {
            guard let label = gpio[role]?.chip, chips[label] == nil else { continue }
            do {
                chips[label] = try ChipLines(label: label, directory: directory)
            } catch {
                throw ConfigError(
                    code: .unknownChip,
                    file: source,
                    keyPath: "gpio.\(role).chip",
                    message: "no line list for chip \"\(label)\" (\(error.description))"
                )
            }
        }
        try validateLineNames(against: chips)
    }
}

extension Substring {
    /// The text without leading and trailing white space.
    func trimmingWhitespace() -> Substring {
        guard let start = firstIndex(where: { !$0.isWhitespace }), let end = lastIndex(where: { !$0.isWhitespace })
        else {
            return self[endIndex...]
        }
        return self[start...end]
    }
}
