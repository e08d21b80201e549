// SPDX-License-Identifier: Apache-2.0
// Delay sessions and their clips: one folder a session with an MP4 and a thumbnail a clip,
// and the history (sessions, clips, scores) in SQLite beside them.

public import Archery
import FFmpegVideo
import Foundation
import Synchronization
public import VideoDelay

/// Why the library refused something.
public struct ClipLibraryError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// No such session.
        case unknown
        /// The request does not fit the session's state (no face chosen yet, nothing to undo).
        case conflict
        /// A value was refused (a shaft diameter out of range, a position that is no number).
        case invalid
        /// The disk refused a write.
        case storage
    }
    public let kind: Kind
    public let description: String
    init(_ kind: Kind = .storage, description: String) {
        self.kind = kind
        self.description = description
    }
}

/// Sessions and clips under one directory. Any thread may read; the video thread writes.
/// A power cut loses at most the clip being written: a clip is written under a temporary
/// name and renamed into place, then its session's rows are written in one transaction.
public final class ClipLibrary: Sendable {
    public let directory: String
    private struct Held {
        var sessions: [SessionRecord]
        /// Score cards in use, with their undo history; read from the sheets when first asked.
        var cards: [String: ScoreCard] = [:]
        /// Bytes each clip's MP4 and thumbnail take, by clip id: read from the disk once at
        /// start and when a clip is saved, so the page's status poll stats nothing.
        var fileBytes: [String: Int] = [:]
        /// The highest clip index handed out in each session, so the video thread and a
        /// trim never write the same one.
        var handedOut: [String: Int] = [:]
    }
    private let state: Mutex<Held>
    /// The session history (SQLite); the clips' files are under `directory`.
    private let store: VideoSessionStore

    public init(directory: String) throws(ClipLibraryError) {
        self.directory = directory
        let fm = FileManager.default
        do { try fm.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
            throw ClipLibraryError(description: "cannot create the clip folder \(directory): \(error.localizedDescription)")
        }
        store = try VideoSessionStore(path: directory + "/sessions.sqlite")
        var sessions = try store.load()
        let names = ((try? fm.contentsOfDirectory(atPath: directory)) ?? []).sorted()
        for name in names {
            // A clip cut off by a power loss leaves its temporary file: remove it.
            for leftover in ((try? fm.contentsOfDirectory(atPath: directory + "/" + name)) ?? []) where leftover.hasSuffix(".part") {
                try? fm.removeItem(atPath: directory + "/" + name + "/" + leftover)
            }
            // A session kept by an older version in its folder's manifest moves into the
            // database once.
            guard !store.contains(name), let data = fm.contents(atPath: directory + "/" + name + "/session.json"),
                  let s = try? JSONDecoder().decode(SessionRecord.self, from: data), s.id == name else { continue }
            try store.save(s)
            sessions.append(s)
        }
        sessions.sort { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }
        // Clips whose file is missing (deleted by hand) are not listed.
        for i in sessions.indices {
            sessions[i].clips = sessions[i].clips.filter { fm.fileExists(atPath: directory + "/" + $0.session + "/\($0.index).mp4") }
        }
        var held = Held(sessions: sessions)
        for c in sessions.flatMap(\.clips) { held.fileBytes[c.id] = Self.bytesOnDisk(c, in: directory) }
        state = Mutex(held)
    }

    public var sessions: [SessionRecord] { state.withLock { $0.sessions } }

    /// Every clip, newest session first, in order within a session.
    public var clips: [ClipRecord] { sessions.reversed().flatMap(\.clips) }

    func sessionDirectory(_ id: String) -> String { directory + "/" + id }

