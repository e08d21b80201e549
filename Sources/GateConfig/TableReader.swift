// SPDX-License-Identifier: Apache-2.0
// Strict typed reads from one TOML table, with errors that name file and key path.

internal import TOMLKit

/// Reads keys of one TOML table. Every read checks the TOML type; `checkKeys` rejects keys
/// the schema does not define, so a misspelt key is an error rather than a silent default.
struct TableReader {
    let table: TOMLTable
    /// Dotted path of this table, empty for the document root.
    let path: String
    let file: String

    func keyPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func error(_ code: ConfigError.Code, _ key: String, _ message: String) -> ConfigError {
        ConfigError(code: code, file: file, keyPath: keyPath(key), message: message)
    }

    /// Keys present in the table, sorted so the first error reported does not depend on the parser.
    var keys: [String] { table.keys.sorted() }

    /// Fails on the first key that is neither in `keys` (plain values) nor in `tables`.
    func checkKeys(_ keys: [String], tables: [String] = []) throws(ConfigError) {
        for key in self.keys where !keys.contains(key) && !tables.contains(key) {
            let isTable = table[key]?.type == .table
            let allowed =
                keys.isEmpty
                ? "allowed tables: " + tables.joined(separator: ", ")
                : "allowed keys: " + (keys + tables).joined(separator: ", ")
            throw error(isTable ? .unknownTable : .unknownKey, key, "unknown \(isTable ? "table" : "key"); \(allowed)")
        }
    }

    /// Returns the value for `key` if its TOML type is `type`, nil if the key is absent.
    /// `expected` describes the value for people, e.g. `an integer in 16...4096`.
    private func value(
        _ key: String,
        _ type: TOMLType,
        _ expected: String
    ) throws(ConfigError) -> (any TOMLValueConvertible)? {
        guard let value = table[key] else { return nil }
        guard value.type == type else {
            let found =
                Self.isScalar(value.type)
                ? "\(Self.render(value)) is \(Self.typeName(value.type))" : "found \(Self.typeName(value.type))"
            throw error(.wrongType, key, "\(found); expected \(expected)")
        }
        return value
    }

    /// Unwraps a value that the schema requires.
    func required<T>(_ value: T?, _ key: String, _ expected: String) throws(ConfigError) -> T {
        guard let value else { throw error(.missingKey, key, "missing required key; expected \(expected)") }
        return value
    }

    func string(_ key: String, _ expected: String) throws(ConfigError) -> String? {
        try value(key, .string, expected)?.string
    }

    func int(_ key: String, _ expected: String) throws(ConfigError) -> Int? {
        try value(key, .int, expected)?.int
    }

    func bool(_ key: String, _ expected: String) throws(ConfigError) -> Bool? {
        try value(key, .bool, expected)?.bool
    }

    /// A sub-table as a reader, nil if absent.
    func table(_ key: String, _ expected: String = "a table") throws(ConfigError) -> TableReader? {
        guard let sub = try value(key, .table, expected)?.table else { return nil }
        return TableReader(table: sub, path: keyPath(key), file: file)
    }

    static func isScalar(_ type: TOMLType) -> Bool {
        switch type {
        case .string, .int, .double, .bool: return true
        case .table, .array, .date, .time, .dateTime: return false
        }
    }

    /// A scalar value as it would appear in the file, for error messages.
    static func render(_ value: any TOMLValueConvertible) -> String {
        if let s = value.string { return "\"\(s)\"" }
        if let i = value.int { return String(i) }
        if let d = value.double { return String(d) }
        if let b = value.bool { return String(b) }
        return typeName(value.type)
    }

    /// The TOML type with an article, for error messages.
    static func typeName(_ type: TOMLType) -> String {
        switch type {
        case .string: return "a string"
        case .int: return "an integer"
        case .double: return "a float"
        case .bool: return "a boolean"
        case .table: return "a table"
        case .array: return "an array"
        case .date: return "a date"
        case .time: return "a time"
        case .dateTime: return "a date-time"
        }
    }
}

extension TableReader {
    /// A number (integer or float), nil if absent.
    func number(_ key: String, _ expected: String) throws(ConfigError) -> Double? {
        guard let value = table[key] else { return nil }
        if let i = value.int { return Double(i) }
        if let d = value.double { return d }
        throw error(.wrongType, key, "found \(Self.typeName(value.type)); expected \(expected)")
    }

    /// An optional number within `range`.
    func optionalNumber(_ key: String, in range: ClosedRange<Double>, unit: String = "") throws(ConfigError) -> Double? {
        let expected = "a number in \(range.lowerBound)...\(range.upperBound)\(unit)"
        guard let v = try number(key, expected) else { return nil }
        guard range.contains(v) else {
            throw error(.outOfRange, key, "\(v) is out of range \(range.lowerBound)...\(range.upperBound)\(unit)")
        }
        return v
    }

    /// An optional `[low, high]` pair of numbers, both within `range`, low ≤ high.
    func optionalRange(_ key: String, within range: ClosedRange<Double>, unit: String) throws(ConfigError) -> ClosedRange<Double>? {
        let expected = "[low, high] within \(range.lowerBound)...\(range.upperBound)\(unit)"
        guard let value = table[key] else { return nil }
        guard let array = value.array, array.count == 2 else {
            throw error(.wrongType, key, "expected \(expected)")
        }
        var pair: [Double] = []
        for element in array {
            if let i = element.int { pair.append(Double(i)) } else if let d = element.double { pair.append(d) } else {
                throw error(.wrongType, key, "expected \(expected)")
            }
        }
        guard pair[0] <= pair[1], range.contains(pair[0]), range.contains(pair[1]) else {
            throw error(.outOfRange, key, "[\(pair[0]), \(pair[1])] is not \(expected)")
        }
        return pair[0]...pair[1]
    }
}
