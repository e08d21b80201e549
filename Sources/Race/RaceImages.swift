// SPDX-License-Identifier: Apache-2.0
// Images of crossings from gates to the host: chunked, paced, acknowledged chunk by chunk.

public import GateCore
public import PeerWire

/// What an image transfer carries.
public enum RaceMedia: Sendable, Hashable {
    /// A `PhotoBundle` (photo-finish image and thumbnails), in `thumbnailChunk`s.
    case photo
    /// A `FrameStrip` (the frames around the crossing), in `calibrationFrames`.
    case frames
}

/// A gate's image of one of its crossings, whole at the host.
public struct RacePhoto: Sendable, Hashable {
    /// The crossing as the host took it (its run, gate index and network time).
    public var crossing: RaceCrossing
    /// The gate's `PhotoBundle` or `FrameStrip` bytes (see `media`), as sent (the owner
    /// decodes and checks them).
    public var bundle: [UInt8]
    public var media: RaceMedia = .photo
}

/// Counters of image transfers, for logs and tests.
public struct ImageTransferCounts: Sendable, Hashable {
    /// Gate: images queued for the host; delivered (every chunk acknowledged); given up
    /// (too old, the host changed, or more waiting than `ImageSender.maxTransfers`).
    public var queued = 0, delivered = 0, abandoned = 0
    /// Gate: chunks sent, first sends and repeats together.
    public var chunksSent = 0
    /// Host: images assembled; dropped (no crossing of that id within the wait, or
    /// pushed out by newer ones).
    public var assembled = 0, dropped = 0
}

/// Gate side: each image is cut into chunks, sent a few per loop iteration, and the
/// chunks the host's last acknowledgement lacks are sent again with a doubling back-off.
struct ImageSender: Sendable {
    /// Images in flight at once. Why 8: a photo and a frame strip come 0.6 s after their
    /// crossing and take well under a second to deliver; eight cover a pack of four
    /// through a lap gate.
    static let maxTransfers = 8
    /// Crossings remembered for matching their photos. Why 16: a photo comes within a
    /// second of its crossing.
    static let recentCrossings = 16

    private struct Transfer: Sendable {
        var media: RaceMedia
        var imageID: UInt32
        var to: GateID
        var chunks: [ThumbnailChunk]
        var acked: [Bool]
        /// Next chunk to send in the current pass; `chunks.count` when the pass is done.
        var cursor = 0
        var due: MonotonicInstant
        var backoff: Span
        var started: MonotonicInstant
    }

    private var transfers: [Transfer] = []
    private var recent: [(id: UInt32, time: MonotonicInstant)] = []
    var counts = ImageTransferCounts()

    /// Images not yet delivered.
    var pending: Int { transfers.count }

    mutating func crossingReported(id: UInt32, time: MonotonicInstant) {
        recent.append((id, time))
        if recent.count > Self.recentCrossings { recent.removeFirst() }
    }

    /// The id of the crossing reported at `time` (the photo carries the same instant).
    func crossingID(at time: MonotonicInstant) -> UInt32? {
        recent.last { $0.time == time }?.id
    }

    /// Queues `bundle` for `host`; false when it cannot be chunked.
    mutating func add(_ media: RaceMedia, imageID: UInt32, bundle: [UInt8], to host: GateID, now: MonotonicInstant,
                      backoff: Span) -> Bool {
        guard let chunks = ThumbnailChunk.split(imageID: imageID, image: bundle) else { return false }
        transfers.removeAll { $0.media == media && $0.imageID == imageID && $0.to == host }
        if transfers.count >= Self.maxTransfers {
            transfers.removeFirst()
            counts.abandoned += 1
        }
        transfers.append(Transfer(media: media, imageID: imageID, to: host, chunks: chunks, acked: Array(repeating: false, count: chunks.count),
                                  due: now, backoff: backoff, started: now))
        counts.queued += 1
        return true
    }

    mutating func ack(_ media: RaceMedia, _ a: ThumbnailAck, from gate: GateID) {
        guard let i = transfers.firstIndex(where: { $0.media == media && $0.imageID == a.imageID && $0.to == gate }),
              Int(a.chunkCount) == transfers[i].chunks.count else { return }
        for c in transfers[i].chunks.indices where a.has(c) { transfers[i].acked[c] = true }
        if transfers[i].acked.allSatisfy({ $0 }) {
            transfers.remove(at: i)
            counts.delivered += 1
        }
    }

    /// Drops every transfer (the host is gone or the session ended).
    mutating func abandonAll() {
        counts.abandoned += transfers.count
        transfers.removeAll()
    }

