// SPDX-License-Identifier: Apache-2.0
// Per-sender replay protection: a sliding bitmap of sequence numbers (IPsec style).

/// The sequence numbers seen from one sender in its latest boot epoch.
///
/// As in IPsec (RFC 4303 §3.4.3): `highest` is the largest sequence number accepted and
/// bit `i` of the bitmap says whether `highest − i` was accepted. A number more than
/// `width − 1` below `highest` is too old to tell and is refused. A larger boot epoch
/// (the sender restarted) starts a new window; a smaller one is refused.
public struct ReplayWindow: Sendable, Hashable {
    /// Sequence numbers tracked below the highest. Why: RFC 4303's minimum; at the few
    /// tens of datagrams per second a gate sends, 64 covers any reordering Wi-Fi causes.
    public static let width: UInt32 = 64

    /// What `check` decided.
    public enum Verdict: Sendable, Hashable {
        /// Not seen before in this epoch, inside or ahead of the window.
        case fresh
        /// The first datagram of a newer boot epoch: the sender restarted.
        case newEpoch
        /// Seen before.
        case duplicate
        /// Too far below the highest to tell (or 0, which no sender uses).
        case tooOld
        /// From an earlier boot epoch than the current one.
        case staleEpoch
    }

    /// The sender's current boot epoch.
    public private(set) var epoch: UInt32
    /// The largest sequence number accepted in `epoch`.
    public private(set) var highest: UInt32
    private var bitmap: UInt64

    /// A window that has accepted `sequence` of `epoch`.
    public init(epoch: UInt32, sequence: UInt32) {
        self.epoch = epoch
        self.highest = sequence
        self.bitmap = 1
    }

    /// Decides about a datagram without changing the window.
    public func check(epoch: UInt32, sequence: UInt32) -> Verdict {
        if epoch < self.epoch { return .staleEpoch }
        if epoch > self.epoch { return sequence == 0 ? .tooOld : .newEpoch }
        if sequence == 0 { return .tooOld }
        if sequence > highest { return .fresh }
        let behind = highest - sequence
        if behind >= Self.width { return .tooOld }
        return bitmap & (1 << UInt64(behind)) != 0 ? .duplicate : .fresh
    }

    /// Records a datagram that `check` found `fresh` or `newEpoch` and that was accepted.
    public mutating func commit(epoch: UInt32, sequence: UInt32) {
        if epoch != self.epoch {
            self = ReplayWindow(epoch: epoch, sequence: sequence)
        } else if sequence > highest {
            let ahead = sequence - highest
            bitmap = ahead >= Self.width ? 1 : (bitmap << UInt64(ahead)) | 1
            highest = sequence
        } else {
            bitmap |= 1 << UInt64(highest - sequence)
        }
    }
}
