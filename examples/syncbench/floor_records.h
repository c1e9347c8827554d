/*
 * floor_records.h -- the records of the floor: what any tracer that timestamps every event has
 * to store, at pomptrace's sizes. Shared by syncbench.c (its floor variants) and
 * floor_library.c (a POMP2 library that does nothing else).
 */
#ifndef SYNCBENCH_FLOOR_RECORDS_H
#define SYNCBENCH_FLOOR_RECORDS_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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

/* A new private anonymous mapping of `bytes`, faulted in now if `populate`; exits if the kernel
 * refuses it. */
static inline unsigned char *floor_map(size_t bytes, int populate)
{
    void *mapped = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : MAP_NORESERVE),
                        -1, 0);
    if (mapped == MAP_FAILED) {
        fprintf(stderr, "syncbench: cannot map memory for the floor's records\n");
        exit(1);
    }
    return mapped;
}

/* The next `bytes` of a thread's buffer of `capacity` bytes used round and round (`*buffer` and
 * `*used` are the thread's own; `*used` starts at `capacity`): mapped and faulted in at its
 * first use, from its start again when it is full. */
static inline unsigned char *floor_ring_room(unsigned char **buffer, size_t *used,
                                             size_t capacity, size_t bytes)
{
    if (*used + bytes > capacity) {
        if (*buffer == NULL) {
            *buffer = floor_map(capacity, 1);
        }
        *used = 0;
    }
    unsigned char *room = *buffer + *used;
    *used += bytes;
    return room;
}

#endif
