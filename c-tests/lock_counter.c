/* lock_counter.c -- every thread sets and unsets one OpenMP lock ITER times around a shared counter; prints counter=<value>. */
#include <omp.h>
#include <stdio.h>

#define ITER 10000

static omp_lock_t lock;
static long counter;

int main(void)
{
    int i;
    omp_init_lock(&lock);
#pragma omp parallel private(i)
    {
        for (i = 0; i < ITER; i++) {
            omp_set_lock(&lock);
            counter++;
            omp_unset_lock(&lock);
        }
    }
    omp_destroy_lock(&lock);
    printf("counter=%ld\n", counter);
    return 0;
}
