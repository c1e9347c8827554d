#include "jacobi.h"

double sweep(struct block *b) {
    const size_t width = (size_t)b->n;
    const int n = b->n;
    double local = 0.0;
#pragma omp parallel for reduction(+ : local)
    for (int i = 1; i <= b->rows; i++) {
        const int global_row = b->first + i - 1;
        if (global_row == 0 || global_row == n - 1) continue;
        for (int j = 1; j < n - 1; j++) {
            const size_t k = (size_t)i * width + (size_t)j;
            b->next[k] = 0.25 * (b->u[k - width] + b->u[k + width] + b->u[k - 1] + b->u[k + 1]);
            const double d = b->next[k] - b->u[k];
            local += d * d;
        }
    }
    double *swap = b->u;
    b->u = b->next;
    b->next = swap;
    return local;
}
