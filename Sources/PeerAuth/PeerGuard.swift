// SPDX-License-Identifier: Apache-2.0
// Seals outgoing and opens incoming datagrams: authentication tag, replay window, drop counts.

internal import CPeerMAC
import Foundation
public import PeerWire

/// Why an incoming datagram was dropped.
public enum DropReason: Int, Error, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Shorter than its header, payload and tag.
    case truncated
    /// Not a SprintGate datagram, coalesced or padded, or a payload the decoder refuses
    /// (only counted after the tag verified, except for magic, length and size checks).
    case malformed
    /// Another protocol version.
    case wrongVersion
    /// The tag does not verify: another group's key, a corrupted or forged datagram.
    case unauthenticated
    /// A sequence number already accepted, or too old for the window.
    case replayed
    /// From an earlier boot epoch of a sender that has since restarted.
    case staleEpoch
    /// Authentic, but for another session than this gate's.
    case wrongSession
    /// Carries this gate's own id: its own broadcast looped back, or reflected at it.
    case reflected
    /// From a new sender while `PeerGuard.maxPeers` senders are already tracked.
    case tooManyPeers

    public var description: String {
        switch self {
        case .truncated: return "truncated"
        case .malformed: return "malformed"
        case .wrongVersion: return "wrong-version"
        case .unauthenticated: return "unauthenticated"
        case .replayed: return "replayed"
        case .staleEpoch: return "stale-epoch"
        case .wrongSession: return "wrong-session"
        case .reflected: return "reflected"
        case .tooManyPeers: return "too-many-peers"
        }
    }
}

/// Counts of dropped datagrams, per reason.
public struct DropCounts: Sendable, Hashable {
    private var counts = [UInt64](repeating: 0, count: DropReason.allCases.count)
    public init() {}
    public subscript(reason: DropReason) -> UInt64 {
        get { counts[reason.rawValue] }
        set { counts[reason.rawValue] = newValue }
    }
    /// All drops together.
    public var total: UInt64 { counts.reduce(0, &+) }
}

/// An accepted datagram.
public struct Received: Sendable, Hashable {
    public var envelope: Envelope
    /// True for the first datagram of a newer boot epoch from a sender already known: it
    /// restarted, so its earlier state (pending acks, clock samples) is void.
    public var senderRestarted: Bool
    /// True for the first datagram ever accepted from this sender.
    public var firstFromSender: Bool
}

/// What `PeerGuard.open` made of a datagram.
public enum Opened: Sendable, Hashable {
    case accepted(Received)
    case dropped(DropReason)
}

/// Why `PeerGuard.seal` could not produce a datagram.
public struct SealError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Kind: Hashable, Sendable { case wire(WireError), sequenceExhausted, noTag }
    private let kind: Kind
    private init(_ kind: Kind) { self.kind = kind }

    /// The message could not be encoded (a value out of range, a buffer too small).
    public static func wire(_ error: WireError) -> Self { Self(.wire(error)) }
    /// 2³² − 1 datagrams were sent in this boot epoch: the gate must restart with a
    /// larger epoch (at 100 datagrams a second that is after 16 months).
    public static let sequenceExhausted = Self(.sequenceExhausted)
    /// The system's libcrypto could not compute the tag (out of memory).
    public static let noTag = Self(.noTag)

    public var description: String {
        switch kind {
        case .wire(let error): return "cannot encode message: \(error)"
        case .sequenceExhausted: return "sequence numbers of this boot epoch exhausted; restart the gate"
        case .noTag: return "libcrypto could not compute the datagram's tag (out of memory?)"
        }
    }
}

