// SPDX-License-Identifier: Apache-2.0
// Clip files through the reader and the replay command: formats, timing and bad input.

import Foundation
import GateCore
import GateSim
import Testing

/// A scratch directory removed when the value goes away.
final class ScratchDirectory {
    let path: String
    init() {
        path = NSTemporaryDirectory() + "sprintgate-test-" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
    func file(_ name: String) -> String { path + "/" + name }
}

/// Writes a scene as a clip: mono y4m, 4:2:0 y4m (chroma planes filled) or raw gray.
func writeClip(_ spec: SceneSpec, to path: String, layout: String) throws {
    let renderer = SceneRenderer(spec: spec)
    let w = spec.width, h = spec.height
    let luma = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: w * h)
    defer { luma.deallocate() }
    var out = Data()
    let fpsText = "\(Int(spec.fps)):1"
    switch layout {
    case "mono": out.append(contentsOf: Array("YUV4MPEG2 W\(w) H\(h) F\(fpsText) Ip A1:1 Cmono\n".utf8))
    case "420": out.append(contentsOf: Array("YUV4MPEG2 W\(w) H\(h) F\(fpsText) Ip A1:1 C420jpeg XYSCSS=420JPEG\n".utf8))
    default: break
    }
    for i in 0..<spec.frameCount {
        renderer.render(frame: i, into: luma)
        if layout != "raw" { out.append(contentsOf: Array("FRAME\n".utf8)) }
        out.append(contentsOf: Array(luma))
        if layout == "420" { out.append(Data(repeating: UInt8(i % 200), count: 2 * (w / 2) * (h / 2))) }
    }
    try out.write(to: URL(fileURLWithPath: path))
}

@Suite("Clip replay")
struct ClipReplayTests {
    @Test("mono y4m, 4:2:0 y4m and raw gray clips give the scene's crossing")
    func layouts() throws {
        let dir = ScratchDirectory()
        let spec = try #require(SceneCatalog.scene("sprint", fps: 60, variant: 1))
        let truth = try #require(spec.expectedCrossings.first)
        var results: [[ClipCrossing]] = []
        for layout in ["mono", "420", "raw"] {
            let path = dir.file("clip.\(layout == "raw" ? "raw" : "y4m")")
            try writeClip(spec, to: path, layout: layout)
            let reader = try ClipReader(path: path, size: layout == "raw" ? (spec.width, spec.height) : nil,
                                        fps: layout == "raw" ? spec.fps : nil)
            #expect(reader.width == spec.width && reader.height == spec.height && reader.fps == spec.fps)
            let found = try replayClip(reader, config: detectorConfig(for: spec))
            #expect(reader.framesRead == spec.frameCount)
            #expect(found.count == 1)
            if let c = found.first {
                #expect(abs(c.time - truth.time) < 0.004)
                #expect(abs(c.frame - truth.time * spec.fps) < 0.25)
                #expect(c.direction == .leftToRight)
            }
            results.append(found)
        }
        #expect(results[0] == results[1] && results[1] == results[2])
    }

    @Test("bad clips give one clear error naming the file")
    func badClips() throws {
        let dir = ScratchDirectory()
        let spec = try #require(SceneCatalog.scene("sprint", fps: 30))
        let good = dir.file("good.y4m")
        try writeClip(spec, to: good, layout: "mono")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: good))

        func error(for data: Data, name: String, size: (Int, Int)? = nil, fps: Double? = nil) -> String? {
            let path = dir.file(name)
            try? data.write(to: URL(fileURLWithPath: path))
            do {
                let reader = try ClipReader(path: path, size: size, fps: fps)
                _ = try replayClip(reader, config: detectorConfig(for: spec))
                return nil
            } catch {
                return error.description
            }
        }
        let truncated = error(for: bytes.prefix(bytes.count - 1000), name: "cut.y4m")
        #expect(truncated?.contains("truncated") == true, "\(truncated ?? "no error")")
        #expect(truncated?.contains("cut.y4m") == true)
        let header = error(for: Data("YUV4MPEG2 W0 H10 F30:1 Cmono\nFRAME\n".utf8), name: "zero.y4m")
        #expect(header?.contains("bad frame size") == true)
        let colour = error(for: Data("YUV4MPEG2 W8 H8 F30:1 C411\n".utf8), name: "c411.y4m")
        #expect(colour?.contains("not supported") == true)
        let rate = error(for: Data("YUV4MPEG2 W8 H8 Fx:1 Cmono\n".utf8), name: "rate.y4m")
        #expect(rate?.contains("frame rate") == true)
        let noSig = error(for: Data("GIF89a".utf8), name: "picture.y4m")
        #expect(noSig?.contains("not a YUV4MPEG2") == true)
        let empty = error(for: Data("YUV4MPEG2 W8 H8 F30:1 Cmono\n".utf8), name: "empty.y4m")
        #expect(empty?.contains("no frames") == true)
        let garbage = error(for: bytes.prefix(100) + Data("JUNK\n".utf8) + bytes.dropFirst(100), name: "junk.y4m")
        #expect(garbage != nil)
        let rawNoSize = error(for: Data(count: 64), name: "frames.raw")
        #expect(rawNoSize?.contains("--size") == true)
        let rawPartial = error(for: Data(count: 100), name: "part.gray", size: (8, 8), fps: 30)
        #expect(rawPartial?.contains("truncated") == true)
        let missing = error(for: Data(), name: "unused.y4m")
        #expect(missing != nil)
        do {
            _ = try ClipReader(path: dir.file("does-not-exist.y4m"))
            Issue.record("opening a missing file succeeded")
        } catch {
            #expect(error.description.contains("cannot open"))
        }
    }
}
