/* robust_many_events.c -- every thread records 10^6 events: PER_THREAD iterations of a user region around an atomic (4 events each). */
#include <omp.h>
#include <stdio.h>

#define PER_THREAD 250000

int main(void)
{
    long total = 0;
#pragma omp parallel
    {
        long i;
        for (i = 0; i < PER_THREAD; i++) {
#pragma pomp inst begin(iteration)
#pragma omp atomic
            total++;
#pragma pomp inst end(iteration)
        }
    }
    printf("total=%ld\n", total);
    return total == (long)PER_THREAD * omp_get_max_threads() ? 0 : 1;
}
