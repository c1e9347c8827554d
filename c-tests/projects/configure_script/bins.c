#include <omp.h>
#include "bins.h"

void fill_bins(const double *values, int n, long bins[NBINS])
{
    omp_lock_t lock;
    omp_init_lock(&lock);
#pragma omp parallel for
    for (int i = 0; i < n; i++) {
        int b = (int)(values[i] * NBINS);
        if (b >= NBINS) {
            b = NBINS - 1;
        }
        omp_set_lock(&lock);
        bins[b]++;
        omp_unset_lock(&lock);
    }
    omp_destroy_lock(&lock);
}
