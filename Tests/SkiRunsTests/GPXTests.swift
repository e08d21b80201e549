// SPDX-License-Identifier: Apache-2.0
// GPX written and read: a synthetic day through a file and back, other devices' shapes of
// GPX, and files that are not GPX.

import Foundation
import GPSTiming
import SkiRuns
import Testing

@Suite("GPX")
struct GPXTests {
    static func points(_ d: SkiDaySynth) -> [TrackPoint] {
        d.fixes.compactMap { f in
            guard let la = f.latitude, let lo = f.longitude, let al = f.altitude else { return nil }
            return TrackPoint(time: f.time, latitude: la, longitude: lo, altitude: al, speed: f.speed)
        }
    }

    @Test("a synthetic day written as GPX and read back: the same points (to 1 cm, 0.1 m, 1 ms, 0.01 m/s) and the same runs and vertical")
    func roundTrip() throws {
        let d = SkiDaySynth.day(seed: 3)
        let pts = Self.points(d)
        let text = GPX.write(name: "Verbier <day 1> & more", points: pts)
        let back = try GPX.read(Array(text.utf8))
        #expect(back.name == "Verbier <day 1> & more")
        #expect(back.points.count == pts.count)
        #expect(back.skipped == 0 && !back.speedsFromPositions)
        for (a, b) in zip(pts, back.points) {
            #expect(abs(a.time.nanoseconds - b.time.nanoseconds) <= 500_000)
            #expect(abs(a.latitude - b.latitude) < 1e-7 && abs(a.longitude - b.longitude) < 1e-7)
            #expect(abs(a.altitude - b.altitude) <= 0.05 && abs(a.speed - b.speed) <= 0.005)
        }
        let original = SkiDayAnalysis.analyse(pts), read = SkiDayAnalysis.analyse(back.points)
        #expect(read.runs.count == original.runs.count && read.runs.count == d.runs.count)
        #expect(abs(read.totalVertical - original.totalVertical) < 0.01 * original.totalVertical)
    }

    @Test("a GPX 1.1 file with no speeds (as most phone apps write it): speeds from the positions, and the day's runs still found with vertical within 2 %")
    func noSpeeds() throws {
        let d = SkiDaySynth.day(seed: 5)
        var text = "<?xml version=\"1.0\"?>\n<gpx xmlns=\"http://www.topografix.com/GPX/1/1\" version=\"1.1\" creator=\"phone\">\n<trk><name>Phone</name><trkseg>\n"
        for p in Self.points(d) {
            text += "  <trkpt lon=\"\(p.longitude)\" lat=\"\(p.latitude)\">\n    <ele>\(p.altitude)</ele>\n    <time>\(GPX.time(p.time).replacingOccurrences(of: ".000Z", with: "Z"))</time>\n  </trkpt>\n"
        }
        text += "</trkseg></trk></gpx>\n"
        let back = try GPX.read(Array(text.utf8))
        #expect(back.speedsFromPositions && back.name == "Phone")
        let day = SkiDayAnalysis.analyse(back.points)
        #expect(day.runs.count == d.runs.count, "\(day.runs.count) runs for \(d.runs.count)")
        let truth = d.runs.reduce(0) { $0 + $1.vertical }
        print("GPX without speeds: \(day.runs.count) of \(d.runs.count) runs found; vertical \(String(format: "%.1f", day.totalVertical)) m "
            + "against \(String(format: "%.1f", truth)) m (\(String(format: "%.2f", 100 * abs(day.totalVertical - truth) / truth)) %)")
        #expect(abs(day.totalVertical - truth) <= 0.02 * truth, "vertical \(day.totalVertical) for \(truth)")
    }

