// SPDX-License-Identifier: Apache-2.0
// Mode choice, reopen back-off and exposure warnings of the camera adapter: pure, run everywhere.

import GateCore
import LinuxHardware
import Testing

@Suite struct CameraModeChoiceTests {
    func mode(_ f: PixelFormat, _ w: Int, _ h: Int, _ fps: [Int]) -> CameraMode {
        CameraMode(format: f, width: w, height: h, intervals: fps.map { FrameInterval(fps: $0) })
    }

    func pick(_ modes: [CameraMode], _ r: CameraRequest = CameraRequest()) -> (String, Int, Int, Double)? {
        V4L2FrameSource.choose(modes: modes, request: r).map { ($0.format.description, $0.width, $0.height, $0.intervals[0].fps) }
    }

    @Test func exactRateWinsOverFasterAndFormat() throws {
        // A UVC webcam: YUYV only to 30 fps at 640x480, MJPG at 60 and 120.
        let modes = [mode(.yuyv, 640, 480, [30, 15]), mode(.mjpeg, 640, 480, [120, 60, 30])]
        let r = try #require(pick(modes))
        #expect(r == ("MJPG", 640, 480, 60))
        #expect(V4L2FrameSource.choose(modes: modes, request: CameraRequest())?.intervals.count == 1)
    }

    @Test("the rates a coach can pick: every whole rate of an accepted format, at any size, once, slowest first")
    func offeredRates() {
        // A UVC webcam: YUYV to 30 fps, MJPG to 120 at a smaller size; a format the gate does
        // not read (H.264) offers nothing.
        let modes = [mode(.yuyv, 640, 480, [30, 25, 15]), mode(.mjpeg, 320, 240, [120, 60, 30]),
                     CameraMode(format: .yuyv, width: 1280, height: 720, intervals: [FrameInterval(numerator: 1001, denominator: 60000)])]
        #expect(V4L2FrameSource.offeredRates(modes: modes, formats: [.gray8, .yuyv, .mjpeg]) == [15, 25, 30, 60, 120])
        #expect(V4L2FrameSource.offeredRates(modes: modes, formats: [.yuyv]) == [15, 25, 30, 60])
        #expect(V4L2FrameSource.offeredRates(modes: modes, formats: [.nv12]).isEmpty)
        // Each offered rate is one `choose` streams exactly.
        for rate in V4L2FrameSource.offeredRates(modes: modes, formats: CameraRequest().formats) {
            var r = CameraRequest()
            r.fps = Double(rate)
            #expect(abs((V4L2FrameSource.choose(modes: modes, request: r)?.intervals[0].fps ?? 0) - Double(rate)) <= Double(rate) * 0.01)
        }
    }

    @Test func fasterRateWhenExactMissingSlowestFirst() throws {
        let modes = [mode(.yuyv, 640, 480, [30]), mode(.yuyv, 640, 480, [120, 90])]
        #expect(try #require(pick(modes)) == ("YUYV", 640, 480, 90))
    }

    @Test func slowerRateOnlyAsLastResort() throws {
        let modes = [mode(.gray8, 640, 480, [15, 25]), mode(.yuyv, 320, 240, [30])]
        #expect(try #require(pick(modes)) == ("YUYV", 320, 240, 30))
    }

    @Test func formatPreferenceAtTheSameRate() throws {
        let all: [PixelFormat] = [.mjpeg, .yu12, .nv12, .yuyv, .gray8]
        var offered = all.map { mode($0, 640, 480, [60]) }
        for expected in ["GREY", "YUYV", "NV12", "YU12", "MJPG"] {
            #expect(try #require(pick(offered)).0 == expected)
            offered.removeAll { $0.format.description == expected }
        }
        #expect(pick(offered) == nil)
    }

    @Test func sizeClosestToRequest() throws {
        let modes = [mode(.yuyv, 320, 240, [60]), mode(.yuyv, 1280, 720, [60]), mode(.yuyv, 800, 600, [60]),
                     mode(.yuyv, 1920, 1080, [60])]
        #expect(try #require(pick(modes)) == ("YUYV", 800, 600, 60))
        #expect(try #require(pick(modes, CameraRequest(width: 1280, height: 720))) == ("YUYV", 1280, 720, 60))
        #expect(try #require(pick(modes, CameraRequest(width: 160, height: 120))) == ("YUYV", 320, 240, 60))
    }

    @Test func requestedRates() throws {
        let modes = [mode(.gray8, 640, 480, [30, 60, 90, 120])]
        for fps in [30, 60, 90, 120] {
            #expect(try #require(pick(modes, CameraRequest(fps: Double(fps)))).3 == Double(fps))
        }
    }

