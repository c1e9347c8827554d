/* second_writer_plain.c -- the part of second_writer.c that is not instrumented: a pthread's
 * teams, each calling the instrumented orphaned loop work(). */
#include <omp.h>

void work(void);

void* run_plain_teams(void* arg)
{
    int regions = *(int*)arg;
    long members = 0;
    for (int r = 0; r < regions; r++) {
#pragma omp parallel num_threads(2) reduction(+ : members)
        {
            work();
            members += 1;
        }
    }
    return (void*)members;
}
