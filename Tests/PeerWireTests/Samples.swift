// SPDX-License-Identifier: Apache-2.0
// Sample messages of every type, a seeded random source and helpers shared by the tests.

import GateCore
import PeerWire

/// One or more messages of every type, with optional fields both present and absent and
/// extreme values, so round trips cover every branch of the codec.
let sampleMessages: [Message] = [
    .sessionConfig(SessionConfig(startType: .countdown, runID: 1, gateCount: 3, name: "Tuesday 60 m")),
    .sessionConfig(SessionConfig(startType: .inFrame, runID: .max, gateCount: 16, name: "")),
    .sessionConfigAck(SessionConfigAck(accepted: true)),
    .sessionConfigAck(SessionConfigAck(accepted: false)),
    .roleRequest(RoleRequest(role: .finish, distanceFromStartMetres: 60)),
    .roleRequest(RoleRequest(role: .lap, distanceFromStartMetres: nil)),
    .roleAssignment(RoleAssignment(gate: GateID(0xDEAD_BEEF), role: .lap, gateIndex: 2, distanceFromStartMetres: 30.5)),
    .startTiming(StartTiming(runID: 7, startType: .voice)),
    .ping(Ping(t1: MonotonicInstant(nanoseconds: 1_234_567_890_123))),
    .ping(Ping(t1: MonotonicInstant(nanoseconds: .min))),
    .pong(Pong(t1: MonotonicInstant(nanoseconds: 1), t2: MonotonicInstant(nanoseconds: .max),
               t3: MonotonicInstant(nanoseconds: -5))),
    .syncResult(SyncResult(gate: GateID(2), offset: Span(nanoseconds: -4_200_000), uncertainty: Span(nanoseconds: 350_000),
                           samples: 12)),
    .crossingEvent(CrossingEvent(gate: GateID(3), crossingID: 41, runID: 7, timeMono: MonotonicInstant(nanoseconds: 98_765_432_100),
                                 uncertainty: Span(nanoseconds: 2_000_000), direction: .rightToLeft)),
    .crossingAck(CrossingAck(gate: GateID(3), crossingID: 41)),
    .startEvent(StartEvent(runID: 7, startMono: MonotonicInstant(nanoseconds: 55_000_000_000), uncertainty: .zero,
                           startType: .buttonRelease)),
    .falseStart(FalseStart(runID: 7, reason: .movement, atMono: MonotonicInstant(nanoseconds: 54_900_000_000))),
    .gateStatus(GateStatusReport(readiness: [.armed, .clear], camera: .streaming, framesPerSecond: 119.88)),
    .gateStatus(GateStatusReport(readiness: .all, camera: .absent, framesPerSecond: 0)),
    .gateStatus(GateStatusReport(readiness: [.ready, .tooFar], camera: .streaming, framesPerSecond: 59.94, droppedFrames: 12,
                                 socCelsius: 81.5)),
    .pauseDetection,
    .resumeDetection,
    .resetForNextRun(ResetForNextRun(nextRunID: 8)),
    .endSession,
    .thumbnailChunk(ThumbnailChunk(imageID: 41, chunkIndex: 0, chunkCount: 3, bytes: [0xFF, 0xD8, 0xFF, 0xE0])),
    .thumbnailChunk(ThumbnailChunk(imageID: 42, chunkIndex: 63, chunkCount: 64,
                                   bytes: [UInt8](repeating: 0xA5, count: ThumbnailChunk.maxBytes))),
    .thumbnailChunk(ThumbnailChunk(imageID: .max, chunkIndex: 255, chunkCount: 256, bytes: [0x5A])),
    .thumbnailAck(ThumbnailAck(imageID: 41, flags: [true, false, true])),
    .thumbnailAck(ThumbnailAck(imageID: 42, flags: Array(repeating: true, count: ThumbnailChunk.maxChunks))),
    .calibrationFrames(ThumbnailChunk(imageID: 7, chunkIndex: 1, chunkCount: 2, bytes: [0x0C, 0x00, 0x40])),
    .calibrationFramesAck(ThumbnailAck(imageID: 7, flags: [false, true])),
    .startTypeChange(StartTypeChange(startType: .flying)),
    .distanceChange(DistanceChange(gate: GateID(4), distanceFromStartMetres: 100_000)),
    .announce(Announce(gateName: "Zielkamera Süd", roleWish: .start, listeningPort: 47_800)),
    .announce(Announce(gateName: String(repeating: "x", count: Wire.maxNameBytes), roleWish: nil, listeningPort: 1)),
]

/// Every sample wrapped in a header, with varied header fields.
let sampleEnvelopes: [Envelope] = sampleMessages.enumerated().map { i, message in
    Envelope(session: SessionID(UInt32(0x5000 + i)), sender: GateID(UInt32(i * 7919 + 1)), bootEpoch: UInt32(i),
             sequence: UInt32(i + 1), message: message)
}

/// GateCore's SplitMix64, seeded from `SPRINTGATE_TEST_SEED` when set, so a failing run
/// can be reproduced; the seed is printed.
struct SeededRandom: RandomNumberGenerator {
    private var generator: SplitMix64
    let seed: UInt64

    init(defaultSeed: UInt64) {
        let env = getenvString("SPRINTGATE_TEST_SEED").flatMap { UInt64($0) }
        seed = env ?? defaultSeed
        generator = SplitMix64(seed: seed)
        print("random seed \(seed) (set SPRINTGATE_TEST_SEED to reproduce)")
    }

    mutating func next() -> UInt64 { generator.next() }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func getenvString(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    return String(cString: value)
}

/// Decodes without throwing, for `#expect` on the error.
func decodeResult(_ bytes: [UInt8]) -> Result<Envelope, WireError> {
    Result { () throws(WireError) -> Envelope in try Envelope.decode(bytes) }
}