/// Authenticates this gate's datagrams and checks its peers'.
///
/// Every datagram is `header ‖ payload ‖ tag`, where the tag is the first 16 bytes of
/// HMAC-SHA256(key, header ‖ payload) with the key from `PairingKey`.
///
/// Why HMAC and not an AEAD (ChaCha20-Poly1305): nothing on the wire is secret, but
/// everything must be authentic. An AEAD needs a nonce that never repeats under one key;
/// the natural nonce here (sender, boot epoch, sequence) would repeat if a gate without
/// a real-time clock restarted with an epoch it had used before, and a repeated nonce
/// gives away the keystream and lets an attacker forge Poly1305 tags. With HMAC such a
/// restart only makes the peers refuse the gate's datagrams as stale until its epoch
/// is past the old one. Plain headers also keep captures readable with tshark. A 128-bit
/// tag (RFC 2104 allows truncation to half the hash) leaves forgery at 2⁻¹²⁸ per try.
///
/// Checks, in order, each dropping and counting without changing any state: size and
/// header (`truncated`, `malformed`, `wrongVersion`), exact length (`truncated`, or
/// `malformed` for coalesced datagrams), tag (`unauthenticated`), payload (`malformed`),
/// sender (`reflected`), session (`wrongSession`), replay window (`staleEpoch`,
/// `replayed`, `tooManyPeers`). Only a datagram that passes all of them moves its
/// sender's window.
///
/// The boot epoch must grow every time the gate starts (a counter kept on disk, or the
/// wall-clock seconds once the clock is set), so peers take the restarted gate's datagrams
/// and refuse replays of the old ones. A value type, used from one thread (the engine's).
public struct PeerGuard: Sendable {
    /// Bytes of the tag appended to each datagram.
    public static let tagLength = 16
    /// Senders tracked at most. Why: a race has at most 8 gates plus phones; 64 leaves
    /// room for gates replaced during a day while bounding memory against any flood.
    public static let maxPeers = 64

    private let key: [UInt8]
    /// This gate's id; datagrams carrying it as sender are dropped as `reflected`.
    public let localGate: GateID
    /// This gate's boot epoch, put in every datagram it seals.
    public let bootEpoch: UInt32
    /// The session this gate takes part in, put in every datagram it seals; when set,
    /// datagrams of other sessions are dropped (except `announce` and `sessionConfig`,
    /// through which gates find and join sessions). `nil` accepts every session.
    public var session: SessionID?
    /// The sequence number the next sealed datagram carries.
    public private(set) var nextSequence: UInt32 = 1
    /// Datagrams dropped so far, by reason.
    public private(set) var drops = DropCounts()
    /// Datagrams accepted so far.
    public private(set) var acceptedCount: UInt64 = 0
    private var windows: [GateID: ReplayWindow] = [:]

    public init(key: PairingKey, localGate: GateID, bootEpoch: UInt32, session: SessionID? = nil) {
        self.key = key.keyBytes
        self.localGate = localGate
        self.bootEpoch = bootEpoch
        self.session = session
    }

    /// The replay window of a sender, if it has been heard from.
    public func window(of sender: GateID) -> ReplayWindow? { windows[sender] }

    /// Forgets a sender's window (a gate removed from the group); its next datagram of any
    /// epoch is accepted as a first one.
    public mutating func forget(_ sender: GateID) { windows[sender] = nil }

    // MARK: Sealing

