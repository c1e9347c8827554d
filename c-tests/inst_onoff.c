/* inst_onoff.c -- #pragma pomp inst off/on: a parallel loop while off, the same loop while on,
 * and recording switched off in the middle of a user region (left while off). */
#include <stdio.h>

int main(void)
{
    long s = 0;
#pragma pomp inst off
#pragma omp parallel reduction(+ : s)
    {
#pragma omp for
        for (int i = 0; i < 8; i++) s += i;
    }
#pragma pomp inst on
#pragma omp parallel reduction(+ : s)
    {
#pragma omp for
        for (int i = 0; i < 8; i++) s += i;
    }
#pragma pomp inst begin(toggled)
    s += 1;
#pragma pomp inst off
    s += 1;
#pragma pomp inst end(toggled)
#pragma pomp inst on
    printf("s=%ld\n", s);
    return 0;
}
