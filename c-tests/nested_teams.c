/* nested_teams.c -- an outer team of OUTER threads whose threads each fork an inner team of
 * INNER threads (two active levels): OUTER * INNER OpenMP threads at once, OUTER + OUTER *
 * (INNER - 1) positions in the thread tree; prints threads=<how many ran the inner body>.
 * Usage: nested_teams OUTER INNER */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        return 2;
    }
    int outer = atoi(argv[1]);
    int inner = atoi(argv[2]);
    long threads = 0;
    omp_set_max_active_levels(2);
#pragma omp parallel num_threads(outer) reduction(+ : threads)
    {
#pragma omp parallel num_threads(inner) reduction(+ : threads)
        {
            threads += 1;
        }
    }
    printf("threads=%ld\n", threads);
    return 0;
}
