/* task_untied.c -- OUTER untied tasks (kept by --omp-task-untied=keep), each creating INNER untied children and waiting for them; prints sum=<value>. */
#include <stdio.h>

#define OUTER 8
#define INNER 5

static long sum;

int main(void)
{
    int i, j;
#pragma omp parallel private(i, j)
    {
#pragma omp single
        {
            for (i = 0; i < OUTER; i++) {
#pragma omp task untied firstprivate(i) private(j)
                {
                    for (j = 0; j < INNER; j++) {
#pragma omp task untied firstprivate(i, j)
                        {
#pragma omp atomic
                            sum += i * INNER + j + 1;
                        }
                    }
#pragma omp taskwait
#pragma omp atomic
                    sum += 1000;
                }
            }
        }
    }
    printf("sum=%ld\n", sum);
    return 0;
}
