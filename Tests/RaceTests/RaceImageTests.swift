// SPDX-License-Identifier: Apache-2.0
// Images of crossings from the gates to the host in virtual time: whole at 10 % loss,
// each exactly once, paced, and given up when the host goes away.

import GateCore
import PeerWire
import Race
import Testing

@Suite struct RaceImageTests {
    static let s: Int64 = 1_000_000_000
    static let ids = [GateID(0x1111), GateID(0x2222), GateID(0x3333), GateID(0x4444)]
    static let lossy = SimulatedLink(delay: .milliseconds(5), jitter: .milliseconds(3), loss: 0.10, duplicate: 0.05, reorder: 0.10)

    /// A bundle of `bytes` pseudo-random bytes behind a JPEG marker, different per `seed`.
    static func bundle(bytes: Int, seed: UInt64) -> [UInt8] {
        var rng = SplitMix64(seed: seed)
        let photo = [0xFF, 0xD8] + (0 ..< bytes).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        return PhotoBundle(photo: photo, thumbnails: [[0xFF, 0xD8, 1, 2, 3]]).encoded()!
    }

    /// A frame strip of twelve frames of about `bytes / 12` bytes each, different per `seed`.
    static func strip(bytes: Int, seed: UInt64) -> [UInt8] {
        var rng = SplitMix64(seed: seed)
        let frames = (0 ..< 12).map { i in
            FrameStrip.Frame(offsetMicroseconds: Int32(i * 8_333 - 50_000),
                             jpeg: [0xFF, 0xD8] + (0 ..< bytes / 12).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        }
        return FrameStrip(gateX: 80, frames: frames).encoded()!
    }

    /// Four gates at 0, 20, 40 and 60 m, the host at the start, synced.
    static func course(link: SimulatedLink, seed: UInt64) throws -> RaceSimulation {
        var sim = RaceSimulation(gateIDs: ids, clocks: [(0, 0), (-1_300_000_000, 40), (250_000_000, -25), (3 * s, 15)],
                                 link: link, seed: seed)
        sim.run(until: 15 * s)
        for (i, id) in ids.enumerated().dropFirst() { try sim.assign(id, role: i == 3 ? .finish : .lap, distanceMetres: Double(i) * 20) }
        sim.run(until: 16 * s)
        return sim
    }

    /// Every gate's photo and frame strip of every crossing of four runs reach the host
    /// whole and once, at 10 % loss with duplicates and reordering; each is tied to its
    /// crossing's run and place on the course. The photos are 70 KiB (70 chunks), like a
    /// real photo finish, the strips 40 KiB.
    @Test(arguments: [UInt64(1), 2, 3])
    func everyGatesPhotosReachTheHostWholeAtTenPercentLoss(seed: UInt64) throws {
        var sim = try Self.course(link: Self.lossy, seed: seed)
        #expect(sim.gates[0].session.phase == .ready)
        var t = 16 * Self.s
        var sent: [(runID: UInt32, gateIndex: Int, bundle: [UInt8], media: RaceMedia)] = []
        for run in 0 ..< 4 {
            try sim.armRun()
            t += Self.s
            sim.run(until: t)
            let runID = sim.gates[0].session.runID
            let times = (0 ..< 4).map { t + 100_000_000 + Int64($0) * 2_300_000_000 + Int64(run) * 7_000_000 }
            for (g, at) in times.enumerated() { sim.crossing(atGate: g, trueTime: at) }
            // Each photo 0.6 s after its crossing, as the recorder hands it over.
            for (g, at) in times.enumerated() {
                sim.run(until: at + 600_000_000)
                let b = Self.bundle(bytes: 70_000 + g * 1000 + run, seed: seed &* 100 &+ UInt64(run * 4 + g))
                let taken = sim.photo(atGate: g, crossingTrueTime: at, bundle: b)
                let f = Self.strip(bytes: 40_000 + g, seed: seed &* 1000 &+ UInt64(run * 4 + g))
                let stripTaken = sim.photo(atGate: g, crossingTrueTime: at, bundle: f, media: .frames)
                // The host keeps its own photos (its owner stores them); gates send theirs.
                #expect(taken == (g != 0) && stripTaken == (g != 0), "run \(run) gate \(g)")
                if g != 0 { sent += [(runID, g, b, .photo), (runID, g, f, .frames)] }
            }
            t = times.last! + 3 * Self.s
            sim.run(until: t)
            #expect(sim.gates[0].session.phase == .finished, "run \(run)")
        }
        #expect(sim.hostPhotos.count == sent.count)
        // Photo and strip of one crossing may arrive in either order.
        func key(_ x: (UInt32, Int, RaceMedia)) -> String { "\(x.0)/\(x.1)/\(x.2)" }
        let received = Dictionary(grouping: sim.hostPhotos) { key(($0.crossing.runID, $0.crossing.gateIndex, $0.media)) }
        #expect(received.count == sent.count && received.values.allSatisfy { $0.count == 1 })
        for want in sent {
            let p = try #require(received[key((want.runID, want.gateIndex, want.media))]?.first)
            #expect(p.bundle == want.bundle)
            #expect(p.crossing.gate == Self.ids[want.gateIndex])
        }
        for i in 1 ..< 4 {
            let c = sim.gates[i].session.imageCounts
            #expect(c.queued == 8 && c.delivered == 8 && c.abandoned == 0, "gate \(i): \(c)")
            #expect(sim.gates[i].session.imagesInFlight == 0)
        }
        // Loss cost repeats, but not whole images again: under 30 % more chunks than needed.
        let needed = sent.reduce(0) { $0 + ($1.bundle.count + ThumbnailChunk.maxBytes - 1) / ThumbnailChunk.maxBytes }
        print("seed \(seed): \(sent.count) photos and strips, \(sim.chunksSent) chunks sent for \(needed) (\(sim.chunkAcks) acknowledgements)")
        #expect(sim.chunksSent >= needed && Double(sim.chunksSent) <= 1.3 * Double(needed), "\(sim.chunksSent) chunks for \(needed)")
        #expect(sim.lost > 0 && sim.undecodable == 0)
    }

    /// Chunks leave a few per loop iteration, not in one burst.
    @Test func chunksArePacedPerIteration() throws {
        var sim = try Self.course(link: SimulatedLink(), seed: 1)
        try sim.armRun()
        sim.run(until: 17 * Self.s)
        let at = 17 * Self.s + 100_000_000
        sim.crossing(atGate: 2, trueTime: at)
        sim.run(until: at + 1_000_000)
        let before = sim.chunksSent
        let taken1 = sim.photo(atGate: 2, crossingTrueTime: at, bundle: Self.bundle(bytes: 50_000, seed: 9))
        #expect(taken1)
        #expect(sim.chunksSent - before == RaceConfiguration().imageChunksPerTick)
        sim.run(until: at + 2 * Self.s)
        #expect(sim.hostPhotos.count == 1 && sim.gates[2].session.imageCounts.delivered == 1)
    }

    /// A photo of no reported crossing, or from a gate outside a session, goes nowhere.
    @Test func photosOfUnreportedCrossingsGoNowhere() throws {
        var sim = try Self.course(link: SimulatedLink(), seed: 1)
        try sim.armRun()
        sim.run(until: 17 * Self.s)
        let taken2 = sim.photo(atGate: 1, crossingTrueTime: 17 * Self.s, bundle: Self.bundle(bytes: 1000, seed: 1))
        #expect(!taken2)
        let at = 17 * Self.s + 100_000_000
        sim.crossing(atGate: 1, trueTime: at)
        sim.run(until: at + 10_000_000)
        // A microsecond off is another crossing.
        let taken3 = sim.photo(atGate: 1, crossingTrueTime: at + 1_000, bundle: Self.bundle(bytes: 1000, seed: 1))
        #expect(!taken3)
        // Too large to chunk.
        let huge = [UInt8](repeating: 0xAB, count: ThumbnailChunk.maxChunks * ThumbnailChunk.maxBytes + 1)
        let taken4 = sim.photo(atGate: 1, crossingTrueTime: at, bundle: huge)
        #expect(!taken4)
        let taken5 = sim.photo(atGate: 1, crossingTrueTime: at, bundle: Self.bundle(bytes: 1000, seed: 1))
        #expect(taken5)
        sim.run(until: at + Self.s)
        #expect(sim.hostPhotos.count == 1)
    }

    /// A host that goes silent mid-transfer: the gate gives the image up when it loses
    /// the host, and sends nothing more of it to anyone.
    @Test func aLostHostEndsTheTransfer() throws {
        var sim = try Self.course(link: SimulatedLink(), seed: 1)
        try sim.armRun()
        sim.run(until: 17 * Self.s)
        let at = 17 * Self.s + 100_000_000
        sim.crossing(atGate: 3, trueTime: at)
        sim.run(until: at + 10_000_000)
        sim.powerOff(0)
        let taken6 = sim.photo(atGate: 3, crossingTrueTime: at, bundle: Self.bundle(bytes: 60_000, seed: 4))
        #expect(taken6)
        sim.run(until: at + 10 * Self.s)
        let c = sim.gates[3].session.imageCounts
        #expect(c.delivered == 0 && c.abandoned == 1 && sim.gates[3].session.imagesInFlight == 0)
        #expect(sim.hostPhotos.isEmpty)
    }

    /// The host answers chunks of an image it already holds with a full bitmap (the
    /// gate's repeats after a lost last acknowledgement), and takes a bad bitmap from
    /// nobody: the codec refuses it.
    @Test func acknowledgementBitmaps() throws {
        let ack = ThumbnailAck(imageID: 7, flags: [true, false, true, true, false, false, false, false, true])
        #expect(ack.chunkCount == 9 && ack.received == [0b0000_1101, 0b1])
        #expect(ack.has(0) && !ack.has(1) && ack.has(8) && !ack.has(9) && !ack.complete)
        #expect(ThumbnailAck(imageID: 7, flags: Array(repeating: true, count: 256)).complete)
        let bad = Envelope(session: SessionID(1), sender: GateID(1), bootEpoch: 1, sequence: 1,
                           message: .thumbnailAck(ThumbnailAck(imageID: 7, chunkCount: 9, received: [0xFF, 0b10])))
        #expect(throws: WireError.self) { try bad.encoded() }
    }
}
