#include <stdio.h>

#include "limits.h"

int main(void)
{
    printf("branches %.1f\n", branches(1));
    printf("simd %.1f\n", simd_sum(3));
    printf("tasks %ld %ld\n", fib_tasks(18), loop_tasks());
    printf("nested %ld\n", nested(-1));
    return 0;
}
