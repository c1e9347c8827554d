#include <math.h>
#include <stdio.h>
#include "bins.h"
#include "config.h"

int main(void)
{
    double values[400];
    long bins[NBINS] = {0};
    long total = 0;
    for (int i = 0; i < 400; i++) {
        values[i] = (i * 37 % 400) / 400.0;
    }
    fill_bins(values, 400, bins);
#pragma omp parallel
    {
#pragma omp critical
        total += bins[0];
    }
    printf("histogram: first bin %ld (seen %ld times), sqrt %s\n", bins[0], total,
           HAVE_SQRT ? "linked" : "missing");
    return HAVE_SQRT && sqrt(4.0) != 2.0;
}
