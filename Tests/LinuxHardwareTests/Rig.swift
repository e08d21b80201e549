// SPDX-License-Identifier: Apache-2.0
// Whether the kernel-simulator rig (scripts/rig/run) is around, and the device paths it exports.

#if canImport(Glibc)
import Glibc
#endif
import Testing

/// Every suite that touches the rig's devices is nested here. The rig has one camera, one
/// GPIO chip and one sound card, and `sprintgate run` in CommandRigTests opens all three,
/// so these suites run one after another, not only the tests within each of them
/// (`.serialized` on a suite covers the suites nested in it).
@Suite(.serialized) enum RigDevices {}

/// The qemu rig's devices. Outside the rig `available` is false and the rig tests are
/// reported as skipped (`@Test(.enabled(if: Rig.available))`).
enum Rig {
    static func env(_ name: String) -> String? {
        guard let p = getenv(name) else { return nil }
        let s = String(cString: p)
        return s.isEmpty ? nil : s
    }

    /// True inside the rig: `SPRINTGATE_RIG=1` and the rig's device variables are set.
    static var available: Bool {
        env("SPRINTGATE_RIG") == "1" && env("RIG_VIDEO_CAPTURE") != nil && env("RIG_VIDEO_OUTPUT") != nil
            && env("RIG_GPIOCHIP") != nil && env("RIG_ALSA_PLAYBACK") != nil
    }

    /// vivid's capture node (input 0 loops output 0).
    static var videoCapture: String { env("RIG_VIDEO_CAPTURE") ?? "" }
    /// vivid's output node.
    static var videoOutput: String { env("RIG_VIDEO_OUTPUT") ?? "" }
    /// The gpio-sim chip's device node, label and sysfs directory, and its line names.
    static var gpioChip: String { env("RIG_GPIOCHIP") ?? "" }
    static var gpioChipLabel: String { env("RIG_GPIOCHIP_LABEL") ?? "" }
    static var gpioSimSysfs: String { env("RIG_GPIO_SIM_SYSFS") ?? "" }
    static var gpioLines: [String] { (env("RIG_GPIO_LINES") ?? "").split(separator: " ").map(String.init) }
    /// snd-aloop: what is played on `alsaPlayback` is captured on `alsaCapture`.
    static var alsaPlayback: String { env("RIG_ALSA_PLAYBACK") ?? "" }
    static var alsaCapture: String { env("RIG_ALSA_CAPTURE") ?? "" }
    /// A host directory shared writable with the guest, when the run has one.
    static var out: String? { env("RIG_OUT") }
}
