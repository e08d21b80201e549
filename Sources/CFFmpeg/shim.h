// SPDX-License-Identifier: Apache-2.0
// FFmpeg's codec, container, scaling and utility libraries, and the function-like macros
// of their API as inline functions Swift can call.
#ifndef SPRINTGATE_CFFMPEG_H
#define SPRINTGATE_CFFMPEG_H
#include <errno.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/error.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>

/// AVERROR(EAGAIN): the codec wants input before it gives output (or the reverse).
static inline int sprintgate_averror_eagain(void) { return AVERROR(EAGAIN); }
/// AVERROR_EOF: the codec or file has nothing more.
static inline int sprintgate_averror_eof(void) { return AVERROR_EOF; }
/// AVERROR(ENOSPC): the disk is full.
static inline int sprintgate_averror_enospc(void) { return AVERROR(ENOSPC); }
/// AV_NOPTS_VALUE: no timestamp.
static inline int64_t sprintgate_av_nopts(void) { return AV_NOPTS_VALUE; }
#endif
