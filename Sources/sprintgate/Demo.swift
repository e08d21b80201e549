// SPDX-License-Identifier: Apache-2.0
// `sprintgate demo`: the built-in demo clip through the detector, with its crossings.

import ArgumentParser
import Detector
import GateCore
import GateSim

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the detector on the built-in demo clip (two sprinters, 120 fps) and print the crossings.")

    @Flag(help: "One JSON object per line per crossing.")
    var json = false

    func run() throws {
        // The demo clip is rendered from its scene description, so it ships inside the
        // binary at no size cost and is the same on every machine.
        guard let spec = SceneCatalog.scene("two-runners", fps: 120, variant: 3) else { fail("demo scene missing") }
        let found = replayScene(spec)
        if json {
            for c in found { print(c.json) }
            return
        }
        print("SprintGate demo: \(spec.frameCount) frames \(spec.width)x\(spec.height) at \(Int(spec.fps)) fps, gate line at x=\(ClipCrossing.fixed(spec.gateX, 1))")
        print("")
        print("   frame |    time_s | direction      | ±ms   | true_s    | error_ms")
        let truth = spec.expectedCrossings
        for c in found {
            let t = truth.min { abs($0.time - c.time) < abs($1.time - c.time) }
            let trueText = t.map { ClipCrossing.fixed($0.time, 4) } ?? "-"
            let errText = t.map { ClipCrossing.fixed((c.time - $0.time) * 1000, 2) } ?? "-"
            print("\(pad(ClipCrossing.fixed(c.frame, 2), 8)) | \(pad(ClipCrossing.fixed(c.time, 4), 9)) | "
                + "\(c.direction.description.padding(14)) | \(pad(ClipCrossing.fixed(c.uncertaintyMs, 2), 5)) | "
                + "\(trueText.padding(9)) | \(pad(errText, 8))")
        }
        print("")
        print("\(found.count) crossing(s) detected, \(truth.count) expected.")
    }
}
