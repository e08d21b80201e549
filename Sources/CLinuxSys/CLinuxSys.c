// SPDX-License-Identifier: Apache-2.0
// The stop-signal handler: the only C with state in this module.
#include "CLinuxSys.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop_signal = 0;
static volatile sig_atomic_t stop_wake_fd = -1;

static void on_stop_signal(int sig) {
    int saved = errno;
    stop_signal = sig;
    if (stop_wake_fd >= 0) {
        uint64_t one = 1;
        ssize_t ignored = write(stop_wake_fd, &one, sizeof one);
        (void)ignored;
    }
    errno = saved;
}

int sprintgate_stop_signals_install(int wake_fd) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    stop_wake_fd = wake_fd;
    if (sigaction(SIGTERM, &sa, NULL) != 0) return -1;
    if (sigaction(SIGINT, &sa, NULL) != 0) return -1;
    if (sigaction(SIGHUP, &sa, NULL) != 0) return -1;
    /* A parent may have started this process with the signals blocked (the mask is
       inherited through exec); unblocked here, they reach this thread. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    return pthread_sigmask(SIG_UNBLOCK, &set, NULL) == 0 ? 0 : -1;
}

int sprintgate_stop_signal(void) { return stop_signal; }
