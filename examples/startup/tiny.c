/*
 * tiny.c -- the smallest traced program: one parallel region. examples/startup_bench.rs times
 * whole runs of it to show the fixed cost pomptrace adds per process (start, calibration,
 * writing the trace), which short runs and test suites pay every time.
 */
#include <stdio.h>

#include <omp.h>

int main(void)
{
    int sum = 0;
#pragma omp parallel reduction(+ : sum)
    {
        sum += omp_get_thread_num() + 1;
    }
    printf("tiny: %d\n", sum);
    return 0;
}
