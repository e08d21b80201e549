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
