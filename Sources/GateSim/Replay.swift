// SPDX-License-Identifier: Apache-2.0
// Runs the detector over a clip or a synthetic scene and reports crossings on the clip's timeline.

public import GateCore
public import Detector

/// A crossing found in a clip, placed on the clip's own timeline.
public struct ClipCrossing: Sendable, Hashable {
    /// Fractional frame index of the crossing instant (frame 0 is the first frame).
    public var frame: Double
    /// Seconds from the first frame.
    public var time: Double
    public var direction: CrossingDirection
    public var uncertaintyMs: Double
    public var blobHeight: Double

    public init(frame: Double, time: Double, direction: CrossingDirection, uncertaintyMs: Double, blobHeight: Double) {
        self.frame = frame
        self.time = time
        self.direction = direction
        self.uncertaintyMs = uncertaintyMs
        self.blobHeight = blobHeight
    }

    /// One line of JSON with a fixed key order.
    public var json: String {
        "{\"frame\": \(Self.fixed(frame, 3)), \"time\": \(Self.fixed(time, 6)), \"direction\": \"\(direction)\", "
            + "\"uncertainty_ms\": \(Self.fixed(uncertaintyMs, 3)), \"blob_height\": \(Self.fixed(blobHeight, 3))}"
    }

    /// Formats `v` with `digits` decimals without Foundation.
    public static func fixed(_ v: Double, _ digits: Int) -> String { fixedPoint(v, digits: digits) }
}

/// Feeds frames to a `PhotoFinishDetector` with timestamps `i / fps` and collects crossings.
public struct ClipRunner: ~Copyable {
    public private(set) var detector: PhotoFinishDetector
    public let fps: Double
    public let width: Int
    public let height: Int
    public private(set) var crossings: [ClipCrossing] = []
    public private(set) var frames = 0
    public private(set) var lastStatus = GateStatus()
    private var result = DetectionSet()

    public init(config: DetectorConfig, width: Int, height: Int, fps: Double) {
        detector = PhotoFinishDetector(config: config, inputWidth: width, inputHeight: height)
        self.fps = fps
        self.width = width
        self.height = height
        crossings.reserveCapacity(64)
    }

    /// Timestamp of frame `i` on the clip's timeline.
    public func timestamp(ofFrame i: Int) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: Int64((Double(i) / fps * 1e9).rounded()))
    }

    /// Processes one gray frame; returns the crossing it reported, if any.
    @discardableResult
    public mutating func feed(_ luma: UnsafeRawPointer) -> ClipCrossing? {
        let view = FrameView(base: luma, width: width, height: height, bytesPerRow: width, format: .gray8,
                             sequence: UInt64(frames), timestamp: timestamp(ofFrame: frames))
        detector.process(view, into: &result)
        frames += 1
        lastStatus = result.status
        guard let c = result.crossing else { return nil }
        let t = c.time.seconds
        let cc = ClipCrossing(frame: t * fps, time: t, direction: c.direction,
                              uncertaintyMs: c.uncertainty.milliseconds, blobHeight: c.blobHeight)
        crossings.append(cc)
        return cc
    }
}

/// Replays a clip file through the detector; with `debug`, writes a debug image per frame.
public func replayClip(_ reader: ClipReader, config: DetectorConfig, debug: DetectorDebugDump? = nil,
                       onCrossing: (ClipCrossing) -> Void = { _ in }) throws(ClipError) -> [ClipCrossing] {
    var runner = ClipRunner(config: config, width: reader.width, height: reader.height, fps: reader.fps)
    while try reader.next() {
        let c = runner.feed(UnsafeRawPointer(reader.luma.baseAddress!))
        if let debug { try debug.write(frame: runner.frames - 1, detector: runner.detector, crossed: c != nil) }
        if let c { onCrossing(c) }
    }
    guard reader.framesRead > 0 else { throw ClipError("\(reader.path): no frames") }
    return runner.crossings
}

/// Detector settings for a synthetic scene: the gate line and the camera's rolling shutter.
public func detectorConfig(for spec: SceneSpec) -> DetectorConfig {
    var c = DetectorConfig(gateX: spec.gateX)
    c.rowReadout = .seconds(spec.rowReadout)
    return c
}

/// Renders `spec` frame by frame and runs the detector over it.
public func replayScene(_ spec: SceneSpec, config: DetectorConfig? = nil) -> [ClipCrossing] {
    let renderer = SceneRenderer(spec: spec)
    var runner = ClipRunner(config: config ?? detectorConfig(for: spec), width: spec.width, height: spec.height, fps: spec.fps)
    let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: spec.width * spec.height)
    defer { buffer.deallocate() }
    for i in 0..<spec.frameCount {
        renderer.render(frame: i, into: buffer)
        runner.feed(UnsafeRawPointer(buffer.baseAddress!))
    }
    return runner.crossings
}
