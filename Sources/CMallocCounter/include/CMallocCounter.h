// SPDX-License-Identifier: Apache-2.0
// Per-thread heap allocation counter for allocation-discipline checks.
#ifndef SPRINTGATE_CMALLOCCOUNTER_H
#define SPRINTGATE_CMALLOCCOUNTER_H
#include <stdint.h>

/// Starts counting allocations made by the calling thread, from zero.
void sprintgate_alloc_count_begin(void);
/// Stops counting on the calling thread and returns the number of allocations
/// (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign) it made since
/// sprintgate_alloc_count_begin.
int64_t sprintgate_alloc_count_end(void);
/// 1 when the malloc hooks are active in this process (the counter target is linked).
int sprintgate_alloc_hooks_active(void);
#endif
