// SPDX-License-Identifier: Apache-2.0
// Datagram security: tags, truncation, flips, coalescing, reordering, replay, epochs, sessions.

import GateCore
import PeerAuth
import PeerWire
import Testing

private let groupKey = try! PairingKey(pairingCode: "track-7Q4X-92")

private func makeGuard(_ gate: UInt32, epoch: UInt32 = 1, session: SessionID? = SessionID(77),
                       key: PairingKey = groupKey) -> PeerGuard {
    PeerGuard(key: key, localGate: GateID(gate), bootEpoch: epoch, session: session)
}

private func accepted(_ opened: Opened) -> Received? {
    if case .accepted(let received) = opened { return received }
    return nil
}

private func dropReason(_ opened: Opened) -> DropReason? {
    if case .dropped(let reason) = opened { return reason }
    return nil
}

private let ping = Message.ping(Ping(t1: MonotonicInstant(nanoseconds: 42)))

@Suite struct PeerGuardTests {
    @Test func sealedMessagesOfEveryTypeOpen() throws {
        var sender = makeGuard(1)
        var receiver = makeGuard(2)
        for (i, message) in sampleMessages.enumerated() {
            let datagram = try sender.seal(message)
            #expect(datagram.count <= Wire.maxDatagramLength)
            let received = try #require(accepted(receiver.open(datagram)))
            #expect(received.envelope == Envelope(session: SessionID(77), sender: GateID(1), bootEpoch: 1,
                                                  sequence: UInt32(i + 1), message: message))
            #expect(received.firstFromSender == (i == 0))
        }
        #expect(receiver.acceptedCount == UInt64(sampleMessages.count))
        #expect(receiver.drops.total == 0)
    }

    @Test func sealIntoCallerBuffer() throws {
        var sender = makeGuard(1)
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = try buffer.withUnsafeMutableBytes { try sender.seal(ping, into: $0) }
        #expect(count == Wire.headerLength + 8 + PeerGuard.tagLength)
        var receiver = makeGuard(2)
        #expect(accepted(receiver.open(Array(buffer[..<count]))) != nil)
        // Room for the message but not the tag: refused, and the sequence does not advance.
        var tight = [UInt8](repeating: 0, count: Wire.headerLength + 8 + 15)
        #expect(throws: SealError.wire(.bufferTooSmall)) {
            _ = try tight.withUnsafeMutableBytes { try sender.seal(ping, into: $0) }
        }
        #expect(sender.nextSequence == 2)
    }

    @Test func everyTruncationIsDroppedWithoutStateChange() throws {
        var sender = makeGuard(1)
        var receiver = makeGuard(2)
        for message in sampleMessages {
            let datagram = try sender.seal(message)
            for length in 0 ..< datagram.count {
                #expect(dropReason(receiver.open(Array(datagram[..<length]))) == .truncated, "length \(length)")
            }
            #expect(receiver.window(of: GateID(1)) == nil || receiver.window(of: GateID(1))!.highest < sender.nextSequence - 1)
            #expect(accepted(receiver.open(datagram)) != nil)
        }
        #expect(receiver.drops.total == receiver.drops[.truncated])
        #expect(receiver.acceptedCount == UInt64(sampleMessages.count))
    }

    /// Any single changed byte makes the datagram fail: the tag covers header and payload,
    /// and the magic, version and length fail earlier checks.
    @Test func everySingleByteFlipIsDropped() throws {
        var sender = makeGuard(1)
        for message in sampleMessages.prefix(12) {
            let datagram = try sender.seal(message)
            for index in datagram.indices {
                for mask: UInt8 in [0x01, 0x80, 0xFF] {
                    var receiver = makeGuard(2)
                    var flipped = datagram
                    flipped[index] ^= mask
                    let reason = try #require(dropReason(receiver.open(flipped)), "flip at \(index) accepted")
                    switch index {
                    case 0, 1: #expect(reason == .malformed)
                    case 2: #expect(reason == .wrongVersion)
                    case 20, 21: #expect(reason == .truncated || reason == .malformed)
                    default: #expect(reason == .unauthenticated)
                    }
                    #expect(receiver.window(of: GateID(1)) == nil)
                    #expect(receiver.acceptedCount == 0)
                }
            }
        }
    }

    @Test func randomCorruptionIsRejectedByAuthentication() throws {
        var rng = SeededRandom(defaultSeed: 7_2026)
        var sender = makeGuard(1)
        var receiver = makeGuard(2)
        let datagrams = try sampleMessages.map { try sender.seal($0) }
        for _ in 0 ..< 20_000 {
            let original = datagrams[Int.random(in: 0 ..< datagrams.count, using: &rng)]
            var bytes = original
            let flips = Int.random(in: 1 ... 4, using: &rng)
            for _ in 0 ..< flips {
                let i = Int.random(in: Wire.headerLength ..< bytes.count, using: &rng)
                bytes[i] = UInt8.random(in: 0 ... 255, using: &rng)
            }
            // Why compare the whole datagram: a later flip may put back a byte an earlier changed.
            guard bytes != original else { continue }
            #expect(dropReason(receiver.open(bytes)) == .unauthenticated)
        }
        #expect(receiver.acceptedCount == 0)
        #expect(receiver.window(of: GateID(1)) == nil)
    }

    @Test func coalescedDatagramsAreDropped() throws {
        var sender = makeGuard(1)
        var receiver = makeGuard(2)
        let a = try sender.seal(ping)
        let b = try sender.seal(.endSession)
        #expect(dropReason(receiver.open(a + b)) == .malformed)
        #expect(dropReason(receiver.open(a + [0])) == .malformed)
        // Both still arrive on their own afterwards: the drop changed nothing.
        #expect(accepted(receiver.open(a)) != nil)
        #expect(accepted(receiver.open(b)) != nil)
    }

    @Test func wrongPairingCodeIsUnauthenticated() throws {
        var stranger = makeGuard(1, key: try PairingKey(pairingCode: "track-7Q4X-93"))
        var receiver = makeGuard(2)
        for message in sampleMessages {
            #expect(dropReason(receiver.open(try stranger.seal(message))) == .unauthenticated)
        }
        #expect(receiver.drops[.unauthenticated] == UInt64(sampleMessages.count))
    }

    /// The tag is HKDF-SHA256 then HMAC-SHA256 as RFC 5869 and RFC 2104 define them, so gates
    /// of every release (and any other implementation) agree. The expected bytes were
    /// computed with Python's hmac and hashlib from the same code, salt and info.
    @Test func tagsMatchTheStandardConstructions() {
        let message = (0 ..< 40).map { UInt8($0) }
        let tag = message.withUnsafeBytes { PeerGuard.authenticationTag(for: $0, key: groupKey) }
        #expect(hex(tag) == "e86b3d7efa80382edf8277d1a222cd43")
        let empty = [UInt8]().withUnsafeBytes { PeerGuard.authenticationTag(for: $0, key: groupKey) }
        #expect(hex(empty) == "4dbed78f03f8fbcb3baa63e272f75b21")
        // Another code's key gives another tag.
        let other = try! PairingKey(pairingCode: "track-7Q4X-93")
        #expect(message.withUnsafeBytes { PeerGuard.authenticationTag(for: $0, key: other) } != tag)
    }

    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    @Test func pairingCodesAreNormalisedAndValidated() throws {
        var a = makeGuard(1, key: try PairingKey(pairingCode: "ab12 cd34"))
        var b = makeGuard(2, key: try PairingKey(pairingCode: "AB12-CD34"))
        #expect(accepted(b.open(try a.seal(ping))) != nil)
        #expect(try PairingKey(pairingCode: " ab-12 cd34 ").normalisedCode == "AB12CD34")
        #expect(throws: PairingCodeError.tooShort) { try PairingKey(pairingCode: "12-34 5") }
        #expect(throws: PairingCodeError.tooLong) { try PairingKey(pairingCode: String(repeating: "A", count: 65)) }
        #expect(throws: PairingCodeError.invalidCharacter) { try PairingKey(pairingCode: "träck123") }
        #expect(throws: PairingCodeError.invalidCharacter) { try PairingKey(pairingCode: "abc_12345") }
    }

    /// Datagrams shuffled within the window arrive once each; every repeat is dropped.
    @Test func reorderedDuplicatedAndReplayedSequences() throws {
        var rng = SeededRandom(defaultSeed: 31_337)
        var sender = makeGuard(1)
        var receiver = makeGuard(2)
        let datagrams = try (0 ..< 640).map { i in
            try sender.seal(.crossingAck(CrossingAck(gate: GateID(1), crossingID: UInt32(i))))
        }
        // Shuffle within blocks of 32: a reordering the 64-wide window absorbs.
        var order: [Int] = []
        for block in stride(from: 0, to: datagrams.count, by: 32) {
            order += Array(block ..< block + 32).shuffled(using: &rng)
        }
        var seen = Set<UInt32>()
        var duplicatesSent = 0
        for i in order {
            let received = try #require(accepted(receiver.open(datagrams[i])))
            seen.insert(received.envelope.sequence)
            // Now and then the network duplicates a datagram.
            if Int.random(in: 0 ..< 5, using: &rng) == 0 {
                duplicatesSent += 1
                #expect(dropReason(receiver.open(datagrams[i])) == .replayed)
            }
        }
        #expect(seen.count == datagrams.count)
        // A replay of the whole capture: every datagram refused.
        for datagram in datagrams.shuffled(using: &rng) {
            #expect(dropReason(receiver.open(datagram)) == .replayed)
        }
        #expect(receiver.drops[.replayed] == UInt64(duplicatesSent + datagrams.count))
        #expect(receiver.acceptedCount == UInt64(datagrams.count))
    }

    @Test func datagramsOlderThanTheWindowAreDropped() throws {
        var sender = makeGuard(1)
        var receiver = makeGuard(2)
        let datagrams = try (0 ..< 100).map { _ in try sender.seal(ping) }
        #expect(accepted(receiver.open(datagrams[99])) != nil)  // Sequence 100 first.
        #expect(accepted(receiver.open(datagrams[99 - 63])) != nil)  // 37: inside the window.
        #expect(dropReason(receiver.open(datagrams[99 - 64])) == .replayed)  // 36: too old to tell.
        #expect(dropReason(receiver.open(datagrams[0])) == .replayed)
    }

    /// A restarted gate (larger boot epoch) is taken back at once; datagrams of its earlier
    /// life are refused from then on.
    @Test func restartedSenderRejoinsAndOldEpochIsRefused() throws {
        var before = makeGuard(1, epoch: 5)
        var receiver = makeGuard(2)
        let old = try (0 ..< 10).map { _ in try before.seal(ping) }
        for datagram in old.prefix(5) { #expect(accepted(receiver.open(datagram)) != nil) }

        var after = makeGuard(1, epoch: 6)  // Restarted: sequence starts again at 1.
        let first = try #require(accepted(receiver.open(try after.seal(ping))))
        #expect(first.senderRestarted)
        #expect(first.envelope.sequence == 1)
        #expect(receiver.window(of: GateID(1))?.epoch == 6)
        for datagram in old {
            #expect(dropReason(receiver.open(datagram)) == .staleEpoch)
        }
        #expect(accepted(receiver.open(try after.seal(ping)))?.senderRestarted == false)

        // A gate that comes back with an epoch it used before is refused until it passes it.
        var confused = makeGuard(1, epoch: 4)
        #expect(dropReason(receiver.open(try confused.seal(ping))) == .staleEpoch)
        #expect(receiver.drops[.staleEpoch] == 11)
    }

    @Test func sessionFilterLetsDiscoveryThrough() throws {
        var otherSession = makeGuard(1, session: SessionID(78))
        var receiver = makeGuard(2, session: SessionID(77))
        #expect(dropReason(receiver.open(try otherSession.seal(ping))) == .wrongSession)
        let hello = Message.announce(Announce(gateName: "Start", roleWish: .start, listeningPort: 47_800))
        #expect(accepted(receiver.open(try otherSession.seal(hello))) != nil)
        let config = Message.sessionConfig(SessionConfig(startType: .flying, runID: 1, gateCount: 2, name: "x"))
        #expect(accepted(receiver.open(try otherSession.seal(config))) != nil)
        var lobby = makeGuard(3, session: nil)
        #expect(accepted(lobby.open(try otherSession.seal(ping))) != nil)
        // The dropped ping did not advance gate 1's window: its sequence 1 was refused for the
        // session, sequence 2 and 3 were accepted, so 1 is still fresh in the window.
        #expect(receiver.window(of: GateID(1))?.check(epoch: 1, sequence: 1) == .fresh)
    }

    @Test func ownDatagramsComingBackAreDropped() throws {
        var me = makeGuard(1)
        let datagram = try me.seal(ping)
        #expect(dropReason(me.open(datagram)) == .reflected)
        #expect(me.window(of: GateID(1)) == nil)
    }

    @Test func otherVersionIsCountedAsWrongVersion() throws {
        var sender = makeGuard(1)
        var receiver = makeGuard(2)
        var datagram = try sender.seal(ping)
        datagram[2] = 4
        #expect(dropReason(receiver.open(datagram)) == .wrongVersion)
        #expect(dropReason(receiver.open([0x53, 0x47, 2])) == .truncated)
        #expect(dropReason(receiver.open(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))) == .malformed)
        #expect(receiver.drops[.wrongVersion] == 1)
    }

    @Test func senderTableIsBounded() throws {
        var receiver = makeGuard(0)
        for gate in 1 ... UInt32(PeerGuard.maxPeers) {
            var peer = makeGuard(gate)
            #expect(accepted(receiver.open(try peer.seal(ping))) != nil)
        }
        var extra = makeGuard(UInt32(PeerGuard.maxPeers) + 1)
        let datagram = try extra.seal(ping)
        #expect(dropReason(receiver.open(datagram)) == .tooManyPeers)
        receiver.forget(GateID(1))
        #expect(accepted(receiver.open(datagram)) != nil)
    }
}

