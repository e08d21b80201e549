// SPDX-License-Identifier: Apache-2.0
// Lowers the camera frame rate before the SoC throttles, and raises it again once cool.

/// Frame-rate policy from the SoC temperature. A Raspberry Pi 4 starts throttling at
/// 80 °C (a Pi 5 at 85 °C); stepping the camera down from 75 °C keeps the timing loop
/// out of throttled clocks, and stepping up only after a minute under 65 °C avoids
/// oscillating.
public struct ThermalGovernor: Sendable, Hashable {
    /// Frame rates to step through, highest first.
    public let steps: [Int]
    public let hot: Double
    public let cool: Double
    /// Seconds the temperature must stay under `cool` before stepping up.
    public let coolFor: Double
    public private(set) var index: Int
    private var coolSince: Double?

    /// Starts at `fps` (the configured rate, or one the camera offers: 50, 25 …), which is
    /// also the ceiling; steps down through 90, 60 and 30 below it.
    public init(fps: Int, hot: Double = 75, cool: Double = 65, coolFor: Double = 60) {
        steps = [fps] + [90, 60, 30].filter { $0 < fps }
        self.hot = hot
        self.cool = cool
        self.coolFor = coolFor
        index = 0
    }

    public var fps: Int { steps[index] }

    /// Feeds a temperature (°C) read at `seconds` (monotonic). Returns the new frame rate
    /// when it changes, nil otherwise.
    public mutating func update(celsius: Double, at seconds: Double) -> Int? {
        if celsius >= hot {
            coolSince = nil
            guard index < steps.count - 1 else { return nil }
            index += 1
            return fps
        }
        if celsius < cool {
            if coolSince == nil { coolSince = seconds }
            if let since = coolSince, seconds - since >= coolFor, index > 0 {
                index -= 1
                coolSince = seconds
                return fps
            }
        } else {
            coolSince = nil
        }
        return nil
    }

    /// Parses the kernel's thermal zone value (millidegrees Celsius, e.g. "54530\n").
    public static func parseThermalZone(_ text: String) -> Double? {
        let trimmed = text.filter { !$0.isWhitespace }
        guard let milli = Int(trimmed) else { return nil }
        return Double(milli) / 1000
    }
}
