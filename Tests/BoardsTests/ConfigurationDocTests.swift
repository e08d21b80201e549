// SPDX-License-Identifier: Apache-2.0
// docs/configuration.md documents exactly the keys the board file and settings file readers accept.

import Foundation
import GateConfig
import GateCore
import Testing

/// The keys docs/configuration.md documents, read from its layout: a part per file kind
/// (a `## ` heading), a `### [table]` heading per table (`### Top level` for the keys
/// outside any table), and in each table's summary (a Markdown table whose header row starts
/// `| Key |`) one row per key, the key in backticks in the first cell.
struct DocumentedKeys {
    /// Keys by part heading, then by table name ("" for the top level).
    private(set) var parts: [String: [String: Set<String>]] = [:]

    init(markdown: String) {
        var part: String?
        var table: String?
        var inCode = false
        var inKeyTable = false
        for raw in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("```") {
                inCode.toggle()
                continue
            }
            if inCode { continue }
            if !line.hasPrefix("|") { inKeyTable = false }
            if line.hasPrefix("# ") || line.hasPrefix("## ") {
                part = line.hasPrefix("## ") ? String(line.dropFirst(3)) : nil
                table = nil
            } else if line.hasPrefix("### ") {
                table = Self.tableName(heading: String(line.dropFirst(4)))
            } else if line.hasPrefix("| Key |") {
                inKeyTable = true
            } else if inKeyTable, let part, let table, let key = Self.key(row: line) {
                parts[part, default: [:]][table, default: []].insert(key)
            }
        }
    }

    /// The table a `### ` heading names: `[camera]` is `camera`, `Top level` is "", and
    /// other headings name none. `&lt;` and `&gt;` stand for `<` and `>`.
    static func tableName(heading: String) -> String? {
        let text = heading.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
        if text == "Top level" { return "" }
        guard text.count > 2, text.hasPrefix("["), text.hasSuffix("]") else { return nil }
        return String(text.dropFirst().dropLast())
    }

    /// The key of a summary row `| \`name\` | ... |`, nil for any other line.
    static func key(row: String) -> String? {
        let cells = row.split(separator: "|", omittingEmptySubsequences: false)
        guard cells.count > 2 else { return nil }
        let first = cells[1].trimmingCharacters(in: .whitespaces)
        guard first.count > 2, first.hasPrefix("`"), first.hasSuffix("`") else { return nil }
        let name = first.dropFirst().dropLast()
        guard !name.contains("`") else { return nil }
        return String(name)
    }

    /// The tables of the part whose heading starts with `prefix`, nil if there is none.
    func part(startingWith prefix: String) -> [String: Set<String>]? {
        parts.first { $0.key.hasPrefix(prefix) }?.value
    }
}

@Suite("Configuration reference")
struct ConfigurationDocTests {
    static let doc = Repo.root.appendingPathComponent("docs/configuration.md")

    static func documented() throws -> DocumentedKeys {
        DocumentedKeys(markdown: try String(contentsOf: doc, encoding: .utf8))
    }

    /// `[name]` for people, `top level` for the keys outside any table.
    static func label(_ table: String) -> String { table.isEmpty ? "top level" : "[\(table)]" }

    /// Records an issue for each key accepted but not documented in docs/configuration.md, and
    /// each key or table documented there but not accepted.
    static func compare(accepted: KnownKeys, documented: [String: Set<String>], part: String) {
        let acceptedByTable = accepted.keysByTable
        for (table, keys) in acceptedByTable.sorted(by: { $0.key < $1.key }) {
            let written = documented[table] ?? []
            for key in keys.sorted() where !written.contains(key) {
                Issue.record("\(part): \(label(table)) \(key) is accepted but not documented")
            }
        }
        for (table, keys) in documented.sorted(by: { $0.key < $1.key }) {
            guard let known = acceptedByTable[table] else {
                Issue.record("\(part): the doc documents \(label(table)), which the reader does not accept")
                continue
            }
            for key in keys.sorted() where !known.contains(key) {
                Issue.record("\(part): the doc documents \(label(table)) \(key), which the reader does not accept")
            }
        }
    }

    @Test("documents every key a board file accepts, and no other")
    func boardFileKeys() throws {
        let doc = try Self.documented()
        let tables = try #require(doc.part(startingWith: "Board files"), "no \"## Board files\" part")
        Self.compare(accepted: BoardConfig.knownKeys, documented: tables, part: "board files")
    }

