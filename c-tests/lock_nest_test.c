/* lock_nest_test.c -- omp_test_lock/omp_test_nest_lock failing while the master holds the locks (barriers order it), then succeeding in turn inside a critical with nest depth 3; the lock re-initialised once more; prints ok=<threads> bad=0. */
#include <omp.h>
#include <stdio.h>

static omp_lock_t lock;
static omp_nest_lock_t nest;
static int ok, bad;

int main(void)
{
    omp_init_lock(&lock);
    omp_init_nest_lock(&nest);
#pragma omp parallel
    {
#pragma omp master
        {
            omp_set_lock(&lock);
            omp_set_nest_lock(&nest);
        }
#pragma omp barrier
        if (omp_get_thread_num() != 0) {
            /* The master holds both locks: these tests fail. */
            if (omp_test_lock(&lock))
#pragma omp atomic
                bad++;
            if (omp_test_nest_lock(&nest))
#pragma omp atomic
                bad++;
        }
#pragma omp barrier
#pragma omp master
        {
            omp_unset_nest_lock(&nest);
            omp_unset_lock(&lock);
        }
#pragma omp barrier
#pragma omp critical
        {
            /* Nobody else holds the locks now: these succeed. */
            if (omp_test_lock(&lock)) {
                omp_set_nest_lock(&nest);
                omp_set_nest_lock(&nest);
                if (omp_test_nest_lock(&nest) == 3)
                    ok++;
                else
                    bad++;
                omp_unset_nest_lock(&nest);
                omp_unset_nest_lock(&nest);
                omp_unset_nest_lock(&nest);
                omp_unset_lock(&lock);
            } else {
                bad++;
            }
        }
    }
    omp_destroy_nest_lock(&nest);
    omp_destroy_lock(&lock);
    /* The same variable initialised again is another lock. */
    omp_init_lock(&lock);
    omp_set_lock(&lock);
    omp_unset_lock(&lock);
    omp_destroy_lock(&lock);
    printf("ok=%d bad=%d\n", ok, bad);
    return 0;
}
