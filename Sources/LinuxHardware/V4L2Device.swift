// SPDX-License-Identifier: Apache-2.0
// Shared V4L2 plumbing of the camera source and the test sink: mode enumeration, controls, buffer maps.

import CV4L2
import GateCore
#if canImport(Glibc)
import Glibc
#endif

/// Truncating conversion for the kernel header's mix of Int32 and UInt32 constants.
@inline(__always) func u32<T: BinaryInteger>(_ x: T) -> UInt32 { UInt32(truncatingIfNeeded: x) }

/// Internal helpers over one open V4L2 descriptor. Every call goes through `Sys.ioctl`.
enum V4L2 {
    static let captureType = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
    static let outputType = V4L2_BUF_TYPE_VIDEO_OUTPUT.rawValue
    static let mmapMemory = V4L2_MEMORY_MMAP.rawValue

    /// A buffer descriptor for mmap streaming of `type`, for slot `index`.
    static func mmapBuffer(_ type: UInt32, index: Int = 0) -> v4l2_buffer {
        var b = v4l2_buffer()
        b.type = type
        b.memory = mmapMemory
        b.index = u32(index)
        return b
    }

    /// Opens a video node non-blocking and close-on-exec (see `Sys.openVideo`: not
    /// registered with libv4l2, so `v4l2_ioctl`, `v4l2_mmap` and `v4l2_close` go straight
    /// to the system calls).
    static func open(_ path: String) throws(DeviceError) -> Int32 { try Sys.openVideo(path) }

    /// True when `e` means the device itself went away (unplugged, driver unbound).
    static func isGone(_ e: Int32) -> Bool { e == ENODEV || e == EIO || e == ENXIO || e == ENOENT }

    /// An ioctl that must complete: a would-block answer is reported as EAGAIN.
    static func call<T>(_ fd: Int32, _ request: UInt, _ arg: inout T, _ op: String, _ path: String) throws(DeviceError) {
        if case .wouldBlock = try Sys.ioctl(fd, request, &arg, op: op, path: path) {
            throw DeviceError(operation: op, errno: EAGAIN, path: path, detail: "device busy, try again")
        }
    }

    /// An ioctl whose EINVAL/ENOTTY means "not supported" or "end of list": nil then.
    static func optional<T>(_ fd: Int32, _ request: UInt, _ arg: inout T, _ op: String, _ path: String) throws(DeviceError) -> Bool {
        do {
            try call(fd, request, &arg, op, path)
            return true
        } catch {
            if error.errno == EINVAL || error.errno == ENOTTY || error.errno == ENODATA { return false }
            throw error
        }
    }

    /// The device and driver capabilities (the node's own when the driver reports them).
    static func capabilities(_ fd: Int32, _ path: String) throws(DeviceError) -> (caps: UInt32, driver: String, card: String) {
        var cap = v4l2_capability()
        try call(fd, CV4L2_VIDIOC_QUERYCAP(), &cap, "VIDIOC_QUERYCAP", path)
        let caps = cap.capabilities & u32(V4L2_CAP_DEVICE_CAPS) != 0 ? cap.device_caps : cap.capabilities
        return (caps, cString(&cap.driver), cString(&cap.card))
    }

