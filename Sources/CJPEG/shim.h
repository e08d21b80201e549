// SPDX-License-Identifier: Apache-2.0
// libjpeg-turbo, to decode MJPEG camera frames to luma when a UVC camera offers only MJPEG at high rates.
#ifndef SPRINTGATE_CJPEG_SHIM_H
#define SPRINTGATE_CJPEG_SHIM_H
#include <stdio.h>
#include <jpeglib.h>
#endif
