#include "kernels.h"

double vec_sum(const double *v, int n, int *threads_seen)
{
    double s = 0;
    int seen = 0;
#pragma omp parallel for reduction(+ : s)
    for (int i = 0; i < n; i++) {
        s += v[i];
    }
#pragma omp parallel
    /* Both branches open the block: opari2 on the raw file cannot find its end. */
#if defined(WIDE_COUNTER)
    { long one = 1;
#else
    { int one = 1;
#endif
#pragma omp atomic
        seen += (int)one;
    }
    *threads_seen = seen;
    return s;
}
