// SPDX-License-Identifier: Apache-2.0
// zlib, to read clips and recordings stored gzip-compressed (.raw.gz, .y4m.gz).
#ifndef SPRINTGATE_CZLIB_SHIM_H
#define SPRINTGATE_CZLIB_SHIM_H
#include <zlib.h>
#endif