    @Test func ntscRateCountsAsExact() throws {
        let ntsc = CameraMode(format: .yuyv, width: 640, height: 480,
                              intervals: [FrameInterval(numerator: 1001, denominator: 60000)])
        let modes = [ntsc, mode(.gray8, 640, 480, [90])]
        let r = try #require(V4L2FrameSource.choose(modes: modes, request: CameraRequest()))
        #expect(r.format == .yuyv && r.intervals[0] == FrameInterval(numerator: 1001, denominator: 60000))
    }

    @Test func onlyAllowedFormats() throws {
        let modes = [mode(.gray8, 640, 480, [60]), mode(.mjpeg, 640, 480, [60]), mode(PixelFormat(fourcc: "RGB3"), 640, 480, [60])]
        #expect(try #require(pick(modes, CameraRequest(formats: [.mjpeg]))).0 == "MJPG")
        #expect(pick(modes, CameraRequest(formats: [PixelFormat(fourcc: "RGB3")])) == nil)
        #expect(pick([mode(PixelFormat(fourcc: "H264"), 640, 480, [60])]) == nil)
        #expect(pick([]) == nil)
    }

    @Test func modesListFastestFirst() {
        let m = mode(.yuyv, 640, 480, [30, 120, 60])
        #expect(m.fpsList == [120, 60, 30])
        #expect(m.description == "YUYV 640x480 @ 120 fps, 60 fps, 30 fps")
    }
}

@Suite struct ReopenBackoffTests {
    @Test func doublesFromHalfASecondToEightSeconds() {
        var b = ReopenBackoff()
        var t = MonotonicInstant(seconds: 100)
        #expect(b.isDue(now: t))
        var delays: [Double] = []
        for _ in 0..<7 {
            let d = b.failed(at: t)
            delays.append(d.seconds)
            #expect(!b.isDue(now: t + Span(nanoseconds: d.nanoseconds - 1)))
            t = t + d
            #expect(b.isDue(now: t))
        }
        #expect(delays == [0.5, 1, 2, 4, 8, 8, 8])
        #expect(b.failures == 7)
    }

    @Test func successResets() {
        var b = ReopenBackoff()
        let t = MonotonicInstant(seconds: 5)
        b.failed(at: t)
        b.failed(at: t)
        b.failed(at: t)
        b.succeeded()
        #expect(b == ReopenBackoff())
        #expect(b.isDue(now: t))
        #expect(b.failed(at: t) == .milliseconds(500))
    }
}

@Suite struct CameraExposureWarningTests {
    @Test func blurWarningWording() {
        #expect(V4L2FrameSource.blurWarning(.milliseconds(8)) == "exposure 8.0 ms blurs a sprinter: set exposure_us to 4000 or less")
        #expect(V4L2FrameSource.blurWarning(.microseconds(33_333)) == "exposure 33.3 ms blurs a sprinter: set exposure_us to 4000 or less")
        #expect(V4L2FrameSource.blurLimit == .microseconds(4000))
    }
}

@Suite struct CameraRecoveryTests {
    let t = MonotonicInstant(seconds: 50)

    @Test func aStreamingCameraIsLeftAlone() {
        #expect(CameraRecovery.reason(state: .streaming, isOpen: true, lastFrame: t, now: t + .seconds(60)) == nil)
        #expect(CameraRecovery.reason(state: .streaming, isOpen: true, lastFrame: nil, now: t) == nil)
    }

    @Test func goneTakenOrClosedIsReopened() {
        #expect(CameraRecovery.reason(state: .absent, isOpen: false, lastFrame: t, now: t) == "absent")
        #expect(CameraRecovery.reason(state: .busy, isOpen: false, lastFrame: nil, now: t) == "busy")
        #expect(CameraRecovery.reason(state: .closed, isOpen: false, lastFrame: nil, now: t) == "closed")
    }

    /// An open that failed with an error that implies neither absent nor busy (EINVAL
    /// from STREAMON, ENOMEM for buffers) leaves the state "no signal" and no descriptor.
    @Test func aCameraLeftWithoutADescriptorIsReopened() {
        #expect(CameraRecovery.reason(state: .noSignal, isOpen: false, lastFrame: nil, now: t) == "closed after an error")
        #expect(CameraRecovery.reason(state: .streaming, isOpen: false, lastFrame: t, now: t) == "closed after an error")
    }

    @Test func silenceIsReopenedOnlyAfterFiveSeconds() {
        let almost = t + Span(nanoseconds: CameraRecovery.stalledAfter.nanoseconds - 1)
        #expect(CameraRecovery.reason(state: .noSignal, isOpen: true, lastFrame: t, now: almost) == nil)
        #expect(CameraRecovery.reason(state: .noSignal, isOpen: true, lastFrame: t, now: t + .seconds(5)) == "no frames for 5 s")
        #expect(CameraRecovery.reason(state: .noSignal, isOpen: true, lastFrame: nil, now: t + .seconds(9)) == nil)
    }
}
