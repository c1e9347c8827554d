/* fam_sync.c -- critical, critical(acc) in two places, atomic, flush, barrier, ordered. */
#include <omp.h>

static int sum, named, hits, next, order[8];

static void add_named(int v)
{
#pragma omp critical(acc) /*@crit2*/
    named += v; /*@crit2.end*/
}

int main(void)
{
    int i;
#pragma omp parallel private(i) /*@par*/
    {
#pragma omp critical /*@crit*/
        {
            sum += 1;
        } /*@crit.end*/
#pragma omp critical(acc) /*@crit1*/
        named += 1; /*@crit1.end*/
        add_named(2);
#pragma omp atomic /*@atom*/
        hits++; /*@atom.end*/
#pragma omp flush /*@flush*/
#pragma omp barrier /*@bar*/
#pragma omp for ordered schedule(static, 1) /*@ford*/
        for (i = 0; i < 8; i++) {
#pragma omp ordered /*@ord*/
            {
                order[next++] = i;
            } /*@ord.end*/
        } /*@ford.end*/
    } /*@par.end*/
    for (i = 0; i < 8; i++)
        if (order[i] != i)
            return 1;
    return named != 3 * sum || hits != sum;
}
