/* Locks that must really lock: four threads count under an OpenMP lock, each takes a nest lock
 * twice, and each tries the plain lock once. Exits 0 only when the count is exact and a test
 * obtained the lock at least once. Built as a fully static executable by
 * tests/pomp2_static_executable.rs. */
#include <omp.h>
#include <stdio.h>

#define ROUNDS 20000

int main(void)
{
    omp_lock_t lock;
    omp_nest_lock_t nest;
    omp_init_lock(&lock);
    omp_init_nest_lock(&nest);
    long counter = 0;
    int obtained = 0;
#pragma omp parallel num_threads(4)
    {
        for (int i = 0; i < ROUNDS; i++) {
            omp_set_lock(&lock);
            long seen = counter;
            for (volatile int k = 0; k < 3; k++) {
            }
            counter = seen + 1;
            omp_unset_lock(&lock);
        }
        if (omp_test_lock(&lock)) {
            obtained++;
            omp_unset_lock(&lock);
        }
        omp_set_nest_lock(&nest);
        omp_set_nest_lock(&nest);
        omp_unset_nest_lock(&nest);
        omp_unset_nest_lock(&nest);
    }
    omp_destroy_lock(&lock);
    omp_destroy_nest_lock(&nest);
    printf("counter %ld obtained %d\n", counter, obtained > 0);
    return counter == 4L * ROUNDS && obtained > 0 ? 0 : 1;
}
