// SPDX-License-Identifier: Apache-2.0
// The group key: derived from the pairing code the coach types on every gate.

internal import CPeerMAC
import Foundation

/// Why a pairing code cannot be used.
public struct PairingCodeError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Kind: Hashable, Sendable { case tooShort, tooLong, invalidCharacter, keyDerivationFailed }
    private let kind: Kind
    private init(_ kind: Kind) { self.kind = kind }

    /// Fewer than `PairingKey.minimumLength` letters and digits.
    public static let tooShort = Self(.tooShort)
    /// More than `PairingKey.maximumLength` letters and digits.
    public static let tooLong = Self(.tooLong)
    /// A character other than a letter A–Z, a digit, a space or a hyphen.
    public static let invalidCharacter = Self(.invalidCharacter)
    /// The system's libcrypto could not derive the key (out of memory).
    public static let keyDerivationFailed = Self(.keyDerivationFailed)

    public var description: String {
        switch kind {
        case .tooShort: return "pairing code too short: use at least \(PairingKey.minimumLength) letters or digits"
        case .tooLong: return "pairing code too long: use at most \(PairingKey.maximumLength) letters or digits"
        case .invalidCharacter: return "pairing code may hold only letters A-Z, digits, spaces and hyphens"
        case .keyDerivationFailed: return "libcrypto could not derive the key from the pairing code (out of memory?); restart the gate"
        }
    }
}

/// The key every gate of a group authenticates its datagrams with.
///
/// Derived with HKDF-SHA256 from the pairing code, normalised so that "ab12-cd34" and
/// "AB12 CD34" give the same key, with a fixed protocol salt and info string.
///
/// Threat model: the gates share a local Wi-Fi that other people (other clubs, phones,
/// a prankster) may also use. The key keeps gates of another group, stray traffic and
/// forged or replayed datagrams out of a race. It is only as strong as the code: HKDF is
/// fast, so anyone who captures one datagram can try codes offline at millions per second.
/// A 6-digit code (20 bits) stops accidents and casual interference only; 10 characters
/// from A–Z and digits (about 51 bits) resist a determined attacker for the length of a
/// training session. Confidentiality is not a goal: timing data is not secret.
public struct PairingKey: Sendable {
    /// Fewest letters and digits accepted. Why: the smallest code a coach will still type
    /// on every gate that keeps guessing online (one datagram per guess) hopeless.
    public static let minimumLength = 6
    /// Most letters and digits accepted.
    public static let maximumLength = 64
    /// HKDF salt: fixed, so every gate derives the same key; it separates SprintGate keys
    /// from any other use of the same code.
    static let salt = Array("SprintGate peer protocol salt v3".utf8)
    /// HKDF info: names the key's one use.
    static let info = Array("SprintGate datagram HMAC-SHA256 key".utf8)

    /// The 32-byte HMAC-SHA256 key.
    let keyBytes: [UInt8]

    /// The normalised code: letters upper-cased, spaces and hyphens removed.
    public let normalisedCode: String

    /// Derives the key from a pairing code; throws for a code that is too short, too long
    /// or contains other characters than letters, digits, spaces and hyphens.
    public init(pairingCode: String) throws(PairingCodeError) {
        var normalised: [UInt8] = []
        for byte in pairingCode.utf8 {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "-"):
                continue
            case UInt8(ascii: "a") ... UInt8(ascii: "z"):
                normalised.append(byte - 32)
            case UInt8(ascii: "A") ... UInt8(ascii: "Z"), UInt8(ascii: "0") ... UInt8(ascii: "9"):
                normalised.append(byte)
            default:
                throw .invalidCharacter
            }
        }
        guard normalised.count >= Self.minimumLength else { throw .tooShort }
        guard normalised.count <= Self.maximumLength else { throw .tooLong }
        normalisedCode = String(decoding: normalised, as: UTF8.self)
        var key = [UInt8](repeating: 0, count: 32)
        let rc = key.withUnsafeMutableBufferPointer { out in
            sg_hkdf_sha256(normalised, normalised.count, Self.salt, Self.salt.count, Self.info, Self.info.count, out.baseAddress, out.count)
        }
        guard rc == 0 else { throw .keyDerivationFailed }
        keyBytes = key
    }
}
