/* parallel_edge.c -- orphaned for/single/master outside any parallel region, num_threads(1) (also nested) and if(0) parallel regions, a parallel region inside a task, then a top-level team of 2; prints sum=<value>. */
#include <omp.h>
#include <stdio.h>

#define N 10

static long sum;

/* Orphaned worksharing: called outside any parallel region and inside one-thread teams. */
static void work(int scale)
{
    int i;
#pragma omp for
    for (i = 0; i < N; i++) {
#pragma omp atomic
        sum += scale;
    }
#pragma omp single /* orphaned */
    {
#pragma omp atomic
        sum += 100 * scale;
    }
#pragma omp master
    {
#pragma omp atomic
        sum += 1000 * scale;
    }
}

int main(void)
{
    work(1);
#pragma omp parallel num_threads(1) /* one thread */
    {
        work(2);
#pragma omp parallel num_threads(1) /* singleton in singleton */
        {
#pragma omp atomic
            sum += 100000;
        }
    }
#pragma omp parallel if(0)
    work(3);
#pragma omp parallel /* main */
    {
#pragma omp single /* creates the task */
        {
#pragma omp task
            {
#pragma omp parallel num_threads(2) /* in the task */
                {
#pragma omp atomic
                    sum += 10000;
                }
            }
        }
    }
#pragma omp parallel num_threads(2) /* top-level pair */
    {
#pragma omp atomic
        sum += 1000000;
    }
    printf("sum=%ld\n", sum);
    return 0;
}
