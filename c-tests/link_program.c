/* link_program.c -- one workload (for, critical, atomic, single+task+taskwait, master, barrier, lock, user region) for linking variants; LINK_PROGRAM_NO_MAIN builds it as a library. */
#include <omp.h>
#include <stdio.h>

#define ROUNDS 3
#define ITERATIONS 40

int link_program_run(void)
{
    long sum = 0, crit = 0, tasks = 0, locked = 0, masters = 0;
    omp_lock_t lock;
    omp_init_lock(&lock);
#pragma pomp inst begin(workload)
#pragma omp parallel
    {
        int r;
        for (r = 0; r < ROUNDS; r++) {
            int i;
#pragma omp for schedule(static) reduction(+ : sum)
            for (i = 0; i < ITERATIONS; i++) {
                sum += i;
#pragma omp critical(link_crit)
                crit++;
            }
#pragma omp single
            {
#pragma omp task
                {
#pragma omp atomic
                    tasks++;
                }
#pragma omp taskwait
            }
            omp_set_lock(&lock);
            locked++;
            omp_unset_lock(&lock);
#pragma omp master
            masters++;
#pragma omp barrier
        }
    }
#pragma pomp inst end(workload)
    omp_destroy_lock(&lock);
    printf("sum=%ld crit=%ld tasks=%ld masters=%ld\n", sum, crit, tasks, masters);
    return sum == (long)ROUNDS * ITERATIONS * (ITERATIONS - 1) / 2 && crit == ROUNDS * ITERATIONS
                   && tasks == ROUNDS && masters == ROUNDS && locked > 0
               ? 0
               : 1;
}

#ifndef LINK_PROGRAM_NO_MAIN
int main(void)
{
    return link_program_run();
}
#endif
