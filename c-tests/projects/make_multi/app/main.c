#include <math.h>
#include <stdlib.h>
#include "kernels.h"

int main(void)
{
    int n = 1000, threads = 0;
    double *v = malloc(n * sizeof *v);
    double s;
    vec_fill(v, n);
#pragma pomp inst begin(checksum)
    s = vec_sum(v, n, &threads);
#pragma pomp inst end(checksum)
    report(sqrt(s), threads);
    free(v);
    return 0;
}
