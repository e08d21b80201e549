// SPDX-License-Identifier: Apache-2.0
// The page's camera view: the loop's `FramePreview` tap, encoded to JPEG on its own thread
// while somebody watches.

public import Engine
import Foundation
public import GateCore
import LinuxHardware
public import Logging
public import PhotoFinish
import Synchronization
import WebUI

/// Encodes the pictures the loop's `FramePreview` copies and publishes each on the page's
/// `CameraFeed`. The thread idles in 20 ms sleeps; the loop's only cost is the tap's check
/// per frame and, while watched, a reduced copy every 200 ms.
public final class CameraView: @unchecked Sendable {
    public let preview: FramePreview
    /// The detector's gate line, input pixels (moved from the page on the loop thread).
    private let line: Mutex<Double>
    public var gateX: Double {
        get { line.withLock { $0 } }
        set { line.withLock { $0 = newValue } }
    }
    private let feed: CameraFeed
    private let log: Logger
    private let stopping = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)
    /// Pictures encoded, and those the encoder refused (worker thread; read after `stop`).
    private let encodedCount = Atomic<UInt64>(0)
    private let failedCount = Atomic<UInt64>(0)

    public var encoded: UInt64 { encodedCount.load(ordering: .relaxed) }

    init(preview: FramePreview, gateX: Double, feed: CameraFeed, log: Logger) {
        self.preview = preview
        line = Mutex(gateX)
        self.feed = feed
        self.log = log
    }

    /// Starts the encoder and connects `feed`: a viewer's request reaches the tap.
    func start() {
        let preview = self.preview
        feed.connect { preview.watch(now: Sys.monotonicNow()) }
        let t = Thread { [self] in
            while !stopping.load(ordering: .relaxed) {
                guard let p = preview.take() else {
                    usleep(20_000)
                    continue
                }
                do {
                    let jpeg = try PhotoFinishJPEG.encode(luma: p.pixels, width: p.width, height: p.height)
                    feed.publish(CameraPicture(jpeg: jpeg, width: p.width, height: p.height, frameWidth: preview.frameWidth,
                                               frameHeight: preview.frameHeight, gateX: self.gateX, sequence: p.sequence, time: p.time,
                                               bodies: p.bodies.map {
                                                   CameraBody(left: $0.left, top: $0.top, right: $0.right, bottom: $0.bottom,
                                                              kind: $0.vehicle ? "vehicle" : $0.small ? "small" : "person")
                                               }))
                    encodedCount.add(1, ordering: .relaxed)
                } catch {
                    if failedCount.add(1, ordering: .relaxed).newValue == 1 { log.error("camera view: \(error)") }
                }
            }
            stopped.signal()
        }
        t.name = "sprintgate.camera-view"
        t.start()
    }

    /// Ends the encoder's thread.
    public func stop() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        stopped.wait()
    }
}

extension WebGate {
    /// Taps `loop`'s frames for the page's camera view (`GET /api/camera.jpg`): frames of
    /// `width`×`height` at `fps` with the gate line at `gateX` input pixels.
    public func installCameraView<C: FrameSource & ~Copyable, L: LineInputs & LineOutputs & ~Copyable, S: Beeper & ~Copyable>(
        on loop: inout GateLoop<C, L, S>, width: Int, height: Int, fps: Double, gateX: Double) -> CameraView {
        let preview = FramePreview(frameWidth: width, frameHeight: height, bands: FramePreview.bands(fps: fps))
        let view = CameraView(preview: preview, gateX: gateX, feed: bridge.camera, log: log)
        loop.preview = view.preview
        view.start()
        cameraView = view
        return view
    }
}
