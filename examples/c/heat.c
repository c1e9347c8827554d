/* heat.c -- the OpenMP part of the C example: explicit 1-D heat diffusion. This file is
 * instrumented with opari2; main.c is not. */
#include <omp.h>
#include <stdlib.h>

double heat_run(int n, int steps)
{
    double *u = calloc((size_t)n, sizeof *u);
    double *v = calloc((size_t)n, sizeof *v);
    double total = 0.0;
    int updates = 0;
    if (!u || !v) {
        free(u);
        free(v);
        return -1.0;
    }
    u[n / 2] = 1000.0;
#pragma pomp inst begin(diffusion)
#pragma omp parallel
    {
        for (int s = 0; s < steps; s++) {
#pragma omp for schedule(static)
            for (int i = 1; i < n - 1; i++)
                v[i] = u[i] + 0.25 * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
#pragma omp single
            {
                double *t = u;
                u = v;
                v = t;
            }
#pragma omp critical(bookkeeping)
            updates++;
        }
#pragma omp for reduction(+ : total)
        for (int i = 0; i < n; i++)
            total += u[i];
    }
#pragma pomp inst end(diffusion)
    free(u);
    free(v);
    return updates > 0 ? total : -1.0;
}
