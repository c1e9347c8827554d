/* snapshot_sync.c -- a lock, a critical section and tasks held over pauses, so that snapshots
 * find locks held, forks open and tasks running. */
#include <omp.h>
#include <stdio.h>
#include <time.h>

static void pause_ms(long ms)
{
    struct timespec t = {0, ms * 1000000L};
    nanosleep(&t, NULL);
}

int main(void)
{
    omp_lock_t lock;
    int done = 0;
    omp_init_lock(&lock);
#pragma omp parallel reduction(+ : done)
    {
        omp_set_lock(&lock);
        pause_ms(3);
        omp_unset_lock(&lock);
#pragma omp critical
        pause_ms(3);
#pragma omp single
        for (int i = 0; i < 4; i++) {
#pragma omp task
            pause_ms(3);
        }
        done += 1;
    }
    omp_destroy_lock(&lock);
    printf("done=%d\n", done);
    return 0;
}
