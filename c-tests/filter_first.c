/* filter_first.c -- the program's first POMP2 call is a user region's (no init file, so its
 * handle is assigned right there, before the measurement has started): the filter file must
 * apply to it as to every later region. */
#include <stdio.h>

int main(void)
{
    int n = 0;
#pragma pomp inst begin(first)
    n++;
#pragma pomp inst end(first)
#pragma omp parallel
    {
#pragma omp atomic
        n++;
    }
    printf("filter_first: %d\n", n > 1);
    return 0;
}
