/* task_producer.c -- one producer (single nowait) creates ROUNDS batches of BATCH tasks (more than the runtime queues, so some run at once) with a taskwait after each; the team consumes them, also at a barrier; prints sum=<value>. */
#include <stdio.h>

#define ROUNDS 4
#define BATCH 300

static long sum;

int main(void)
{
    int r, i;
#pragma omp parallel private(r, i)
    {
#pragma omp single nowait
        {
            for (r = 0; r < ROUNDS; r++) {
                for (i = 0; i < BATCH; i++) {
#pragma omp task firstprivate(r, i)
                    {
#pragma omp atomic
                        sum += r * BATCH + i + 1;
                    }
                }
#pragma omp taskwait
            }
        }
#pragma omp barrier
    }
    printf("sum=%ld\n", sum);
    return 0;
}
