#include "limits.h"

static long fib(int n)
{
    long x, y;
    if (n < 2)
        return n;
#pragma omp task shared(x) if(n > 12)
    x = fib(n - 1);
#pragma omp task shared(y) if(n > 12)
    y = fib(n - 2);
#pragma omp taskwait
    return x + y;
}

long fib_tasks(int n)
{
    long r = 0;
#pragma omp parallel
#pragma omp single
    r = fib(n);
    return r;
}

long loop_tasks(void)
{
    long sum = 0;
    int i;
#pragma omp parallel
#pragma omp single
#pragma omp taskloop grainsize(25) shared(sum)
    for (i = 0; i < 100; i++) {
#pragma omp atomic
        sum += i;
    }
    return sum;
}
