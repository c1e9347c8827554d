#include "limits.h"

double simd_sum(int n)
{
    double a[N], s = 0;
    int i;
    for (i = 0; i < N; i++)
        a[i] = i % 10;
#pragma omp parallel for simd default(none) shared(a, n) reduction(+:s) schedule(static) if(n > 1)
    for (i = 0; i < N; i++)
        s += a[i] * n;
    return s;
}
