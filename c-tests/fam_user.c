/* fam_user.c -- user regions (end, altend) around and in a parallel region; inst init/finalize. */
#include <omp.h>

static int data[256]; /* one slot per thread */

static int early(int v)
{
#pragma pomp inst begin(early) /*@early*/
    if (v > 0) {
#pragma pomp inst altend(early)
        return v;
    }
    v -= 1;
#pragma pomp inst end(early) /*@early.end*/
    return v + 1;
}

int main(void)
{
#pragma pomp inst init
#pragma pomp inst begin(outer) /*@outer*/
#pragma omp parallel /*@par*/
    {
#pragma pomp inst begin(inner) /*@inner*/
        data[omp_get_thread_num()] = early(1) + early(0);
#pragma pomp inst end(inner) /*@inner.end*/
    } /*@par.end*/
#pragma pomp inst end(outer) /*@outer.end*/
#pragma pomp inst finalize
    return data[0] != 1;
}
