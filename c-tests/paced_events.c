/* paced_events.c -- every thread enters and leaves a user region N times (argv[1]), each
 * visit holding the thread busy for about PACE microseconds (argv[2], default 50): a steady
 * stream of events at a known rate, for tests that kill a run at a given moment and read what
 * it left. Prints the total of the iterations. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void busy_for(long microseconds)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000000L + (now.tv_nsec - start.tv_nsec) / 1000L <
             microseconds);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    long pace = argc > 2 ? atol(argv[2]) : 50;
    long total = 0;
#pragma omp parallel reduction(+ : total)
    {
        for (long i = 0; i < n; i++) {
#pragma pomp inst begin(paced)
            busy_for(pace);
            total++;
#pragma pomp inst end(paced)
        }
    }
    printf("total=%ld\n", total);
    return 0;
}
