/* fam_parallel.c -- parallel (also num_threads), parallel for/sections, master, orphaned for. */
#include <omp.h>

static int a[64];
static int s[3];

static void orphaned(void)
{
    int i;
#pragma omp for /*@orph*/
    for (i = 0; i < 8; i++)
        a[i] += 1; /*@orph.end*/
}

int main(void)
{
    int i;
#pragma omp parallel /*@par*/
    {
        a[omp_get_thread_num()] += 1;
    } /*@par.end*/
#pragma omp parallel num_threads(2) /*@par2*/
    {
        a[omp_get_thread_num()] += 1;
    } /*@par2.end*/
#pragma omp parallel for /*@pfor*/
    for (i = 0; i < 64; i++)
        a[i] += i; /*@pfor.end*/
#pragma omp parallel sections /*@psec*/
    {
#pragma omp section
        s[0] += 1;
#pragma omp section
        s[1] += 1;
#pragma omp section
        s[2] += 1;
    } /*@psec.end*/
#pragma omp parallel /*@pmas*/
    {
#pragma omp master /*@mas*/
        {
            a[63] += 1;
        } /*@mas.end*/
    } /*@pmas.end*/
    orphaned();
    return s[0] + s[1] + s[2] != 3;
}
