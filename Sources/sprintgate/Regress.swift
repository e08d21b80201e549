// SPDX-License-Identifier: Apache-2.0
// `sprintgate regress`: replays the cases under Tests/Replays against their golden outputs.

import ArgumentParser
import Foundation
import GateSim

struct RegressCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "regress",
        abstract: "Replay cases (case.log) through the gate loop and compare with case.log.chk.",
        discussion: "A case directory holds case.log; its golden output is case.log.chk. A missing .chk fails a check.")

    @Flag(name: .customShort("s"), help: "Check: compare each case with its .chk (default).")
    var check = false

    @Flag(name: .customShort("b"), help: "Build: rewrite each case's .chk from the current code.")
    var build = false

    @Flag(name: .customShort("v"), help: "View: print each case's output.")
    var view = false

    @Argument(help: "Case directories (default: every directory under Tests/Replays).")
    var cases: [String] = []

    func run() throws {
        let fm = FileManager.default
        var dirs = cases
        if dirs.isEmpty {
            let root = "Tests/Replays"
            let names = (try? fm.contentsOfDirectory(atPath: root)) ?? []
            dirs = names.sorted().map { root + "/" + $0 }.filter { fm.fileExists(atPath: $0 + "/case.log") }
            guard !dirs.isEmpty else { fail("no cases under \(root) (run from the repository root)") }
        }
        var failed = 0
        for dir in dirs {
            let logPath = dir + "/case.log", chkPath = logPath + ".chk"
            guard let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { fail("\(logPath): cannot read") }
            let c: ReplayCase
            do { c = try ReplayCase(text: text, name: logPath) } catch { fail(error.description) }
            let output = c.run().joined(separator: "\n") + "\n"
            if view { print("== \(dir)\n\(output)", terminator: "") }
            if build {
                do { try output.write(toFile: chkPath, atomically: true, encoding: .utf8) } catch { fail("\(chkPath): \(error)") }
                print("built \(chkPath)")
                continue
            }
            if view && !check { continue }
            guard let golden = try? String(contentsOfFile: chkPath, encoding: .utf8) else {
                print("FAIL \(dir): \(chkPath) is missing (build it with -b and say why in the commit)")
                failed += 1
                continue
            }
            if golden == output {
                print("ok   \(dir)")
            } else {
                failed += 1
                print("FAIL \(dir)")
                printDiff(expected: golden, actual: output)
            }
        }
        if failed > 0 {
            print("\(failed) of \(dirs.count) case(s) differ")
            throw ExitCode(1)
        }
    }

    /// A line diff: lines only in the golden file with '-', only in the output with '+'.
    func printDiff(expected: String, actual: String) {
        let a = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let b = actual.split(separator: "\n", omittingEmptySubsequences: false)
        // Longest common subsequence table, enough for files of a few hundred lines.
        var lcs = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in stride(from: a.count - 1, through: 0, by: -1) {
            for j in stride(from: b.count - 1, through: 0, by: -1) {
                lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : max(lcs[i + 1][j], lcs[i][j + 1])
            }
        }
        var i = 0, j = 0
        while i < a.count || j < b.count {
            if i < a.count && j < b.count && a[i] == b[j] { i += 1; j += 1 }
            else if j < b.count && (i == a.count || lcs[i][j + 1] >= lcs[i + 1][j]) { print("+ \(b[j])"); j += 1 }
            else { print("- \(a[i])"); i += 1 }
        }
    }
}
