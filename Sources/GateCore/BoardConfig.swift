// SPDX-License-Identifier: Apache-2.0
// The typed board configuration that a boards/*.toml file decodes into.



/// Everything the daemon needs to know about one board: camera, audio, GPIO wiring and peer group.
///
/// Decode one with `init(toml:file:)` or `init(contentsOf:)` from `GateConfig`; every value has been checked
/// against the limits documented on its type, so code that receives a `BoardConfig` need not
/// check again. Then check line names with `validateLineNames(chipsDirectory:)`.
public struct BoardConfig: Sendable, Hashable {
    /// Human-readable board name from `[board] name`, shown in logs and the web UI.
    public var name: String
    /// The capture device and mode, from `[camera]`; nil on a board without a camera (a car
    /// timer, a ski logger, a rowing hub), which runs every area but the camera's.
    public var camera: CameraConfig?
    /// The ALSA output, from `[audio]`.
    public var audio: AudioConfig
    /// Wired GPIO lines by role, from `[gpio.<role>]`. A role missing here is not wired on this
    /// board (a board with no GPIO at all is started from the web UI).
    public var gpio: [GPIORole: GPIOLineConfig]
    /// The group of gates that time together, from `[peer]`.
    public var peer: PeerConfig
    /// The file this configuration came from, as the caller named it; later errors name it too.
    public var source: String
    /// The SoC temperature (millidegrees Celsius) the gate watches to lower its frame rate
    /// before the SoC throttles, from `[board] thermal_zone`.
    public var thermalZone: String
    /// The delayed video's H.264 encoder on this board, from `[board] video_encoder`:
    /// `h264_v4l2m2m` where the SoC has one (a Pi 4, a Zero 2 W), `libx264` otherwise.
    public var videoEncoder: String
    /// The GPS receiver gpsd reads for GPS timing, from `[gps_receiver]`; nil without one.
    public var gpsReceiver: GPSReceiverConfig?

    /// The encoders a board file may name.
    public static let videoEncoders = ["libx264", "h264_v4l2m2m"]

    /// The thermal zone of the SoC on Raspberry Pi OS (and most single-board computers).
    public static let defaultThermalZone = "/sys/class/thermal/thermal_zone0/temp"

    /// Creates a configuration from values that the caller has already checked.
    public init(
        name: String,
        camera: CameraConfig?,
        audio: AudioConfig,
        gpio: [GPIORole: GPIOLineConfig],
        peer: PeerConfig,
        source: String,
        thermalZone: String = BoardConfig.defaultThermalZone,
        videoEncoder: String = "libx264",
        gpsReceiver: GPSReceiverConfig? = nil
    ) {
        self.name = name
        self.camera = camera
        self.audio = audio
        self.gpio = gpio
        self.peer = peer
        self.source = source
        self.thermalZone = thermalZone
        self.videoEncoder = videoEncoder
        self.gpsReceiver = gpsReceiver
    }
}

/// Where the GPS receiver is, for gpsd (`scripts/install` writes gpsd's settings from it).
public struct GPSReceiverConfig: Sendable, Hashable {
    /// `usb`: gpsd finds a receiver on USB when it is plugged in; else its serial device,
    /// e.g. `/dev/serial0` for one on a Raspberry Pi's UART.
    public var device: String
    /// The serial speed of a receiver on a UART, bits a second; nil lets gpsd find it.
    public var baud: Int?

    public static let bauds = [4800, 9600, 19200, 38400, 57600, 115200, 230400]

    public init(device: String, baud: Int? = nil) {
        self.device = device
        self.baud = baud
    }
}

/// The V4L2 capture device and the mode to request from it.
public struct CameraConfig: Sendable, Hashable {
    /// Frame rates a board may ask for. Why: the detector's timing tolerances and the replay
    /// fixtures are made at these rates, and they are the rates UVC cameras commonly offer.
    public static let allowedFrameRates: [Int] = [30, 60, 90, 120]
    /// Allowed width and height in pixels. Why: below 16 there is no room for a gate line;
    /// 4096 is the widest mode (DCI 4K) a UVC camera reports.
    public static let sizeRange: ClosedRange<Int> = 16...4096
    /// Pixel formats by their V4L2 four-character code. Only formats whose luma the detector
    /// reads directly are accepted; compressed formats such as `MJPG` would need a decoder.
    public static let allowedFormats: [(name: String, format: PixelFormat)] = [
        ("GREY", .gray8), ("YUYV", .yuyv), ("NV12", .nv12), ("YU12", .yu12),
    ]

