// SPDX-License-Identifier: Apache-2.0
// FFmpeg's codec, container, scaling and utility libraries, and the function-like macros
// of their API as inline functions Swift can call.
#ifndef SPRINTGATE_CFFMPEG_H
#define SPRINTGATE_CFFMPEG_H
#include <errno.h>
#include <libavcodec/avcodec.h>
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavformat/avformat.h>
#include <libavutil/display.h>
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
/// The rotation in degrees (0, 90, 180 or 270, clockwise) a player applies to stream
/// `st`'s pictures, from its display matrix (a phone filming upright stores this).
static inline int sprintgate_stream_rotation(const AVStream *st) {
    const uint8_t *m = av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, NULL);
    if (!m) return 0;
    double r = -av_display_rotation_get((const int32_t *)m);
    if (r != r) return 0;
    int d = (int)(r >= 0 ? r + 0.5 : r - 0.5) % 360;
    if (d < 0) d += 360;
    return ((d + 45) / 90 % 4) * 90;
}
#endif
