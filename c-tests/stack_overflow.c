/* stack_overflow.c -- records some user-region events on every thread, then recurses without
 * end until its stack is used up (SIGSEGV): after the parallel region on the initial thread
 * (no argument), or inside it on OpenMP thread 1 (argument "worker") while the master waits in
 * the barrier. Prints `recursing` before it starts. */
#include <omp.h>
#include <stdio.h>
#include <string.h>

static long depth_reached;

/* Not a tail call (the frame is read after the call returns), so every level takes stack. */
static long recurse(volatile char *previous, long depth)
{
    volatile char frame[512];
    frame[0] = previous[0] + 1;
    depth_reached = depth;
    if (depth < 0) { /* never: depth only grows */
        return 0;
    }
    return recurse(frame, depth + 1) + frame[1];
}

int main(int argc, char **argv)
{
    int on_worker = argc > 1 && strcmp(argv[1], "worker") == 0;
    volatile char start[1] = {0};
    long total = 0;
#pragma omp parallel reduction(+ : total)
    {
        for (long i = 0; i < 100; i++) {
#pragma pomp inst begin(before_overflow)
            total += i;
#pragma pomp inst end(before_overflow)
        }
#pragma omp barrier
        if (on_worker && omp_get_thread_num() == 1) {
            printf("recursing\n");
            fflush(stdout);
            total += recurse(start, 0);
        }
    }
    if (!on_worker) {
        printf("recursing\n");
        fflush(stdout);
        total += recurse(start, 0);
    }
    printf("total=%ld depth=%ld\n", total, depth_reached);
    return 0;
}
