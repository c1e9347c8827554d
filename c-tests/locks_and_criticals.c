/* locks_and_criticals.c -- every thread enters a critical section and sets and unsets one
 * OpenMP lock ITER times each (ITER from argv[1]), counting in both; prints
 * critical=<count> lock=<count>. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static omp_lock_t lock;
static long in_critical, in_lock;

int main(int argc, char **argv)
{
    long i, iterations = argc > 1 ? atol(argv[1]) : 1000;
    omp_init_lock(&lock);
#pragma omp parallel private(i)
    {
        for (i = 0; i < iterations; i++) {
#pragma omp critical
            in_critical++;
            omp_set_lock(&lock);
            in_lock++;
            omp_unset_lock(&lock);
        }
    }
    omp_destroy_lock(&lock);
    printf("critical=%ld lock=%ld\n", in_critical, in_lock);
    return 0;
}
