// SPDX-License-Identifier: Apache-2.0
// Every case under Tests/Replays replays to its golden output (the gpsd regression model).

import Foundation
import GateSim
import Testing

@Suite("Replay cases")
struct ReplayCaseTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Replays")

    static var cases: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []).sorted()
    }

    @Test("there are cases for every start type, solo laps, a false start and a lost camera")
    func coverage() {
        #expect(Self.cases.count >= 8)
    }

    @Test("each case matches its .chk; rebuild with scripts/regress -b and say why", arguments: Self.cases)
    func golden(name: String) throws {
        let dir = Self.root.appendingPathComponent(name)
        let text = try String(contentsOf: dir.appendingPathComponent("case.log"), encoding: .utf8)
        let golden = try String(contentsOf: dir.appendingPathComponent("case.log.chk"), encoding: .utf8)
        let c = try ReplayCase(text: text, name: name)
        let output = c.run().joined(separator: "\n") + "\n"
        let expected = golden.split(separator: "\n").map(String.init)
        let actual = output.split(separator: "\n").map(String.init)
        #expect(actual == expected, "\(name): differs from its .chk (run scripts/regress -s \(dir.path) for a diff)")
    }
}
