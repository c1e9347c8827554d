/* link_plain.c -- an OpenMP program without any POMP2 call, for running under LD_PRELOAD of libpomptrace.so. */
#include <omp.h>
#include <stdio.h>

int main(void)
{
    long sum = 0;
    int i;
#pragma omp parallel for reduction(+ : sum)
    for (i = 0; i < 1000; i++)
        sum += i;
    printf("sum=%ld\n", sum);
    return sum == 499500 ? 0 : 1;
}
