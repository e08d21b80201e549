// SPDX-License-Identifier: Apache-2.0
// The stop-signal handler (the only C with state in this module), the timestamped
// datagram read (control messages are macros Swift cannot call), and evdev and uinput
// (their ioctl requests are macros too), and the wall clock's state and step (Glibc's
// Swift module does not export adjtimex).
#include "CLinuxSys.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <linux/uinput.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/timex.h>
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

int sprintgate_evdev_monotonic(int fd) {
    int clock = CLOCK_MONOTONIC;
    return ioctl(fd, EVIOCSCLOCKID, &clock);
}

int sprintgate_evdev_has_key(int fd, int code) {
    unsigned char bits[KEY_MAX / 8 + 1];
    memset(bits, 0, sizeof bits);
    if (code < 0 || code > KEY_MAX) return 0;
    if (ioctl(fd, EVIOCGBIT(EV_KEY, sizeof bits), bits) < 0) return -1;
    return (bits[code / 8] >> (code % 8)) & 1;
}

int sprintgate_evdev_name(int fd, char *buf, int len) {
    int n = ioctl(fd, EVIOCGNAME(len), buf);
    if (n >= 0 && len > 0) buf[n < len ? n : len - 1] = 0;
    return n;
}

int sprintgate_evdev_read(int fd, int *type, int *code, int *value, int64_t *ns) {
    struct input_event ev;
    for (;;) {
        ssize_t n = read(fd, &ev, sizeof ev);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return 0;
        if (n < 0) return -1;
        if (n != (ssize_t)sizeof ev) { errno = EIO; return -1; }
        *type = ev.type;
        *code = ev.code;
        *value = ev.value;
        *ns = (int64_t)ev.input_event_sec * 1000000000 + (int64_t)ev.input_event_usec * 1000;
        return 1;
    }
}

int sprintgate_uinput_keyboard(const char *name, const int *keys, int count) {
    int fd = open("/dev/uinput", O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return -1;
    struct uinput_setup setup;
    memset(&setup, 0, sizeof setup);
    setup.id.bustype = BUS_USB;
    setup.id.vendor = 0x1d6b;
    setup.id.product = 0x0104;
    strncpy(setup.name, name, UINPUT_MAX_NAME_SIZE - 1);
    int ok = ioctl(fd, UI_SET_EVBIT, EV_KEY) == 0;
    for (int i = 0; ok && i < count; i++) ok = ioctl(fd, UI_SET_KEYBIT, keys[i]) == 0;
    ok = ok && ioctl(fd, UI_DEV_SETUP, &setup) == 0 && ioctl(fd, UI_DEV_CREATE) == 0;
    if (!ok) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

static int uinput_emit(int fd, int type, int code, int value) {
    struct input_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = type;
    ev.code = code;
    ev.value = value;
    return write(fd, &ev, sizeof ev) == (ssize_t)sizeof ev ? 0 : -1;
}

int sprintgate_uinput_tap(int fd, int code) {
    if (uinput_emit(fd, EV_KEY, code, 1) || uinput_emit(fd, EV_SYN, SYN_REPORT, 0)) return -1;
    if (uinput_emit(fd, EV_KEY, code, 0) || uinput_emit(fd, EV_SYN, SYN_REPORT, 0)) return -1;
    return 0;
}

int sprintgate_thread_nice(int increment) {
    id_t tid = (id_t)syscall(SYS_gettid);
    errno = 0;
    int now = getpriority(PRIO_PROCESS, tid);
    if (now == -1 && errno != 0) return -1;
    return setpriority(PRIO_PROCESS, tid, now + increment);
}

int sprintgate_wall_clock_read(int64_t *unix_ms, int64_t *boot_ms) {
    struct timex tx;
    memset(&tx, 0, sizeof tx); /* modes 0: read only */
    int state = adjtimex(&tx);
    if (state == -1) return -1;
    struct timespec ts, boot;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0 || clock_gettime(CLOCK_BOOTTIME, &boot) != 0) return -1;
    *unix_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    *boot_ms = (int64_t)boot.tv_sec * 1000 + boot.tv_nsec / 1000000;
    return (state == TIME_ERROR || (tx.status & STA_UNSYNC)) ? 0 : 1;
}

int sprintgate_wall_clock_set_ms(int64_t unix_ms) {
    struct timespec ts;
    ts.tv_sec = (time_t)(unix_ms / 1000);
    ts.tv_nsec = (long)((unix_ms % 1000) * 1000000);
    if (ts.tv_nsec < 0) { ts.tv_sec -= 1; ts.tv_nsec += 1000000000; }
    return clock_settime(CLOCK_REALTIME, &ts);
}
