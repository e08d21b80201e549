// SPDX-License-Identifier: Apache-2.0
// The video thread: frames from the loop's tap compressed into the RAM ring, the delayed
// view decoded for whoever watches, marks cut into clips on disk.

public import Archery
import CLinuxSys
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
    /// Archery scoring's defaults from the settings file, when it sets them.
    public var archery: ScoreSheet?
    /// The delayed view on a TV as well; nil: the page only.
    public var tv: TVConfig?
    /// The camera sends Motion JPEG and the ring keeps its JPEGs as they come (no encoding;
    /// clips are encoded to H.264 when they are cut, so any browser plays them).
    public var cameraJPEG: Bool

    public init(width: Int, height: Int, fps: Double, bitsPerSecond: Int? = nil, encoder: H264EncoderKind = .x264,
                delay: DelaySetting, roll: RollSetting, budget: BufferBudget? = nil, availableMemory: Int? = nil, viewMaxWidth: Int = 1280,
                archery: ScoreSheet? = nil, tv: TVConfig? = nil, cameraJPEG: Bool = false) {
        self.width = width
        self.height = height
        self.fps = fps
        let rate = bitsPerSecond ?? (cameraJPEG ? Self.jpegBitsPerSecond(width: width, height: height, fps: fps)
                                                : VideoEncoderSettings.defaultBitsPerSecond(width: width, height: height, fps: fps))
        self.bitsPerSecond = rate
        self.encoder = encoder
        self.delay = delay
        self.roll = roll
        self.budget = budget ?? BufferBudget(availableBytes: availableMemory ?? 256 << 20, bitsPerSecond: rate, fps: fps)
        self.viewMaxWidth = viewMaxWidth
        self.archery = archery
        self.tv = tv
        self.cameraJPEG = cameraJPEG
    }

    /// What a camera's Motion JPEG takes, for sizing the ring before it is measured: about
    /// 1.5 bits a pixel (a UVC camera's usual quality), ten times H.264's default.
    public static func jpegBitsPerSecond(width: Int, height: Int, fps: Double) -> Int {
        Int(1.5 * Double(width * height) * fps)
    }

    /// The status's name for how the ring is filled.
    var storageName: String { cameraJPEG ? "MJPEG as the camera sends it" : encoder.rawValue }
}

/// Runs the delay mode on its own thread. The gate loop offers frames to `tap`; the
/// thread encodes them into the ring; a viewer's `watch` keeps delayed pictures coming;
/// marks become clips once their post-roll is captured.
public final class DelayVideo: @unchecked Sendable {
    public let tap: FrameTap
    /// Marks asked for by the gate's button or a clicker, and marks taken (for the gate's
    /// beep and flash).
    public let marks = MarkRequests()
    public let library: ClipLibrary
    /// Where timed runs' clips go; nil: runs keep no clip.
    public let runVideos: RunVideoShelf?
    public let config: DelayVideoConfig
    private let clock: @Sendable () -> MonotonicInstant
    private let log: Logger

