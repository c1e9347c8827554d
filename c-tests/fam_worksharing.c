/* fam_worksharing.c -- for, for nowait, sections, single, single nowait, single copyprivate. */
#include <omp.h>

static int a[64], b[64], s[2], once[2], seen[256];

int main(void)
{
    int i, x = 0;
#pragma omp parallel private(i) firstprivate(x) /*@par*/
    {
#pragma omp for schedule(static) /*@for*/
        for (i = 0; i < 64; i++)
            a[i] = i; /*@for.end*/
#pragma omp for nowait /*@fornw*/
        for (i = 0; i < 64; i++)
            b[i] = i; /*@fornw.end*/
#pragma omp sections /*@secs*/
        {
#pragma omp section
            s[0] += 1;
#pragma omp section
            s[1] += 1;
        } /*@secs.end*/
#pragma omp single /*@sgl*/
        once[0] += 1; /*@sgl.end*/
#pragma omp single nowait /*@sglnw*/
        {
            once[1] += 1;
        } /*@sglnw.end*/
#pragma omp single copyprivate(x) /*@sglcp*/
        x = 42; /*@sglcp.end*/
        seen[omp_get_thread_num()] = x;
    } /*@par.end*/
    return seen[0] != 42 || s[0] + s[1] + once[0] + once[1] != 4;
}
