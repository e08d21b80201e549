// SPDX-License-Identifier: Apache-2.0
// Timed runs' videos: the clip the gate cut from before the start to after the finish, or
// a video a coach filmed on a phone, and either drawn over with the run's times.

public import FFmpegVideo
import Foundation
import Synchronization
public import VideoDelay

/// Run videos under one directory: `ID-gate.mp4` and `ID-phone.mp4` with a JSON record
/// beside each, and drawn copies (`ID-SOURCE-drawn-KEY.mp4`, re-made when the run or the
/// parts shown change). A video is written under a temporary name and renamed into place
/// before its record, so a power cut loses at most the video being written.
public final class RunVideoShelf: Sendable {
    public let directory: String
    private let records: Mutex<[String: RunVideoRecord]>
    /// One drawing at a time: a second request for the same copy finds it made, and a Pi's
    /// two or four cores are not split between two encodes.
    private let drawing = Mutex<Void>(())

    public init(directory: String) throws(ClipLibraryError) {
        self.directory = directory
        let fm = FileManager.default
        do { try fm.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
            throw ClipLibraryError(description: "cannot create the run video folder \(directory): \(error.localizedDescription)")
        }
        var found: [String: RunVideoRecord] = [:]
        for name in ((try? fm.contentsOfDirectory(atPath: directory)) ?? []).sorted() {
            let path = directory + "/" + name
            if name.hasSuffix(".part") {
                try? fm.removeItem(atPath: path)
                continue
            }
            guard name.hasSuffix(".json"), let data = fm.contents(atPath: path),
                  let r = try? JSONDecoder().decode(RunVideoRecord.self, from: data) else { continue }
            guard fm.fileExists(atPath: directory + "/" + Self.name(r.runID, r.source) + ".mp4") else { continue }
            found[Self.name(r.runID, r.source)] = r
        }
        records = Mutex(found)
    }

    static func name(_ run: Int64, _ source: RunVideoSource) -> String { "\(run)-\(source.rawValue)" }

    /// A run's videos: the gate's first.
    public func videos(run: Int64) -> [RunVideoRecord] {
        records.withLock { r in RunVideoSource.allCases.compactMap { r[Self.name(run, $0)] } }
    }

    public func video(run: Int64, source: RunVideoSource) -> RunVideoRecord? {
        records.withLock { $0[Self.name(run, source)] }
    }

    /// Runs that have a video of `source`.
    public func runs(with source: RunVideoSource) -> Set<Int64> {
        records.withLock { Set($0.values.filter { $0.source == source }.map(\.runID)) }
    }

    public func path(run: Int64, source: RunVideoSource) -> String { directory + "/" + Self.name(run, source) + ".mp4" }
    /// Where a video is written before it is complete.
    public func partPath(run: Int64, source: RunVideoSource) -> String { path(run: run, source: source) + ".part" }
    /// A drawn copy's path; `key` names what is drawn.
    public func drawnPath(run: Int64, source: RunVideoSource, key: String) -> String {
        directory + "/" + Self.name(run, source) + "-drawn-\(key).mp4"
    }

    /// Moves a complete video from its part path into place and records it, replacing
    /// what the run had from the same source (and its drawn copies).
    public func add(_ record: RunVideoRecord) throws(ClipLibraryError) {
        let fm = FileManager.default
        let name = Self.name(record.runID, record.source)
        removeDrawn(name)
        let final = path(run: record.runID, source: record.source)
        do {
            if fm.fileExists(atPath: final) { try fm.removeItem(atPath: final) }
            try fm.moveItem(atPath: final + ".part", toPath: final)
        } catch {
            throw ClipLibraryError(description: "cannot store run \(record.runID)'s video: \(error.localizedDescription)")
        }
        try write(record)
    }

    /// Replaces a record (a start marked on an uploaded video); its drawn copies go.
    public func update(_ record: RunVideoRecord) throws(ClipLibraryError) {
        guard video(run: record.runID, source: record.source) != nil else {
            throw ClipLibraryError(.unknown, description: "run \(record.runID) has no \(record.source.rawValue) video")
        }
        removeDrawn(Self.name(record.runID, record.source))
        try write(record)
    }

    private func write(_ record: RunVideoRecord) throws(ClipLibraryError) {
        let name = Self.name(record.runID, record.source)
        do {
            let data = try JSONEncoder().encode(record)
            try data.write(to: URL(fileURLWithPath: directory + "/" + name + ".json"), options: .atomic)
        } catch {
            throw ClipLibraryError(description: "cannot store run \(record.runID)'s video record: \(error.localizedDescription)")
        }
        records.withLock { $0[name] = record }
    }

