// SPDX-License-Identifier: Apache-2.0
// The error a board file raises when it cannot be used, naming the file and key.

import GateCore

/// A configuration file that cannot be used.
///
/// `description` reads `<file>: <key path>: <problem>`, for example
/// `boards/x.toml: gpio.ready-led.bias: "pullup" is not one of as-is, disable, pull-up, pull-down`.
/// Code matches on `code`; people read `description`.
public struct ConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem. An open set of values, so new kinds do not break callers' `switch`es.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case unreadable, syntax, unknownTable, unknownKey, unknownRole, missingKey, wrongType
            case outOfRange, notOneOf, invalidValue, duplicateLine, unknownChip, unknownLine
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The file could not be opened or is not UTF-8.
        public static let unreadable = Code(.unreadable)
        /// The text is not valid TOML.
        public static let syntax = Code(.syntax)
        /// A table that the schema does not define at this place.
        public static let unknownTable = Code(.unknownTable)
        /// A key that the schema does not define in this table.
        public static let unknownKey = Code(.unknownKey)
        /// A `[gpio.<role>]` table whose role is not a `GPIORole`.
        public static let unknownRole = Code(.unknownRole)
        /// A required key or table is absent.
        public static let missingKey = Code(.missingKey)
        /// A value has the wrong TOML type, e.g. a string where an integer belongs.
        public static let wrongType = Code(.wrongType)
        /// A number outside its allowed range or set.
        public static let outOfRange = Code(.outOfRange)
        /// A string that is not one of the allowed words.
        public static let notOneOf = Code(.notOneOf)
        /// A string of the right type but the wrong shape, e.g. an empty name.
        public static let invalidValue = Code(.invalidValue)
        /// Two roles use the same line of the same chip.
        public static let duplicateLine = Code(.duplicateLine)
        /// A chip with no `boards/chips/<chip>.lines` list.
        public static let unknownChip = Code(.unknownChip)
        /// A line name that is not on its chip, or names more than one line of it.
        public static let unknownLine = Code(.unknownLine)

        public var description: String { base.rawValue }
    }

    /// The kind of problem.
    public let code: Code
    /// The file as the caller named it, e.g. `boards/raspberry-pi-4-usbcam.toml`.
    public let file: String
    /// The dotted key path, e.g. `gpio.ready-led.bias`; empty when the problem is the whole file.
    public let keyPath: String
    /// What is wrong and what is allowed, without the file and key path.
    public let message: String

    /// Creates an error; `keyPath` is empty for problems with the whole file.
    public init(code: Code, file: String, keyPath: String, message: String) {
        self.code = code
        self.file = file
        self.keyPath = keyPath
        self.message = message
    }

    public var description: String {
        keyPath.isEmpty ? "\(file): \(message)" : "\(file): \(keyPath): \(message)"
    }
}
