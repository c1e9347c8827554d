#include <math.h>
#include <stdio.h>
#include "stencil.h"

int main(void)
{
    double grid[256] = {0};
    grid[128] = 1000.0;
    double total;
#pragma omp parallel
    {
#pragma omp master
        printf("stencil_demo: smoothing\n");
    }
    total = smooth(grid, 256, 4);
    printf("stencil_demo: total %.1f, rms %.3f\n", total, sqrt(total));
    return 0;
}
