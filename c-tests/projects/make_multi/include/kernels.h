#ifndef KERNELS_H
#define KERNELS_H
#ifdef __cplusplus
extern "C" {
#endif
void vec_fill(double *v, int n);
double vec_sum(const double *v, int n, int *threads_seen);
void report(double value, int threads_seen);
#ifdef __cplusplus
}
#endif
#endif
