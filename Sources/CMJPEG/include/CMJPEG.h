// SPDX-License-Identifier: Apache-2.0
// Decoding MJPEG camera frames to 8-bit luma without aborting the process on corrupt data.
#ifndef SPRINTGATE_CMJPEG_H
#define SPRINTGATE_CMJPEG_H
#include <stddef.h>
#include <stdint.h>

/// Decodes the JPEG in src[0..<length] to grayscale into dst (rows of `stride` bytes).
/// Returns 0 on success, -1 on corrupt or truncated data, -2 when the image is not
/// width × height. Never calls exit().
int sprintgate_mjpeg_to_luma(const uint8_t *src, size_t length, uint8_t *dst, int width, int height, int stride);

/// A reusable decoder: keeps libjpeg's decompression object and its per-image working
/// memory between frames, so that once it has decoded a frame of a stream's size it
/// decodes further ones without heap allocation. Used from one thread at a time.
typedef struct sprintgate_mjpeg_decoder sprintgate_mjpeg_decoder;

/// A new decoder, or NULL when memory is exhausted. Free it with sprintgate_mjpeg_decoder_destroy.
sprintgate_mjpeg_decoder *sprintgate_mjpeg_decoder_create(void);

/// Frees a decoder (NULL is ignored).
void sprintgate_mjpeg_decoder_destroy(sprintgate_mjpeg_decoder *decoder);

/// Like sprintgate_mjpeg_to_luma, with a reusable decoder. The same return values; the
/// decoder stays usable after a failure.
int sprintgate_mjpeg_decode(sprintgate_mjpeg_decoder *decoder, const uint8_t *src, size_t length,
                            uint8_t *dst, int width, int height, int stride);

/// Encodes the 8-bit luma image src (rows of `stride` bytes) as a baseline JPEG of the
/// given quality (1...100) into dst[0..<capacity] and stores its size in *length.
/// `color` 0 writes a one-component grayscale JPEG; 1 writes YCbCr 4:2:2 with neutral
/// chroma, as UVC cameras send. Returns 0 on success, -1 on an encoder error, -3 when
/// capacity is too small. For tests and tools, not for the capture path (it allocates).
int sprintgate_luma_to_jpeg(const uint8_t *src, int width, int height, int stride, int quality, int color,
                            uint8_t *dst, size_t capacity, size_t *length);
#endif
