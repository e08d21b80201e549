// SPDX-License-Identifier: Apache-2.0
// `sprintgate evaluate`: scores the detector on hand-annotated real footage.

import ArgumentParser
import Detector
import Foundation
import GateCore
import GateSim

struct EvaluateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evaluate",
        abstract: "Score the photo-finish detector on annotated real footage.",
        discussion: """
            Reads every annotation file (*.json with gate_lines) under each DIR and its clip beside it \
            (the annotation's raw_file, or <clip_id>_<W>x<H> with .raw, .raw.gz, .y4m or .y4m.gz), \
            replays the clip once per annotated gate column and scores the detections: a hit is a \
            detection within the crossing's frame range ±1 frame with the right direction; a \
            detection in a no-crossing range or a no_crossing distractor is a false trigger; \
            ambiguous windows are ignored. Prints a table per clip and gate and the total; exits 1 \
            when the total recall is below --min-recall.
            """)

    @Argument(help: "Folders with annotated clips (searched recursively).")
    var dirs: [String]

    @Option(name: .customLong("min-height"),
            help: "Smallest body height that can cross, as a fraction of frame height (as in replay).")
    var minHeight: Double = 0.08

    @Option(help: "What is timed: athlete (the torso) or vehicle (the foremost point).")
    var subject: String = "athlete"

    @Option(name: .customLong("min-recall"), help: "Exit 1 when the total recall is below this (0...1).")
    var minRecall: Double = 0

    @Option(help: "Write debug images (PNG per frame: mask, bodies, trunk, tracks, gate) under this folder.")
    var debug: String?

    @Flag(help: "Print one JSON object instead of the table.")
    var json = false

    func run() throws {
        guard minHeight > 0, minHeight <= 1 else { fail("--min-height \(minHeight) is outside (0, 1]") }
        guard (0...1).contains(minRecall) else { fail("--min-recall \(minRecall) is outside 0...1") }
        guard !dirs.isEmpty else { fail("name at least one folder of annotated clips") }
        let files = dirs.flatMap { annotationFiles(under: $0) }
        guard !files.isEmpty else { fail("\(dirs.joined(separator: ", ")): no annotation files (*.json with gate_lines) found") }
        var rows: [(clip: String, result: FootageGateResult)] = []
        var total = FootageScore()
        var falsePerClip: [String: Int] = [:]
        for path in files {
            let annotation: FootageAnnotation
            do {
                annotation = try JSONDecoder().decode(FootageAnnotation.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
            } catch let e as DecodingError {
                fail("\(path): not a footage annotation (\(describe(e)))")
            } catch {
                fail("\(path): cannot read (\(error.localizedDescription))")
            }
            let clip = clipPath(for: annotation, beside: path)
            var config = DetectorConfig(gateX: 0)
            config.minCrossingHeight = minHeight
            config.subject = crossingSubject(subject)
            let results: [FootageGateResult]
            do {
                results = try evaluateFootage(annotation, clipPath: clip, config: config, debugDirectory: debug)
            } catch {
                fail(error.description)
            }
            for r in results {
                rows.append((annotation.clipID, r))
                total.add(r.score)
                falsePerClip[annotation.clipID, default: 0] += r.score.falseTriggers
            }
        }
        let worstFalse = falsePerClip.values.max() ?? 0
        if json {
            printJSON(rows: rows, total: total, worstFalse: worstFalse)
        } else {
            printTable(rows: rows, total: total, worstFalse: worstFalse)
        }
        if total.recall < minRecall {
            var line = "recall \(fixedPoint(total.recall, digits: 3)) is below --min-recall \(minRecall)\n"
            line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
            throw ExitCode(1)
        }
    }

    /// Annotation files under `dir`, sorted: JSON files that name gate lines.
    private func annotationFiles(under dir: String) -> [String] {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDir), isDir.boolValue else {
            fail("\(dir): no such folder")
        }
        guard let walker = FileManager.default.enumerator(atPath: dir) else { fail("\(dir): cannot list") }
        var found: [String] = []
        for case let rel as String in walker where rel.hasSuffix(".json") {
            let path = (dir as NSString).appendingPathComponent(rel)
            guard let data = FileManager.default.contents(atPath: path),
                  String(decoding: data.prefix(1 << 20), as: UTF8.self).contains("\"gate_lines\"") else { continue }
            found.append(path)
        }
        return found.sorted()
    }

    private func clipPath(for a: FootageAnnotation, beside annotationPath: String) -> String {
        let folder = (annotationPath as NSString).deletingLastPathComponent
        var names: [String] = []
        if let raw = a.rawFile { names.append(raw) }
        let stem = "\(a.clipID)_\(a.width)x\(a.height)"
        names += [".raw.gz", ".raw", ".y4m", ".y4m.gz"].map { stem + $0 }
        for n in names {
            let p = (folder as NSString).appendingPathComponent(n)
            if FileManager.default.fileExists(atPath: p) { return p }
        }
        fail("\(annotationPath): no clip beside it (looked for \(names.joined(separator: ", ")))")
    }

    private func describe(_ e: DecodingError) -> String {
        switch e {
        case .keyNotFound(let k, let c): return "missing key '\(k.stringValue)' at \(path(c.codingPath))"
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c):
            return "\(c.debugDescription) at \(path(c.codingPath + []))"
        @unknown default: return "\(e)"
        }
    }

    private func path(_ keys: [any CodingKey]) -> String {
        keys.isEmpty ? "top level" : keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
    }

    private func printTable(rows: [(clip: String, result: FootageGateResult)], total: FootageScore, worstFalse: Int) {
        print("clip                      gate_x | crossings | hits | recall | false | unannotated | mean_abs_frame_err | missed | false_at")
        for (clip, r) in rows {
            let s = r.score
            print("\(clip.padding(24)) \(pad(String(Int(r.x)), 7)) | \(pad(String(s.crossings), 9)) | \(pad(String(s.hits), 4)) | "
                + "\(pad(fixedPoint(s.recall, digits: 2), 6)) | \(pad(String(s.falseTriggers), 5)) | \(pad(String(s.unannotated), 11)) | "
                + "\(pad(fixedPoint(s.meanAbsFrameError, digits: 2), 18)) | \(s.missedFrames) | \(s.falseFrames)")
        }
        print("total: \(total.hits) of \(total.crossings) crossings, recall \(fixedPoint(total.recall, digits: 3)), "
            + "false triggers \(total.falseTriggers) (at most \(worstFalse) in one clip), unannotated \(total.unannotated), "
            + "mean abs frame error \(fixedPoint(total.meanAbsFrameError, digits: 2))")
    }

    private func printJSON(rows: [(clip: String, result: FootageGateResult)], total: FootageScore, worstFalse: Int) {
        func obj(_ s: FootageScore) -> String {
            "\"crossings\": \(s.crossings), \"hits\": \(s.hits), \"recall\": \(fixedPoint(s.recall, digits: 4)), "
                + "\"false_triggers\": \(s.falseTriggers), \"unannotated\": \(s.unannotated), "
                + "\"mean_abs_frame_error\": \(fixedPoint(s.meanAbsFrameError, digits: 3)), "
                + "\"missed_frames\": \(s.missedFrames), \"false_frames\": \(s.falseFrames)"
        }
        let gates = rows.map { "{\"clip\": \"\($0.clip)\", \"gate_x\": \(Int($0.result.x)), \(obj($0.result.score)), "
            + "\"detections\": [\($0.result.detections.map(\.json).joined(separator: ", "))]}" }
        print("{\"gates\": [\(gates.joined(separator: ", "))], \"total\": {\(obj(total)), \"max_false_triggers_per_clip\": \(worstFalse)}}")
    }
}