    @Test("documents every key the gate settings file accepts, and no other")
    func gateSettingsKeys() throws {
        let doc = try Self.documented()
        let tables = try #require(doc.part(startingWith: "Gate settings"), "no \"## Gate settings\" part")
        Self.compare(accepted: GateSettings.knownKeys, documented: tables, part: "gate settings")
    }

    @Test("the parser reads headings and summary rows as the document writes them")
    func parser() {
        let doc = DocumentedKeys(markdown: """
            ## Board files: `boards/*.toml`
            ### [gpio.&lt;role&gt;]
            | Role | Direction |
            | --- | --- |
            | `start-button` | input |

            | Key | Type |
            | --- | --- |
            | `chip` | string |
            | `line` | string |

            ```toml
            # a comment, not a heading
            | `not_a_key` | in a code block |
            ```
            - `bias`: described, not a summary row
            ## Gate settings: `gate.toml`
            ### Top level
            | Key | Type |
            | --- | --- |
            | `board` | string |
            """)
        let boardTables: [String: Set<String>] = ["gpio.<role>": ["chip", "line"]]
        let gateTables: [String: Set<String>] = ["": ["board"]]
        #expect(doc.part(startingWith: "Board files") == boardTables)
        #expect(doc.part(startingWith: "Gate settings") == gateTables)
    }

    /// A small valid board file with `extra` added at the top (`table` empty) or in `table`.
    static func board(with extra: String, in table: String) -> String {
        let sections: [(name: String, body: [String])] = [
            ("board", ["name = \"Test board\""]),
            ("camera", ["device = \"/dev/video0\"", "format = \"YUYV\"", "width = 320", "height = 240", "fps = 60"]),
            ("audio", ["device = \"default\""]),
            ("gpio.start-button", ["chip = \"pinctrl-bcm2711\"", "line = \"GPIO17\"", "active_low = true"]),
            ("peer", ["group = \"sprintgate\""]),
            ("gps_receiver", ["device = \"usb\""]),
        ]
        var lines = table.isEmpty ? [extra] : []
        for section in sections {
            lines.append("[\(section.name)]")
            lines += section.body
            if section.name == table { lines.append(extra) }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test("the board file reader refuses an unknown key with the listed keys")
    func boardReaderUsesTheList() throws {
        _ = try BoardConfig(toml: Self.board(with: "", in: ""), file: "test.toml")
        let listing = BoardConfig.knownKeys
        var tables: [String] = []
        for table in listing.tables {
            let top = String(table.name.prefix { $0 != "." })
            if !tables.contains(top) { tables.append(top) }
        }
        var expected: [(table: String, allowed: String)] = [("", "allowed tables: " + tables.joined(separator: ", "))]
        for table in listing.tables {
            let name = table.name.replacingOccurrences(of: "<role>", with: "start-button")
            expected.append((name, "allowed keys: " + table.keys.joined(separator: ", ")))
        }
        for (table, allowed) in expected {
            let keyPath = table.isEmpty ? "not_a_key" : "\(table).not_a_key"
            do {
                _ = try BoardConfig(toml: Self.board(with: "not_a_key = 1", in: table), file: "test.toml")
                Issue.record("accepted \(keyPath)")
            } catch {
                #expect(error.code == .unknownKey && error.keyPath == keyPath, "\(error.description)")
                #expect(error.message == "unknown key; \(allowed)", "\(error.description)")
            }
        }
    }

    @Test("the gate settings reader refuses an unknown key with the listed keys")
    func gateReaderUsesTheList() {
        let board = Repo.boards.appendingPathComponent("generic-usb.toml").path
        let listing = GateSettings.knownKeys
        let tables = listing.tables.map(\.name).filter { !$0.isEmpty }
        for table in listing.tables {
            let body = table.name.isEmpty ? "not_a_key = 1\n" : "[\(table.name)]\nnot_a_key = 1\n"
            let keyPath = table.name.isEmpty ? "not_a_key" : "\(table.name).not_a_key"
            let allowed = table.keys + (table.name.isEmpty ? tables : [])
            do {
                _ = try GateSettings(toml: "board = \"\(board)\"\n" + body, file: "gate.toml")
                Issue.record("accepted \(keyPath)")
            } catch {
                #expect(error.code == .unknownKey && error.keyPath == keyPath, "\(error.description)")
                let message = "unknown key; allowed keys: " + allowed.joined(separator: ", ")
                #expect(error.message == message, "\(error.description)")
            }
        }
    }
}
