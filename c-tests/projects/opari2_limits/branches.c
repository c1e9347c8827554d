#include "limits.h"

/* An unbraced worksharing loop as the branch of an if ... else, and an if ... else as the
   unbraced body of a worksharing loop. */
double branches(int n)
{
    double a[N] = {0};
    double s = 0;
    int i;
    if (n > 0)
#pragma omp parallel for
        for (i = 0; i < N; i++)
            a[i] = i * 0.5;
    else
        a[0] = -1.0;
#pragma omp parallel
    {
#pragma omp for reduction(+:s)
        for (i = 0; i < N; i++)
            if (i % 2)
                s += a[i];
            else
                s -= 2 * a[i];
    }
    return s;
}
