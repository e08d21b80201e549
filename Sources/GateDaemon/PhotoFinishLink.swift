// SPDX-License-Identifier: Apache-2.0
// Photo finish end to end: captures from the loop are rendered, encoded and stored with their run.

import Foundation
public import GateCore
import LinuxHardware
public import Logging
public import PeerWire
public import PhotoFinish
public import Race
public import SQLiteStore
import Synchronization
public import WebUI

/// A rendered photo finish: the composite and its four thumbnails, as JPEG, and the
/// strip of every frame around the crossing.
public struct EncodedPhotoFinish: Sendable {
    public var jpeg: [UInt8]
    public var thumbnails: [[UInt8]]
    /// Nil when the capture held no frame for the strip.
    public var frames: FrameStrip?
    /// Where the crossing and the time axis are in `jpeg` (a race's photo bundle carries
    /// it from the gate that took the photo); nil when unknown.
    public var scale: PhotoScale?
}

/// A photo (`PhotoBundle`) or frame strip (`FrameStrip`) of this gate's crossing on its
/// way to the race's host.
public struct OutgoingPhoto: Sendable {
    public var bundle: [UInt8]
    /// The crossing's instant, local CLOCK_MONOTONIC.
    public var crossingNs: Int64
    public var media: RaceMedia = .photo
}

/// A gate's photo or frame strip of its crossing, received whole by the race's host.
public struct RemotePhoto: Sendable {
    public var bundle: [UInt8]
    /// The crossing's instant mapped onto this gate's CLOCK_MONOTONIC.
    public var crossingNs: Int64
    public var gateIndex: Int
    public var media: RaceMedia = .photo
    public init(bundle: [UInt8], crossingNs: Int64, gateIndex: Int, media: RaceMedia = .photo) {
        self.bundle = bundle
        self.crossingNs = crossingNs
        self.gateIndex = gateIndex
        self.media = media
    }
}

/// Takes photo-finish captures off the loop thread, renders and encodes them on its own
/// thread, and stores each with the run it belongs to (matched by the crossing's time, see
/// `PhotoFinishMatcher`). The loop only pushes onto a bounded queue; a full queue
/// releases the capture at once and counts it. Every capture is released on every path.
///
/// In a race, a gate's photos also go to the host (`takeOutgoing`, for the race link),
/// and the host stores the gates' photos it receives (`remote`) with the race's run:
/// each under its gate's place on the course, and the finish gate's as the run's photo
/// finish.
public final class PhotoFinishLink: @unchecked Sendable {
    /// Why 3: the recorder holds three slots; a capture waiting here still occupies one.
    public static let captureCapacity = 3
    /// Why 64: runs commit at most a few per second; this rides out a long render.
    public static let commitCapacity = 64
    /// Idle poll of the worker, microseconds. Why 20 ms: a photo is ready 0.6 s after
    /// its crossing; 20 ms more is invisible on the page and costs nothing idle.
    public static let idleMicroseconds: UInt32 = 20_000

    private let captures = BoundedQueue<PhotoFinishCapture>(capacity: PhotoFinishLink.captureCapacity)
    private let commits = BoundedQueue<CommittedRun>(capacity: PhotoFinishLink.commitCapacity)
    /// Why 8: a photo and a strip per crossing, a second apart at most a few at a time.
    private let outgoing = BoundedQueue<OutgoingPhoto>(capacity: 8)
    private let remotes = BoundedQueue<RemotePhoto>(capacity: 16)
    /// Set while this gate is a race gate with a host: its photos are also offered to the
    /// race link (set from the loop thread, read by the worker).
    private let forwarding = Atomic<Bool>(false)
    public var forwardsToRace: Bool {
        get { forwarding.load(ordering: .relaxed) }
        set { forwarding.store(newValue, ordering: .relaxed) }
    }
    private let stopping = BoundedQueue<Bool>(capacity: 1)
    private let stopped = DispatchSemaphore(value: 0)
    private let store: RunStore
    private let book: SQLiteResultsBook?
    private let log: Logger
    // Worker-thread state.
    private var matcher = PhotoFinishMatcher<EncodedPhotoFinish>()
    /// Other gates' frame strips, which travel apart from their photos (host only).
    private var stripMatcher = PhotoFinishMatcher<FrameStrip>()
    private var started = false
    /// Photos stored with their run (worker thread; read after `stop`).
    private(set) var saved: UInt64 = 0
    /// Captures that could not be rendered, encoded or stored (worker thread).
    private(set) var failed: UInt64 = 0

    public init(store: RunStore, book: SQLiteResultsBook?, log: Logger) {
        self.store = store
        self.book = book
        self.log = log
    }

