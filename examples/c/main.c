/* main.c -- the uninstrumented driver of the C example. */
#include <stdio.h>

double heat_run(int n, int steps);

int main(void)
{
    double total = heat_run(200, 50);
    printf("heat: total %.3f\n", total);
    return total > 999.0 && total < 1001.0 ? 0 : 1;
}
