// SPDX-License-Identifier: Apache-2.0
// How much compressed video the gate keeps in RAM, from the memory it has.

/// The ring's size from the memory available: 70 % of it (the reference app's rule),
/// leaving the rest to the gate loop, the web side and the kernel's page cache.
public struct BufferBudget: Hashable, Sendable {
    /// Share of available memory the ring may take.
    public static let share = 0.70

    /// Bytes the packet arena gets.
    public let bytes: Int
    /// Packets the index gets: every frame of the time the bytes hold at the bit rate,
    /// with a quarter more for scenes that compress better than the bit rate.
    public let packets: Int
    /// Seconds of video the bytes hold at the bit rate.
    public let seconds: Double

    /// - Parameters:
    ///   - availableBytes: memory available (`MemAvailable` in `/proc/meminfo`).
    ///   - bitsPerSecond: the encoder's target rate.
    ///   - fps: frames a second.
    ///   - limitBytes: an upper bound set in the settings, if any.
    public init(availableBytes: Int, bitsPerSecond: Int, fps: Double, limitBytes: Int? = nil) {
        precondition(bitsPerSecond > 0 && fps > 0, "a bit rate and a frame rate are needed")
        var b = Int(Double(max(0, availableBytes)) * Self.share)
        if let limitBytes { b = min(b, limitBytes) }
        bytes = max(b, 1 << 20)
        seconds = Double(bytes) * 8 / Double(bitsPerSecond)
        packets = max(16, Int((seconds * fps * 1.25).rounded(.up)))
    }

    /// What the page shows: "about 26 min at these settings".
    public var summary: String {
        let minutes = seconds / 60
        if minutes >= 1 { return "about \(Int(minutes.rounded(.down))) min at these settings" }
        return "about \(Int(seconds.rounded(.down))) s at these settings"
    }

    /// Reads `MemAvailable` from the text of `/proc/meminfo`, in bytes.
    public static func memAvailable(meminfo: String) -> Int? {
        for line in meminfo.split(separator: "\n") where line.hasPrefix("MemAvailable:") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 3, fields[2] == "kB", let kb = Int(fields[1]) else { return nil }
            return kb * 1024
        }
        return nil
    }
}
