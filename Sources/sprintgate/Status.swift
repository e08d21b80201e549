// SPDX-License-Identifier: Apache-2.0
// `sprintgate status`: what the running gate last reported, from its state directory.

import ArgumentParser
import Foundation
import GateConfig
import GateCore
import LinuxHardware
import WebUI

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the running gate's state: phase, camera, sound, ready LED, last crossing and result.")

    @Option(help: "Settings file (names the state directory).")
    var config: String = "/etc/sprintgate/gate.toml"

    func run() throws {
        let settings = loadSettings(config)
        let path = settings.stateDirectory + "/status.txt"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            print("not running: \(path) does not exist (start it with `systemctl start sprintgate`)")
            throw ExitCode(3)
        }
        if text.hasPrefix("stopped_mono_ns:") {
            print("not running: the gate stopped cleanly; last state:")
            print(text, terminator: "")
            printPIN(settings.stateDirectory)
            throw ExitCode(3)
        }
        var updated: Int64 = 0
        for line in text.split(separator: "\n") where line.hasPrefix("updated_mono_ns: ") {
            updated = Int64(line.dropFirst("updated_mono_ns: ".count)) ?? 0
        }
        let age = Sys.monotonicNow().nanoseconds - updated
        print(text, terminator: "")
        printPIN(settings.stateDirectory)
        printWallClock()
        if updated == 0 || age > 5_000_000_000 || age < 0 {
            print("stale: the gate has not updated this for \(age / 1_000_000_000) s; it is probably not running (`journalctl -u sprintgate`)")
            throw ExitCode(3)
        }
    }
}

/// Whether a time service keeps the wall clock, and how to set it when none does.
func printWallClock() {
    do {
        let state = try SystemWallClock().state()
        print(state.synchronised
              ? "wall_clock: synchronised (a time service keeps it)"
              : "wall_clock: not synchronised: open the page with the PIN on a phone and it takes the phone's time")
    } catch {
        print("wall_clock: \(error)")
    }
}

/// The page's address line (the URLs a phone opens) and its control PIN line (readable only
/// by the gate's user: the file is 0600).
func printPIN(_ stateDirectory: String) {
    if let address = PageAddress.load(directory: stateDirectory) {
        let urls = address.urls(hostname: PageAddress.hostname(), addresses: UDPAddress.interfaceHosts())
        if urls.isEmpty {
            print("web_page: none yet (no network address; the page listens on port \(address.port))")
        } else {
            print("web_page: " + urls.joined(separator: " "))
        }
    }
    do {
        if let pin = try GatePIN.load(directory: stateDirectory) {
            print("web_pin: \(pin.value)")
        } else {
            print("web_pin: none yet (created when the gate first starts its web page)")
        }
    } catch {
        print("web_pin: \(error)")
    }
}
