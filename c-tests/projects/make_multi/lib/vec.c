#include "kernels.h"
#include "internal.h"

/* A directive inside a macro: only the preprocessed code shows it to opari2. */
#define PARALLEL_FOR _Pragma("omp parallel for")

void vec_fill(double *v, int n)
{
    PARALLEL_FOR
    for (int i = 0; i < n; i++) {
        v[i] = SCALE * i;
    }
}
