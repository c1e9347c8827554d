/*
 * Jacobi iteration for the Poisson equation -Δu = f on the unit square (Dirichlet boundary),
 * parallelised with OpenMP. The README's main job instruments it with opari2, links it with
 * pomptrace and traces it.
 *
 * Usage: jacobi [N] [ITERATIONS]   (defaults: 200 x 200 grid, at most 200 iterations)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <omp.h>

static double residual(int n, const double *u, const double *f, double h)
{
    double sum = 0.0;
#pragma omp parallel for reduction(+ : sum)
    for (int i = 1; i < n - 1; i++) {
        for (int j = 1; j < n - 1; j++) {
            double r = f[i * n + j] - (4.0 * u[i * n + j] - u[(i - 1) * n + j] - u[(i + 1) * n + j]
                                       - u[i * n + j - 1] - u[i * n + j + 1]) / (h * h);
            sum += r * r;
        }
    }
    return sqrt(sum) * h;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 200;
    int max_iterations = argc > 2 ? atoi(argv[2]) : 200;
    if (n < 3 || max_iterations < 1) {
        fprintf(stderr, "usage: jacobi [N>=3] [ITERATIONS>=1]\n");
        return 2;
    }
    double h = 1.0 / (n - 1);
    double *u = calloc((size_t)n * n, sizeof *u);
    double *unew = calloc((size_t)n * n, sizeof *unew);
    double *f = malloc((size_t)n * n * sizeof *f);
    if (!u || !unew || !f) {
        fprintf(stderr, "jacobi: out of memory\n");
        return 1;
    }
    for (int i = 0; i < n * n; i++) {
        f[i] = 1.0;
    }

    double change = 0.0;
    int iteration = 0;
    int done = 0;
#pragma omp parallel
    {
        while (!done) {
#pragma omp single
            change = 0.0;
#pragma omp for reduction(max : change)
            for (int i = 1; i < n - 1; i++) {
                for (int j = 1; j < n - 1; j++) {
                    double v = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1]
                                       + u[i * n + j + 1] + h * h * f[i * n + j]);
                    double d = fabs(v - u[i * n + j]);
                    if (d > change) {
                        change = d;
                    }
                    unew[i * n + j] = v;
                }
            }
#pragma omp for
            for (int i = 1; i < n - 1; i++) {
                for (int j = 1; j < n - 1; j++) {
                    u[i * n + j] = unew[i * n + j];
                }
            }
#pragma omp single
            {
                iteration++;
                if (iteration % 50 == 0) {
                    printf("iteration %4d: max change %.3e\n", iteration, change);
                }
                done = iteration >= max_iterations || change <= 1e-6;
            }
        }
    }
    printf("jacobi: %d x %d grid, %d iterations, residual %.6e, %d threads\n", n, n, iteration,
           residual(n, u, f, h), omp_get_max_threads());
    free(u);
    free(unew);
    free(f);
    return 0;
}
