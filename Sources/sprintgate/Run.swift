// SPDX-License-Identifier: Apache-2.0
// `sprintgate run`: the appliance (`Appliance`) with the board's real GPIO lines, from the command line.

import Appliance
import ArgumentParser
import GateConfig
import GateCore
import LinuxHardware
import Logging

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the gate: camera, detector, start types, LEDs, buzzer and sounds.",
        discussion: """
            Reads the settings file (board file plus overrides), opens the camera (reopening \
            with back-off when it is missing or pulled out), the GPIO lines and the sound \
            device (a missing speaker is a warning: the gate still times), arms the gate and \
            runs until stopped. A board file without [camera] runs the rest (GPS timing, ski \
            days, the rowing hub, MQTT) and the page at once. Under systemd it reports \
            readiness and pings the watchdog.
            """)

    @Option(help: "Settings file.")
    var config: String = "/etc/sprintgate/gate.toml"

    @Option(help: "Stop after this many seconds (for tests); runs until stopped by default.")
    var seconds: Double?

    @Option(help: "Log level: trace, debug, info, notice, warning, error.")
    var logLevel: String = "info"

    @Option(help: "Port of the gate's web page and live board; 0 turns the page off.")
    var webPort: Int = 8080

    @Option(help: "Address the web page, the NTP server and the race link listen on.")
    var webHost: String = "0.0.0.0"

    @OptionGroup(title: "Clock and multi-gate race")
    var peers: PeerArguments

    func run() throws {
        guard let level = Logger.Level(rawValue: logLevel) else { fail("--log-level \(logLevel) is not a level") }
        guard (0...65535).contains(webPort) else { fail("--web-port \(webPort) is not a port (0...65535)") }
        if let ntp = peers.ntpPort, !(0...65535).contains(ntp) { fail("--ntp-port \(ntp) is not a port (1...65535, 0 turns it off)") }
        let settings = loadSettings(config)
        let board = settings.board
        var log = Logger(label: "sprintgate.run")
        log.logLevel = level
        let now = Sys.monotonicNow()
        var options = ApplianceOptions()
        options.webHost = webHost
        options.webPort = webPort
        options.level = level
        options.until = seconds.map { now + .seconds($0) }
        options.ntpPort = peers.ntpPort
        options.skew = peers.clockSkew(now: now, log: Logger(label: "sprintgate.peer"))
        options.peer = peers.resolve(settings: settings.peers, skew: options.skew, now: now, listenHost: webHost)
        let appliance = Appliance(settings: settings, options: options)
        do {
            if board.gpio.isEmpty {
                try appliance.run(lines: NoLines())
            } else {
                let lines: GPIODLines
                do { lines = try GPIODLines(lines: board.gpio, boardFile: board.source) } catch {
                    fail("\(error.description) (check the [gpio] tables of \(board.source) against `gpioinfo`)")
                }
                try appliance.run(lines: lines)
            }
        } catch {
            fail(error.description)
        }
    }
}
