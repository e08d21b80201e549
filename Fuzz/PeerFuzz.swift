// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness over the peer protocol: header and payload decoding, and PeerGuard.open.

import GateCore
import PeerAuth
import PeerWire

#if canImport(Glibc)
import Glibc
#endif

// Input layout: byte 0 picks the mode, the rest is split into datagrams, each preceded by
// a 16-bit little-endian length (a short last length takes what is left).
//   mode 0: every datagram goes to `Envelope.decode` and to `PeerGuard.open` as it is
//           (almost all fail the tag: this fuzzes header checks and framing);
//   mode 1: every datagram is given a valid tag before `open`, so the payload decoder and
//           the replay window see fuzzed but authentic input, in order, on one guard.
// Invariants checked (a violation traps, which libFuzzer reports as a crash):
//   - whatever decodes re-encodes to the same bytes;
//   - `open` accepts only what `decode` accepts, with the same envelope;
//   - no (sender, epoch, sequence) is accepted twice by one guard;
//   - a dropped datagram leaves the guard's windows and accepted count unchanged.

private let fuzzKey = try! PairingKey(pairingCode: "FUZZ-2026-TRACK")
private let localGate = GateID(0xFFFF_FFFE)

private func datagrams(_ input: UnsafeRawBufferPointer) -> [[UInt8]] {
    var out: [[UInt8]] = []
    var i = 1
    while i < input.count, out.count < 64 {
        var length = Int(input[i])
        if i + 1 < input.count { length |= Int(input[i + 1]) << 8 }
        i += 2
        let end = min(input.count, i + length % (Wire.maxDatagramLength + 64))
        out.append(i < end ? Array(input[i ..< end]) : [])
        i = max(i, end)
    }
    return out
}

private func checkDecode(_ bytes: [UInt8]) -> Envelope? {
    guard case .success(let envelope) = Result(catching: { () throws(WireError) -> Envelope in try Envelope.decode(bytes) })
    else { return nil }
    guard case .success(let again) = Result(catching: { () throws(WireError) -> [UInt8] in try envelope.encoded() }),
          again == bytes
    else { fatalError("decoded datagram does not re-encode to the same bytes") }
    return envelope
}

private struct Key: Hashable {
    var sender: GateID
    var epoch: UInt32
    var sequence: UInt32
}

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    // With SPRINTGATE_FUZZ_SEED_DIR set, write the seed corpus there and exit.
    guard let dir = getenv("SPRINTGATE_FUZZ_SEED_DIR").map({ String(cString: $0) }) else { return 0 }
    writeSeedCorpus(to: dir)
    exit(0)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    guard let mode = input.first else { return 0 }
    var guardian = PeerGuard(key: fuzzKey, localGate: localGate, bootEpoch: 1, session: SessionID(7))
    var accepted = Set<Key>()
    for var datagram in datagrams(input) {
        if mode & 1 == 1 {
            // Fix the length field so more inputs reach the payload decoder, then sign.
            if datagram.count >= Wire.headerLength, mode & 2 == 2 {
                let length = UInt16(clamping: datagram.count - Wire.headerLength)
                datagram[20] = UInt8(length >> 8)
                datagram[21] = UInt8(length & 0xFF)
            }
            datagram += datagram.withUnsafeBytes { PeerGuard.authenticationTag(for: $0, key: fuzzKey) }
        }
        _ = checkDecode(datagram)
        let decoded = datagram.count >= PeerGuard.tagLength ? checkDecode(Array(datagram.dropLast(PeerGuard.tagLength))) : nil
        let acceptedBefore = guardian.acceptedCount
        let windowBefore = decoded.flatMap { guardian.window(of: $0.sender) }
        switch guardian.open(datagram) {
        case .accepted(let received):
            guard received.envelope == decoded else { fatalError("open accepted what decode did not") }
            let key = Key(sender: received.envelope.sender, epoch: received.envelope.bootEpoch,
                          sequence: received.envelope.sequence)
            guard accepted.insert(key).inserted else { fatalError("the same datagram was accepted twice") }
        case .dropped:
            guard guardian.acceptedCount == acceptedBefore,
                  decoded.map({ guardian.window(of: $0.sender) == windowBefore }) ?? true
            else { fatalError("a dropped datagram changed the guard") }
        }
    }
    return 0
}

