// SPDX-License-Identifier: Apache-2.0
// Photo finish end to end: captures from the loop are rendered, encoded and stored with their run.

import Foundation
import GateCore
import LinuxHardware
import Logging
import PhotoFinish
import SQLiteStore
import WebUI

/// A rendered photo finish: the composite and the frames around the crossing, as JPEG.
struct EncodedPhotoFinish: Sendable {
    var jpeg: [UInt8]
    var thumbnails: [[UInt8]]
}

/// Takes photo-finish captures off the loop thread, renders and encodes them on its own
/// thread, and stores each with the run it finished (matched by the crossing's time, see
/// `PhotoFinishMatcher`). The loop only pushes onto a bounded queue; a full queue
/// releases the capture at once and counts it. Every capture is released on every path.
final class PhotoFinishLink: @unchecked Sendable {
    /// Why 3: the recorder holds three slots; a capture waiting here still occupies one.
    static let captureCapacity = 3
    /// Why 64: runs commit at most a few per second; this rides out a long render.
    static let commitCapacity = 64
    /// Idle poll of the worker, microseconds. Why 20 ms: a photo is ready 0.6 s after
    /// its crossing; 20 ms more is invisible on the page and costs nothing idle.
    static let idleMicroseconds: UInt32 = 20_000

    private let captures = BoundedQueue<PhotoFinishCapture>(capacity: PhotoFinishLink.captureCapacity)
    private let commits = BoundedQueue<CommittedRun>(capacity: PhotoFinishLink.commitCapacity)
    private let stopping = BoundedQueue<Bool>(capacity: 1)
    private let stopped = DispatchSemaphore(value: 0)
    private let store: RunStore
    private let book: SQLiteResultsBook?
    private let log: Logger
    // Worker-thread state.
    private var matcher = PhotoFinishMatcher<EncodedPhotoFinish>()
    private var started = false
    /// Photos stored with their run (worker thread; read after `stop`).
    private(set) var saved: UInt64 = 0
    /// Captures that could not be rendered, encoded or stored (worker thread).
    private(set) var failed: UInt64 = 0

    init(store: RunStore, book: SQLiteResultsBook?, log: Logger) {
        self.store = store
        self.book = book
        self.log = log
    }

    /// The recorder for a camera of `width`×`height` at `fps` with the gate line at
    /// `gateX` (input pixels); nil (logged) when the geometry is refused.
    static func recorder(width: Int, height: Int, gateX: Double, fps: Double, log: Logger) -> PhotoFinishRecorder? {
        do {
            return try PhotoFinishRecorder(config: PhotoFinishConfig(frameWidth: width, frameHeight: height, gateX: gateX, fps: fps))
        } catch {
            log.error("photo finish off: \(error)")
            return nil
        }
    }

    /// The loop's `photoFinishObserver`: hands the capture on, never blocks.
    func capture(_ capture: PhotoFinishCapture) {
        if !captures.push(capture) { capture.release() }
    }

    /// The store writer's `onCommit` (writer thread): the run may take a waiting photo.
    func committed(_ run: CommittedRun) {
        if !commits.push(run) { log.error("photo finish: commit queue full; run \(run.run.id ?? 0) gets no photo") }
    }

    /// Captures refused because the worker was behind.
    var dropped: UInt64 { captures.dropped }

    func start() {
        guard !started else { return }
        started = true
        let t = Thread { [self] in
            while true {
                var worked = false
                if let c = captures.pop() { handle(c); worked = true }
                if let r = commits.pop() { handle(r); worked = true }
                if worked { continue }
                if stopping.count > 0 { break }
                usleep(Self.idleMicroseconds)
            }
            stopped.signal()
        }
        t.name = "sprintgate.photo"
        t.start()
    }

    /// Renders what is queued, then ends the thread.
    func stop() {
        guard started else { return }
        stopping.push(true)
        stopped.wait()
        if matcher.unmatchedPhotos > 0 || failed > 0 || dropped > 0 {
            log.info("photo finish: \(saved) stored, \(matcher.unmatchedPhotos) without a run, \(failed) failed, \(dropped) dropped")
        }
    }

    /// Renders and encodes `capture`, releasing it on every path; throws when it cannot.
    static func encode(_ capture: PhotoFinishCapture) throws -> EncodedPhotoFinish {
        defer { capture.release() }
        let picture = try PhotoFinishRenderer.render(capture)
        let jpeg = try PhotoFinishJPEG.encode(luma: picture.image.pixels, width: picture.image.width, height: picture.image.height)
        var thumbs: [[UInt8]] = []
        for t in picture.thumbnails {
            thumbs.append(try PhotoFinishJPEG.encode(luma: t.pixels, width: t.width, height: t.height))
        }
        return EncodedPhotoFinish(jpeg: jpeg, thumbnails: thumbs)
    }

    private func handle(_ capture: PhotoFinishCapture) {
        let crossingNs = capture.crossing.time.nanoseconds
        let photo: EncodedPhotoFinish
        do { photo = try Self.encode(capture) } catch {
            failed += 1
            log.error("photo finish of the crossing at mono \(crossingNs) ns: \(error)")
            return
        }
        if let runID = matcher.photo(photo, crossingNs: crossingNs) { save(photo, runID: runID) }
    }

    private func handle(_ run: CommittedRun) {
        if let photo = matcher.run(run.run), let id = run.run.id { save(photo, runID: id) }
    }

    private func save(_ photo: EncodedPhotoFinish, runID: Int64) {
        do {
            try store.savePhoto(runID: runID, jpeg: photo.jpeg, thumbnails: photo.thumbnails)
            saved += 1
            book?.photoSaved(runID: runID)
            log.info("photo finish stored for run \(runID) (\(photo.jpeg.count) bytes, \(photo.thumbnails.count) frames)")
        } catch {
            failed += 1
            log.error("photo finish for run \(runID): \(error)")
        }
    }
}
