// SPDX-License-Identifier: Apache-2.0
// Delay sessions and their clips on disk: one folder a session, an MP4 and a thumbnail a
// clip, and a manifest rewritten atomically after each clip.

import Foundation
import Synchronization
public import VideoDelay

/// Why the library refused something.
public struct ClipLibraryError: Error, Hashable, Sendable, CustomStringConvertible {
    public let description: String
}

/// Sessions and clips under one directory. Any thread may read; the video thread writes.
/// A power cut loses at most the clip being written: a clip is written under a temporary
/// name and renamed into place, then the manifest is replaced atomically.
public final class ClipLibrary: Sendable {
    public let directory: String
    private let state: Mutex<[SessionRecord]>

    public init(directory: String) throws(ClipLibraryError) {
        self.directory = directory
        let fm = FileManager.default
        do { try fm.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
            throw ClipLibraryError(description: "cannot create the clip folder \(directory): \(error.localizedDescription)")
        }
        var sessions: [SessionRecord] = []
        let names = (try? fm.contentsOfDirectory(atPath: directory)) ?? []
        for name in names.sorted() {
            let manifest = directory + "/" + name + "/session.json"
            guard let data = fm.contents(atPath: manifest) else { continue }
            guard let s = try? JSONDecoder().decode(SessionRecord.self, from: data) else { continue }
            // Clips whose file is missing (deleted by hand) are not listed.
            var kept = s
            kept.clips = s.clips.filter { fm.fileExists(atPath: directory + "/" + name + "/\($0.index).mp4") }
            sessions.append(kept)
            // A clip cut off by a power loss leaves its temporary file: remove it.
            for leftover in ((try? fm.contentsOfDirectory(atPath: directory + "/" + name)) ?? []) where leftover.hasSuffix(".part") {
                try? fm.removeItem(atPath: directory + "/" + name + "/" + leftover)
            }
        }
        state = Mutex(sessions)
    }

    public var sessions: [SessionRecord] { state.withLock { $0 } }

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
        try write(record)
        state.withLock { $0.append(record) }
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
        guard var record = sessions.first(where: { $0.id == clip.session }) else {
            throw ClipLibraryError(description: "no session \(clip.session)")
        }
        record.clips.append(clip)
        try write(record)
        replace(record)
    }

    /// Marks a session ended.
    func end(_ id: String, wallTime: Date) throws(ClipLibraryError) {
        guard var record = sessions.first(where: { $0.id == id }) else { return }
        record.endedAt = wallTime.timeIntervalSince1970
        try write(record)
        replace(record)
    }

    /// The next free clip index in a session.
    func nextIndex(_ session: String) -> Int {
        (sessions.first { $0.id == session }?.clips.map(\.index).max() ?? 0) + 1
    }

    private func replace(_ record: SessionRecord) {
        state.withLock { s in
            if let i = s.firstIndex(where: { $0.id == record.id }) { s[i] = record }
        }
    }

    private func write(_ record: SessionRecord) throws(ClipLibraryError) {
        let path = sessionDirectory(record.id) + "/session.json"
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
            try encoder.encode(record).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw ClipLibraryError(description: "cannot write \(path): \(error.localizedDescription)")
        }
    }

    public func clip(_ id: String) -> ClipRecord? { sessions.lazy.flatMap(\.clips).first { $0.id == id } }
    public func videoPath(_ clip: ClipRecord) -> String { sessionDirectory(clip.session) + "/\(clip.index).mp4" }
    public func thumbnailPath(_ clip: ClipRecord) -> String { sessionDirectory(clip.session) + "/\(clip.index).jpg" }

    /// Deletes clips by id; a session left with no clips and ended goes too. Returns how
    /// many clips were deleted.
    @discardableResult
    public func delete(_ ids: [String]) -> Int {
        let wanted = Set(ids)
        var deleted = 0
        let fm = FileManager.default
        for var record in sessions {
            let gone = record.clips.filter { wanted.contains($0.id) }
            guard !gone.isEmpty else { continue }
            for c in gone {
                try? fm.removeItem(atPath: videoPath(c))
                try? fm.removeItem(atPath: thumbnailPath(c))
                deleted += 1
            }
            record.clips.removeAll { wanted.contains($0.id) }
            if record.clips.isEmpty && record.endedAt != nil {
                try? fm.removeItem(atPath: sessionDirectory(record.id))
                state.withLock { $0.removeAll { $0.id == record.id } }
            } else {
                try? write(record)
                replace(record)
            }
        }
        return deleted
    }

    /// Bytes the clips and thumbnails take on disk.
    public var storageBytes: Int {
        var total = 0
        for c in sessions.flatMap(\.clips) {
            for p in [videoPath(c), thumbnailPath(c)] {
                total += ((try? FileManager.default.attributesOfItem(atPath: p))?[.size] as? Int) ?? 0
            }
        }
        return total
    }
}