/// Valid datagrams of every message type, in both modes, as the fuzzer's starting points.
private func writeSeedCorpus(to dir: String) {
    let messages: [Message] = [
        .sessionConfig(SessionConfig(startType: .countdown, runID: 1, gateCount: 3, name: "Tuesday 60 m")),
        .sessionConfigAck(SessionConfigAck(accepted: true)),
        .roleRequest(RoleRequest(role: .finish, distanceFromStartMetres: 60)),
        .roleRequest(RoleRequest(role: .lap)),
        .roleAssignment(RoleAssignment(gate: GateID(3), role: .lap, gateIndex: 2, distanceFromStartMetres: 30)),
        .startTiming(StartTiming(runID: 7, startType: .voice)),
        .ping(Ping(t1: MonotonicInstant(nanoseconds: 1_234_567))),
        .pong(Pong(t1: MonotonicInstant(nanoseconds: 1), t2: MonotonicInstant(nanoseconds: 2), t3: MonotonicInstant(nanoseconds: 3))),
        .syncResult(SyncResult(gate: GateID(2), offset: Span(nanoseconds: -4_200), uncertainty: Span(nanoseconds: 350), samples: 12)),
        .crossingEvent(CrossingEvent(gate: GateID(3), crossingID: 41, runID: 7, timeMono: MonotonicInstant(nanoseconds: 98_765),
                                     uncertainty: Span(nanoseconds: 2_000), direction: .rightToLeft)),
        .crossingAck(CrossingAck(gate: GateID(3), crossingID: 41)),
        .startEvent(StartEvent(runID: 7, startMono: MonotonicInstant(nanoseconds: 55), uncertainty: .zero, startType: .flying)),
        .gateStatus(GateStatusReport(readiness: [.armed, .clear], camera: .streaming, framesPerSecond: 120)),
        .pauseDetection, .resumeDetection, .endSession,
        .resetForNextRun(ResetForNextRun(nextRunID: 8)),
        .thumbnailChunk(ThumbnailChunk(imageID: 41, chunkIndex: 1, chunkCount: 3, bytes: [0xFF, 0xD8, 0xFF, 0xE0, 0, 16])),
        .startTypeChange(StartTypeChange(startType: .inFrame)),
        .distanceChange(DistanceChange(gate: GateID(4), distanceFromStartMetres: 100)),
        .announce(Announce(gateName: "Finish", roleWish: .finish, listeningPort: 47_800)),
    ]
    var sender = PeerGuard(key: fuzzKey, localGate: GateID(5), bootEpoch: 1, session: SessionID(7))
    for (i, message) in messages.enumerated() {
        guard let sealed = try? sender.seal(message) else { fatalError("seed message \(i) does not encode") }
        let plain = Array(sealed.dropLast(PeerGuard.tagLength))
        write(dir + "/seed-\(i)-sealed", [0] + lengthPrefixed(sealed))
        write(dir + "/seed-\(i)-plain", [3] + lengthPrefixed(plain))
        // The same datagram twice, and with a later one: replay-window paths.
        write(dir + "/seed-\(i)-repeat", [3] + lengthPrefixed(plain) + lengthPrefixed(plain))
    }
}

private func lengthPrefixed(_ bytes: [UInt8]) -> [UInt8] {
    [UInt8(bytes.count & 0xFF), UInt8(bytes.count >> 8)] + bytes
}

private func write(_ path: String, _ bytes: [UInt8]) {
    guard let file = fopen(path, "wb") else { fatalError("cannot write \(path)") }
    _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
    fclose(file)
}