    private struct Shared {
        var delay: DelaySetting
        var roll: RollSetting
        var wantedUntil = MonotonicInstant(nanoseconds: .min)
        var session: String?
        /// "Start session" was pressed with none open: the thread opens one.
        var startSession = false
        var endSession = false
        /// Marks waiting to be cut, each with the delayed picture shown when it was made.
        var pendingMarks: [(mark: Mark, shown: DelayedPicture?)] = []
        var quickSave = false
        var status: VideoStatus
        var latest: DelayedPicture?
        var savedClips: [ClipRecord] = []
        /// Timed runs waiting for their clip: the run's id, start and finish.
        var pendingRuns: [(id: Int64, start: MonotonicInstant, finish: MonotonicInstant)] = []
    }
    private let shared: Mutex<Shared>
    private let stopping = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)
    private var thread: Thread?
    /// Guards `ring` between its writer, the video thread (held while a packet is appended),
    /// and the view thread (held while it copies out the packets it decodes). Never held
    /// while coding.
    private let ringLock = NSLock()
    /// Signalled when the encoding loop has ended (the clip thread's last pass waits for it).
    private let encoderDone = DispatchSemaphore(value: 0)

    /// How long a viewer's request keeps delayed pictures coming. Why 2 s: the page asks
    /// again with every picture; a closed page stops the decoding within two seconds.
    public static let linger = Span.seconds(2)

    public init(config: DelayVideoConfig, library: ClipLibrary, runVideos: RunVideoShelf? = nil,
                clock: @escaping @Sendable () -> MonotonicInstant, log: Logger) {
        self.config = config
        self.library = library
        self.runVideos = runVideos
        self.clock = clock
        self.log = log
        // Eight slots (133 ms at 60 fps): the encoder falls a few frames behind at a keyframe
        // or while a clip is cut.
        tap = FrameTap(slots: 8, slotBytes: config.width * config.height * 2, keepsCompressed: config.cameraJPEG)
        var status = VideoStatus(
            encoder: config.storageName, width: config.width, height: config.height, fps: config.fps,
            delaySeconds: config.delay.delay.seconds, preRollSeconds: config.roll.preRoll.seconds,
            postRollSeconds: config.roll.postRoll.seconds, framesIn: 0, framesDropped: 0, framesEncoded: 0,
            bufferSeconds: 0, bufferBytes: 0, bufferCapacityBytes: config.budget.bytes, bufferSummary: config.budget.summary,
            session: nil, marksPending: 0, clipsSaved: 0, clipsLost: 0, clipSeconds: 0, storageBytes: 0, problem: nil,
            archery: config.archery)
        status.tv = config.tv == nil ? nil : "looking for a display"
        shared = Mutex(Shared(delay: config.delay, roll: config.roll, status: status))
    }

    // MARK: Any thread

    public var status: VideoStatus { shared.withLock { $0.status } }
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
    public func mark() -> Mark { mark(at: clock()) }

    /// Marks the frame the delayed view showed at `instant` (a button's or key's press,
    /// CLOCK_MONOTONIC), and counts it in `marks.confirmed` for the gate's beep and flash.
    @discardableResult
    public func mark(at instant: MonotonicInstant) -> Mark {
        let m = shared.withLock { s in
            let m = Mark(time: instant - s.delay.delay, sequence: 0)
            // The picture a viewer saw then is the marked frame (or a frame beside it): it
            // becomes the clip's thumbnail, with no decoding.
            let shown = s.latest.flatMap { p -> DelayedPicture? in
                let d = m.time.since(p.time)
                return d < .milliseconds(100) && d > .milliseconds(-100) ? p : nil
            }
            s.pendingMarks.append((m, shown))
            s.status.marksPending = s.pendingMarks.count
            if s.session == nil { s.endSession = false }
            return m
        }
        marks.confirm()
        return m
    }

    /// Starts a session (the thread opens its folder) when none is open, or right after the
    /// one that is closing; an open session goes on. A mark or quick save with no session
    /// open starts one too.
    public func startSession() {
        shared.withLock { s in
            if s.session == nil || s.endSession { s.startSession = true }
            s.status.problem = nil
        }
    }
    /// Ends the session once its marks are cut.
    public func endSession() { shared.withLock { $0.endSession = true; $0.startSession = false } }
    /// Saves the whole buffer as one clip of the current session.
    public func quickSave() { shared.withLock { $0.quickSave = true } }

    /// Keeps a clip of a timed run, from the pre-roll before its `start` to the post-roll
    /// after its `finish` (CLOCK_MONOTONIC), once the post-roll is captured. Needs no
    /// session.
    public func clipRun(id: Int64, start: MonotonicInstant, finish: MonotonicInstant) {
        guard runVideos != nil, finish >= start else { return }
        shared.withLock { $0.pendingRuns.append((id, start, finish)) }
    }

    /// Clips saved since the last call (for the page's live list and tests).
    public func takeSavedClips() -> [ClipRecord] { shared.withLock { s in defer { s.savedClips = [] }; return s.savedClips } }

    /// Nice steps the video threads (and the encoder's own, which inherit it) run below the
    /// gate loop. Why: the loop times races; a video frame the encoder misses is dropped at
    /// the tap and counted, a late timing frame is not acceptable.
    public static let niceness: Int32 = 10

    public func start() {
        ring = PacketRing(byteCapacity: config.budget.bytes, packetCapacity: config.budget.packets)
        let t = Thread { [self] in
            _ = sprintgate_thread_nice(Self.niceness)
            run()
            stopped.signal()
        }
        t.name = "sprintgate.video"
        thread = t
        // Decoding and JPEG for viewers on a thread of their own, so a viewer never holds
        // up the encoder (and so the camera's frames).
        let v = Thread { [self] in
            _ = sprintgate_thread_nice(Self.niceness)
            runView()
            stopped.signal()
        }
        v.name = "sprintgate.video-view"
        // Clips are cut on a third, so writing a clip never holds up the encoder either.
        let c = Thread { [self] in
            _ = sprintgate_thread_nice(Self.niceness)
            while !stopping.load(ordering: .relaxed) {
                marks.take { mark(at: $0) }
                serviceMarks(now: clock(), final: false)
                serviceRuns(now: clock(), final: false)
                usleep(10_000)
            }
            // What the encoder had taken when it stopped is in the ring: cut the rest.
            encoderDone.wait()
            serviceMarks(now: clock(), final: true)
            serviceRuns(now: clock(), final: true)
            stopped.signal()
        }
        c.name = "sprintgate.video-clips"
        t.start()
        v.start()
        c.start()
    }

    /// Stops the threads; clips whose post-roll is not captured yet are cut with what is there.
    public func stop() {
        guard thread != nil, !stopping.exchange(true, ordering: .relaxed) else { return }
        for _ in 0..<3 { stopped.wait() }
        publishStatus()
        // Why: the thread keeps its closure, which holds this object; kept here, the pair
        // would hold each other, and the ring and the tap with them, for good.
        thread = nil
    }

    // MARK: Video thread

    private var ring: PacketRing!
    private var encoder: H264Encoder?
    /// Set once by the video thread when the encoder opens; read by the view thread.
    private let parameters = Mutex<CodecParameters?>(nil)
    private var framesEncoded: UInt64 = 0
    private var retryAfter = MonotonicInstant(nanoseconds: .min)
    private var retryRunsAfter = MonotonicInstant(nanoseconds: .min)

    private func run() {
        do {
            if config.cameraJPEG {
                let p = try CodecParameters.mjpeg(width: config.width, height: config.height)
                parameters.withLock { $0 = p }
            } else {
                encoder = try H264Encoder(VideoEncoderSettings(width: config.width, height: config.height, fps: config.fps,
                                                               bitsPerSecond: config.bitsPerSecond, encoder: config.encoder))
                let p = try encoder!.parameters()
                parameters.withLock { $0 = p }
            }
        } catch {
            log.error("video: \(error); delayed video is off")
            shared.withLock { $0.status.problem = "\(error)" }
            drainTapUntilStopped()
            encoderDone.signal()
            return
        }
        log.notice("video: \(config.storageName) \(config.width)×\(config.height) at \(config.fps) fps, \(config.budget.summary)")
        while !stopping.load(ordering: .relaxed) {
            let took = encodeWaitingFrames()
            publishStatus()
            if !took { usleep(2_000) }
        }
        encoderDone.signal()
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
            if config.cameraJPEG {
                // The camera's JPEG, kept as it came: every one a keyframe.
                if slot.frame.format == .mjpeg {
                    ringLock.lock()
                    ring.append(slot.bytes, time: slot.frame.timestamp, sequence: slot.frame.sequence, keyframe: true)
                    ringLock.unlock()
                    framesEncoded += 1
                } else {
                    note("the camera sent \(slot.frame.format), not MJPEG: set [video] encoder to auto or libx264")
                }
                tap.release()
                continue
            }
            do {
                try encoder!.encode(slot.frame) { p in
                    ringLock.lock()
                    ring.append(p.bytes, time: p.time, sequence: p.sequence, keyframe: p.keyframe)
                    ringLock.unlock()
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
        var (session, marks, end, quick, roll, delay, start) = shared.withLock { s in
            (s.session, s.pendingMarks, s.endSession, s.quickSave, s.roll, s.delay, s.startSession)
        }
        if session == nil && (start || !marks.isEmpty || quick) {
            do {
                session = try library.begin(wallTime: Date(), delaySeconds: delay.delay.seconds, preRoll: roll.preRoll.seconds,
                                            postRoll: roll.postRoll.seconds)
                shared.withLock { $0.session = session; $0.status.session = session; $0.startSession = false }
                log.notice("video: session \(session!) started")
            } catch {
                note("\(error)")
                return
            }
        }
        guard let session, now >= retryAfter || final else { return }
        let newest = locked { ring.isEmpty ? nil : ring.time(ring.end - 1) }
        var done = 0
        for (m, shown) in marks {
            let window = ClipWindow(mark: m, roll: roll)
            guard final || (newest.map { window.isComplete(newest: $0) } ?? false) else { break }
            guard let packets = locked({ ClipPackets(window, in: ring) }) else {
                shared.withLock { $0.status.clipsLost += 1 }
                log.error("video: the mark at \(m.time) left the buffer before it could be saved")
                done += 1
                continue
            }
            do {
                try save(packets, window: window, kind: "mark", session: session, shown: shown)
                done += 1
            } catch {
                note("\(error)")
                // Why: a full disk may be cleared from the page; try again in 2 s while the
                // ring still holds the frames.
                retryAfter = now + .seconds(2)
                break
            }
        }
        if quick, done == marks.count,
           let (w, packets) = locked({ () -> (ClipWindow, ClipPackets?)? in
               guard !ring.isEmpty, let newest else { return nil }
               var w = ClipWindow(mark: Mark(time: newest, sequence: ring.sequence(ring.end - 1)), roll: roll)
               w.start = ring.time(ring.first)
               w.end = newest
               return (w, ClipPackets(w, in: ring))
           }) {
            if let packets {
                do {
                    try save(packets, window: w, kind: "buffer", session: session, shown: nil)
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

    /// Runs `body` with the ring locked.
    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        ringLock.lock()
        defer { ringLock.unlock() }
        return try body()
    }

    /// Copies packets `from...through` (at most `limit`) out of the ring; starts at the
    /// oldest packet instead when `from` has been evicted meanwhile.
    private func copyPackets(from: UInt64, through: UInt64, limit: Int) -> [(bytes: [UInt8], time: MonotonicInstant, keyframe: Bool, n: UInt64)] {
        locked {
            guard !ring.isEmpty else { return [] }
            let start = max(from, ring.first)
            guard start <= through else { return [] }
            return (start...min(through, start + UInt64(limit) - 1)).map { (Array(ring.bytes($0)), ring.time($0), ring.isKeyframe($0), $0) }
        }
    }

    /// What `write` put in a file.
    private struct Written {
        /// Capture time of the first shown frame: the file's zero.
        var origin: MonotonicInstant
        /// The newest packet at or before the window's mark.
        var markPacket: UInt64
        var endTime: MonotonicInstant
        var bytes: Int
    }

    /// Writes the window's packets to an MP4 at `path`: copied out of the ring a few at a
    /// time, so the lock is held for microseconds and the encoder never waits for the disk.
    private func write(_ packets: ClipPackets, window: ClipWindow, to path: String, what: String) throws -> Written {
        // The encoder may have evicted the oldest packets since the window was found (a
        // quick save starts at the oldest): start at what is still there.
        let found = locked { () -> (MonotonicInstant, UInt64, MonotonicInstant)? in
            let show = max(packets.showFrom, ring.first)
            guard ring.contains(show), ring.contains(packets.through), show <= packets.through else { return nil }
            return (ring.time(show), ring.newest(atOrBefore: window.mark.time) ?? show, ring.time(packets.through))
        }
        guard let (origin, markPacket, endTime) = found else {
            throw FFmpegError("saving \(what)", message: "its frames left the buffer before they could be written")
        }
        let parameters = self.parameters.withLock { $0! }
        // An MJPEG ring's clip is encoded to H.264 as it is written (browsers play no MJPEG).
        let copier = parameters.isMJPEG ? nil : try MP4Writer(path: path, parameters: parameters, origin: origin, fps: config.fps)
        let encoder = parameters.isMJPEG
            ? try TranscodingMP4Writer(path: path, source: parameters, origin: origin, fps: config.fps, encoder: config.encoder) : nil
        var next = packets.decodeFrom
        while next <= packets.through {
            let chunk = copyPackets(from: next, through: packets.through, limit: 64)
            guard let last = chunk.last else { break }
            for p in chunk {
                try p.bytes.withUnsafeBytes { b in
                    if let copier { try copier.write(b, time: p.time, keyframe: p.keyframe) } else { try encoder!.write(b, time: p.time, keyframe: p.keyframe) }
                }
            }
            next = last.n + 1
        }
        try copier?.finish()
        try encoder?.finish()
        let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        return Written(origin: origin, markPacket: markPacket, endTime: endTime, bytes: bytes)
    }

    /// What the log adds for a clip cut before its post-roll was recorded.
    static let cutShort = ", cut short: video went off before its post-roll was recorded"

    /// Writes a clip of a session with its thumbnail and adds it to the library.
    private func save(_ packets: ClipPackets, window: ClipWindow, kind: String, session: String, shown: DelayedPicture?) throws {
        let started = clock()
        defer { let spent = clock().since(started).seconds; shared.withLock { $0.status.clipSeconds += spent } }
        let index = library.nextIndex(session)
        let w = try write(packets, window: window, to: library.partPath(session: session, index: index), what: "clip \(index)")
        // The thumbnail is the marked frame (for a quick save, the newest): the picture the
        // viewer saw when marking, else decoded here.
        let marked = max(w.markPacket, packets.showFrom)
        let thumbnail = shown?.jpeg ?? (try? picture(at: marked, maxWidth: 320))
        let record = ClipRecord(
            id: "\(session)-\(index)", session: session, index: index, kind: kind,
            markNs: locked { ring.contains(marked) ? ring.time(marked).nanoseconds : window.mark.time.nanoseconds },
            markSequence: locked { ring.contains(marked) ? ring.sequence(marked) : window.mark.sequence },
            startNs: w.origin.nanoseconds, endNs: w.endTime.nanoseconds, frames: packets.frameCount, bytes: w.bytes,
            truncatedStart: packets.truncatedStart, truncatedEnd: packets.truncatedEnd, savedAt: Date().timeIntervalSince1970)
        try library.add(record, thumbnail: thumbnail)
        shared.withLock { $0.savedClips.append(record); $0.status.problem = nil; $0.status.clipsSaved += 1 }
        log.notice("video: clip \(record.id) saved (\(record.frames) frames, \(w.bytes / 1024) KiB)\(record.truncatedEnd ? Self.cutShort : "")")
    }

    /// Cuts every timed run whose post-roll is captured (all of them on the final pass, with
    /// what the ring holds). A run whose frames left the ring is logged and dropped; a write
    /// that fails is tried again in 2 s while the ring still holds the frames.
    private func serviceRuns(now: MonotonicInstant, final: Bool) {
        guard let shelf = runVideos, now >= retryRunsAfter || final else { return }
        let (runs, roll) = shared.withLock { ($0.pendingRuns, $0.roll) }
        guard !runs.isEmpty else { return }
        let newest = locked { ring.isEmpty ? nil : ring.time(ring.end - 1) }
        var done = 0
        for run in runs {
            var window = ClipWindow(mark: Mark(time: run.start, sequence: 0), roll: roll)
            window.end = run.finish + roll.postRoll
            guard final || (newest.map { window.isComplete(newest: $0) } ?? false) else { break }
            done += 1
            guard let packets = locked({ ClipPackets(window, in: ring) }) else {
                log.error("video: run \(run.id)'s frames left the buffer before its clip could be saved")
                continue
            }
            do {
                let started = clock()
                let w = try write(packets, window: window, to: shelf.partPath(run: run.id, source: .gate), what: "run \(run.id)'s clip")
                let record = RunVideoRecord(
                    runID: run.id, source: .gate, startSeconds: run.start.since(w.origin).seconds, width: config.width,
                    height: config.height, seconds: w.endTime.since(w.origin).seconds, frames: packets.frameCount, bytes: w.bytes,
                    truncatedStart: packets.truncatedStart, truncatedEnd: packets.truncatedEnd,
                    savedAt: Date().timeIntervalSince1970)
                try shelf.add(record)
                let spent = clock().since(started).seconds
                shared.withLock { $0.status.clipSeconds += spent }
                log.notice("video: run \(run.id)'s clip saved (\(record.frames ?? 0) frames, \(w.bytes / 1024) KiB)\(record.truncatedEnd ? Self.cutShort : "")")
            } catch {
                note("\(error)")
                done -= 1
                retryRunsAfter = now + .seconds(2)
                break
            }
        }
        shared.withLock { $0.pendingRuns.removeFirst(min(done, $0.pendingRuns.count)) }
    }

    /// Packet `n` decoded from its keyframe and encoded as a JPEG.
    private func picture(at n: UInt64, maxWidth: Int) throws -> [UInt8] {
        let key = locked { ring.contains(n) ? ring.keyframe(atOrBefore: n) : n }
        let chunk = copyPackets(from: key, through: n, limit: Int(n - key) + 1)
        guard chunk.first?.n == key else { throw FFmpegError("thumbnail", message: "the frame left the buffer") }
        let decoder = try VideoDecoder(parameters.withLock { $0! })
        let jpeg = try JPEGPictureEncoder(maxWidth: maxWidth)
        var out: [UInt8] = []
        for p in chunk {
            try p.bytes.withUnsafeBytes { b in try decoder.decode(b) { d in if p.n == n { out = try jpeg.encode(d) } } }
        }
        return out
    }

    // MARK: View thread

    /// While watched, or while a TV is open: decodes up to the packet due (captured `delay`
    /// ago), continuing from the last one shown, or from the due packet's keyframe after a
    /// jump, and publishes it as a JPEG for the page and paints it on the TV. The TV's page
    /// flip paces this loop at the display's refresh. Packets are copied out of the ring
    /// under its lock and decoded outside it.
    private func runView() {
        var decoder: VideoDecoder?
        var through: UInt64?
        var jpeg: JPEGPictureEncoder?
        var batch: [(bytes: [UInt8], n: UInt64)] = []
        // The TV's versus view: the live picture (the newest packet) decoded beside.
        var liveDecoder: VideoDecoder?
        var liveThrough: UInt64?
        var liveBatch: [(bytes: [UInt8], n: UInt64)] = []
        let versus = config.tv?.versus ?? false
        let tv = config.tv.map { TVFeed($0) { [log] in log.notice("\($0)") } }
        defer { tv?.close() }
        while !stopping.load(ordering: .relaxed) {
            let now = clock()
            let (wanted, delay) = shared.withLock { ($0.wantedUntil, $0.delay) }
            let onTV = tv?.ready(now: now) ?? false
            if let tv { shared.withLock { $0.status.tv = tv.state } }
            let watched = now <= wanted
            guard watched || onTV, let parameters = parameters.withLock({ $0 }) else {
                through = nil
                usleep(10_000)
                continue
            }
            // Only the TV watches and its next picture is not due: the packets wait (the
            // next pass decodes them with the newer ones).
            if !watched, let wait = tv?.untilNextPaint() {
                usleep(wait)
                continue
            }
            let paintTV = onTV && tv?.untilNextPaint() == nil
            batch.removeAll(keepingCapacity: true)
            var restart = false
            var dueTime = MonotonicInstant(nanoseconds: 0), dueSequence: UInt64 = 0
            var filling: Span?
            ringLock.lock()
            if !ring.isEmpty, let due = ring.newest(atOrBefore: now - delay.delay) {
                if due != through {
                    let key = ring.keyframe(atOrBefore: due)
                    var from = key
                    if let t = through, ring.contains(t), t < due, t >= key { from = t + 1 } else { restart = true }
                    for n in from...due { batch.append((Array(ring.bytes(n)), n)) }
                    dueTime = ring.time(due)
                    dueSequence = ring.sequence(due)
                    through = due
                    liveBatch.removeAll(keepingCapacity: true)
                    if versus && paintTV, let newest = ring.newest(atOrBefore: now), newest != liveThrough {
                        let key = ring.keyframe(atOrBefore: newest)
                        var from = key
                        if let t = liveThrough, ring.contains(t), t < newest, t >= key { from = t + 1 } else { liveDecoder = nil }
                        for n in from...newest { liveBatch.append((Array(ring.bytes(n)), n)) }
                        liveThrough = newest
                    }
                }
            } else {
                // Nothing captured `delay` ago yet: how long until there is.
                filling = ring.isEmpty ? delay.delay : Span(nanoseconds: delay.delay.nanoseconds - now.since(ring.time(ring.first)).nanoseconds)
            }
            ringLock.unlock()
            guard let last = batch.last else {
                if onTV, let filling {
                    tv!.showBlank(caption: "Delayed view in \(max(1, Int(filling.seconds.rounded(.up)))) s")
                }
                usleep(2_000)
                continue
            }
            do {
                if restart || decoder == nil { decoder = try VideoDecoder(parameters) }
                if watched && jpeg == nil { jpeg = try JPEGPictureEncoder(maxWidth: config.viewMaxWidth) }
                var picture: [UInt8]?
                for p in batch {
                    try p.bytes.withUnsafeBytes { b in
                        try decoder!.decode(b) { d in
                            guard p.n == last.n else { return }
                            if watched { picture = try jpeg!.encode(d) }
                            guard paintTV else { return }
                            let caption = "Delayed \(Self.seconds(delay.delay)) s"
                            guard versus, let liveLast = liveBatch.last else { return tv!.show(d, caption: caption) }
                            // Live on the left, delayed on the right: the live batch is decoded
                            // here, so both pictures are at hand at once.
                            if liveDecoder == nil { liveDecoder = try VideoDecoder(parameters) }
                            for l in liveBatch {
                                try l.bytes.withUnsafeBytes { lb in
                                    try liveDecoder!.decode(lb) { live in
                                        if l.n == liveLast.n { tv!.show(live: live, delayed: d, caption: caption) }
                                    }
                                }
                            }
                        }
                    }
                }
                if let picture {
                    let published = DelayedPicture(jpeg: picture, width: jpeg!.width, height: jpeg!.height, sequence: dueSequence,
                                                   time: dueTime, publishedAt: clock())
                    shared.withLock { $0.latest = published }
                }
            } catch {
                decoder = nil
                through = nil
                liveDecoder = nil
                liveThrough = nil
                note("delayed view: \(error)")
            }
        }
    }

    /// `5` or `2.5`: a delay as the TV's caption says it.
    static func seconds(_ s: Span) -> String {
        let tenths = Int((s.seconds * 10).rounded())
        return tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(tenths % 10)"
    }

    private func publishStatus() {
        let (span, bytes) = locked { (ring.span.seconds, ring.storedBytes) }
        // Frames in: copied on the loop or lent to this side; lost: no free slot, or taken
        // back by the loop (its camera closed) before they were copied.
        let (copied, dropped) = (tap.copied + tap.lent, tap.dropped + tap.reclaimed)
        let encoded = framesEncoded
        shared.withLock { s in
            s.status.framesIn = copied
            s.status.framesDropped = dropped
            s.status.framesEncoded = encoded
            s.status.bufferSeconds = span
            s.status.bufferBytes = bytes
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
