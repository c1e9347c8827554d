#include <stdio.h>
#include <string.h>

#include "build_info.h"

int main(void)
{
    long sum = 0;
#pragma omp parallel for reduction(+:sum)
    for (int i = 1; i <= 100; i++)
        sum += i;
    printf("which_cc: sum %ld, compiler named: %s\n", sum, strlen(BUILD_CC) > 0 ? "yes" : "no");
    return 0;
}
