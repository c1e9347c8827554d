/* task_fib.c -- fib(N) with two tied tasks and a taskwait per call while n > CUTOFF, serial below; prints fib=<value>. */
#include <stdio.h>

#define N 20
#define CUTOFF 8

static long serial_fib(int n)
{
    return n < 2 ? n : serial_fib(n - 1) + serial_fib(n - 2);
}

static long fib(int n)
{
    long a, b;
    if (n <= CUTOFF)
        return serial_fib(n);
#pragma omp task shared(a)
    a = fib(n - 1);
#pragma omp task shared(b)
    b = fib(n - 2);
#pragma omp taskwait
    return a + b;
}

int main(void)
{
    long result = 0;
#pragma omp parallel shared(result)
    {
#pragma omp single
        result = fib(N);
    }
    printf("fib=%ld\n", result);
    return 0;
}
