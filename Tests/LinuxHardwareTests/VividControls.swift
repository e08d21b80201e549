// SPDX-License-Identifier: Apache-2.0
// vivid's error-injection controls, set by name through a second descriptor.

import CV4L2
import LinuxHardware
#if canImport(Glibc)
import Glibc
#endif

/// vivid's test controls (the rig loads it with error injection on): "Disconnect" acts
/// like pulling the cable, "Inject Fatal Streaming Error" makes every further DQBUF fail
/// with EIO, "Percentage of Dropped Buffers" at 100 stops frames while the stream stays on.
enum VividControl {
    /// Sets the control called `name` on the device at `path` (a button takes any value).
    /// Returns its id, nil when the driver has no such control.
    @discardableResult
    static func set(_ name: String, to value: Int32 = 1, path: String) throws -> UInt32? {
        let fd = try Sys.openVideo(path)
        defer { Sys.closeVideo(fd) }
        var id = UInt32(V4L2_CTRL_FLAG_NEXT_CTRL)
        while true {
            var q = v4l2_queryctrl()
            q.id = id
            do {
                _ = try Sys.ioctl(fd, CV4L2_VIDIOC_QUERYCTRL(), &q, op: "VIDIOC_QUERYCTRL", path: path)
            } catch {
                return nil
            }
            let found = withUnsafeBytes(of: &q.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if found == name {
                var c = v4l2_control()
                c.id = q.id
                c.value = value
                _ = try Sys.ioctl(fd, CV4L2_VIDIOC_S_CTRL(), &c, op: "VIDIOC_S_CTRL", path: path)
                return q.id
            }
            id = q.id | UInt32(V4L2_CTRL_FLAG_NEXT_CTRL)
        }
    }
}

/// vivid's HDMI output and capture input run at DV timings (640×480 by default); the loop
/// from output to capture needs both at the same timings, set before the formats.
enum VividTimings {
    /// Sets the progressive timings of `width`×`height` nearest 60 Hz on the output and the
    /// capture node. Returns false when vivid offers none of that size.
    @discardableResult
    static func set(width: Int, height: Int) throws -> Bool {
        for path in [Rig.videoOutput, Rig.videoCapture] {
            let fd = try Sys.openVideo(path)
            defer { Sys.closeVideo(fd) }
            var best: (timings: v4l2_dv_timings, hz: Double)?
            var e = v4l2_enum_dv_timings()
            while (try? Sys.ioctl(fd, CV4L2_VIDIOC_ENUM_DV_TIMINGS(), &e, op: "VIDIOC_ENUM_DV_TIMINGS", path: path)) != nil {
                let bt = e.timings.bt
                let total = Double(bt.width + bt.hfrontporch + bt.hsync + bt.hbackporch)
                    * Double(bt.height + bt.vfrontporch + bt.vsync + bt.vbackporch)
                let hz = total > 0 ? Double(bt.pixelclock) / total : 0
                if Int(bt.width) == width, Int(bt.height) == height, bt.interlaced == 0,
                   best.map({ abs($0.hz - 60) > abs(hz - 60) }) ?? true {
                    best = (e.timings, hz)
                }
                e.index += 1
            }
            guard var t = best?.timings else { return false }
            _ = try Sys.ioctl(fd, CV4L2_VIDIOC_S_DV_TIMINGS(), &t, op: "VIDIOC_S_DV_TIMINGS", path: path)
        }
        return true
    }
}
