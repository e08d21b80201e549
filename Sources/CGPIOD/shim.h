// SPDX-License-Identifier: Apache-2.0
// libgpiod 1.6 (Debian 12) for the GPIO adapter: line requests, values and edge events.
#ifndef SPRINTGATE_CGPIOD_SHIM_H
#define SPRINTGATE_CGPIOD_SHIM_H
#include <gpiod.h>
#endif
