// SPDX-License-Identifier: Apache-2.0
// Clock sync error against simulated truth, in virtual time, printed as a markdown table.

import ClockSync
import Glibc
import GateCore

let usage = """
    usage: SyncBench [--seed N] [--hours H]

    Simulates a host gate tracking one peer gate's clock in virtual time (ClockSync's
    PeerClock and ClockModel, pinged on the recommended schedule) and prints, per network
    profile, the error of the host-timeline estimate of the peer's clock against truth:
    at instants spread across the run (every 0.5 s on average, random phase), the peer's
    current clock reading is converted to the host timeline and compared with the true
    instant, from the first usable sync on.

    Profiles:
      (a) loopback  \(LinkProfile.loopback.summary); no drift
      (b) wifi      \(LinkProfile.jitteryWiFi.summary); no drift
      (c) wifi+50ppm  as (b), the peer's clock 50 ppm fast
    Every profile starts with the peer's clock 123.456789 s ahead of the host's.

      --seed N    random seed (default 1)
      --hours H   simulated duration of each profile in hours (default 1, at most 48)
    """

var seed: UInt64 = 1
var hours = 1.0
var args = CommandLine.arguments.dropFirst()
func fail(_ message: String) -> Never {
    var text = "SyncBench: \(message)\n\n\(usage)\n"
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(2)
}
while let a = args.popFirst() {
    switch a {
    case "--seed":
        guard let v = args.popFirst(), let n = UInt64(v) else { fail("--seed needs a whole number ≥ 0") }
        seed = n
    case "--hours":
        guard let v = args.popFirst(), let h = Double(v), h > 0, h <= 48 else { fail("--hours needs a number in (0, 48]") }
        hours = h
    case "-h", "--help":
        print(usage)
        exit(0)
    default:
        fail("unknown argument \(a)")
    }
}

struct Case {
    var label: String
    var link: LinkProfile
    var frequency: Double
}
let cases = [
    Case(label: "(a) loopback", link: .loopback, frequency: 0),
    Case(label: "(b) wifi 5 ± 3 ms, 2 % loss", link: .jitteryWiFi, frequency: 0),
    Case(label: "(c) as (b) + 50 ppm drift", link: .jitteryWiFi, frequency: 50e-6),
]

func us(_ ns: Double) -> String { fixedPoint(ns / 1000, digits: 1) }

print("SyncBench: seed \(seed), \(fixedPoint(hours, digits: 2)) h of simulated time per profile")
print("Link models:")
print("- loopback: \(LinkProfile.loopback.summary)")
print("- wifi: \(LinkProfile.jitteryWiFi.summary)")
print("")
print("| profile | p50 µs | p95 µs | max µs | RMS µs | first usable sync s | evaluations | beyond 3σ | beyond maxError | pings | replies admitted |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
var failed = false
for c in cases {
    let sim = SyncSimulation(link: c.link, truth: ClockTruth(initialOffset: .seconds(123.456789), frequency: c.frequency))
    let r = sim.run(duration: .seconds(hours * 3600), seed: seed)
    let ttfs = r.timeToFirstSync.map { fixedPoint($0.seconds, digits: 2) } ?? "never"
    let s = r.finalStats
    let admitted = s.replies - s.discardedForDelay
    print("| \(c.label) | \(us(r.errorQuantile(0.5))) | \(us(r.errorQuantile(0.95))) | \(us(r.maxError)) | \(us(r.rmsError)) | \(ttfs) | \(r.errors.count) | \(r.beyondThreeSigma) | \(r.beyondMaxError) | \(s.pingsSent) | \(admitted) |")
    if r.timeToFirstSync == nil { failed = true }
}
print("")
print("Targets: p95 ≤ 50 µs on loopback, ≤ 500 µs on the jittery profiles.")
if failed { exit(1) }
