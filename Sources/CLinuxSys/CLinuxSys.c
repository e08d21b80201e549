// SPDX-License-Identifier: Apache-2.0
// The stop-signal handler (the only C with state in this module) and the timestamped
// datagram read (control messages are macros Swift cannot call).
#include "CLinuxSys.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
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

long sprintgate_recv_timestamped(int fd, void *buf, unsigned long len, struct sockaddr_in *from,
                                 int64_t *rx_mono_ns) {
    union {
        char bytes[CMSG_SPACE(sizeof(struct timespec))];
        struct cmsghdr align;
    } control;
    struct iovec iov = { .iov_base = buf, .iov_len = len };
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_name = from;
    msg.msg_namelen = sizeof *from;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.bytes;
    msg.msg_controllen = sizeof control.bytes;
    ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_TRUNC);
    if (n < 0) return -1;
    struct timespec mono, real;
    clock_gettime(CLOCK_MONOTONIC, &mono);
    clock_gettime(CLOCK_REALTIME, &real);
    int64_t mono_ns = (int64_t)mono.tv_sec * 1000000000 + mono.tv_nsec;
    *rx_mono_ns = mono_ns;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
            struct timespec rx;
            memcpy(&rx, CMSG_DATA(c), sizeof rx);
            int64_t age = ((int64_t)real.tv_sec - rx.tv_sec) * 1000000000 + (real.tv_nsec - rx.tv_nsec);
            /* A step of the wall clock between receipt and now would make the age
               negative or absurd: then the time of this call is the better figure. */
            if (age >= 0 && age < 1000000000) *rx_mono_ns = mono_ns - age;
        }
    }
    return (long)n;
}

int sprintgate_enable_rx_timestamps(int fd) {
    int one = 1;
    return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
}
