// SPDX-License-Identifier: Apache-2.0
// MJPEG to luma with libjpeg-turbo: errors end in longjmp back to the caller, never in exit().
#include "CMJPEG.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

// libjpeg's default error handler prints and calls exit(); this one jumps back to the
// call that started the work, which then reports -1.
struct guarded_error {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
};

static void guarded_error_exit(j_common_ptr cinfo) {
    struct guarded_error *err = (struct guarded_error *)cinfo->err;
    longjmp(err->jump, 1);
}

// Why: warnings (e.g. "premature end of data segment" on a frame cut short by a USB
// transfer error) are counted in num_warnings by the default emit_message, which is
// kept; printing them is not wanted on the capture path.
static void guarded_output_message(j_common_ptr cinfo) { (void)cinfo; }

// libjpeg allocates its per-image working memory (the JPOOL_IMAGE pool) with malloc in
// every decode and frees it at the end. The decoder serves that pool from an arena it
// keeps between frames instead: after the first frame of a stream (or a larger one),
// decoding allocates nothing. Permanent-pool requests and virtual arrays (progressive
// JPEG only) still go to libjpeg's own manager.
struct sprintgate_mjpeg_decoder {
    struct jpeg_decompress_struct cinfo;  // first: libjpeg's callbacks get its address
    struct guarded_error err;
    struct jpeg_memory_mgr original;      // libjpeg's own methods, for everything else
    unsigned char *arena;
    size_t capacity;
    size_t used;
    size_t overflow;                      // bytes that did not fit this image
};

// Why 64: libjpeg-turbo's SIMD code wants rows aligned to its ALIGN_SIZE (32 with AVX2);
// a cache line covers that on every target.
#define ARENA_ALIGN 64

static size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

static void *arena_take(struct sprintgate_mjpeg_decoder *d, size_t n) {
    n = round_up(n == 0 ? 1 : n, ARENA_ALIGN);
    if (d->arena != NULL && d->used + n <= d->capacity) {
        void *p = d->arena + d->used;
        d->used += n;
        return p;
    }
    d->overflow += n;
    return NULL;
}

static void *arena_alloc_small(j_common_ptr cinfo, int pool_id, size_t size) {
    struct sprintgate_mjpeg_decoder *d = (struct sprintgate_mjpeg_decoder *)cinfo;
    void *p = pool_id == JPOOL_IMAGE ? arena_take(d, size) : NULL;
    return p != NULL ? p : d->original.alloc_small(cinfo, pool_id, size);
}

static void *arena_alloc_large(j_common_ptr cinfo, int pool_id, size_t size) {
    struct sprintgate_mjpeg_decoder *d = (struct sprintgate_mjpeg_decoder *)cinfo;
    void *p = pool_id == JPOOL_IMAGE ? arena_take(d, size) : NULL;
    return p != NULL ? p : d->original.alloc_large(cinfo, pool_id, size);
}

static JSAMPARRAY arena_alloc_sarray(j_common_ptr cinfo, int pool_id, JDIMENSION samplesperrow, JDIMENSION numrows) {
    struct sprintgate_mjpeg_decoder *d = (struct sprintgate_mjpeg_decoder *)cinfo;
    if (pool_id != JPOOL_IMAGE) return d->original.alloc_sarray(cinfo, pool_id, samplesperrow, numrows);
    size_t stride = round_up((size_t)samplesperrow * sizeof(JSAMPLE), ARENA_ALIGN);
    JSAMPARRAY rows = arena_take(d, (size_t)numrows * sizeof(JSAMPROW));
    JSAMPLE *data = arena_take(d, stride * numrows);
    if (rows == NULL || data == NULL) return d->original.alloc_sarray(cinfo, pool_id, samplesperrow, numrows);
    for (JDIMENSION i = 0; i < numrows; i++) rows[i] = data + stride * i;
    return rows;
}

