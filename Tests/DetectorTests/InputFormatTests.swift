// SPDX-License-Identifier: Apache-2.0
// The detector reads the luma of gray, YUYV, NV12 and YU12 frames alike.

import Detector
import GateCore
import GateSim
import Testing

@Suite("Input formats")
struct InputFormatTests {
    /// Runs the sprint scene with frames packed as `format`, chroma filled with a pattern
    /// that would disturb the result if it were read as luma.
    func crossings(format: PixelFormat, rowPadding: Int) throws -> [Crossing] {
        let spec = try #require(SceneCatalog.scene("sprint", fps: 60, variant: 2))
        let w = spec.width, h = spec.height
        let renderer = SceneRenderer(spec: spec)
        let luma = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: w * h)
        defer { luma.deallocate() }
        let stride = w * format.lumaStep + rowPadding
        let packed = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: stride * h * 2)
        defer { packed.deallocate() }
        var detector = PhotoFinishDetector(config: detectorConfig(for: spec), inputWidth: w, inputHeight: h)
        var result = DetectionSet()
        var found: [Crossing] = []
        for i in 0..<spec.frameCount {
            renderer.render(frame: i, into: luma)
            for k in 0..<packed.count { packed[k] = UInt8(truncatingIfNeeded: k &* 37 &+ i) }
            for y in 0..<h {
                for x in 0..<w { packed[y * stride + x * format.lumaStep] = luma[y * w + x] }
            }
            let view = FrameView(base: UnsafeRawPointer(packed.baseAddress!), width: w, height: h, bytesPerRow: stride,
                                 format: format, sequence: UInt64(i),
                                 timestamp: MonotonicInstant(nanoseconds: Int64(i) * 16_666_667))
            detector.process(view, into: &result)
            if let c = result.crossing { found.append(c) }
        }
        return found
    }

    @Test("YUYV, NV12, YU12 and padded rows give the same crossing as gray")
    func sameResult() throws {
        let gray = try crossings(format: .gray8, rowPadding: 0)
        #expect(gray.count == 1)
        for (format, pad) in [(PixelFormat.yuyv, 0), (.nv12, 0), (.yu12, 0), (.gray8, 64), (.yuyv, 32)] {
            let other = try crossings(format: format, rowPadding: pad)
            #expect(other == gray, "\(format) with \(pad) bytes of row padding")
        }
    }

    @Test("work geometry keeps the short side at 160 pixels or more with an integer factor")
    func geometry() {
        let g = WorkGeometry(inputWidth: 568, inputHeight: 320, shortSide: 160)
        #expect(g.scale == 2 && g.width == 284 && g.height == 160)
        let portrait = WorkGeometry(inputWidth: 320, inputHeight: 568, shortSide: 160)
        #expect(portrait.width == 160 && portrait.height == 284)
        let vga = WorkGeometry(inputWidth: 640, inputHeight: 480, shortSide: 160)
        #expect(vga.scale == 3 && vga.width == 213 && vga.height == 160)
        let small = WorkGeometry(inputWidth: 200, inputHeight: 120, shortSide: 160)
        #expect(small.scale == 1 && small.width == 200)
        #expect(vga.inputRow(ofWorkRow: 10) == 31)
    }
}
