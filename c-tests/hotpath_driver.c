/*
 * hotpath_driver.c -- the C side of examples/hotpath_bench.rs: times a POMP2 enter+exit pair
 * (POMP2_Atomic_enter/POMP2_Atomic_exit, one Enter and one Leave event) against a bare TSC read,
 * in the same process, as instrumented code calls them.
 *
 * The same pair on a second construct, in a file named `filtered.c`, is timed as well: run with a
 * filter file excluding it (POMPTRACE_FILTERING_FILE), that is the cost of a filtered region.
 * And the first pair again with recording switched off (POMP2_Off, `#pragma pomp inst off`):
 * the cost of a paused region.
 *
 * Usage: hotpath_driver PAIRS [--at-once] [THREADS...]
 * prints: pair_ns=<ns per enter+exit pair> tsc_ns=<ns per rdtsc>
 *         filtered_pair_ns=<ns per pair of the second construct>   (on the initial thread)
 *         paused_pair_ns=<ns per pair while recording is off>     (on the initial thread)
 *         threads=<T> pair_ns=<ns per pair, mean over T threads recording at the same time>
 *                     tsc_ns=<ns per rdtsc, mean over T threads reading at the same time>
 * --at-once: only the threads-at-once loops (no one-thread rounds before them, so that the
 * initial thread's location starts as fresh as the others').
 * (On a VM whose virtual cores share physical ones, T threads at once each run slower even on
 * bare TSC reads: the second figure is the machine's own factor for the first.)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include <omp.h>

#include <opari2/pomp2_lib.h>
#include <opari2/pomp2_user_lib.h>

static OPARI2_Region_handle handle = NULL;
#define CTC "60*regionType=atomic*sscl=hotpath.c:10:10*escl=hotpath.c:11:11**"
static OPARI2_Region_handle filtered_handle = NULL;
#define FILTERED_CTC "62*regionType=atomic*sscl=filtered.c:10:10*escl=filtered.c:11:11**"

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    long pairs = argc > 1 ? atol(argv[1]) : 1000000;
    int first_thread_arg = 2;
    int at_once_only = argc > 2 && strcmp(argv[2], "--at-once") == 0;
    if (at_once_only) first_thread_arg = 3;
    volatile uint64_t sink = 0;

    POMP2_Atomic_enter(&handle, CTC); /* start the measurement, assign the handle */
    POMP2_Atomic_exit(&handle);
    POMP2_Atomic_enter(&filtered_handle, FILTERED_CTC);
    POMP2_Atomic_exit(&filtered_handle);

    double best_tsc = 1e9, best_pair = 1e9, best_filtered = 1e9, best_paused = 1e9;
    for (int round = 0; round < (at_once_only ? 0 : 5); round++) {
        double t0 = seconds();
        for (long i = 0; i < pairs; i++) {
            sink += __rdtsc();
        }
        double t1 = seconds();
        for (long i = 0; i < pairs; i++) {
            POMP2_Atomic_enter(&handle, CTC);
            POMP2_Atomic_exit(&handle);
        }
        double t2 = seconds();
        for (long i = 0; i < pairs; i++) {
            POMP2_Atomic_enter(&filtered_handle, FILTERED_CTC);
            POMP2_Atomic_exit(&filtered_handle);
        }
        double t3 = seconds();
        POMP2_Off();
        for (long i = 0; i < pairs; i++) {
            POMP2_Atomic_enter(&handle, CTC);
            POMP2_Atomic_exit(&handle);
        }
        POMP2_On();
        double t4 = seconds();
        double tsc = (t1 - t0) / pairs * 1e9, pair = (t2 - t1) / pairs * 1e9;
        double filtered = (t3 - t2) / pairs * 1e9, paused = (t4 - t3) / pairs * 1e9;
        if (tsc < best_tsc) best_tsc = tsc;
        if (pair < best_pair) best_pair = pair;
        if (filtered < best_filtered) best_filtered = filtered;
        if (paused < best_paused) best_paused = paused;
    }
    if (!at_once_only) {
        printf("pair_ns=%.3f tsc_ns=%.3f\n", best_pair, best_tsc);
        printf("filtered_pair_ns=%.3f\n", best_filtered);
        printf("paused_pair_ns=%.3f\n", best_paused);
    }

    /* The same loop on T threads at once: each thread records into its own location. */
    for (int a = first_thread_arg; a < argc; a++) {
        int threads = atoi(argv[a]);
        double best = 1e9, best_tsc_at_once = 1e9;
        for (int round = 0; round < 3; round++) {
            double total = 0.0, total_tsc = 0.0;
#pragma omp parallel num_threads(threads) reduction(+ : total, total_tsc)
            {
                POMP2_Atomic_enter(&handle, CTC);
                POMP2_Atomic_exit(&handle);
#pragma omp barrier
                volatile uint64_t own_sink = 0; /* not `sink`: one shared line would bounce */
                double t0 = seconds();
                for (long i = 0; i < pairs; i++) {
                    own_sink += __rdtsc();
                }
                total_tsc += (seconds() - t0) / pairs * 1e9;
#pragma omp barrier
                t0 = seconds();
                for (long i = 0; i < pairs; i++) {
                    POMP2_Atomic_enter(&handle, CTC);
                    POMP2_Atomic_exit(&handle);
                }
                total += (seconds() - t0) / pairs * 1e9;
            }
            if (total / threads < best) best = total / threads;
            if (total_tsc / threads < best_tsc_at_once) best_tsc_at_once = total_tsc / threads;
        }
        printf("threads=%d pair_ns=%.3f tsc_ns=%.3f\n", threads, best, best_tsc_at_once);
    }
    return (int)(sink & 0);
}