static JBLOCKARRAY arena_alloc_barray(j_common_ptr cinfo, int pool_id, JDIMENSION blocksperrow, JDIMENSION numrows) {
    struct sprintgate_mjpeg_decoder *d = (struct sprintgate_mjpeg_decoder *)cinfo;
    if (pool_id != JPOOL_IMAGE) return d->original.alloc_barray(cinfo, pool_id, blocksperrow, numrows);
    size_t stride = round_up((size_t)blocksperrow * sizeof(JBLOCK), ARENA_ALIGN);
    JBLOCKARRAY rows = arena_take(d, (size_t)numrows * sizeof(JBLOCKROW));
    unsigned char *data = arena_take(d, stride * numrows);
    if (rows == NULL || data == NULL) return d->original.alloc_barray(cinfo, pool_id, blocksperrow, numrows);
    for (JDIMENSION i = 0; i < numrows; i++) rows[i] = (JBLOCKROW)(void *)(data + stride * i);
    return rows;
}

static void arena_free_pool(j_common_ptr cinfo, int pool_id) {
    struct sprintgate_mjpeg_decoder *d = (struct sprintgate_mjpeg_decoder *)cinfo;
    d->original.free_pool(cinfo, pool_id);
    if (pool_id != JPOOL_IMAGE) return;
    // Between images nothing points into the arena: grow it to this image's need.
    size_t need = d->used + d->overflow;
    if (d->overflow > 0) {
        size_t capacity = round_up(need + need / 4, 4096);
        unsigned char *arena = aligned_alloc(ARENA_ALIGN, capacity);
        if (arena != NULL) {
            free(d->arena);
            d->arena = arena;
            d->capacity = capacity;
        }
    }
    d->used = 0;
    d->overflow = 0;
}

sprintgate_mjpeg_decoder *sprintgate_mjpeg_decoder_create(void) {
    sprintgate_mjpeg_decoder *d = calloc(1, sizeof *d);
    if (d == NULL) return NULL;
    d->cinfo.err = jpeg_std_error(&d->err.pub);
    d->err.pub.error_exit = guarded_error_exit;
    d->err.pub.output_message = guarded_output_message;
    if (setjmp(d->err.jump)) {
        jpeg_destroy_decompress(&d->cinfo);
        free(d);
        return NULL;
    }
    jpeg_create_decompress(&d->cinfo);
    d->original = *d->cinfo.mem;
    d->cinfo.mem->alloc_small = arena_alloc_small;
    d->cinfo.mem->alloc_large = arena_alloc_large;
    d->cinfo.mem->alloc_sarray = arena_alloc_sarray;
    d->cinfo.mem->alloc_barray = arena_alloc_barray;
    d->cinfo.mem->free_pool = arena_free_pool;
    return d;
}

void sprintgate_mjpeg_decoder_destroy(sprintgate_mjpeg_decoder *d) {
    if (d == NULL) return;
    jpeg_destroy_decompress(&d->cinfo);
    free(d->arena);
    free(d);
}

// Rows handed to jpeg_read_scanlines per call; libjpeg returns at most
// rec_outbuf_height (1 to 4) rows, so 16 is always enough.
#define ROWS_PER_READ 16

int sprintgate_mjpeg_decode(sprintgate_mjpeg_decoder *d, const uint8_t *src, size_t length,
                            uint8_t *dst, int width, int height, int stride) {
    if (d == NULL || src == NULL || dst == NULL || width <= 0 || height <= 0 || stride < width) return -1;
    // Why: a frame that is not even an SOI marker (a UVC payload with only a header,
    // seen after a bus reset) is rejected before libjpeg looks at it.
    if (length < 4 || src[0] != 0xFF || src[1] != 0xD8) return -1;
    struct jpeg_decompress_struct *cinfo = &d->cinfo;
    volatile int result = 0;
    if (setjmp(d->err.jump)) {
        jpeg_abort_decompress(cinfo);
        return result == -2 ? -2 : -1;
    }
    d->err.pub.num_warnings = 0;
    jpeg_mem_src(cinfo, src, (unsigned long)length);
    if (jpeg_read_header(cinfo, TRUE) != JPEG_HEADER_OK) {
        jpeg_abort_decompress(cinfo);
        return -1;
    }
    if ((int)cinfo->image_width != width || (int)cinfo->image_height != height) {
        jpeg_abort_decompress(cinfo);
        return -2;
    }
    // Luma only: libjpeg skips the inverse DCT of chroma components it does not need.
    cinfo->out_color_space = JCS_GRAYSCALE;
    cinfo->dct_method = JDCT_ISLOW;
    jpeg_start_decompress(cinfo);
    if ((int)cinfo->output_width != width || (int)cinfo->output_height != height ||
        cinfo->output_components != 1) {
        result = -2;
        jpeg_abort_decompress(cinfo);
        return -2;
    }
    JSAMPROW rows[ROWS_PER_READ];
    while (cinfo->output_scanline < cinfo->output_height) {
        JDIMENSION first = cinfo->output_scanline;
        JDIMENSION n = cinfo->output_height - first;
        if (n > ROWS_PER_READ) n = ROWS_PER_READ;
        for (JDIMENSION i = 0; i < n; i++) rows[i] = dst + (size_t)(first + i) * (size_t)stride;
        if (jpeg_read_scanlines(cinfo, rows, n) == 0) {
            jpeg_abort_decompress(cinfo);
            return -1;
        }
    }
    jpeg_finish_decompress(cinfo);
    // Why: libjpeg fills the rest of a truncated or damaged scan with grey and only warns;
    // such a frame would look like motion to the detector, so it counts as corrupt.
    return d->err.pub.num_warnings == 0 ? 0 : -1;
}

