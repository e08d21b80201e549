// SPDX-License-Identifier: Apache-2.0
// The gate's control PIN: created once in the state directory; wrong guesses are slowed down.

import Foundation
import Synchronization

/// The PIN that control actions need (reading results does not). Six digits, created
/// at first start from the system's random source and kept in `<state>/web.pin`.
public struct GatePIN: Sendable, Hashable {
    public let value: String

    /// Why: six digits with the attempt limiter below leave a guesser about one chance in
    /// a thousand per day, and a coach can still type it on a phone at the track.
    public static let digits = 6
    public static let fileName = "web.pin"

    public init(value: String) { self.value = value }

    /// Whether `text` is a well-formed PIN (exactly `digits` ASCII digits).
    public static func isWellFormed(_ text: String) -> Bool {
        text.utf8.count == digits && text.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    /// A new random PIN.
    public static func random() -> GatePIN {
        var g = SystemRandomNumberGenerator()
        var s = ""
        for _ in 0..<digits { s.append(Character(Unicode.Scalar(UInt8(0x30) + UInt8.random(in: 0...9, using: &g)))) }
        return GatePIN(value: s)
    }

    /// Reads the PIN from `directory`, or creates it there (mode 0600) on the first start.
    public static func loadOrCreate(directory: String) throws(PINFileError) -> GatePIN {
        let path = directory + "/" + fileName
        if let existing = try load(directory: directory) { return existing }
        let pin = random()
        do {
            try Data((pin.value + "\n").utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        } catch {
            throw PINFileError(path: path, reason: "cannot write: \(error.localizedDescription)")
        }
        return pin
    }

    /// The stored PIN, or nil when `directory` holds none yet.
    public static func load(directory: String) throws(PINFileError) -> GatePIN? {
        let path = directory + "/" + fileName
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw PINFileError(path: path, reason: "cannot read (check permissions)")
        }
        let v = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard isWellFormed(v) else {
            throw PINFileError(path: path, reason: "does not hold a \(digits)-digit PIN (delete it to make a new one)")
        }
        return GatePIN(value: v)
    }

    /// Compares in time independent of where the strings differ.
    public func matches(_ candidate: String) -> Bool {
        let a = Array(value.utf8), b = Array(candidate.utf8)
        guard a.count == b.count else { return false }
        var diff: UInt8 = 0
        for i in 0..<a.count { diff |= a[i] ^ b[i] }
        return diff == 0
    }
}

public struct PINFileError: Error, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String { "\(path): \(reason)" }
}

/// Counts wrong PINs per client address and refuses further tries for a while:
/// after `freeFailures` misses the client waits `baseDelay`, doubling per miss up to
/// `maxDelay`. A correct PIN clears the client's record.
public final class PINAttempts: Sendable {
    private struct Record { var failures: Int; var blockedUntil: Double }
    private let records = Mutex<[String: Record]>([:])
    public let freeFailures: Int
    public let baseDelay: Double
    public let maxDelay: Double

    /// Why: three misses allow for typos on a cold phone; 2 s doubling to 5 min makes
    /// a search of 10^6 PINs take years while a coach who mistypes waits seconds.
    public init(freeFailures: Int = 3, baseDelay: Double = 2, maxDelay: Double = 300) {
        self.freeFailures = freeFailures
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
    }

    /// Seconds `client` must still wait at `now` (Unix or monotonic seconds, one domain
    /// per instance), or nil when it may try.
    public func retryAfter(client: String, now: Double) -> Double? {
        records.withLock { r in
            guard let rec = r[client], rec.blockedUntil > now else { return nil }
            return rec.blockedUntil - now
        }
    }

    /// Records a wrong PIN; returns the wait now imposed, or nil while tries are free.
    @discardableResult
    public func failed(client: String, now: Double) -> Double? {
        records.withLock { r in
            var rec = r[client] ?? Record(failures: 0, blockedUntil: 0)
            rec.failures += 1
            var wait: Double?
            if rec.failures > freeFailures {
                let exponent = min(rec.failures - freeFailures - 1, 30)
                let d = min(maxDelay, baseDelay * Double(1 << exponent))
                rec.blockedUntil = now + d
                wait = d
            }
            // Why: bound memory against many spoofed addresses; forget the oldest blocks.
            if r.count >= 4096 { r = r.filter { $0.value.blockedUntil > now } }
            r[client] = rec
            return wait
        }
    }

    public func succeeded(client: String) {
        _ = records.withLock { $0.removeValue(forKey: client) }
    }
}
