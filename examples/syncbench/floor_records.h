/*
 * floor_records.h -- the records of the floor: what any tracer that timestamps every event has
 * to store, at pomptrace's sizes. Shared by syncbench.c (its floor variants) and
 * floor_library.c (a POMP2 library that does nothing else).
 */
#ifndef SYNCBENCH_FLOOR_RECORDS_H
#define SYNCBENCH_FLOOR_RECORDS_H

#include <stddef.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static inline unsigned long long read_tsc(void) { return __rdtsc(); }
#elif defined(__aarch64__)
static inline unsigned long long read_tsc(void)
{
    unsigned long long ticks;
    __asm__ volatile("mrs %0, cntvct_el0" : "=r"(ticks));
    return ticks;
}
#else
#error "syncbench: no time-stamp counter read for this architecture"
#endif

/* The time of an acquisition: read after every earlier instruction finished (as pomptrace
 * reads it, after the locked instruction that took the lock). */
static inline unsigned long long read_tsc_after_acquiring(void)
{
#if defined(__x86_64__) || defined(__i386__)
    _mm_lfence();
#endif
    return read_tsc();
}

#define FLOOR_TIMESTAMP_BYTES 9 /* OTF2's TIMESTAMP record: its type and the 8-byte time */
#define FLOOR_REGION_BYTES 4    /* Enter or Leave: type, length, the region's compressed id */
#define FLOOR_LOCK_BYTES 9      /* ThreadAcquireLock/ReleaseLock: paradigm, lock, order */
#define FLOOR_FORK_BYTES 4      /* ThreadFork: type, length, paradigm, requested threads */
#define FLOOR_JOIN_BYTES 3      /* ThreadJoin: type, length, paradigm */
#define FLOOR_TEAM_BEGIN_BYTES 13 /* ThreadTeamBegin (3) after its ThreadId attribute list (10) */
#define FLOOR_TEAM_END_BYTES 3  /* ThreadTeamEnd: type, length, team */
#define FLOOR_TASK_BYTES 5      /* ThreadTaskCreate/Switch/Complete: team, creator, generation */
#define FLOOR_BUFFER_BYTES ((size_t)64 << 20) /* larger than the caches: stores reach memory */

/* The bytes a record of `bytes` takes at `out`, preceded by a TIMESTAMP when `timed`. */
static inline size_t floor_record_size(int timed, size_t bytes)
{
    return bytes + (timed ? FLOOR_TIMESTAMP_BYTES : 0);
}

/* Writes a record of `bytes` at `time` to `out` (room for floor_record_size(timed, bytes)). */
static inline void floor_encode(unsigned char *out, unsigned long long time, int timed,
                                size_t bytes)
{
    if (timed) {
        out[0] = 5;
        memcpy(out + 1, &time, sizeof time);
        out += FLOOR_TIMESTAMP_BYTES;
    }
    out[0] = 1;
    out[1] = (unsigned char)(bytes - 2);
    memset(out + 2, 1, bytes - 2);
}

#endif