    /// Deletes a run's video from `source`, with its record and drawn copies.
    public func delete(run: Int64, source: RunVideoSource) {
        let name = Self.name(run, source)
        records.withLock { _ = $0.removeValue(forKey: name) }
        try? FileManager.default.removeItem(atPath: directory + "/" + name + ".json")
        try? FileManager.default.removeItem(atPath: directory + "/" + name + ".mp4")
        removeDrawn(name)
    }

    /// Keeps a video uploaded for run `run` (the file at `upload`, moved here), replacing
    /// the one it had. A file that is not a readable video is refused and deleted.
    public func importVideo(run: Int64, from upload: String) throws(ClipLibraryError) -> RunVideoRecord {
        let info: MediaInfo
        do { info = try MediaFile(path: upload).info } catch {
            try? FileManager.default.removeItem(atPath: upload)
            throw ClipLibraryError(.invalid, description: "the upload is not a video the gate can read: \(error.message)")
        }
        let bytes = ((try? FileManager.default.attributesOfItem(atPath: upload))?[.size] as? Int) ?? 0
        do { try FileManager.default.moveItem(atPath: upload, toPath: partPath(run: run, source: .phone)) } catch {
            try? FileManager.default.removeItem(atPath: upload)
            throw ClipLibraryError(description: "cannot store run \(run)'s video: \(error.localizedDescription)")
        }
        let turned = info.rotation == 90 || info.rotation == 270
        let record = RunVideoRecord(runID: run, source: .phone, startSeconds: nil, width: turned ? info.height : info.width,
                                    height: turned ? info.width : info.height, seconds: info.duration ?? 0, frames: info.frames,
                                    bytes: bytes, savedAt: Date().timeIntervalSince1970)
        try add(record)
        return record
    }

    /// Marks where the run starts on its uploaded video, seconds of the video's timeline
    /// (as the page's player reports the frame shown).
    public func setStart(run: Int64, seconds: Double) throws(ClipLibraryError) -> RunVideoRecord {
        guard var record = video(run: run, source: .phone) else {
            throw ClipLibraryError(.unknown, description: "run \(run) has no uploaded video")
        }
        guard seconds.isFinite, seconds >= 0, record.seconds <= 0 || seconds <= record.seconds else {
            throw ClipLibraryError(.invalid, description: "the start must be within the video, 0 to \(record.seconds) s")
        }
        record.startSeconds = seconds
        try update(record)
        return record
    }

    /// Seconds of an uploaded video kept around the run in its drawn copy.
    public static let phoneMargin = 3.0

    /// The run's video from `source` with `facts` drawn on it (the parts in `parts`), made
    /// once and kept until the video, its start or what is drawn changes. Blocks while it
    /// draws (seconds: a decode and an encode of the clip). An uploaded video is drawn from
    /// `phoneMargin` before the start to as long after the finish.
    public func drawn(run: Int64, source: RunVideoSource, facts: RunOverlayFacts, parts: Set<OverlayPart>,
                      encoder: H264EncoderKind = .x264) throws(ClipLibraryError) -> String {
        guard let record = video(run: run, source: source) else {
            throw ClipLibraryError(.unknown, description: "run \(run) has no \(source == .gate ? "clip from the gate" : "uploaded video")")
        }
        guard let start = record.startSeconds else {
            throw ClipLibraryError(.conflict, description: "mark the frame where run \(run) starts on the uploaded video first")
        }
        let key = Self.key("\(parts.map(\.rawValue).sorted())|\(start)|\(facts)")
        let out = drawnPath(run: run, source: source, key: key)
        return try drawing.withLock { _ throws(ClipLibraryError) -> String in
            if FileManager.default.fileExists(atPath: out) { return out }
            removeDrawn(Self.name(run, source))
            let part = out + ".part"
            do {
                let renderer = try OverlayRenderer(source: path(run: run, source: source))
                let texts = facts.texts(width: renderer.width, height: renderer.height, start: start, parts: parts)
                let window: (Double?, Double?) = source == .phone
                    ? (max(0, start - Self.phoneMargin), start + facts.total + Self.phoneMargin) : (nil, nil)
                _ = try renderer.render(texts, from: window.0, to: window.1, into: part, encoder: encoder)
                try FileManager.default.moveItem(atPath: part, toPath: out)
            } catch {
                try? FileManager.default.removeItem(atPath: part)
                let kind: ClipLibraryError.Kind = (error as? FFmpegError)?.isDiskFull == true ? .storage : .invalid
                throw ClipLibraryError(kind, description: "cannot draw run \(run)'s times on its video: \(error)")
            }
            return out
        }
    }

