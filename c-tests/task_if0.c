/* task_if0.c -- tasks with if(i % 2) (even ones undeferred, uninstrumented), a final(1) task whose INCLUDED children run at once, an if(0) task creating a task; prints sum=<value>. */
#include <stdio.h>

#define N 16
#define INCLUDED 4

static long sum;

int main(void)
{
    int i, k;
#pragma omp parallel private(i, k)
    {
#pragma omp single
        {
            for (i = 0; i < N; i++) {
#pragma omp task if(i % 2) firstprivate(i)
                {
#pragma omp atomic
                    sum += i + 1;
                }
            }
#pragma omp task final(1) private(k)
            {
                for (k = 0; k < INCLUDED; k++) {
#pragma omp task firstprivate(k)
                    {
#pragma omp atomic
                        sum += 100 * (k + 1);
                    }
                }
            }
#pragma omp task if(0)
            {
#pragma omp task /* nested in if0 */
                {
#pragma omp atomic
                    sum += 10000;
                }
#pragma omp taskwait /* for the nested task */
            }
#pragma omp taskwait /* for all */
        }
    }
    printf("sum=%ld\n", sum);
    return 0;
}
