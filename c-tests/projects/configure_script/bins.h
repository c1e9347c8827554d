#ifndef BINS_H
#define BINS_H
#define NBINS 8
void fill_bins(const double *values, int n, long bins[NBINS]);
#endif