    /// Encodes `message` with this gate's header fields and the next sequence number,
    /// appends the tag and returns the datagram's length in `buffer`. The sequence number
    /// advances only when sealing succeeds.
    public mutating func seal(_ message: Message, into buffer: UnsafeMutableRawBufferPointer) throws(SealError) -> Int {
        guard nextSequence != UInt32.max else { throw .sequenceExhausted }
        let envelope = Envelope(session: session ?? .none, sender: localGate, bootEpoch: bootEpoch,
                                sequence: nextSequence, message: message)
        let length: Int
        do {
            length = try envelope.encode(into: buffer)
        } catch {
            throw .wire(error)
        }
        guard buffer.count - length >= Self.tagLength else { throw .wire(.bufferTooSmall) }
        let tagged = Self.withMAC(UnsafeRawBufferPointer(rebasing: buffer[..<length]), key: key) { mac in
            UnsafeMutableRawBufferPointer(rebasing: buffer[length ..< length + Self.tagLength])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: mac[..<Self.tagLength]))
            return true
        }
        guard tagged == true else { throw .noTag }
        nextSequence += 1
        return length + Self.tagLength
    }

    /// `seal(_:into:)` into a new array.
    public mutating func seal(_ message: Message) throws(SealError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Wire.maxDatagramLength)
        let result = out.withUnsafeMutableBytes { raw in
            Result { () throws(SealError) -> Int in try seal(message, into: raw) }
        }
        out.removeSubrange(try result.get()...)
        return out
    }

    // MARK: Opening

    /// Checks and decodes one received datagram. Never traps; a dropped datagram changes
    /// nothing but the drop count of its reason.
    public mutating func open(_ datagram: UnsafeRawBufferPointer) -> Opened {
        switch inspect(datagram) {
        case .failure(let reason):
            drops[reason] &+= 1
            return .dropped(reason)
        case .success(let received):
            let envelope = received.envelope
            if var window = windows[envelope.sender] {
                window.commit(epoch: envelope.bootEpoch, sequence: envelope.sequence)
                windows[envelope.sender] = window
            } else {
                windows[envelope.sender] = ReplayWindow(epoch: envelope.bootEpoch, sequence: envelope.sequence)
            }
            acceptedCount &+= 1
            return .accepted(received)
        }
    }

    /// `open(_:)` over an array.
    public mutating func open(_ datagram: [UInt8]) -> Opened {
        datagram.withUnsafeBytes { raw in open(raw) }
    }

    /// Every check of `open`, without changing anything.
    private func inspect(_ datagram: UnsafeRawBufferPointer) -> Result<Received, DropReason> {
        let header: Header
        do {
            header = try Header.parse(datagram)
        } catch {
            if error.isTruncation { return .failure(.truncated) }
            if error.isVersionMismatch { return .failure(.wrongVersion) }
            return .failure(.malformed)
        }
        let expected = header.messageLength + Self.tagLength
        guard datagram.count >= expected else { return .failure(.truncated) }
        guard datagram.count == expected else { return .failure(.malformed) }

        let message = UnsafeRawBufferPointer(rebasing: datagram[..<header.messageLength])
        let tag = UnsafeRawBufferPointer(rebasing: datagram[header.messageLength...])
        // A tag libcrypto could not compute authenticates nothing.
        let authentic = Self.withMAC(message, key: key) { mac in Self.constantTimeEqual(UnsafeRawBufferPointer(rebasing: mac[..<Self.tagLength]), tag, count: Self.tagLength) }
        guard authentic == true else { return .failure(.unauthenticated) }

        let envelope: Envelope
        do {
            envelope = try Envelope.decode(message)
        } catch {
            return .failure(error.isVersionMismatch ? .wrongVersion : .malformed)
        }
        guard envelope.sender != localGate else { return .failure(.reflected) }
        if let session, envelope.session != session {
            switch envelope.message.type {
            case .announce, .sessionConfig: break
            default: return .failure(.wrongSession)
            }
        }
        guard let window = windows[envelope.sender] else {
            guard windows.count < Self.maxPeers else { return .failure(.tooManyPeers) }
            guard envelope.sequence != 0 else { return .failure(.replayed) }
            return .success(Received(envelope: envelope, senderRestarted: false, firstFromSender: true))
        }
        switch window.check(epoch: envelope.bootEpoch, sequence: envelope.sequence) {
        case .fresh: return .success(Received(envelope: envelope, senderRestarted: false, firstFromSender: false))
        case .newEpoch: return .success(Received(envelope: envelope, senderRestarted: true, firstFromSender: false))
        case .duplicate, .tooOld: return .failure(.replayed)
        case .staleEpoch: return .failure(.staleEpoch)
        }
    }

    /// The tag a datagram whose header and payload are `message` carries under `key`: for
    /// tests and fuzzing, which need authentic datagrams with arbitrary contents.
    /// Empty when libcrypto cannot compute it.
    public static func authenticationTag(for message: UnsafeRawBufferPointer, key: PairingKey) -> [UInt8] {
        withMAC(message, key: key.keyBytes) { Array($0.prefix(tagLength)) } ?? []
    }

    /// Calls `body` with HMAC-SHA256(key, bytes), all 32 bytes, held on the stack; `nil`
    /// when libcrypto fails.
    private static func withMAC<R>(_ bytes: UnsafeRawBufferPointer, key: [UInt8], _ body: (UnsafeRawBufferPointer) -> R) -> R? {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Int(SG_HMAC_SHA256_LENGTH)) { out -> R? in
            let rc = key.withUnsafeBufferPointer { k in
                sg_hmac_sha256(k.baseAddress, k.count, bytes.baseAddress, bytes.count, out.baseAddress)
            }
            guard rc == 0 else { return nil }
            return body(UnsafeRawBufferPointer(out))
        }
    }

    /// Compares the first `count` bytes in time independent of where they differ.
    private static func constantTimeEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, count: Int) -> Bool {
        guard a.count >= count, b.count == count else { return false }
        var difference: UInt8 = 0
        for i in 0 ..< count { difference |= a[i] ^ b[i] }
        return difference == 0
    }
}