@Suite struct ReplayWindowTests {
    /// The window against a model that remembers every sequence number: they agree on
    /// everything inside the window, and the window refuses everything older.
    @Test func agreesWithAnExactModel() {
        var rng = SeededRandom(defaultSeed: 99)
        var window = ReplayWindow(epoch: 1, sequence: 1)
        var seen: Set<UInt32> = [1]
        var highest: UInt32 = 1
        for _ in 0 ..< 50_000 {
            let jump = Int64.random(in: -80 ... 40, using: &rng)
            let sequence = UInt32(clamping: max(1, Int64(highest) + jump))
            let verdict = window.check(epoch: 1, sequence: sequence)
            if sequence > highest {
                #expect(verdict == .fresh)
            } else if highest - sequence >= ReplayWindow.width {
                #expect(verdict == .tooOld)
            } else {
                #expect(verdict == (seen.contains(sequence) ? .duplicate : .fresh))
            }
            if verdict == .fresh {
                window.commit(epoch: 1, sequence: sequence)
                seen.insert(sequence)
                highest = max(highest, sequence)
            }
            #expect(window.highest == highest)
        }
    }

    @Test func epochsAndZero() {
        var window = ReplayWindow(epoch: 3, sequence: 10)
        #expect(window.check(epoch: 2, sequence: 11) == .staleEpoch)
        #expect(window.check(epoch: 4, sequence: 1) == .newEpoch)
        #expect(window.check(epoch: 3, sequence: 0) == .tooOld)
        #expect(window.check(epoch: 3, sequence: UInt32.max) == .fresh)
        window.commit(epoch: 3, sequence: UInt32.max)
        #expect(window.check(epoch: 3, sequence: 10) == .tooOld)
        window.commit(epoch: 4, sequence: 1)
        #expect(window.epoch == 4 && window.highest == 1)
        #expect(window.check(epoch: 4, sequence: 1) == .duplicate)
    }
}
