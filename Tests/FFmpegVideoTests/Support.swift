// SPDX-License-Identifier: Apache-2.0
// Source frames with a known picture, and how far a decoded picture is from its source.

import FFmpegVideo
import Foundation
import GateCore
import GateSim

/// Frames of a moving scene with texture, rendered in memory: a lit gradient, a grid of
/// blocks of fixed noise drifting right, and a bright bar crossing, so every frame differs
/// and the codec has detail to keep.
struct MovingScene {
    let width: Int
    let height: Int
    let fps: Double
    private let noise: [UInt8]

    init(width: Int, height: Int, fps: Double, seed: UInt64 = 7) {
        self.width = width
        self.height = height
        self.fps = fps
        var rng = SplitMix64(seed: seed)
        noise = (0..<(64 * 64)).map { _ in UInt8(truncatingIfNeeded: rng.next() % 48) }
    }

    /// Luma of frame `i`, rows `width` bytes long.
    func luma(_ i: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: width * height)
        let shift = i * 2
        let bar = (i * 6) % width
        for y in 0..<height {
            for x in 0..<width {
                let base = 40 + (x + y) * 120 / (width + height)
                let n = Int(noise[((y / 4) % 64) * 64 + ((x + shift) / 4) % 64])
                var v = base + n
                if abs(x - bar) < 12 { v = 220 }
                out[y * width + x] = UInt8(min(255, v))
            }
        }
        return out
    }

    /// Capture time of frame `i`: whole nanoseconds apart, as a camera's stamps are.
    func time(_ i: Int) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: 10_000_000_000 + Int64(i) * Int64((1e9 / fps).rounded()))
    }
}

/// Peak signal-to-noise ratio of a decoded picture's luma against the source, dB.
func psnr(_ picture: DecodedPicture, _ source: [UInt8], width: Int) -> Double {
    var sum = 0.0
    for y in 0..<picture.height {
        for x in 0..<picture.width {
            let d = Double(picture[x, y]) - Double(source[y * width + x])
            sum += d * d
        }
    }
    let mse = sum / Double(picture.width * picture.height)
    return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
}

/// A fresh temporary directory, removed by the caller.
func temporaryDirectory() throws -> String {
    let dir = NSTemporaryDirectory() + "sprintgate-video-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return dir
}

/// The development footage beside the project, when present.
let sharedClip: String? = {
    var dir = URL(fileURLWithPath: #filePath)
    for _ in 0..<4 { dir.deleteLastPathComponent() }
    let p = dir.appendingPathComponent("shared/footage/sports2d_demo/sports2d_demo_320x180.raw.gz").path
    return FileManager.default.fileExists(atPath: p) ? p : nil
}()

/// Runs a command, returning its standard output, or nil when it cannot run or fails.
func run(_ executable: String, _ arguments: [String]) -> String? {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: executable)
    p.arguments = arguments
    let out = Pipe()
    p.standardOutput = out
    p.standardError = FileHandle.nullDevice
    do { try p.run() } catch { return nil }
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return p.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
}
