// SPDX-License-Identifier: Apache-2.0
// `sprintgate replay`: runs the detector over a recorded clip and prints its crossings.

import ArgumentParser
import Detector
import GateCore
import GateSim

struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Run the photo-finish detector over a clip and print the crossings.",
        discussion: """
            FILE is a YUV4MPEG2 clip (.y4m, mono or 4:2:0, as ffmpeg writes with -pix_fmt gray or \
            yuv420p) or headerless 8-bit gray frames (.raw/.gray, with --size and --fps). \
            Distances are input pixels; heights are fractions of the frame height.
            """)

    @Argument(help: "The clip to replay.")
    var file: String

    @Option(name: .customLong("gate-x"), help: "Gate line column in input pixels.")
    var gateX: Double

    @Option(help: "Frame size WxH of headerless gray frames.")
    var size: String?

    @Option(help: "Frame rate; required for headerless frames, overrides the clip header.")
    var fps: Double?

    @Option(name: .customLong("min-height"), help: "Smallest body height that can cross, as a fraction of frame height.")
    var minHeight: Double = 0.33

    @Option(help: "What is timed: athlete (the torso) or vehicle (the foremost point).")
    var subject: String = "athlete"

    @Option(name: .customLong("min-velocity"), help: "Slowest crossing speed in input pixels per second (default: a fifth of the smallest body height per second).")
    var minVelocity: Double?

    @Option(name: .customLong("row-time-us"), help: "Rolling-shutter readout time per input row in microseconds (0: global shutter).")
    var rowTimeUs: Double = 0

    @Flag(help: "One JSON object per line per crossing.")
    var json = false

    @Option(help: "Write debug images (PNG per frame: mask, bodies, trunk, tracks, gate) into this folder.")
    var debug: String?

    func run() throws {
        var parsedSize: (width: Int, height: Int)?
        if let size {
            let parts = size.lowercased().split(separator: "x")
            guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]) else {
                fail("--size '\(size)' is not WIDTHxHEIGHT, e.g. 640x480")
            }
            parsedSize = (w, h)
        }
        guard (0...1).contains(minHeight) else { fail("--min-height \(minHeight) is outside 0...1") }
        guard rowTimeUs >= 0, rowTimeUs < 1000 else { fail("--row-time-us \(rowTimeUs) is outside 0...1000") }
        let reader: ClipReader
        do { reader = try ClipReader(path: file, size: parsedSize, fps: fps) } catch { fail(error.description) }
        guard gateX >= 0, gateX < Double(reader.width) else {
            fail("--gate-x \(gateX) is outside the frame (0..<\(reader.width))")
        }
        var config = DetectorConfig(gateX: gateX)
        config.minCrossingHeight = minHeight
        config.rowReadout = .microseconds(rowTimeUs)
        config.subject = crossingSubject(subject)
        let geometry = WorkGeometry(inputWidth: reader.width, inputHeight: reader.height, shortSide: config.workShortSide)
        if let minVelocity {
            guard minVelocity >= 0 else { fail("--min-velocity must not be negative") }
            config.minVelocity = minVelocity / Double(geometry.scale)
        }
        if !json {
            print("   frame |    time_s | direction      | ±ms   | height")
        }
        do {
            let dump = try debug.map { (d: String) throws(ClipError) in try DetectorDebugDump(directory: d) }
            _ = try replayClip(reader, config: config, debug: dump) { c in
                if json {
                    print(c.json)
                } else {
                    print("\(pad(ClipCrossing.fixed(c.frame, 2), 8)) | \(pad(ClipCrossing.fixed(c.time, 4), 9)) | "
                        + "\(c.direction.description.padding(14)) | \(pad(ClipCrossing.fixed(c.uncertaintyMs, 2), 5)) | "
                        + "\(ClipCrossing.fixed(c.blobHeight, 2))")
                }
            }
        } catch {
            fail(error.description)
        }
    }
}

func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : String(repeating: " ", count: n - s.count) + s }

extension String {
    func padding(_ n: Int) -> String { count >= n ? self : self + String(repeating: " ", count: n - count) }
}
