/* nested_2x3.c -- REPS times an outer team of 2 whose threads each fork an inner team of 3, each inner thread creating one task (nesting from the environment, or omp_set_nested(1) when NESTED_API is set); prints sum=<value>. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define REPS 2

static long sum;

int main(void)
{
    int rep;
    if (getenv("NESTED_API"))
        omp_set_nested(1);
    for (rep = 0; rep < REPS; rep++) {
#pragma omp parallel num_threads(2)
        {
            int outer = omp_get_thread_num();
#pragma omp parallel num_threads(3)
            {
                int inner = omp_get_thread_num();
#pragma omp task firstprivate(outer, inner)
                {
#pragma omp atomic
                    sum += 10 * outer + inner + 1;
                }
            }
        }
    }
    printf("sum=%ld\n", sum);
    return 0;
}
