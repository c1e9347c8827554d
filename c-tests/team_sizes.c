/* team_sizes.c -- top-level teams whose size changes from region to region and stays for
 * several: num_threads clauses, if clauses, omp_set_num_threads, dynamic adjustment, and the
 * same request giving one thread while no level may be active. Every region prints
 * `team <index> <size>`; the program ends with `regions=<count>`. */
#include <omp.h>
#include <stdio.h>

static const int sizes[] = {3, 3, 3, 2, 2, 4, 4, 1, 3, 3, 2, 4};

static int regions;

static void report(int size)
{
    printf("team %d %d\n", regions, size);
    regions++;
}

int main(void)
{
    for (int round = 0; round < 3; round++) {
        for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            int size = 0;
#pragma omp parallel num_threads(sizes[i])
            {
#pragma omp master
                size = omp_get_num_threads();
            }
            report(size);
        }
        for (int i = 0; i < 4; i++) {
            int size = 0;
#pragma omp parallel if (i % 2) num_threads(3)
            {
#pragma omp master
                size = omp_get_num_threads();
            }
            report(size);
        }
        omp_set_num_threads(round + 2);
        for (int i = 0; i < 3; i++) {
            int size = 0;
#pragma omp parallel
            {
#pragma omp master
                size = omp_get_num_threads();
            }
            report(size);
        }
        /* The same request twice around a stretch where no level may be active. */
        for (int i = 0; i < 3; i++) {
            int size = 0;
            omp_set_max_active_levels(i == 1 ? 0 : 1);
#pragma omp parallel num_threads(3)
            {
#pragma omp master
                size = omp_get_num_threads();
            }
            report(size);
        }
        omp_set_dynamic(1);
        for (int i = 0; i < 3; i++) {
            int size = 0;
#pragma omp parallel num_threads(4)
            {
#pragma omp master
                size = omp_get_num_threads();
            }
            report(size);
        }
        omp_set_dynamic(0);
    }
    printf("regions=%d\n", regions);
    return 0;
}
