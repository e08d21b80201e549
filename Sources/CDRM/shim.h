// SPDX-License-Identifier: Apache-2.0
// libdrm (DRM/KMS) for the TV output, with the page-flip wait that needs a C callback.
#ifndef SPRINTGATE_CDRM_SHIM_H
#define SPRINTGATE_CDRM_SHIM_H

#include <stdint.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

static void sprintgate_drm_flipped(int fd, unsigned int sequence, unsigned int sec, unsigned int usec, void *data) {
    (void)fd; (void)sequence; (void)sec; (void)usec;
    *(int *)data = 1;
}

/// Reads the card's pending events; a page flip asked for with `drmModePageFlip(…,
/// DRM_MODE_PAGE_FLIP_EVENT, flag)` sets `*flag` to 1. Returns drmHandleEvent's result.
static inline int sprintgate_drm_handle_events(int fd) {
    drmEventContext context = {0};
    context.version = 2;
    context.page_flip_handler = sprintgate_drm_flipped;
    return drmHandleEvent(fd, &context);
}

/// Whether a connector is connected (Swift sees the C enum as a struct).
static inline int sprintgate_drm_connected(const drmModeConnector *c) { return c->connection == DRM_MODE_CONNECTED; }
static inline int sprintgate_drm_preferred(const drmModeModeInfo *m) { return (m->type & DRM_MODE_TYPE_PREFERRED) != 0; }
static inline uint32_t sprintgate_drm_flip_event(void) { return DRM_MODE_PAGE_FLIP_EVENT; }

#endif
