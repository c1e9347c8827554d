/* robust_exit_inside.c -- the master calls exit(3) inside a parallel region while the other threads are still recording. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    long total = 0;
#pragma omp parallel
    {
        long i;
        for (i = 0; i < 4000000; i++) {
#pragma pomp inst begin(iteration)
#pragma omp atomic
            total++;
#pragma pomp inst end(iteration)
            if (i == 1000 && omp_get_thread_num() == 0) {
                printf("exiting\n");
                fflush(stdout);
                exit(3);
            }
        }
    }
    return 0;
}
