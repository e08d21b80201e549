// SPDX-License-Identifier: Apache-2.0
// The video thread: frames from the loop's tap compressed into the RAM ring, the delayed
// view decoded for whoever watches, marks cut into clips on disk.

public import FFmpegVideo
import Foundation
public import GateCore
public import Logging
import Synchronization
public import VideoDelay

/// What the delay mode runs with.
public struct DelayVideoConfig: Sendable {
    public var width: Int
    public var height: Int
    public var fps: Double
    public var bitsPerSecond: Int
    public var encoder: H264EncoderKind
    public var delay: DelaySetting
    public var roll: RollSetting
    /// Memory for the ring.
    public var budget: BufferBudget
    /// Widest picture sent to a browser, pixels.
    public var viewMaxWidth: Int

    public init(width: Int, height: Int, fps: Double, bitsPerSecond: Int? = nil, encoder: H264EncoderKind = .x264,
                delay: DelaySetting, roll: RollSetting, budget: BufferBudget? = nil, availableMemory: Int? = nil, viewMaxWidth: Int = 1280) {
        self.width = width
        self.height = height
        self.fps = fps
        let rate = bitsPerSecond ?? VideoEncoderSettings.defaultBitsPerSecond(width: width, height: height, fps: fps)
        self.bitsPerSecond = rate
        self.encoder = encoder
        self.delay = delay
        self.roll = roll
        self.budget = budget ?? BufferBudget(availableBytes: availableMemory ?? 256 << 20, bitsPerSecond: rate, fps: fps)
        self.viewMaxWidth = viewMaxWidth
    }
}

/// The delayed picture a browser is shown.
public struct DelayedPicture: Sendable, Hashable {
    public var jpeg: [UInt8]
    public var width: Int
    public var height: Int
    /// The frame's camera sequence number and capture time.
    public var sequence: UInt64
    public var time: MonotonicInstant
    /// When the picture was ready to send (for the added-latency figure).
    public var publishedAt: MonotonicInstant
}

/// Counters and settings the page shows.
public struct DelayVideoStatus: Sendable, Hashable, Codable {
    public var encoder: String
    public var width: Int
    public var height: Int
    public var fps: Double
    public var delaySeconds: Double
    public var preRollSeconds: Double
    public var postRollSeconds: Double
    /// Frames the tap copied, dropped (the video thread was behind) and the encoder took.
    public var framesIn: UInt64
    public var framesDropped: UInt64
    public var framesEncoded: UInt64
    /// Seconds of video in the ring, its bytes and its capacity.
    public var bufferSeconds: Double
    public var bufferBytes: Int
    public var bufferCapacityBytes: Int
    /// "about N min at these settings".
    public var bufferSummary: String
    public var session: String?
    public var marksPending: Int
    public var clipsSaved: Int
    /// Marks whose frames left the buffer before they could be saved.
    public var clipsLost: Int
    /// The last error that still matters (a full disk, an encoder failure), or nil.
    public var problem: String?
}

/// Runs the delay mode on its own thread. The gate loop offers frames to `tap`; the
/// thread encodes them into the ring; a viewer's `watch` keeps delayed pictures coming;
/// marks become clips once their post-roll is captured.
public final class DelayVideo: @unchecked Sendable {
    public let tap: FrameTap
    public let library: ClipLibrary
    public let config: DelayVideoConfig
    private let clock: @Sendable () -> MonotonicInstant
    private let log: Logger