    /// FNV-1a of `text`, hex: names a drawn copy by what is drawn on it.
    static func key(_ text: String) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in text.utf8 {
            h ^= UInt64(b)
            h = h &* 0x100_0000_01b3
        }
        return String(h, radix: 16)
    }

    private func removeDrawn(_ name: String) {
        let fm = FileManager.default
        for f in ((try? fm.contentsOfDirectory(atPath: directory)) ?? []) where f.hasPrefix(name + "-drawn-") {
            try? fm.removeItem(atPath: directory + "/" + f)
        }
    }
}

/// What a run's overlay shows, in the words and numbers drawn.
public struct RunOverlayFacts: Sendable, Hashable {
    /// One gate passed on the way (not the finish).
    public struct Split: Sendable, Hashable {
        /// `20 m`, or `Split 1` without distances.
        public var label: String
        /// From the start, seconds.
        public var seconds: Double
        /// The segment's speed as drawn, e.g. `9.1 m/s`; nil without distances.
        public var speed: String?
        public init(label: String, seconds: Double, speed: String?) {
            self.label = label
            self.seconds = seconds
            self.speed = speed
        }
    }
    /// Run type and distance, e.g. `Flying 30 m`.
    public var title: String
    public var athlete: String?
    /// The run's time, seconds.
    public var total: Double
    public var splits: [Split]
    /// The average speed as drawn, e.g. `8.52 m/s · 30.7 km/h`; nil without a distance.
    public var speed: String?

    public init(title: String, athlete: String?, total: Double, splits: [Split], speed: String?) {
        self.title = title
        self.athlete = athlete
        self.total = total
        self.splits = splits
        self.speed = speed
    }

    /// Seconds with three decimals, `1:02.345` from a minute on.
    public static func time(_ s: Double) -> String {
        let ms = Int((max(0, s) * 1000).rounded())
        let frac = ms % 1000
        let digits = frac < 10 ? "00\(frac)" : frac < 100 ? "0\(frac)" : "\(frac)"
        if ms >= 60_000 {
            let sec = (ms / 1000) % 60
            return "\(ms / 60_000):\(sec < 10 ? "0" : "")\(sec).\(digits)"
        }
        return "\(ms / 1000).\(digits)"
    }

    /// The texts for a `width`×`height` video whose run starts at `start` seconds of its
    /// timeline. Sizes follow the picture's short side (a phone's portrait video too): the
    /// running clock large at the bottom left, turning into the run's time at the finish;
    /// the athlete and run type at the top left; each split under them from the instant
    /// its gate is crossed; the speed above the clock from the finish.
    public func texts(width: Int, height: Int, start: Double, parts: Set<OverlayPart>) -> [OverlayText] {
        let u = Double(min(width, height)) / 720
        func px(_ v: Double) -> Int { max(1, Int((v * u).rounded())) }
        let margin = px(28)
        let finish = start + total
        var out: [OverlayText] = []
        var y = margin
        if parts.contains(.athlete), let athlete, !athlete.isEmpty {
            out.append(OverlayText(.fixed(athlete), x: margin, y: y, size: px(40)))
            y += px(58)
        }
        if parts.contains(.type), !title.isEmpty {
            out.append(OverlayText(.fixed(title), x: margin, y: y, size: px(30)))
            y += px(50)
        }
        if parts.contains(.splits) {
            for s in splits {
                var line = "\(s.label)  \(Self.time(s.seconds))"
                if parts.contains(.speed), let v = s.speed { line += "  \(v)" }
                out.append(OverlayText(.fixed(line), x: margin, y: y, size: px(30), from: start + s.seconds, colour: "#ffd34d"))
                y += px(46)
            }
        }
        let clockSize = px(96)
        let clockY = height - margin - clockSize
        if parts.contains(.speed), let speed {
            out.append(OverlayText(.fixed(speed), x: margin, y: clockY - px(60), size: px(36), from: finish))
        }
        if parts.contains(.time) {
            out.append(OverlayText(.clock(start: start, minutes: total >= 60), x: margin, y: clockY, size: clockSize, until: finish))
            out.append(OverlayText(.fixed(Self.time(total)), x: margin, y: clockY, size: clockSize, from: finish, colour: "#ffd34d"))
        }
        return out
    }
}