    /// Sends up to `budget` chunks, oldest image first: the rest of a pass, or a new pass
    /// over the unacknowledged chunks once the back-off is due. Transfers older than
    /// `giveUp` are dropped.
    mutating func tick(now: MonotonicInstant, budget: Int, maxBackoff: Span, giveUp: Span,
                       send: (RaceMedia, ThumbnailChunk, GateID) -> Void) {
        let before = transfers.count
        transfers.removeAll { now.since($0.started) > giveUp }
        counts.abandoned += before - transfers.count
        var left = budget
        for i in transfers.indices where left > 0 {
            if transfers[i].cursor >= transfers[i].chunks.count {
                guard now >= transfers[i].due else { continue }
                transfers[i].cursor = 0  // A new pass over what is still missing.
            }
            while left > 0, transfers[i].cursor < transfers[i].chunks.count {
                let c = transfers[i].cursor
                transfers[i].cursor += 1
                guard !transfers[i].acked[c] else { continue }
                send(transfers[i].media, transfers[i].chunks[c], transfers[i].to)
                counts.chunksSent += 1
                left -= 1
            }
            if transfers[i].cursor >= transfers[i].chunks.count {
                transfers[i].due = now + transfers[i].backoff
                transfers[i].backoff = min(maxBackoff, Span(nanoseconds: transfers[i].backoff.nanoseconds * 2))
            }
        }
    }
}

/// Host side: chunks are assembled per (gate, boot epoch, image id); every chunk is
/// answered with the bitmap of what is held. A whole image waits for its crossing.
struct ImageReceiver: Sendable {
    /// Images assembled at once. Why 16: two images in flight from each of 8 gates.
    static let maxAssemblies = 16
    /// Whole images waiting for their crossing. Why 8: a crossing normally arrives long
    /// before its photo; these only ride out a gate whose clock is not synced yet.
    static let maxWaiting = 8
    /// Images finished recently, answered with a full bitmap if their chunks come again.
    static let rememberedDone = 64

    struct Key: Hashable, Sendable {
        var media: RaceMedia
        var gate: GateID
        var bootEpoch: UInt32
        var imageID: UInt32
    }

    private struct Assembly: Sendable {
        var parts: [[UInt8]?]
        var received: Int
        var lastHeard: MonotonicInstant
    }

    private var assemblies: [Key: Assembly] = [:]
    private var done: [Key] = []
    private(set) var waiting: [(key: Key, bytes: [UInt8], since: MonotonicInstant)] = []
    var counts = ImageTransferCounts()

    /// Takes one chunk; returns the acknowledgement to send back and, when the image is
    /// now whole, its bytes (also queued in `waiting`).
    mutating func chunk(_ media: RaceMedia, _ c: ThumbnailChunk, from gate: GateID, bootEpoch: UInt32,
                        now: MonotonicInstant) -> ThumbnailAck {
        let key = Key(media: media, gate: gate, bootEpoch: bootEpoch, imageID: c.imageID)
        let count = Int(c.chunkCount)
        if done.contains(key) {
            return ThumbnailAck(imageID: c.imageID, flags: Array(repeating: true, count: count))
        }
        var a = assemblies[key] ?? Assembly(parts: Array(repeating: nil, count: count), received: 0, lastHeard: now)
        if a.parts.count != count {
            a = Assembly(parts: Array(repeating: nil, count: count), received: 0, lastHeard: now)  // Sent again, cut differently.
        }
        if a.parts[Int(c.chunkIndex)] == nil {
            a.parts[Int(c.chunkIndex)] = c.bytes
            a.received += 1
        }
        a.lastHeard = now
        let flags = a.parts.map { $0 != nil }
        if a.received == count {
            assemblies[key] = nil
            done.append(key)
            if done.count > Self.rememberedDone { done.removeFirst() }
            counts.assembled += 1
            waiting.append((key, a.parts.flatMap { $0! }, now))
            if waiting.count > Self.maxWaiting {
                waiting.removeFirst()
                counts.dropped += 1
            }
        } else {
            if assemblies[key] == nil, assemblies.count >= Self.maxAssemblies,
               let oldest = assemblies.min(by: { $0.value.lastHeard < $1.value.lastHeard })?.key {
                assemblies[oldest] = nil
            }
            assemblies[key] = a
        }
        return ThumbnailAck(imageID: c.imageID, flags: flags)
    }

    /// Hands each waiting image whose crossing `crossing(key)` finds to `deliver`; drops
    /// those older than `maxWait`, and assemblies silent that long.
    mutating func resolve(now: MonotonicInstant, maxWait: Span, crossing: (Key) -> RaceCrossing?, deliver: (RacePhoto) -> Void) {
        if !assemblies.isEmpty {
            for (k, a) in assemblies where now.since(a.lastHeard) > maxWait { assemblies[k] = nil }
        }
        guard !waiting.isEmpty else { return }
        var kept: [(key: Key, bytes: [UInt8], since: MonotonicInstant)] = []
        for w in waiting {
            if let c = crossing(w.key) {
                deliver(RacePhoto(crossing: c, bundle: w.bytes, media: w.key.media))
            } else if now.since(w.since) <= maxWait {
                kept.append(w)
            } else {
                counts.dropped += 1
            }
        }
        waiting = kept
    }

    mutating func clear() {
        assemblies.removeAll()
        waiting.removeAll()
    }
}