    private struct Shared {
        var delay: DelaySetting
        var roll: RollSetting
        var wantedUntil = MonotonicInstant(nanoseconds: .min)
        var session: String?
        var endSession = false
        var pendingMarks: [Mark] = []
        var quickSave = false
        var status: DelayVideoStatus
        var latest: DelayedPicture?
        var savedClips: [ClipRecord] = []
    }
    private let shared: Mutex<Shared>
    private let stopping = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)
    private var thread: Thread?

    /// How long a viewer's request keeps delayed pictures coming. Why 2 s: the page asks
    /// again with every picture; a closed page stops the decoding within two seconds.
    public static let linger = Span.seconds(2)

    public init(config: DelayVideoConfig, library: ClipLibrary, clock: @escaping @Sendable () -> MonotonicInstant, log: Logger) {
        self.config = config
        self.library = library
        self.clock = clock
        self.log = log
        // Four slots: the encoder may fall a few frames behind at a keyframe.
        tap = FrameTap(slots: 4, slotBytes: config.width * config.height * 2)
        let status = DelayVideoStatus(
            encoder: config.encoder.rawValue, width: config.width, height: config.height, fps: config.fps,
            delaySeconds: config.delay.delay.seconds, preRollSeconds: config.roll.preRoll.seconds,
            postRollSeconds: config.roll.postRoll.seconds, framesIn: 0, framesDropped: 0, framesEncoded: 0,
            bufferSeconds: 0, bufferBytes: 0, bufferCapacityBytes: config.budget.bytes, bufferSummary: config.budget.summary,
            session: nil, marksPending: 0, clipsSaved: 0, clipsLost: 0, problem: nil)
        shared = Mutex(Shared(delay: config.delay, roll: config.roll, status: status))
    }

    // MARK: Any thread

    public var status: DelayVideoStatus { shared.withLock { $0.status } }
    /// The newest delayed picture, if a viewer has been watching.
    public var latest: DelayedPicture? { shared.withLock { $0.latest } }

    /// A viewer wants delayed pictures; they come until `linger` after now.
    public func watch() {
        let until = clock() + Self.linger
        shared.withLock { $0.wantedUntil = max($0.wantedUntil, until) }
    }

    public func setDelay(_ d: DelaySetting) { shared.withLock { $0.delay = d; $0.status.delaySeconds = d.delay.seconds } }
    public func setRoll(_ r: RollSetting) {
        shared.withLock {
            $0.roll = r
            $0.status.preRollSeconds = r.preRoll.seconds
            $0.status.postRollSeconds = r.postRoll.seconds
        }
    }

    /// Marks the frame the delayed view shows now (what the coach was looking at). Starts a
    /// session when none is open. Returns the marked instant.
    @discardableResult
    public func mark() -> Mark {
        let now = clock()
        return shared.withLock { s in
            let m = Mark(time: now - s.delay.delay, sequence: 0)
            s.pendingMarks.append(m)
            s.status.marksPending = s.pendingMarks.count
            if s.session == nil { s.endSession = false }
            return m
        }
    }

    /// Starts a session (the thread opens its folder); marks before this start one too.
    public func startSession() { shared.withLock { $0.endSession = false; $0.status.problem = nil } }
    /// Ends the session once its marks are cut.
    public func endSession() { shared.withLock { $0.endSession = true } }
    /// Saves the whole buffer as one clip of the current session.
    public func quickSave() { shared.withLock { $0.quickSave = true } }

    /// Clips saved since the last call (for the page's live list and tests).
    public func takeSavedClips() -> [ClipRecord] { shared.withLock { s in defer { s.savedClips = [] }; return s.savedClips } }

    public func start() {
        let t = Thread { [self] in
            run()
            stopped.signal()
        }
        t.name = "sprintgate.video"
        thread = t
        t.start()
    }

    /// Stops the thread; clips whose post-roll is not captured yet are cut with what is there.
    public func stop() {
        guard thread != nil, !stopping.exchange(true, ordering: .relaxed) else { return }
        stopped.wait()
    }

    // MARK: Video thread

    private var ring: PacketRing!
    private var encoder: H264Encoder?
    private var parameters: CodecParameters?
    private var viewDecoder: VideoDecoder?
    private var viewDecodedThrough: UInt64?
    private var viewJPEG: JPEGPictureEncoder?
    private var framesEncoded: UInt64 = 0
    private var clipsSaved = 0, clipsLost = 0
    private var retryAfter = MonotonicInstant(nanoseconds: .min)

    private func run() {
        ring = PacketRing(byteCapacity: config.budget.bytes, packetCapacity: config.budget.packets)
        do {
            encoder = try H264Encoder(VideoEncoderSettings(width: config.width, height: config.height, fps: config.fps,
                                                           bitsPerSecond: config.bitsPerSecond, encoder: config.encoder))
            parameters = try encoder!.parameters()
            viewJPEG = try JPEGPictureEncoder(maxWidth: config.viewMaxWidth)
        } catch {
            log.error("video: \(error); delayed video is off")
            shared.withLock { $0.status.problem = "\(error)" }
            drainTapUntilStopped()
            return
        }
        log.notice("video: \(config.encoder.rawValue) \(config.width)×\(config.height) at \(config.fps) fps, \(config.budget.summary)")
        while !stopping.load(ordering: .relaxed) {
            let took = encodeWaitingFrames()
            let now = clock()
            serviceMarks(now: now, final: false)
            let showed = serviceView(now: now)
            publishStatus()
            if !took && !showed { usleep(2_000) }
        }
        serviceMarks(now: clock(), final: true)
        publishStatus()
    }

    private func drainTapUntilStopped() {
        while !stopping.load(ordering: .relaxed) {
            while tap.next() != nil { tap.release() }
            usleep(20_000)
        }
    }

    private func encodeWaitingFrames() -> Bool {
        var took = false
        while let slot = tap.next() {
            took = true
            let raw = RawFrame(base: slot.bytes.baseAddress!, width: slot.width, height: slot.height, bytesPerRow: slot.bytesPerRow,
                               format: slot.format, timestamp: slot.timestamp, sequence: slot.sequence)
            do {
                try encoder!.encode(raw) { p in
                    ring.append(p.bytes, time: p.time, sequence: p.sequence, keyframe: p.keyframe)
                }
                framesEncoded += 1
            } catch {
                note("encoding: \(error)")
            }
            tap.release()
        }
        return took
    }

    /// Opens a session when asked, cuts every mark whose window is captured, quick-saves,
    /// and closes the session when asked and nothing is pending.
    private func serviceMarks(now: MonotonicInstant, final: Bool) {
        var (session, marks, end, quick, roll, delay) = shared.withLock { s in
            (s.session, s.pendingMarks, s.endSession, s.quickSave, s.roll, s.delay)
        }
        if session == nil && (!marks.isEmpty || quick) {
            do {
                session = try library.begin(wallTime: Date(), delaySeconds: delay.delay.seconds, preRoll: roll.preRoll.seconds,
                                            postRoll: roll.postRoll.seconds)
                shared.withLock { $0.session = session; $0.status.session = session }
                log.notice("video: session \(session!) started")
            } catch {
                note("\(error)")
                return
            }
        }
        guard let session, now >= retryAfter || final else { return }
        let newest = ring.isEmpty ? nil : ring.time(ring.end - 1)
        var done = 0
        for m in marks {
            let window = ClipWindow(mark: m, roll: roll)
            guard final || (newest.map { window.isComplete(newest: $0) } ?? false) else { break }
            guard let packets = ClipPackets(window, in: ring) else {
                clipsLost += 1
                log.error("video: the mark at \(m.time) left the buffer before it could be saved")
                done += 1
                continue
            }
            do {
                try save(packets, window: window, kind: "mark", session: session)
                done += 1
            } catch {
                note("\(error)")
                // Why: a full disk may be cleared from the page; try again in 2 s while the
                // ring still holds the frames.
                retryAfter = now + .seconds(2)
                break
            }
        }
        if quick, done == marks.count, let first = ring.isEmpty ? nil : ring.time(ring.first), let newest {
            let m = Mark(time: newest, sequence: ring.sequence(ring.end - 1))
            var w = ClipWindow(mark: m, roll: roll)
            w.start = first
            w.end = newest
            if let packets = ClipPackets(w, in: ring) {
                do {
                    try save(packets, window: w, kind: "buffer", session: session)
                    quick = false
                } catch {
                    note("\(error)")
                    retryAfter = now + .seconds(2)
                }
            } else {
                quick = false
            }
        }
        let closing = end && done == marks.count && !quick
        if closing {
            try? library.end(session, wallTime: Date())
            log.notice("video: session \(session) ended")
        }
        shared.withLock { s in
            s.pendingMarks.removeFirst(min(done, s.pendingMarks.count))
            s.status.marksPending = s.pendingMarks.count
            if !quick { s.quickSave = false }
            if closing && s.endSession && s.pendingMarks.isEmpty {
                s.session = nil
                s.status.session = nil
                s.endSession = false
            }
        }
    }

    private func save(_ packets: ClipPackets, window: ClipWindow, kind: String, session: String) throws {
        let index = library.nextIndex(session)
        let part = library.partPath(session: session, index: index)
        let writer = try MP4Writer(path: part, parameters: parameters!, origin: ring.time(packets.showFrom), fps: config.fps)
        var bytes = 0
        for n in packets.decodeFrom...packets.through {
            try writer.write(ring.bytes(n), time: ring.time(n), keyframe: ring.isKeyframe(n))
            bytes += ring.bytes(n).count
        }
        try writer.finish()
        // The thumbnail is the marked frame (for a quick save, the newest).
        let markPacket = ring.newest(atOrBefore: window.mark.time) ?? packets.showFrom
        let thumbnail = try? picture(at: max(markPacket, packets.showFrom), maxWidth: 320)
        let record = ClipRecord(
            id: "\(session)-\(index)", session: session, index: index, kind: kind, markNs: ring.time(markPacket).nanoseconds,
            markSequence: ring.sequence(markPacket), startNs: ring.time(packets.showFrom).nanoseconds,
            endNs: ring.time(packets.through).nanoseconds, frames: packets.frameCount, bytes: bytes,
            truncatedStart: packets.truncatedStart, savedAt: Date().timeIntervalSince1970)
        try library.add(record, thumbnail: thumbnail)
        clipsSaved += 1
        shared.withLock { $0.savedClips.append(record); $0.status.problem = nil }
        log.notice("video: clip \(record.id) saved (\(record.frames) frames, \(bytes / 1024) KiB)")
    }

    /// Packet `n` decoded from its keyframe and encoded as a JPEG.
    private func picture(at n: UInt64, maxWidth: Int) throws -> [UInt8] {
        let decoder = try VideoDecoder(parameters!)
        let jpeg = try JPEGPictureEncoder(maxWidth: maxWidth)
        var out: [UInt8] = []
        for k in ring.keyframe(atOrBefore: n)...n {
            try decoder.decode(ring.bytes(k)) { p in if k == n { out = try jpeg.encode(p) } }
        }
        return out
    }

    /// While watched, decodes up to the packet due (captured `delay` ago) and publishes it.
    private func serviceView(now: MonotonicInstant) -> Bool {
        let (wanted, delay) = shared.withLock { ($0.wantedUntil, $0.delay) }
        guard now <= wanted, !ring.isEmpty, let due = ring.newest(atOrBefore: now - delay.delay) else {
            viewDecodedThrough = nil
            return false
        }
        if let through = viewDecodedThrough, through == due { return false }
        // Continue decoding from the last packet shown when it is still in the ring and
        // before the due one; otherwise start from the due packet's keyframe.
        var from = ring.keyframe(atOrBefore: due)
        if let through = viewDecodedThrough, ring.contains(through), through < due, through >= from {
            from = through + 1
        } else {
            viewDecoder = nil
        }
        do {
            if viewDecoder == nil { viewDecoder = try VideoDecoder(parameters!) }
            var jpeg: [UInt8]?
            for n in from...due {
                try viewDecoder!.decode(ring.bytes(n)) { p in if n == due { jpeg = try viewJPEG!.encode(p) } }
            }
            viewDecodedThrough = due
            if let jpeg {
                let picture = DelayedPicture(jpeg: jpeg, width: viewJPEG!.width, height: viewJPEG!.height,
                                             sequence: ring.sequence(due), time: ring.time(due), publishedAt: clock())
                shared.withLock { $0.latest = picture }
            }
            return true
        } catch {
            viewDecoder = nil
            viewDecodedThrough = nil
            note("delayed view: \(error)")
            return false
        }
    }

    private func publishStatus() {
        let span = ring.span.seconds, bytes = ring.storedBytes
        let (copied, dropped) = (tap.copied, tap.dropped)
        let (encoded, saved, lost) = (framesEncoded, clipsSaved, clipsLost)
        shared.withLock { s in
            s.status.framesIn = copied
            s.status.framesDropped = dropped
            s.status.framesEncoded = encoded
            s.status.bufferSeconds = span
            s.status.bufferBytes = bytes
            s.status.clipsSaved = saved
            s.status.clipsLost = lost
        }
    }

    /// Logs a problem once until it changes, and shows it on the page.
    private func note(_ problem: String) {
        let changed = shared.withLock { s in
            defer { s.status.problem = problem }
            return s.status.problem != problem
        }
        if changed { log.error("video: \(problem)") }
    }
}
