/* task_fib_untied.c -- fib(N) with two untied tasks and a taskwait per call while n > CUTOFF
   (instrument with opari2 --omp-task-untied=keep), serial below; prints fib=<value>. Tasks run
   inside the taskwaits of their ancestors, so visits of the task regions nest deeply. */
#include <stdio.h>

#define N 27
#define CUTOFF 12

static long serial_fib(int n)
{
    return n < 2 ? n : serial_fib(n - 1) + serial_fib(n - 2);
}

static long fib(int n)
{
    long a, b;
    if (n <= CUTOFF)
        return serial_fib(n);
#pragma omp task untied shared(a)
    a = fib(n - 1);
#pragma omp task untied shared(b)
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
