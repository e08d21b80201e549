// SPDX-License-Identifier: Apache-2.0
// V4L2 kernel interface and libv4l2 (format conversion, emulated controls) for the camera adapter.
// The VIDIOC_* request codes are function-like macros Swift cannot import; each is
// exposed as a CV4L2_VIDIOC_* function returning the same value.
#ifndef SPRINTGATE_CV4L2_SHIM_H
#define SPRINTGATE_CV4L2_SHIM_H
#include <linux/videodev2.h>
#include <libv4l2.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#define CV4L2_REQUEST(name) static inline unsigned long CV4L2_##name(void) { return name; }
CV4L2_REQUEST(VIDIOC_QUERYCAP)
CV4L2_REQUEST(VIDIOC_ENUM_FMT)
CV4L2_REQUEST(VIDIOC_ENUM_FRAMESIZES)
CV4L2_REQUEST(VIDIOC_ENUM_FRAMEINTERVALS)
CV4L2_REQUEST(VIDIOC_G_FMT)
CV4L2_REQUEST(VIDIOC_S_FMT)
CV4L2_REQUEST(VIDIOC_TRY_FMT)
CV4L2_REQUEST(VIDIOC_G_PARM)
CV4L2_REQUEST(VIDIOC_S_PARM)
CV4L2_REQUEST(VIDIOC_REQBUFS)
CV4L2_REQUEST(VIDIOC_QUERYBUF)
CV4L2_REQUEST(VIDIOC_QBUF)
CV4L2_REQUEST(VIDIOC_DQBUF)
CV4L2_REQUEST(VIDIOC_STREAMON)
CV4L2_REQUEST(VIDIOC_STREAMOFF)
CV4L2_REQUEST(VIDIOC_QUERYCTRL)
CV4L2_REQUEST(VIDIOC_G_CTRL)
CV4L2_REQUEST(VIDIOC_S_CTRL)
CV4L2_REQUEST(VIDIOC_G_EXT_CTRLS)
CV4L2_REQUEST(VIDIOC_S_EXT_CTRLS)
CV4L2_REQUEST(VIDIOC_ENUMINPUT)
CV4L2_REQUEST(VIDIOC_G_INPUT)
CV4L2_REQUEST(VIDIOC_S_INPUT)
CV4L2_REQUEST(VIDIOC_ENUMOUTPUT)
CV4L2_REQUEST(VIDIOC_S_OUTPUT)
CV4L2_REQUEST(VIDIOC_S_DV_TIMINGS)
CV4L2_REQUEST(VIDIOC_ENUM_DV_TIMINGS)
#undef CV4L2_REQUEST

/// ioctl through libv4l2 with a pointer argument (the variadic v4l2_ioctl is not importable).
static inline int CV4L2_ioctl(int fd, unsigned long request, void *arg) { return v4l2_ioctl(fd, request, arg); }
#endif
