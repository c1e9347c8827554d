/* fam_locks.c -- lock and nest lock API on every thread; tests that fail and that succeed. */
#include <omp.h>
#include <stdlib.h>

static omp_lock_t lock;
static omp_nest_lock_t nest;
static int count, bad[256];

int main(void)
{
    /* With FAM_LOCKS_NEST_OWNER set, the nest lock is also held by the initial task below. */
    int t, nest_owner = getenv("FAM_LOCKS_NEST_OWNER") != NULL;
    omp_init_lock(&lock);
    omp_init_nest_lock(&nest);
    if (!omp_test_lock(&lock)) /* free: succeeds; the initial task owns it now */
        return 1;
    if (nest_owner)
        omp_set_nest_lock(&nest);
#pragma omp parallel /*@busy*/
    {
        /* Locks belong to tasks: the initial task holds them, so every test here fails. */
        if (omp_test_lock(&lock))
            omp_unset_lock(&lock);
        if (nest_owner && omp_test_nest_lock(&nest))
            omp_unset_nest_lock(&nest);
    } /*@busy.end*/
    if (nest_owner)
        omp_unset_nest_lock(&nest);
    omp_unset_lock(&lock);
#pragma omp parallel /*@use*/
    {
        omp_set_lock(&lock);
        count++;
        omp_unset_lock(&lock);
        omp_set_nest_lock(&nest);
        omp_set_nest_lock(&nest);
        if (omp_test_nest_lock(&nest) != 3) /* the owner: succeeds, depth 3 */
            bad[omp_get_thread_num()] = 1;
        omp_unset_nest_lock(&nest);
        omp_unset_nest_lock(&nest);
        omp_unset_nest_lock(&nest);
    } /*@use.end*/
    omp_destroy_nest_lock(&nest);
    omp_destroy_lock(&lock);
    for (t = 0; t < 256; t++)
        if (bad[t])
            return 1;
    return count != omp_get_max_threads();
}
