// SPDX-License-Identifier: Apache-2.0
// Wraps glibc's allocator entry points and counts calls made by threads that asked to be counted.
#define _GNU_SOURCE
#include "CMallocCounter.h"
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

// glibc exports its allocator under these names, so the wrappers below can forward to
// it without dlsym (which may itself allocate).
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static __thread int counting;
static __thread int64_t count;
static volatile int hooks_seen;

static inline void note(void) {
    hooks_seen = 1;
    if (counting) count++;
}

void *malloc(size_t n) { note(); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { note(); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { note(); return __libc_realloc(p, n); }
void free(void *p) { __libc_free(p); }
void *memalign(size_t al, size_t n) { note(); return __libc_memalign(al, n); }
void *aligned_alloc(size_t al, size_t n) { note(); return __libc_memalign(al, n); }
int posix_memalign(void **out, size_t al, size_t n) {
    note();
    void *p = __libc_memalign(al, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

void sprintgate_alloc_count_begin(void) { count = 0; counting = 1; }
int64_t sprintgate_alloc_count_end(void) { counting = 0; return count; }
int sprintgate_alloc_hooks_active(void) {
    void *p = malloc(1);  // goes through the hook above when it is the process's malloc
    __libc_free(p);
    return hooks_seen;
}
