// SPDX-License-Identifier: Apache-2.0
// The time axis of a photo-finish image: stored with the run, and sent with a race gate's
// photo to the host.

/// Where time runs in a photo-finish image: the slit-scan composite spans image columns
/// `compositeX ..< compositeX + compositeWidth`, the crossing the gate timed is at image
/// column `crossingX` (fractional), and each column is `nanosecondsPerColumn` later than
/// the one on its left.
public struct PhotoScale: Sendable, Hashable, Codable {
    public var crossingX: Double
    public var nanosecondsPerColumn: Double
    public var compositeX: Int
    public var compositeWidth: Int
    public init(crossingX: Double, nanosecondsPerColumn: Double, compositeX: Int, compositeWidth: Int) {
        self.crossingX = crossingX
        self.nanosecondsPerColumn = nanosecondsPerColumn
        self.compositeX = compositeX
        self.compositeWidth = compositeWidth
    }

    /// The offsets from the timed crossing the composite shows, nanoseconds.
    public var offsetRange: ClosedRange<Int64> {
        let first = (Double(compositeX) - crossingX) * nanosecondsPerColumn
        let last = (Double(compositeX + compositeWidth - 1) - crossingX) * nanosecondsPerColumn
        return Int64(first.rounded(.up))...Int64(last.rounded(.down))
    }

    /// Finite, increasing in time, and at least two columns wide.
    public var isUsable: Bool {
        crossingX.isFinite && nanosecondsPerColumn.isFinite && nanosecondsPerColumn > 0 && compositeWidth >= 2 && compositeX >= 0
    }
}
