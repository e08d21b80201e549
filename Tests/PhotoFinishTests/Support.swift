// SPDX-License-Identifier: Apache-2.0
// Synthetic frames for the photo-finish tests: a dark bar crossing a light scene.

import GateCore
import PhotoFinish

/// A light background with a dark vertical bar whose leading (right) edge moves at
/// `speed` pixels per second and reaches `gateX` at `crossingSeconds`; frames in any of
/// the four pixel formats, with padded rows.
struct BarScene {
    var width = 320
    var height = 240
    var gateX = 160.0
    var fps = 100.0
    var speed = 400.0
    var barWidth = 60.0
    var crossingSeconds = 1.0
    var format = PixelFormat.gray8
    var padding = 16

    var bytesPerRow: Int { width * format.lumaStep + padding }
    var bufferSize: Int { bytesPerRow * height + (format == .gray8 || format == .yuyv ? 0 : bytesPerRow * height) }

    /// Leading edge of the bar at `t` seconds.
    func edge(at t: Double) -> Double { gateX + (t - crossingSeconds) * speed }

    /// Fills `buffer` with the frame at `t`: the luma is 40 inside the bar, 200 outside;
    /// chroma bytes are 128.
    func render(at t: Double, into buffer: UnsafeMutablePointer<UInt8>) {
        buffer.initialize(repeating: 128, count: bufferSize)
        let e = edge(at: t)
        for y in 0..<height {
            for x in 0..<width {
                let inBar = Double(x) + 0.5 <= e && Double(x) + 0.5 > e - barWidth
                buffer[y * bytesPerRow + x * format.lumaStep] = inBar ? 40 : 200
            }
        }
    }

    var config: PhotoFinishConfig { PhotoFinishConfig(frameWidth: width, frameHeight: height, gateX: gateX, fps: fps) }

    func crossing(at t: Double, sequence: UInt64 = 0) -> Crossing {
        Crossing(time: MonotonicInstant(seconds: t), uncertainty: .microseconds(200), direction: .leftToRight,
                 blobHeight: 0.8, speedWorkPixelsPerSecond: speed, reportedAtSequence: sequence)
    }
}

/// Feeds frames of `scene` at the times `times` (seconds) to `recorder`, reporting the
/// crossing `reportDelay` frames after it happens, and returns the captures finished.
func feed(_ scene: BarScene, times: [Double], to recorder: PhotoFinishRecorder, reportAfterFrames: Int = 3,
          crossings: [Double]? = nil) -> [PhotoFinishCapture] {
    let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: scene.bufferSize)
    defer { buffer.deallocate() }
    var out: [PhotoFinishCapture] = []
    var reported = Set<Int>()
    let crossingTimes = crossings ?? [scene.crossingSeconds]
    var framesAfter = [Int](repeating: 0, count: crossingTimes.count)
    for t in times {
        scene.render(at: t, into: buffer)
        let view = FrameView(base: UnsafeRawPointer(buffer), width: scene.width, height: scene.height,
                             bytesPerRow: scene.bytesPerRow, format: scene.format, sequence: UInt64((t * scene.fps).rounded()),
                             timestamp: MonotonicInstant(seconds: t))
        recorder.record(view)
        for (j, c) in crossingTimes.enumerated() where t >= c && !reported.contains(j) {
            framesAfter[j] += 1
            if framesAfter[j] >= reportAfterFrames {
                reported.insert(j)
                recorder.crossingReported(scene.crossing(at: c, sequence: UInt64((t * scene.fps).rounded())))
            }
        }
        while let c = recorder.nextFinished() { out.append(c) }
    }
    return out
}

/// Frame times from `start` to `end` seconds at `fps`, leaving out the frames in `drop`.
func frameTimes(from start: Double, to end: Double, fps: Double, drop: Set<Int> = []) -> [Double] {
    var times: [Double] = []
    var i = 0
    while start + Double(i) / fps <= end {
        if !drop.contains(i) { times.append(start + Double(i) / fps) }
        i += 1
    }
    return times
}