    /// The recorder for a camera of `width`×`height` at `fps` with the gate line at
    /// `gateX` (input pixels); nil (logged) when the geometry is refused.
    public static func recorder(width: Int, height: Int, gateX: Double, fps: Double, log: Logger) -> PhotoFinishRecorder? {
        do {
            return try PhotoFinishRecorder(config: PhotoFinishConfig(frameWidth: width, frameHeight: height, gateX: gateX, fps: fps))
        } catch {
            log.error("photo finish off: \(error)")
            return nil
        }
    }

    /// The loop's `photoFinishObserver`: hands the capture on, never blocks.
    public func capture(_ capture: PhotoFinishCapture) {
        if !captures.push(capture) { capture.release() }
    }

    /// Host (race link's thread): a gate's photo arrived whole.
    public func remote(_ photo: RemotePhoto) {
        if !remotes.push(photo) { log.error("photo finish: queue of gates' photos full; gate \(photo.gateIndex)'s photo dropped") }
    }

    /// Race link's thread: the next photo of this gate to send to the host, if any.
    public func takeOutgoing() -> OutgoingPhoto? { outgoing.pop() }

    /// Why 500 µs: a gate's photo carries its crossing mapped through that gate's clock
    /// twice (for the photo and for the run's start), which may differ by the clocks'
    /// rate error over the run (50 ppm over 10 s); two crossings of one gate are at least
    /// a frame (4 ms at 250 fps) apart.
    public static let remoteToleranceNs: Int64 = 500_000

    /// The store writer's `onCommit` (writer thread): the run may take a waiting photo.
    public func committed(_ run: CommittedRun) {
        if !commits.push(run) { log.error("photo finish: commit queue full; run \(run.run.id ?? 0) gets no photo") }
    }

    /// Captures refused because the worker was behind.
    public var dropped: UInt64 { captures.dropped }