    /// Starts a session named after `wallTime` (local time, to the second; a suffix when
    /// two start within one second).
    func begin(wallTime: Date, delaySeconds: Double, preRoll: Double, postRoll: Double) throws(ClipLibraryError) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = "yyyyMMdd-HHmmss"
        var id = f.string(from: wallTime)
        let taken = Set(sessions.map(\.id))
        var n = 2
        while taken.contains(id) || FileManager.default.fileExists(atPath: sessionDirectory(id)) {
            id = f.string(from: wallTime) + "-\(n)"
            n += 1
        }
        do { try FileManager.default.createDirectory(atPath: sessionDirectory(id), withIntermediateDirectories: true) } catch {
            throw ClipLibraryError(description: "cannot create \(sessionDirectory(id)): \(error.localizedDescription)")
        }
        let record = SessionRecord(id: id, startedAt: wallTime.timeIntervalSince1970, endedAt: nil, delaySeconds: delaySeconds,
                                   preRollSeconds: preRoll, postRollSeconds: postRoll, clips: [])
        try store.save(record)
        state.withLock { $0.sessions.append(record) }
        return id
    }

    /// Where the video thread writes clip `index` of `session` before `add`.
    func partPath(session: String, index: Int) -> String { sessionDirectory(session) + "/\(index).mp4.part" }

    /// Moves a finished clip into place with its thumbnail and lists it.
    func add(_ clip: ClipRecord, thumbnail: [UInt8]?) throws(ClipLibraryError) {
        let dir = sessionDirectory(clip.session)
        let fm = FileManager.default
        do {
            if let thumbnail {
                try Data(thumbnail).write(to: URL(fileURLWithPath: dir + "/\(clip.index).jpg"), options: .atomic)
            }
            if fm.fileExists(atPath: dir + "/\(clip.index).mp4") { try fm.removeItem(atPath: dir + "/\(clip.index).mp4") }
            try fm.moveItem(atPath: partPath(session: clip.session, index: clip.index), toPath: dir + "/\(clip.index).mp4")
        } catch {
            throw ClipLibraryError(description: "cannot save clip \(clip.index) in \(dir): \(error.localizedDescription)")
        }
        let bytes = Self.bytesOnDisk(clip, in: directory)
        try update(clip.session) { (r: inout SessionRecord, held: inout Held) throws(ClipLibraryError) in
            r.clips.append(clip)
            held.fileBytes[clip.id] = bytes
        }
    }

    /// Marks a session ended.
    func end(_ id: String, wallTime: Date) throws(ClipLibraryError) {
        try update(id) { $0.endedAt = wallTime.timeIntervalSince1970 }
    }

    /// Changes session `id` and stores it, all under the lock, so the video
    /// thread's clips and the page's scoring never overwrite each other.
    private func update<T>(_ id: String, _ body: (inout SessionRecord, inout Held) throws(ClipLibraryError) -> T) throws(ClipLibraryError) -> T {
        try state.withLock { (held: inout Held) throws(ClipLibraryError) -> T in
            guard let i = held.sessions.firstIndex(where: { $0.id == id }) else {
                throw ClipLibraryError(.unknown, description: "there is no session \(id)")
            }
            // Changed on copies, kept only once stored: a failed write changes nothing.
            var record = held.sessions[i]
            var changed = held
            let result = try body(&record, &changed)
            try store.save(record)
            changed.sessions[i] = record
            held = changed
            return result
        }
    }

    private func update(_ id: String, _ body: (inout SessionRecord) -> Void) throws(ClipLibraryError) {
        try update(id) { (r: inout SessionRecord, _: inout Held) throws(ClipLibraryError) in body(&r) }
    }

    // MARK: Archery scores

    /// Session `id`'s score card, nil when it has not been scored.
    public func scoreCard(_ id: String) throws(ClipLibraryError) -> ScoreCard? {
        try state.withLock { (held: inout Held) throws(ClipLibraryError) -> ScoreCard? in
            guard let record = held.sessions.first(where: { $0.id == id }) else {
                throw ClipLibraryError(.unknown, description: "there is no session \(id)")
            }
            return try Self.card(record, in: &held)
        }
    }

    /// Chooses the face, bow, shaft and end size session `id` is scored with. Refused once
    /// arrows are placed (their points belong to the face they were placed on).
    @discardableResult
    public func setUpScore(_ id: String, face: TargetFace, bow: BowClass, arrowDiameter: Double,
                           arrowsPerEnd: Int) throws(ClipLibraryError) -> ScoreCard {
        try update(id) { (record: inout SessionRecord, held: inout Held) throws(ClipLibraryError) -> ScoreCard in
            if let arrows = record.archery?.arrows, !arrows.isEmpty {
                throw ClipLibraryError(.conflict, description: "\(arrows.count) arrow(s) are placed on this session's face: undo them to choose another face")
            }
            let card: ScoreCard
            do throws(ScoreCardError) { card = try ScoreCard(face: face, bow: bow, arrowDiameter: arrowDiameter, arrowsPerEnd: arrowsPerEnd) } catch {
                throw ClipLibraryError(.invalid, description: error.description)
            }
            record.archery = card.sheet
            held.cards[id] = card
            return card
        }
    }

    /// Places, moves or takes back an arrow on session `id`'s card; returns the card.
    @discardableResult
    public func changeScore(_ id: String, _ change: ScoreChange) throws(ClipLibraryError) -> ScoreCard {
        try update(id) { (record: inout SessionRecord, held: inout Held) throws(ClipLibraryError) -> ScoreCard in
            guard var card = try Self.card(record, in: &held) else {
                throw ClipLibraryError(.conflict, description: "choose the target face for session \(id) first")
            }
            do throws(ScoreCardError) { try card.apply(change) } catch {
                throw ClipLibraryError(change == .undo ? .conflict : .invalid, description: error.description)
            }
            record.archery = card.sheet
            held.cards[id] = card
            return card
        }
    }

    private static func card(_ record: SessionRecord, in held: inout Held) throws(ClipLibraryError) -> ScoreCard? {
        if let c = held.cards[record.id] { return c }
        guard let sheet = record.archery else { return nil }
        do {
            let c = try ScoreCard(sheet: sheet)
            held.cards[record.id] = c
            return c
        } catch {
            throw ClipLibraryError(.invalid, description: "session \(record.id)'s score cannot be read back: \(error.description)")
        }
    }

    /// Hands out the next free clip index in a session (never the same one twice).
    func nextIndex(_ session: String) -> Int {
        state.withLock { held in
            let saved = held.sessions.first { $0.id == session }?.clips.map(\.index).max() ?? 0
            let n = max(saved, held.handedOut[session] ?? 0) + 1
            held.handedOut[session] = n
            return n
        }
    }

    /// Saves the part from `from` to `to` seconds (the player's timeline) of clip `id` as a
    /// new clip of its session, kind `trim`, cut without re-encoding (it starts at the
    /// keyframe before `from`, hidden by an edit list); its thumbnail is the source's.
    /// Blocks while it copies: call it off the web's event loop.
    public func trim(_ id: String, from: Double, to: Double) throws(ClipLibraryError) -> ClipRecord {
        guard let source = clip(id) else { throw ClipLibraryError(.unknown, description: "there is no clip \(id)") }
        // Written under a name of its own, numbered only once it is there (a `.part` left
        // by a power cut is cleared at start).
        let scratch = sessionDirectory(source.session) + "/trim-\(UUID().uuidString).mp4.part"
        let cut: MediaFile.Trimmed
        do throws(FFmpegError) {
            cut = try MediaFile(path: videoPath(source)).trim(from: from, to: to, into: scratch)
        } catch {
            try? FileManager.default.removeItem(atPath: scratch)
            throw ClipLibraryError(error.isDiskFull ? .storage : .invalid, description: error.description)
        }
        let index = nextIndex(source.session)
        let part = partPath(session: source.session, index: index)
        do { try FileManager.default.moveItem(atPath: scratch, toPath: part) } catch {
            try? FileManager.default.removeItem(atPath: scratch)
            throw ClipLibraryError(description: "cannot save the trimmed clip: \(error.localizedDescription)")
        }
        let bytes = ((try? FileManager.default.attributesOfItem(atPath: part))?[.size] as? Int) ?? 0
        let record = ClipRecord(id: "\(source.session)-\(index)", session: source.session, index: index, kind: "trim",
                                markNs: source.markNs, markSequence: source.markSequence,
                                startNs: source.startNs + Int64((cut.first * 1e9).rounded()),
                                endNs: source.startNs + Int64((cut.last * 1e9).rounded()), frames: cut.frames, bytes: bytes,
                                truncatedStart: false, savedAt: Date().timeIntervalSince1970)
        try add(record, thumbnail: FileManager.default.contents(atPath: thumbnailPath(source)).map { [UInt8]($0) })
        return record
    }

    public func clip(_ id: String) -> ClipRecord? { sessions.lazy.flatMap(\.clips).first { $0.id == id } }
    public func videoPath(_ clip: ClipRecord) -> String { sessionDirectory(clip.session) + "/\(clip.index).mp4" }
    public func thumbnailPath(_ clip: ClipRecord) -> String { sessionDirectory(clip.session) + "/\(clip.index).jpg" }

    /// Deletes clips by id; a session left with no clips, ended and not scored goes too.
    /// Returns how many clips were deleted.
    @discardableResult
    public func delete(_ ids: [String]) -> Int {
        let wanted = Set(ids)
        var deleted = 0
        let fm = FileManager.default
        for record in sessions {
            let gone = record.clips.filter { wanted.contains($0.id) }
            guard !gone.isEmpty else { continue }
            for c in gone {
                try? fm.removeItem(atPath: videoPath(c))
                try? fm.removeItem(atPath: thumbnailPath(c))
                deleted += 1
            }
            try? update(record.id) { (r: inout SessionRecord, held: inout Held) throws(ClipLibraryError) in
                r.clips.removeAll { wanted.contains($0.id) }
                for c in gone { held.fileBytes[c.id] = nil }
            }
            state.withLock { held in
                guard let i = held.sessions.firstIndex(where: { $0.id == record.id }) else { return }
                let r = held.sessions[i]
                if r.clips.isEmpty && r.endedAt != nil && r.archery == nil, (try? store.delete(r.id)) != nil {
                    try? fm.removeItem(atPath: sessionDirectory(r.id))
                    held.sessions.remove(at: i)
                }
            }
        }
        return deleted
    }

    /// Deletes a whole session: its clips, score and folder. The caller makes sure it is not
    /// the open one.
    public func deleteSession(_ id: String) throws(ClipLibraryError) {
        try state.withLock { (held: inout Held) throws(ClipLibraryError) in
            guard let i = held.sessions.firstIndex(where: { $0.id == id }) else {
                throw ClipLibraryError(.unknown, description: "there is no session \(id)")
            }
            try store.delete(id)
            // The history no longer lists it; a folder that cannot be removed only takes space.
            try? FileManager.default.removeItem(atPath: sessionDirectory(id))
            for c in held.sessions[i].clips { held.fileBytes[c.id] = nil }
            held.sessions.remove(at: i)
            held.cards[id] = nil
        }
    }

    /// Deletes every session but `open` (the one being recorded, which goes on), each as
    /// `deleteSession` does. Returns how many sessions went; one whose row cannot be
    /// deleted stays listed.
    @discardableResult
    public func deleteSessions(except open: String?) -> Int {
        sessions.filter { $0.id != open }.reduce(0) { n, r in (try? deleteSession(r.id)) != nil ? n + 1 : n }
    }

    /// Bytes the clips and thumbnails take on disk (as measured when each was saved).
    public var storageBytes: Int { state.withLock { $0.fileBytes.values.reduce(0, +) } }

    /// Bytes of a clip's MP4 and thumbnail under `directory`.
    private static func bytesOnDisk(_ c: ClipRecord, in directory: String) -> Int {
        let dir = directory + "/" + c.session + "/\(c.index)"
        return [dir + ".mp4", dir + ".jpg"].reduce(0) { total, p in
            total + (((try? FileManager.default.attributesOfItem(atPath: p))?[.size] as? Int) ?? 0)
        }
    }
}
