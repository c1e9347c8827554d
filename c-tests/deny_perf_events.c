/* deny_perf_events.c -- an LD_PRELOAD shim that makes perf_event_open(2) fail with EACCES, as
 * it does when /proc/sys/kernel/perf_event_paranoid (or a container's seccomp profile) forbids
 * perf counters; every other system call goes through. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>

long syscall(long number, ...)
{
    static long (*real)(long, ...);
    va_list ap;
    long a[6];
    va_start(ap, number);
    for (int i = 0; i < 6; i++) a[i] = va_arg(ap, long);
    va_end(ap);
    if (number == SYS_perf_event_open) {
        errno = EACCES;
        return -1;
    }
    if (!real) real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
    return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