    @Test("GPX 1.0 with <speed>, a namespace prefix, CDATA, several segments, points out of order and doubled, points without time or elevation skipped and counted, times with offsets")
    func otherShapes() throws {
        let text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!-- from an old handheld -->
            <g:gpx xmlns:g="http://www.topografix.com/GPX/1/0" version="1.0">
             <g:metadata><g:name>Meta</g:name></g:metadata>
             <g:trk><g:trkseg>
              <g:trkpt lat="46.0" lon="7.0"><g:ele>2000</g:ele><g:time>2026-01-15T10:00:02+01:00</g:time><g:speed>3.5</g:speed></g:trkpt>
              <g:trkpt lat="46.0001" lon="7.0"><g:ele><![CDATA[1999.5]]></g:ele><g:time>2026-01-15T09:00:01.5Z</g:time><g:speed>4</g:speed></g:trkpt>
             </g:trkseg><g:trkseg>
              <g:trkpt lat="46.0002" lon="7.0"><g:ele>1999</g:ele><g:time>2026-01-15T09:00:03Z</g:time><g:speed>5</g:speed></g:trkpt>
              <g:trkpt lat="46.0002" lon="7.0"><g:ele>1999</g:ele><g:time>2026-01-15T09:00:03Z</g:time><g:speed>5</g:speed></g:trkpt>
              <g:trkpt lat="46.0003" lon="7.0"><g:time>2026-01-15T09:00:04Z</g:time></g:trkpt>
              <g:trkpt lat="46.0004" lon="7.0"><g:ele>1998</g:ele></g:trkpt>
              <g:trkpt lat="46.0005" lon="7.0"/>
             </g:trkseg></g:trk>
            </g:gpx>
            """
        let t = try GPX.read(Array(text.utf8))
        #expect(t.name == "Meta")
        #expect(t.points.map(\.speed) == [4, 3.5, 5])
        #expect(t.points.map(\.altitude) == [1999.5, 2000, 1999])
        #expect(t.points[0].time == GPSTime(nanoseconds: (1_768_467_600 + 1) * 1_000_000_000 + 500_000_000))
        #expect(t.points[1].time - t.points[0].time == 0.5)
        #expect(t.skipped == 3)
    }

    @Test("bad files: not XML, not GPX, broken XML, a position out of range, no usable points, too few points, every point at one time, an entity that would fetch a file: each a clear error")
    func badFiles() {
        func error(_ text: String) -> String {
            do {
                _ = try GPX.read(Array(text.utf8))
                return "read"
            } catch {
                return error.message
            }
        }
        #expect(error("") == "the file is empty: choose a .gpx file")
        #expect(error("\u{0}\u{1}binary") == "the file is not XML: a GPX file begins with <?xml or <gpx")
        #expect(error("these are my notes") == "the file is not XML: a GPX file begins with <?xml or <gpx")
        #expect(error("<gpx><trk") .hasPrefix("line 1: "))
        #expect(error("<kml><Document/></kml>") == "not a GPX file: its first element is <kml>, not <gpx>")
        let broken = error("<gpx>\n<trk><trkseg>\n<trkpt lat=\"1\" lon=\"2\"><ele>3</ele></trkseg></trk></gpx>")
        #expect(broken.hasPrefix("line 4:") || broken.hasPrefix("line 3:"), "\(broken)")
        #expect(error("<gpx><trk><trkseg>\n<trkpt lat=\"91\" lon=\"2\"/></trkseg></trk></gpx>") == "line 2: lat \"91\" is not a latitude (-90 to 90)")
        #expect(error("<gpx><trk><trkseg><trkpt lat=\"1\" lon=\"east\"/></trkseg></trk></gpx>") == "line 1: lon \"east\" is not a longitude (-180 to 180)")
        #expect(error("<gpx><trk><trkseg><trkpt lat=\"1\"/></trkseg></trk></gpx>") == "line 1: <trkpt> needs lat and lon")
        #expect(error("<gpx><wpt lat=\"1\" lon=\"2\"/></gpx>") == "the file has no track points (trk/trkseg/trkpt)")
        #expect(error("<gpx><trk><trkseg><trkpt lat=\"1\" lon=\"2\"/></trkseg></trk></gpx>")
            == "the file has no track points with both a time and an elevation (1 without)")
        #expect(error("<gpx><trk><trkseg><trkpt lat=\"1\" lon=\"2\"><ele>1</ele><time>2026-01-15T09:00:03Z</time></trkpt></trkseg></trk></gpx>")
            == "the file has fewer than two track points")
        // A device whose clock was never set writes one time for every point.
        #expect(error("<gpx><trk><trkseg><trkpt lat=\"1\" lon=\"2\"><ele>1</ele><time>1901-12-13T20:45:52.2073437Z</time></trkpt>"
            + "<trkpt lat=\"1.001\" lon=\"2\"><ele>5</ele><time>1901-12-13T20:45:52.2073437Z</time></trkpt></trkseg></trk></gpx>")
            == "the file's 2 track points all have the same time (1901-12-13T20:45:52.207Z): the device's clock was not set, so the runs cannot be timed")
        // An external entity is neither fetched nor expanded.
        let xxe = error("<?xml version=\"1.0\"?><!DOCTYPE gpx [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><gpx><trk><name>&x;</name><trkseg>"
            + "<trkpt lat=\"1\" lon=\"2\"><ele>1</ele><time>2026-01-15T09:00:03Z</time></trkpt>"
            + "<trkpt lat=\"1\" lon=\"2\"><ele>1</ele><time>2026-01-15T09:00:04Z</time></trkpt></trkseg></trk></gpx>")
        #expect(xxe == "read")
        if let t = try? GPX.read(Array(("<?xml version=\"1.0\"?><!DOCTYPE gpx [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><gpx><trk><name>&x;</name><trkseg>"
            + "<trkpt lat=\"1\" lon=\"2\"><ele>1</ele><time>2026-01-15T09:00:03Z</time></trkpt>"
            + "<trkpt lat=\"1\" lon=\"2\"><ele>1</ele><time>2026-01-15T09:00:04Z</time></trkpt></trkseg></trk></gpx>").utf8)) {
            #expect(!t.name.contains("root"))
        }
    }

    @Test("ISO 8601 times: UTC, fractions, offsets, and text that is no time")
    func times() {
        #expect(GPX.parseTime("1970-01-01T00:00:00Z") == GPSTime(nanoseconds: 0))
        #expect(GPX.parseTime("2026-01-15T09:12:03.1Z")?.nanoseconds == 1_768_468_323_100_000_000)
        #expect(GPX.parseTime("2026-01-15T10:12:03.1+01:00") == GPX.parseTime("2026-01-15T09:12:03.1Z"))
        #expect(GPX.parseTime("2026-01-15T09:12:03") == GPX.parseTime("2026-01-15T09:12:03Z"))
        #expect(GPX.time(GPSTime(nanoseconds: 1_768_468_323_100_000_000)) == "2026-01-15T09:12:03.100Z")
        #expect(GPX.time(GPSTime(nanoseconds: 951_782_400_000_000_000)) == "2000-02-29T00:00:00.000Z")
        for bad in ["", "2026-01-15", "2026-13-01T00:00:00Z", "2026-01-15T25:00:00Z", "2026-01-15T09:12:03.Z", "2026-01-15T09:12:03Zjunk", "yesterday"] {
            #expect(GPX.parseTime(bad) == nil, "\(bad)")
        }
    }
}
