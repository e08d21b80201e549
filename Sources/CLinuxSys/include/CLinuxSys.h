// SPDX-License-Identifier: Apache-2.0
// Linux system interfaces Glibc's Swift module does not export: epoll, eventfd, timerfd,
// evdev and uinput, and the stop-signal handler.
#ifndef SPRINTGATE_CLINUXSYS_H
#define SPRINTGATE_CLINUXSYS_H
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <stdint.h>
#include <stdio.h>
#include <netinet/in.h>
#include <time.h>

/// CLOCK_MONOTONIC in nanoseconds (a C helper: several C modules re-export timespec,
/// which makes the Swift type ambiguous).
static inline int64_t sprintgate_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/// The descriptor stored in an epoll event's data (the union is awkward from Swift).
static inline int sprintgate_epoll_event_fd(const struct epoll_event *e) { return e->data.fd; }
/// An epoll event for `fd` with the given event mask.
static inline struct epoll_event sprintgate_epoll_event_make(int fd, unsigned int mask) {
    struct epoll_event e;
    e.events = mask;
    e.data.fd = fd;
    return e;
}

/// Installs handlers for SIGTERM, SIGINT and SIGHUP that record the signal and write to
/// the eventfd `wake_fd` (both async-signal-safe), so the event loop wakes and ends its
/// run in order, and unblocks them on the calling thread. Returns 0, or -1 with errno
/// set.
int sprintgate_stop_signals_install(int wake_fd);
/// The stop signal received since `install` (0: none).
int sprintgate_stop_signal(void);
/// Makes standard output line-buffered (a C helper: `stdout` is a C global Swift 6
/// treats as unsafe shared state).
static inline void sprintgate_stdout_line_buffered(void) { setvbuf(stdout, NULL, _IOLBF, 0); }
/// Reads one datagram from the non-blocking socket `fd` (MSG_DONTWAIT | MSG_TRUNC, so
/// the return value is the datagram's full length), with the sender in `from` and, in
/// `rx_mono_ns`, the kernel's receive time (SO_TIMESTAMPNS, CLOCK_REALTIME) moved onto
/// CLOCK_MONOTONIC; without a kernel timestamp, the time of this call. Returns the
/// length, or -1 with errno set.
/// Asks the kernel to timestamp each datagram `fd` receives (SO_TIMESTAMPNS). Returns 0,
/// or -1 with errno set.
int sprintgate_enable_rx_timestamps(int fd);
long sprintgate_recv_timestamped(int fd, void *buf, unsigned long len, struct sockaddr_in *from,
                                 int64_t *rx_mono_ns);

/// Lowers the calling thread's priority by `increment` nice steps (threads it starts later
/// inherit it). Returns 0, or -1 with errno set.
int sprintgate_thread_nice(int increment);
/// Makes an evdev descriptor stamp its events on CLOCK_MONOTONIC (EVIOCSCLOCKID). Returns
/// 0, or -1 with errno set.
int sprintgate_evdev_monotonic(int fd);
/// Whether the evdev device `fd` can send key `code` (EVIOCGBIT). 1 or 0, or -1 with errno set.
int sprintgate_evdev_has_key(int fd, int code);
/// The device's name (EVIOCGNAME) into `buf`. Its length, or -1 with errno set.
int sprintgate_evdev_name(int fd, char *buf, int len);
/// Reads one event from the non-blocking evdev descriptor `fd`: its type, code, value and
/// time in nanoseconds on the descriptor's clock. Returns 1, 0 when none is waiting, or -1
/// with errno set (ENODEV once the device is gone).
int sprintgate_evdev_read(int fd, int *type, int *code, int *value, int64_t *ns);
/// A virtual keyboard through /dev/uinput that can send `count` keys `keys` (for the
/// kernel-simulator tests: a clicker the kernel sees as real). Returns the uinput
/// descriptor (closing it removes the device), or -1 with errno set.
int sprintgate_uinput_keyboard(const char *name, const int *keys, int count);
/// Presses and releases `code` on a uinput keyboard. Returns 0, or -1 with errno set.
int sprintgate_uinput_tap(int fd, int code);
/// Reads CLOCK_REALTIME into `unix_ms` (milliseconds since the Unix epoch), CLOCK_BOOTTIME
/// into `boot_ms` (milliseconds since the board started), and the kernel's view of the
/// wall clock (adjtimex): returns 1 when a time service (chrony, ntpd, systemd-timesyncd)
/// keeps it synchronised, 0 when not (STA_UNSYNC: an offline board without a battery
/// clock), or -1 with errno set when the kernel cannot be asked.
int sprintgate_wall_clock_read(int64_t *unix_ms, int64_t *boot_ms);
/// Steps CLOCK_REALTIME to `unix_ms` milliseconds since the Unix epoch (needs
/// CAP_SYS_TIME). Returns 0, or -1 with errno set.
int sprintgate_wall_clock_set_ms(int64_t unix_ms);
#endif
