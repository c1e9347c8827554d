/*
 * profile_memory_driver.c -- the C side of examples/profile_memory_bench.rs: records EVENTS
 * Enter and Leave events on THREADS threads (a parallel region, each thread its share) through
 * a fixed set of call paths, ends the measurement (POMP2_Finalize writes the profile), then
 * prints the process's peak resident set size.
 *
 * Each thread loops over: Enter outer; Enter inner A or B (alternating); Leave; Leave -- four
 * events an iteration, the same four call paths under the parallel region however long it runs.
 *
 * Usage: profile_memory_driver EVENTS THREADS
 * prints: events=<recorded> peak_rss_kib=<VmHWM after the profile was written>
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include <opari2/pomp2_lib.h>
#include <opari2/pomp2_user_lib.h>

static OPARI2_Region_handle outer = NULL, inner_a = NULL, inner_b = NULL;
#define OUTER_CTC "81*regionType=userRegion*sscl=mem.c:10:10*escl=mem.c:20:20*userRegionName=outer**"
#define A_CTC "77*regionType=userRegion*sscl=mem.c:11:11*escl=mem.c:12:12*userRegionName=a**"
#define B_CTC "77*regionType=userRegion*sscl=mem.c:13:13*escl=mem.c:14:14*userRegionName=b**"
static OPARI2_Region_handle parallel = NULL;
#define PARALLEL_CTC "56*regionType=parallel*sscl=mem.c:5:5*escl=mem.c:30:30**"

static long peak_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "VmHWM:", 6) == 0) {
            kib = atol(line + 6);
        }
    }
    if (f) fclose(f);
    return kib;
}

int main(int argc, char **argv)
{
    long events = argc > 1 ? atol(argv[1]) : 10000;
    int threads = argc > 2 ? atoi(argv[2]) : 2;
    long iterations = events / 4 / threads;
    POMP2_Task_handle old_task;
    POMP2_Parallel_fork(&parallel, 1, threads, &old_task, PARALLEL_CTC);
#pragma omp parallel num_threads(threads)
    {
        POMP2_Parallel_begin(&parallel);
        for (long i = 0; i < iterations; i++) {
            POMP2_Begin(&outer, OUTER_CTC);
            if (i & 1) {
                POMP2_Begin(&inner_a, A_CTC);
                POMP2_End(&inner_a);
            } else {
                POMP2_Begin(&inner_b, B_CTC);
                POMP2_End(&inner_b);
            }
            POMP2_End(&outer);
        }
        POMP2_Parallel_end(&parallel);
    }
    POMP2_Parallel_join(&parallel, old_task);
    POMP2_Finalize();
    printf("events=%ld peak_rss_kib=%ld\n", iterations * 4 * threads, peak_rss_kib());
    return 0;
}