int sprintgate_mjpeg_to_luma(const uint8_t *src, size_t length, uint8_t *dst, int width, int height, int stride) {
    sprintgate_mjpeg_decoder *d = sprintgate_mjpeg_decoder_create();
    if (d == NULL) return -1;
    int r = sprintgate_mjpeg_decode(d, src, length, dst, width, height, stride);
    sprintgate_mjpeg_decoder_destroy(d);
    return r;
}

int sprintgate_luma_to_jpeg(const uint8_t *src, int width, int height, int stride, int quality, int color,
                            uint8_t *dst, size_t capacity, size_t *length) {
    if (src == NULL || dst == NULL || length == NULL || width <= 0 || height <= 0 || stride < width) return -1;
    struct jpeg_compress_struct cinfo;
    struct guarded_error err;
    unsigned char *volatile out = NULL;
    unsigned long out_size = 0;
    JSAMPLE *volatile rgb = NULL;
    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = guarded_error_exit;
    err.pub.output_message = guarded_output_message;
    if (setjmp(err.jump)) {
        jpeg_destroy_compress(&cinfo);
        free(out);
        free(rgb);
        return -1;
    }
    jpeg_create_compress(&cinfo);
    unsigned char *out_buf = NULL;
    jpeg_mem_dest(&cinfo, &out_buf, &out_size);
    cinfo.image_width = (JDIMENSION)width;
    cinfo.image_height = (JDIMENSION)height;
    if (color) {
        cinfo.input_components = 3;
        cinfo.in_color_space = JCS_RGB;
    } else {
        cinfo.input_components = 1;
        cinfo.in_color_space = JCS_GRAYSCALE;
    }
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality < 1 ? 1 : quality > 100 ? 100 : quality, TRUE);
    if (color) {
        // 4:2:2, the usual MJPEG layout of UVC cameras.
        cinfo.comp_info[0].h_samp_factor = 2;
        cinfo.comp_info[0].v_samp_factor = 1;
        cinfo.comp_info[1].h_samp_factor = 1;
        cinfo.comp_info[1].v_samp_factor = 1;
        cinfo.comp_info[2].h_samp_factor = 1;
        cinfo.comp_info[2].v_samp_factor = 1;
        rgb = malloc((size_t)width * 3);
        if (rgb == NULL) {
            jpeg_destroy_compress(&cinfo);
            free(out_buf);
            return -1;
        }
    }
    jpeg_start_compress(&cinfo, TRUE);
    while (cinfo.next_scanline < cinfo.image_height) {
        const uint8_t *row = src + (size_t)cinfo.next_scanline * (size_t)stride;
        JSAMPROW p;
        if (color) {
            for (int x = 0; x < width; x++) rgb[3 * x] = rgb[3 * x + 1] = rgb[3 * x + 2] = row[x];
            p = rgb;
        } else {
            p = (JSAMPROW)row;
        }
        jpeg_write_scanlines(&cinfo, &p, 1);
    }
    jpeg_finish_compress(&cinfo);
    out = out_buf;
    jpeg_destroy_compress(&cinfo);
    free(rgb);
    int r = 0;
    if (out_size > capacity) {
        r = -3;
    } else {
        memcpy(dst, out, out_size);
        *length = out_size;
    }
    free(out);
    return r;
}
