#include "limits.h"

/* Constructs as the unbraced branches and bodies of other statements, one ending in a
   semicolon (atomic) and the rest of a line after a construct's statement. */
long nested(int n)
{
    long t = 0, u = 0, v = 0;
    int i, j;
#pragma omp parallel
    {
#pragma omp for reduction(+:t) schedule(dynamic, 7)
        for (i = 0; i < N; i++)
#pragma GCC ivdep
            for (j = 0; j < 3; j++)
                do t += i % 5 * j; while (0);
#pragma omp for
        for (i = 0; i < N; i++)
            if (i % 3)
#pragma omp critical
                v += i % 4;
            else
#pragma omp atomic
                u += 2;
    }
    while (n < 0)
#pragma omp parallel
#pragma omp master
        n = 1; u += n;
    return t + u + v;
}
