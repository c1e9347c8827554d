/* team_size_unannounced.c -- calls POMP2_* directly (no opari2): every fork announces the same
 * request (2 threads) while the real teams get 2, then 3 threads. pomptrace must notice the
 * size it learned for that request was wrong, say so once, and ask the runtime from then on. */
#include <omp.h>
#include <opari2/pomp2_lib.h>
#include <stdio.h>

static POMP2_Region_handle par = NULL;
static const char *par_ctc = "95*regionType=parallel*sscl=team_size_unannounced.c:20:20"
                             "*escl=team_size_unannounced.c:24:24**";

int main(void)
{
    const int sizes[] = {2, 2, 3, 3, 3, 2, 3};
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        POMP2_Task_handle old;
        POMP2_Parallel_fork(&par, 1, 2, &old, par_ctc);
#pragma omp parallel num_threads(sizes[i])
        {
            POMP2_Parallel_begin(&par);
            POMP2_Parallel_end(&par);
        }
        POMP2_Parallel_join(&par, old);
    }
    printf("done\n");
    return 0;
}