    /// Device node, normally the udev symlink `/dev/sprintgate/camera`; always under `/dev/`.
    public var device: String
    /// The pixel format to request.
    public var format: PixelFormat
    /// Frame width in pixels, within `sizeRange`.
    public var width: Int
    /// Frame height in pixels, within `sizeRange`.
    public var height: Int
    /// Frames per second, one of `allowedFrameRates`.
    public var fps: Int
    /// Fixed exposure time in microseconds, at most one frame period; `nil` leaves the
    /// camera's automatic exposure on. UVC cameras round it to their 100 µs step.
    public var exposureMicroseconds: Int?

    /// Creates a camera configuration from values that the caller has already checked.
    public init(device: String, format: PixelFormat, width: Int, height: Int, fps: Int, exposureMicroseconds: Int?) {
        self.device = device
        self.format = format
        self.width = width
        self.height = height
        self.fps = fps
        self.exposureMicroseconds = exposureMicroseconds
    }
}

/// The ALSA output used for start tones and crossing beeps.
public struct AudioConfig: Sendable, Hashable {
    /// ALSA PCM name as `aplay -L` lists it, e.g. `default` or `plughw:CARD=Headphones,DEV=0`.
    public var device: String

    /// Creates an audio configuration.
    public init(device: String) { self.device = device }
}

/// Whether the daemon reads or drives a line.
public enum GPIODirection: String, Sendable, Hashable {
    /// Requested as an input with edge events.
    case input
    /// Requested as an output.
    case output
}

/// What a GPIO line is for. The raw value is the table name in `[gpio.<role>]`.
public enum GPIORole: String, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    /// The button that arms the gate; an input.
    case startButton = "start-button"
    /// Lit while the gate sees a clear line and can be armed; an output.
    case readyLED = "ready-led"
    /// Lit while the gate is armed and timing; an output.
    case armedLED = "armed-led"
    /// Flashed when a crossing is detected; an output.
    case crossingLED = "crossing-led"
    /// Sounds on start and crossing, through a transistor; an output.
    case buzzer

    /// Whether the line is read or driven.
    public var direction: GPIODirection { self == .startButton ? .input : .output }

    public var description: String { rawValue }
}

/// The pull resistor to request on a line, as libgpiod names it.
public enum GPIOBias: String, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    /// Leave the bias as firmware or a previous user set it.
    case asIs = "as-is"
    /// Disable the internal pull resistors.
    case disable
    /// Enable the internal pull-up.
    case pullUp = "pull-up"
    /// Enable the internal pull-down.
    case pullDown = "pull-down"

    public var description: String { rawValue }
}

/// One GPIO line and how to request it.
public struct GPIOLineConfig: Sendable, Hashable {
    /// Allowed input debounce in milliseconds. Why: 0 turns debouncing off, and a press held
    /// back by more than half a second feels lost to the starter.
    public static let debounceRange: ClosedRange<Int> = 0...500

    /// The chip, preferably by label (`pinctrl-bcm2711`), which is stable where numbers
    /// (`gpiochip4` or `gpiochip0` on a Pi 5) are not.
    public var chip: String
    /// The line name as `gpioinfo` prints it, e.g. `GPIO17`.
    public var line: String
    /// True when the active state is electrically low (a button to ground, a low-side LED).
    public var activeLow: Bool
    /// The pull resistor to request.
    public var bias: GPIOBias
    /// Debounce period in milliseconds for inputs, within `debounceRange`; 0 for outputs.
    public var debounceMilliseconds: Int

    /// Creates a line configuration from values that the caller has already checked.
    public init(chip: String, line: String, activeLow: Bool, bias: GPIOBias, debounceMilliseconds: Int) {
        self.chip = chip
        self.line = line
        self.activeLow = activeLow
        self.bias = bias
        self.debounceMilliseconds = debounceMilliseconds
    }
}

/// The group of gates that exchange clock samples and crossings.
public struct PeerConfig: Sendable, Hashable {
    /// Allowed group name length. Why: the name is compared byte for byte between gates and
    /// shown in status lines, so it is short and uses only `a`-`z`, `0`-`9` and `-`.
    public static let nameLength: ClosedRange<Int> = 1...32

    /// Gates with the same group time together; others are ignored.
    public var group: String

    /// Creates a peer configuration.
    public init(group: String) { self.group = group }
}