    static func cString<T>(_ tuple: inout T) -> String {
        withUnsafeBytes(of: &tuple) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    // Sizes tried inside a stepwise or continuous size range, besides its ends.
    static let commonSizes = [(320, 240), (640, 360), (640, 480), (800, 600), (1024, 768), (1280, 720),
                              (1280, 960), (1920, 1080)]
    // Rates tried inside a stepwise or continuous interval range, besides its ends.
    static let commonRates = [30, 60, 90, 120]

    /// Every native capture mode: ENUM_FMT × ENUM_FRAMESIZES × ENUM_FRAMEINTERVALS.
    static func modes(_ fd: Int32, _ path: String) throws(DeviceError) -> [CameraMode] {
        var result: [CameraMode] = []
        var index: UInt32 = 0
        while true {
            var desc = v4l2_fmtdesc()
            desc.index = index
            desc.type = captureType
            guard try optional(fd, CV4L2_VIDIOC_ENUM_FMT(), &desc, "VIDIOC_ENUM_FMT", path) else { break }
            index += 1
            // Why: libv4l2 adds formats it converts in software (RGB3, YU12 from MJPG);
            // decoding MJPG straight to luma is cheaper, so only native formats count.
            if desc.flags & u32(V4L2_FMT_FLAG_EMULATED) != 0 { continue }
            let format = PixelFormat(rawValue: desc.pixelformat)
            for (w, h) in try sizes(fd, path, format) {
                result.append(CameraMode(format: format, width: w, height: h,
                                         intervals: try intervals(fd, path, format, w, h)))
            }
        }
        return result
    }

    static func sizes(_ fd: Int32, _ path: String, _ format: PixelFormat) throws(DeviceError) -> [(Int, Int)] {
        var out: [(Int, Int)] = []
        var index: UInt32 = 0
        while true {
            var fs = v4l2_frmsizeenum()
            fs.index = index
            fs.pixel_format = format.rawValue
            guard try optional(fd, CV4L2_VIDIOC_ENUM_FRAMESIZES(), &fs, "VIDIOC_ENUM_FRAMESIZES", path) else { break }
            index += 1
            if fs.type == V4L2_FRMSIZE_TYPE_DISCRETE.rawValue {
                out.append((Int(fs.discrete.width), Int(fs.discrete.height)))
                continue
            }
            let s = fs.stepwise
            let stepW = max(1, Int(s.step_width)), stepH = max(1, Int(s.step_height))
            let minW = Int(s.min_width), maxW = Int(s.max_width), minH = Int(s.min_height), maxH = Int(s.max_height)
            var candidates = [(minW, minH), (maxW, maxH)]
            for (w, h) in commonSizes where w >= minW && w <= maxW && h >= minH && h <= maxH
                && (w - minW) % stepW == 0 && (h - minH) % stepH == 0 {
                candidates.append((w, h))
            }
            out += candidates.sorted { $0.0 * $0.1 < $1.0 * $1.1 }
            break
        }
        if out.isEmpty {
            // Why: drivers with a fixed or signal-defined size (vivid's HDMI input, capture
            // cards) do not enumerate sizes; TRY_FMT says what this format would give.
            var f = v4l2_format()
            f.type = captureType
            try call(fd, CV4L2_VIDIOC_G_FMT(), &f, "VIDIOC_G_FMT", path)
            f.fmt.pix.pixelformat = format.rawValue
            if try optional(fd, CV4L2_VIDIOC_TRY_FMT(), &f, "VIDIOC_TRY_FMT", path), f.fmt.pix.pixelformat == format.rawValue {
                out.append((Int(f.fmt.pix.width), Int(f.fmt.pix.height)))
            }
        }
        return out
    }

    static func intervals(_ fd: Int32, _ path: String, _ format: PixelFormat, _ w: Int, _ h: Int) throws(DeviceError) -> [FrameInterval] {
        var out: [FrameInterval] = []
        var index: UInt32 = 0
        while true {
            var fi = v4l2_frmivalenum()
            fi.index = index
            fi.pixel_format = format.rawValue
            fi.width = u32(w)
            fi.height = u32(h)
            guard try optional(fd, CV4L2_VIDIOC_ENUM_FRAMEINTERVALS(), &fi, "VIDIOC_ENUM_FRAMEINTERVALS", path) else { break }
            index += 1
            if fi.type == V4L2_FRMIVAL_TYPE_DISCRETE.rawValue {
                if fi.discrete.numerator > 0 && fi.discrete.denominator > 0 {
                    out.append(FrameInterval(numerator: fi.discrete.numerator, denominator: fi.discrete.denominator))
                }
                continue
            }
            let s = fi.stepwise
            guard s.min.numerator > 0, s.min.denominator > 0, s.max.numerator > 0, s.max.denominator > 0 else { break }
            let fastest = FrameInterval(numerator: s.min.numerator, denominator: s.min.denominator)
            let slowest = FrameInterval(numerator: s.max.numerator, denominator: s.max.denominator)
            out += [fastest, slowest]
            for r in commonRates where Double(r) < fastest.fps && Double(r) > slowest.fps {
                out.append(FrameInterval(fps: r))
            }
            break
        }
        if out.isEmpty {
            // Why: some drivers (capture cards, vivid's HDMI input) run at the rate of
            // the signal and only report it through G_PARM.
            var p = v4l2_streamparm()
            p.type = captureType
            if try optional(fd, CV4L2_VIDIOC_G_PARM(), &p, "VIDIOC_G_PARM", path),
               p.parm.capture.timeperframe.numerator > 0, p.parm.capture.timeperframe.denominator > 0 {
                let t = p.parm.capture.timeperframe
                out.append(FrameInterval(numerator: t.numerator, denominator: t.denominator))
            } else {
                // Why: without any rate information the UVC class default of 30 fps is
                // the best guess; the measured rate shows in the statistics line.
                out.append(FrameInterval(fps: 30))
            }
        }
        return out
    }

    /// Reads a control, nil when the device has no such control.
    static func control(_ fd: Int32, _ path: String, _ id: UInt32) throws(DeviceError) -> Int32? {
        var c = v4l2_control()
        c.id = id
        return try optional(fd, CV4L2_VIDIOC_G_CTRL(), &c, "VIDIOC_G_CTRL", path) ? c.value : nil
    }

    /// Sets a control; false when the device has no such control.
    static func setControl(_ fd: Int32, _ path: String, _ id: UInt32, _ value: Int32) throws(DeviceError) -> Bool {
        var c = v4l2_control()
        c.id = id
        c.value = value
        return try optional(fd, CV4L2_VIDIOC_S_CTRL(), &c, "VIDIOC_S_CTRL", path)
    }

    /// A control's range, nil when the device has none or it is disabled.
    static func queryControl(_ fd: Int32, _ path: String, _ id: UInt32) throws(DeviceError) -> v4l2_queryctrl? {
        var q = v4l2_queryctrl()
        q.id = id
        guard try optional(fd, CV4L2_VIDIOC_QUERYCTRL(), &q, "VIDIOC_QUERYCTRL", path) else { return nil }
        return q.flags & u32(V4L2_CTRL_FLAG_DISABLED) != 0 ? nil : q
    }

    /// Maps a driver buffer for reading and writing (an output device's frames are
    /// written by us). Why not `Sys.mmap`: it maps read-only, which suits capture.
    static func mapWritable(_ fd: Int32, length: Int, offset: Int, path: String) throws(DeviceError) -> UnsafeMutableRawPointer {
        guard let p = v4l2_mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, Int64(offset)), p != MAP_FAILED else {
            throw Sys.fail("mmap", path)
        }
        return p
    }
}
