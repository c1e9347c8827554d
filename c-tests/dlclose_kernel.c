/* An instrumented kernel built as a shared library that the host (dlclose_host.c) loads with
 * dlopen and unloads with dlclose; tests/pomp2_dlclose.rs. */
#include <stdio.h>
int kernel(int n)
{
    int sum = 0;
#pragma omp parallel for reduction(+ : sum)
    for (int i = 0; i < n; i++) sum += i % 7;
    return sum;
}
