// SPDX-License-Identifier: Apache-2.0
// `sprintgate calc`: wind adjustment and equivalent performances on the command line.

import ArgumentParser
import Calculators

struct CalcCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calc",
        abstract: "Athletics calculators: wind adjustment, scoring-table points and equivalent performances.",
        subcommands: [CalcWindCommand.self, CalcEquivalentCommand.self, CalcPointsCommand.self])
}

struct CalcWindCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wind",
        abstract: "Convert a sprint or hurdle time run with wind to still air and to +2.0 m/s.",
        discussion: "Model: Moinat, Fabius and Emanuel (2018), European Journal of Sport Science 18(9). "
            + "Events: \(WindEvent.allCases.map(\.rawValue).joined(separator: ", ")). Wind -4.0...+4.0 m/s, + is a tail wind.")

    @Option(help: "Event: 100m, 200m, 100mH or 110mH.")
    var event: String

    @Option(help: "Time as run, seconds (10.05) or minutes:seconds.")
    var time: String

    @Option(help: "Wind reading in m/s, + tail, - head (e.g. +1.8).")
    var wind: String

    @Flag(help: "Instead of adjusting --time to still air, give the time that --time (a still-air time) becomes with --wind.")
    var reverse = false

    func run() throws {
        guard let e = WindEvent(parsing: event) else {
            fail("unknown event '\(event)'; events: \(WindEvent.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let t = CalcText.parseTime(time) else { fail("time '\(time)' is not a number of seconds") }
        guard let w = CalcText.parse(wind) else { fail("wind '\(wind)' is not a number of m/s") }
        do {
            if reverse {
                let run = try WindAdjustment.time(e, stillAirTime: t, wind: w)
                print("\(e.rawValue) \(CalcText.fixed(t, 2)) s in still air is \(CalcText.fixed(run, 2)) s with \(CalcText.signed(w, 1)) m/s")
            } else {
                let r = try WindAdjustment.adjust(e, time: t, wind: w)
                print("\(e.rawValue) \(CalcText.fixed(t, 2)) s (\(CalcText.signed(w, 1)) m/s\(r.legal ? "" : ", over the record limit"))")
                print("still air (0.0 m/s): \(CalcText.fixed(r.stillAirTime, 2)) s")
                print("at +2.0 m/s:         \(CalcText.fixed(r.atLegalLimit, 2)) s")
            }
        } catch {
            fail(error.description)
        }
    }
}

/// The sex option as a typed value, or a one-line error.
private func parseSex(_ text: String) -> Sex {
    guard let s = Sex(parsing: text) else { fail("unknown sex '\(text)'; use men or women") }
    return s
}

private func parseEvent(_ text: String) -> TrackEvent {
    guard let e = TrackEvent(parsing: text) else {
        fail("unknown event '\(text)'; events: \(TrackEvent.allCases.map(\.rawValue).joined(separator: ", "))")
    }
    return e
}

struct CalcEquivalentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "equivalent",
        abstract: "The time in another event worth the same World Athletics points (2022 tables).")

    @Option(help: "Event of the time, e.g. 100m, 60mH, 200m-indoor.")
    var from: String

    @Option(help: "Time in seconds (10.50) or minutes:seconds.")
    var time: String

    @Option(help: "Event to convert to.")
    var to: String

    @Option(help: "men or women.")
    var sex: String

    func run() throws {
        let s = parseSex(sex)
        let f = parseEvent(from), g = parseEvent(to)
        guard let t = CalcText.parseTime(time) else { fail("time '\(time)' is not a number of seconds") }
        do {
            let e = try ScoringTables.equivalent(from: f, time: t, to: g, sex: s)
            print("\(s.rawValue) \(f.rawValue) \(CalcText.fixed(e.from.time, 2)) s = \(e.from.points) points")
            print("\(s.rawValue) \(g.rawValue) \(CalcText.fixed(e.to.time, 2)) s = \(e.to.points) points")
        } catch {
            fail(error.description)
        }
    }
}

struct CalcPointsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "points",
        abstract: "World Athletics points (2022 tables) of a time, or the time for a number of points.")

    @Option(help: "Event, e.g. 100m, 60mH, 200m-indoor.")
    var event: String

    @Option(help: "men or women.")
    var sex: String

    @Option(help: "Time in seconds (or minutes:seconds) to score.")
    var time: String?

    @Option(help: "Points to find the time for (1...1400).")
    var points: Int?

    func run() throws {
        let s = parseSex(sex)
        let e = parseEvent(event)
        do {
            switch (time, points) {
            case let (text?, nil):
                guard let t = CalcText.parseTime(text) else { fail("time '\(text)' is not a number of seconds") }
                let m = try ScoringTables.points(e, s, time: t)
                print("\(s.rawValue) \(e.rawValue) \(CalcText.fixed(m.time, 2)) s = \(m.points) points")
            case let (nil, p?):
                let m = try ScoringTables.mark(e, s, points: p)
                print("\(s.rawValue) \(e.rawValue) \(p) points: \(CalcText.fixed(m.time, 2)) s (scores \(m.points))")
            default:
                fail("give either --time or --points")
            }
        } catch {
            fail(error.description)
        }
    }
}