    public func start() {
        guard !started else { return }
        started = true
        let t = Thread { [self] in
            while true {
                var worked = false
                if let c = captures.pop() { handle(c); worked = true }
                if let r = commits.pop() { handle(r); worked = true }
                if let p = remotes.pop() { handle(p); worked = true }
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
    public func stop() {
        guard started else { return }
        stopping.push(true)
        stopped.wait()
        if matcher.unmatchedPhotos > 0 || failed > 0 || dropped > 0 {
            log.info("photo finish: \(saved) stored, \(matcher.unmatchedPhotos) without a run, \(failed) failed, \(dropped) dropped")
        }
    }

    /// Renders and encodes `capture`, releasing it on every path; throws when it cannot.
    public static func encode(_ capture: PhotoFinishCapture) throws -> EncodedPhotoFinish {
        defer { capture.release() }
        let picture = try PhotoFinishRenderer.render(capture)
        let jpeg = try PhotoFinishJPEG.encode(luma: picture.image.pixels, width: picture.image.width, height: picture.image.height)
        var thumbs: [[UInt8]] = []
        for t in picture.thumbnails {
            thumbs.append(try PhotoFinishJPEG.encode(luma: t.pixels, width: t.width, height: t.height))
        }
        let l = picture.layout
        let scale = PhotoScale(crossingX: Double(l.compositeX) + l.column(of: picture.crossing.time),
                               nanosecondsPerColumn: l.nanosecondsPerColumn, compositeX: l.compositeX, compositeWidth: l.compositeWidth)
        return EncodedPhotoFinish(jpeg: jpeg, thumbnails: thumbs, frames: try strip(of: capture), scale: scale)
    }

    /// The capture's frames around the crossing as a `FrameStrip`, nil when it has none.
    static func strip(of capture: PhotoFinishCapture) throws -> FrameStrip? {
        guard capture.stripCount > 0 else { return nil }
        var frames: [FrameStrip.Frame] = []
        for i in 0..<capture.stripCount {
            let offset = capture.stripTime(i).since(capture.crossing.time).nanoseconds / 1000
            // Why: two frames within a microsecond (a driver's repeated stamp) would not
            // order; the strip keeps the first.
            if let last = frames.last, offset <= Int64(last.offsetMicroseconds) { continue }
            let pixels = capture.stripFrame(i)
            let jpeg = try PhotoFinishJPEG.encode(luma: Array(pixels), width: capture.thumbnailWidth, height: capture.thumbnailHeight)
            frames.append(FrameStrip.Frame(offsetMicroseconds: Int32(clamping: offset), jpeg: jpeg))
        }
        return FrameStrip(gateX: max(0, capture.thumbnailGateX), frames: frames)
    }

    private func handle(_ capture: PhotoFinishCapture) {
        let crossingNs = capture.crossing.time.nanoseconds
        let photo: EncodedPhotoFinish
        do { photo = try Self.encode(capture) } catch {
            failed += 1
            log.error("photo finish of the crossing at mono \(crossingNs) ns: \(error)")
            return
        }
        // The photo's time scale goes with it, so the host can re-time the run from a
        // finish placed by hand on it.
        if forwardsToRace, let bundle = PhotoBundle(photo: photo.jpeg, thumbnails: photo.thumbnails, scale: photo.scale).encoded() {
            if !outgoing.push(OutgoingPhoto(bundle: bundle, crossingNs: crossingNs)) {
                log.warning("photo of the crossing at mono \(crossingNs) ns not offered to the race: queue full")
            }
            if let strip = photo.frames?.encoded(),
               !outgoing.push(OutgoingPhoto(bundle: strip, crossingNs: crossingNs, media: .frames)) {
                log.warning("frames of the crossing at mono \(crossingNs) ns not offered to the race: queue full")
            }
        }
        if let match = matcher.photo(photo, crossingNs: crossingNs) { save(photo, match) }
    }

    private func handle(_ remote: RemotePhoto) {
        if remote.media == .frames {
            let strip: FrameStrip
            do { strip = try FrameStrip(decoding: remote.bundle) } catch {
                failed += 1
                log.error("frames from gate \(remote.gateIndex) of the crossing at mono \(remote.crossingNs) ns are not a frame strip: \(error.description)")
                return
            }
            if let match = stripMatcher.photo(strip, crossingNs: remote.crossingNs, gateIndex: remote.gateIndex,
                                              toleranceNs: Self.remoteToleranceNs) {
                save(strip, match.runID, match.gateIndex)
            }
            return
        }
        let photo: EncodedPhotoFinish
        do {
            let b = try PhotoBundle(decoding: remote.bundle)
            photo = EncodedPhotoFinish(jpeg: b.photo, thumbnails: b.thumbnails, scale: b.scale)
        } catch {
            failed += 1
            log.error("photo from gate \(remote.gateIndex) of the crossing at mono \(remote.crossingNs) ns is not a photo bundle: \(error.description)")
            return
        }
        if let match = matcher.photo(photo, crossingNs: remote.crossingNs, gateIndex: remote.gateIndex,
                                     toleranceNs: Self.remoteToleranceNs) {
            save(photo, match)
        }
    }

    /// A frame strip, stored with run `runID` under the gate's place on the course (a
    /// lone gate's under 0, its only gate).
    private func save(_ strip: FrameStrip, _ runID: Int64, _ gateIndex: Int) {
        let frames = strip.frames.map { StoredFrame(offsetMicroseconds: Int($0.offsetMicroseconds), jpeg: $0.jpeg) }
        do {
            try store.saveGateFrames(runID: runID, gateIndex: gateIndex, gateX: strip.gateX, frames: frames)
            log.info("frames of gate \(gateIndex) stored for run \(runID) (\(strip.frames.count) frames)")
        } catch {
            failed += 1
            log.error("frames of gate \(gateIndex) for run \(runID): \(error)")
        }
    }

    private func handle(_ run: CommittedRun) {
        for (photo, match) in matcher.run(run.run) { save(photo, match) }
        for (strip, match) in stripMatcher.run(run.run) { save(strip, match.runID, match.gateIndex) }
    }

    /// A lone gate's finish photo is the run's photo finish. In a race every gate's photo
    /// is kept under its place on the course, and the finish gate's is also the run's.
    private func save(_ photo: EncodedPhotoFinish, _ match: PhotoFinishMatcher<EncodedPhotoFinish>.Match) {
        let runID = match.runID
        // The frames first: a page that sees the photo finds them too.
        if let strip = photo.frames { save(strip, match.runID, match.gateIndex) }
        do {
            if match.finish {
                try store.savePhoto(runID: runID, jpeg: photo.jpeg, thumbnails: photo.thumbnails, scale: photo.scale)
            }
            if match.race {
                try store.saveGatePhoto(runID: runID, gateIndex: match.gateIndex, jpeg: photo.jpeg)
            }
            saved += 1
            book?.photoSaved(runID: runID)
            log.info("photo \(match.finish ? "finish" : "of gate \(match.gateIndex)") stored for run \(runID) (\(photo.jpeg.count) bytes, \(photo.thumbnails.count) frames)")
        } catch {
            failed += 1
            log.error("photo for run \(runID): \(error)")
        }
    }
}
