/* fam_tasks.c -- tasks and taskwait inside single, and a task outside any parallel region. */
#include <omp.h>

#define NTASKS 4
static int done[NTASKS + 1];

int main(void)
{
    int k;
#pragma omp task /*@serial*/
    done[NTASKS] = 1; /*@serial.end*/
#pragma omp parallel private(k) /*@par*/
    {
#pragma omp single /*@sgl*/
        {
            for (k = 0; k < NTASKS; k++) {
#pragma omp task firstprivate(k) /*@task*/
                {
                    done[k] += k + 1;
                } /*@task.end*/
            }
#pragma omp taskwait /*@tw*/
        } /*@sgl.end*/
    } /*@par.end*/
    for (k = 0; k < NTASKS; k++)
        if (done[k] != k + 1)
            return 1;
    return done[NTASKS] != 1;
}
