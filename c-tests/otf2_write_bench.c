/*
 * otf2_write_bench.c -- write-speed baseline for libotf2 (OTF2 3.0.x C API).
 *
 * Usage: otf2_write_bench DIR NEVENTS
 *
 * Writes NEVENTS alternating Enter/Leave events (ts = 1 + i, region (i/2) % 2, no attribute
 * lists) for one location into the archive DIR/traces.otf2 (event chunks 1 MiB, definition
 * chunks 4 MiB) plus the minimal global definitions that make the archive readable.  The timed
 * part runs from just before the first event until OTF2_Archive_CloseEvtWriter has returned,
 * so writing the event file to disk is included (CLOCK_MONOTONIC).  A 10000-event run into
 * DIR/warmup (untimed) comes first to fault in the library.  Prints exactly one line:
 *
 *   libotf2 ns_per_event=<ns> bytes=<size of DIR/traces/0.evt> events=<NEVENTS>
 *
 * It is the baseline pomptrace's pure-Rust OTF2 writer is compared against.
 *
 * Build: cc -O2 -Wall -Wextra -o otf2_write_bench otf2_write_bench.c \
 *            $(pkg-config --cflags --libs otf2)
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <otf2/otf2.h>

#define PROGRAM "otf2_write_bench"
#include "otf2_c_checks.h"

#define EVT_CHUNK_SIZE (1024 * 1024)
#define DEF_CHUNK_SIZE (4 * 1024 * 1024)
#define WARMUP_EVENTS 10000

static uint64_t now_ns(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_MONOTONIC, &t) != 0) {
        perror("otf2_write_bench: clock_gettime");
        exit(1);
    }
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Writes one archive PATH/traces.otf2 with NEVENTS events; returns the nanoseconds spent
 * between the first event and the return of OTF2_Archive_CloseEvtWriter. */
static uint64_t write_archive(const char* path, uint64_t nevents)
{
    OTF2_Archive* archive = OTF2_Archive_Open(path, "traces", OTF2_FILEMODE_WRITE,
                                              EVT_CHUNK_SIZE, DEF_CHUNK_SIZE,
                                              OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    CHECK_PTR(archive, "OTF2_Archive_Open");
    CHECK(OTF2_Archive_SetFlushCallbacks(archive, &flush_callbacks, NULL));
    CHECK(OTF2_Archive_SetSerialCollectiveCallbacks(archive));

    CHECK(OTF2_Archive_OpenEvtFiles(archive));
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive, 0);
    CHECK_PTR(w, "OTF2_Archive_GetEvtWriter");

    uint64_t t0 = now_ns();
    for (uint64_t i = 0; i < nevents; i++) {
        OTF2_RegionRef region = (OTF2_RegionRef)((i / 2) % 2);
        if ((i & 1) == 0) {
            CHECK(OTF2_EvtWriter_Enter(w, NULL, 1 + i, region));
        } else {
            CHECK(OTF2_EvtWriter_Leave(w, NULL, 1 + i, region));
        }
    }
    /* Includes any BufferFlush records libotf2 inserted itself. */
    uint64_t written = 0;
    CHECK(OTF2_EvtWriter_GetNumberOfEvents(w, &written));
    CHECK(OTF2_Archive_CloseEvtWriter(archive, w));
    uint64_t t1 = now_ns();

    CHECK(OTF2_Archive_CloseEvtFiles(archive));

    CHECK(OTF2_Archive_OpenDefFiles(archive));
    OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(archive, 0);
    CHECK_PTR(dw, "OTF2_Archive_GetDefWriter");
    CHECK(OTF2_Archive_CloseDefWriter(archive, dw));
    CHECK(OTF2_Archive_CloseDefFiles(archive));

    OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive);
    CHECK_PTR(g, "OTF2_Archive_GetGlobalDefWriter");
    CHECK(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 0, nevents + 1,
                                                    OTF2_UNDEFINED_TIMESTAMP));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, 0, ""));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, 1, "Master thread"));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, 2, "process"));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, 3, "machine"));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, 4, "node"));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, 5, "region0"));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, 6, "region1"));
    CHECK(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 3, 4, OTF2_UNDEFINED_SYSTEM_TREE_NODE));
    CHECK(OTF2_GlobalDefWriter_WriteLocationGroup(g, 0, 2, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                  OTF2_UNDEFINED_LOCATION_GROUP));
    CHECK(OTF2_GlobalDefWriter_WriteLocation(g, 0, 1, OTF2_LOCATION_TYPE_CPU_THREAD, written, 0));
    for (uint32_t r = 0; r < 2; r++) {
        CHECK(OTF2_GlobalDefWriter_WriteRegion(g, r, 5 + r, 5 + r, 0, OTF2_REGION_ROLE_FUNCTION,
                                               OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE, 0, 0,
                                               0));
    }

    CHECK(OTF2_Archive_Close(archive));
    return t1 - t0;
}

int main(int argc, char** argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s DIR NEVENTS\n", argv[0]);
        return 2;
    }
    const char* dir = argv[1];
    char* end = NULL;
    errno = 0;
    uint64_t nevents = strtoull(argv[2], &end, 10);
    if (errno != 0 || end == argv[2] || *end != '\0' || argv[2][0] == '-' || nevents == 0) {
        fprintf(stderr, "otf2_write_bench: bad event count '%s'\n", argv[2]);
        return 2;
    }

    size_t len = strlen(dir);
    char* warmup = malloc(len + sizeof("/warmup"));
    char* evt = malloc(len + sizeof("/traces/0.evt"));
    if (warmup == NULL || evt == NULL) {
        fprintf(stderr, "otf2_write_bench: out of memory\n");
        return 1;
    }
    snprintf(warmup, len + sizeof("/warmup"), "%s/warmup", dir);
    snprintf(evt, len + sizeof("/traces/0.evt"), "%s/traces/0.evt", dir);

    (void)write_archive(warmup, WARMUP_EVENTS);
    uint64_t ns = write_archive(dir, nevents);

    struct stat st;
    if (stat(evt, &st) != 0) {
        fprintf(stderr, "otf2_write_bench: stat %s: %s\n", evt, strerror(errno));
        return 1;
    }
    printf("libotf2 ns_per_event=%.3f bytes=%lld events=%" PRIu64 "\n",
           (double)ns / (double)nevents, (long long)st.st_size, nevents);

    free(warmup);
    free(evt);
    return 0;
}
