#ifndef LIMITS_H
#define LIMITS_H

#define N 1000

double branches(int n);
double simd_sum(int n);
long fib_tasks(int n);
long loop_tasks(void);
long nested(int n);

#endif
