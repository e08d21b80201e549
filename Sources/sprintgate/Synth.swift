// SPDX-License-Identifier: Apache-2.0
// `sprintgate synth`: renders a synthetic sprint scene to a clip with its ground truth.

import ArgumentParser
import GateCore
import GateSim

struct SynthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "synth",
        abstract: "Render a synthetic scene to a mono YUV4MPEG2 clip and print its ground truth.",
        discussion: "Scenes: \(SceneCatalog.all.joined(separator: ", ")).")

    @Option(help: "Scene name.")
    var scene: String = "sprint"

    @Option(help: "Frames per second (30, 60, 120, 240 or any rate up to 1000).")
    var fps: Double = 60

    @Option(help: "Variant: 0 is the plain scene; others vary speed, size, colours and gate position.")
    var variant: Int = 0

    @Option(help: "Output clip (.y4m).")
    var out: String

    @Flag(help: "Print the ground truth as JSON lines.")
    var json = false

    func run() throws {
        guard fps > 0, fps <= 1000 else { fail("--fps \(fps) is outside 0...1000") }
        guard variant >= 0 else { fail("--variant must not be negative") }
        guard let spec = SceneCatalog.scene(scene, fps: fps, variant: variant) else {
            fail("unknown scene '\(scene)'; scenes: \(SceneCatalog.all.joined(separator: ", "))")
        }
        let renderer = SceneRenderer(spec: spec)
        let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: spec.width * spec.height)
        defer { buffer.deallocate() }
        do {
            let writer = try Y4MWriter(path: out, width: spec.width, height: spec.height, fps: fps)
            for i in 0..<spec.frameCount {
                renderer.render(frame: i, into: buffer)
                try writer.write(UnsafeRawBufferPointer(buffer))
            }
            try writer.close()
        } catch {
            fail(error.description)
        }
        let truth = spec.expectedCrossings
        if json {
            for t in truth {
                print("{\"frame\": \(ClipCrossing.fixed(t.time * fps, 3)), \"time\": \(ClipCrossing.fixed(t.time, 6)), \"direction\": \"\(t.direction)\"}")
            }
        } else {
            print("\(out): \(spec.frameCount) frames \(spec.width)x\(spec.height) at \(ClipCrossing.fixed(fps, 2)) fps, gate x \(ClipCrossing.fixed(spec.gateX, 1))")
            if truth.isEmpty { print("no crossing expected") }
            for t in truth {
                print("true crossing: time \(ClipCrossing.fixed(t.time, 6)) s, frame \(ClipCrossing.fixed(t.time * fps, 3)), \(t.direction)")
            }
            if spec.rowReadout > 0 {
                print("rolling shutter: replay with --row-time-us \(ClipCrossing.fixed(spec.rowReadout * 1e6, 3))")
            }
        }
    }
}
