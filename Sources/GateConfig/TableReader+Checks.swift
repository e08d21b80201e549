// SPDX-License-Identifier: Apache-2.0
// Range, set and word checks shared by the board file sections.

import GateCore
internal import TOMLKit

extension TableReader {
    /// A required table, e.g. `[camera]`.
    func requiredTable(_ key: String) throws(ConfigError) -> TableReader {
        guard let sub = try table(key) else {
            throw error(.missingKey, key, "missing required table [\(keyPath(key))]")
        }
        return sub
    }

    /// A required integer within `range`.
    func int(_ key: String, in range: ClosedRange<Int>) throws(ConfigError) -> Int {
        let expected = "an integer in \(range.lowerBound)...\(range.upperBound)"
        return try checked(required(int(key, expected), key, expected), key, in: range)
    }

    /// An optional integer within `range`; `why` explains the range, e.g. `one frame period at 60 fps`.
    func optionalInt(_ key: String, in range: ClosedRange<Int>, why: String = "") throws(ConfigError) -> Int? {
        let suffix = why.isEmpty ? "" : " (\(why))"
        guard let value = try int(key, "an integer in \(range.lowerBound)...\(range.upperBound)\(suffix)") else {
            return nil
        }
        return try checked(value, key, in: range, suffix: suffix)
    }

    private func checked(
        _ value: Int,
        _ key: String,
        in range: ClosedRange<Int>,
        suffix: String = ""
    ) throws(ConfigError) -> Int {
        guard range.contains(value) else {
            throw error(.outOfRange, key, "\(value) is out of range \(range.lowerBound)...\(range.upperBound)\(suffix)")
        }
        return value
    }

    /// A required integer from a fixed set.
    func int(_ key: String, oneOf allowed: [Int]) throws(ConfigError) -> Int {
        let list = allowed.map { String($0) }.joined(separator: ", ")
        let value = try required(int(key, "an integer, one of \(list)"), key, "an integer, one of \(list)")
        guard allowed.contains(value) else { throw error(.outOfRange, key, "\(value) is not one of \(list)") }
        return value
    }

    /// A required boolean.
    func bool(_ key: String) throws(ConfigError) -> Bool {
        try required(bool(key, "true or false"), key, "true or false")
    }

    /// An optional word from a fixed set, e.g. a `GPIOBias`.
    func optionalWord<Word: RawRepresentable & CaseIterable>(_ key: String, _: Word.Type) throws(ConfigError) -> Word?
    where Word.RawValue == String {
        let list = Word.allCases.map(\.rawValue).joined(separator: ", ")
        guard let text = try string(key, "a string, one of \(list)") else { return nil }
        guard let word = Word(rawValue: text) else { throw error(.notOneOf, key, "\"\(text)\" is not one of \(list)") }
        return word
    }

    /// An optional list of words from a fixed set, e.g. `["time", "splits"]` (empty allowed).
    func optionalWords<Word: RawRepresentable & CaseIterable>(_ key: String, _: Word.Type) throws(ConfigError) -> [Word]?
    where Word.RawValue == String {
        let list = Word.allCases.map(\.rawValue).joined(separator: ", ")
        guard let value = table[key] else { return nil }
        guard let array = value.array else {
            throw error(.wrongType, key, "expected a list of strings, each one of \(list)")
        }
        var words: [Word] = []
        for item in array {
            guard let text = item.string else { throw error(.wrongType, key, "expected a list of strings, each one of \(list)") }
            guard let word = Word(rawValue: text) else { throw error(.notOneOf, key, "\"\(text)\" is not one of \(list)") }
            words.append(word)
        }
        return words
    }

    /// An optional absolute path (a state directory, a sysfs file); `what` names it for
    /// people, e.g. "directory".
    func optionalAbsolutePath(_ key: String, _ what: String) throws(ConfigError) -> String? {
        guard let text = try string(key, "an absolute \(what) path") else { return nil }
        guard text.hasPrefix("/") else { throw error(.invalidValue, key, "\"\(text)\" is not an absolute path") }
        return text
    }

    /// A required non-empty string of at most `maxLength` characters, each accepted by `isAllowed`.
    /// `expected` describes the accepted shape for people.
    func string(
        _ key: String,
        expected: String,
        maxLength: Int = 256,
        isAllowed: (Character) -> Bool = { _ in true }
    ) throws(ConfigError) -> String {
        let text = try required(string(key, expected), key, expected)
        guard !text.isEmpty, text.count <= maxLength, text.allSatisfy(isAllowed) else {
            throw error(.invalidValue, key, "\"\(text)\" is not valid; expected \(expected)")
        }
        return text
    }
}

extension Character {
    /// Printable ASCII other than space: safe in device paths, ALSA names and chip labels.
    var isVisibleASCII: Bool { isASCII && ("!"..."~").contains(self) }
}
