/* metrics_steps.c -- a program for metrics, the sampler and snapshots: four steps, each a
 * parallel region whose threads touch a new 4 MiB block (kept until the end, so the resident
 * size grows step by step) and then compute without touching new memory; between steps the
 * initial thread sleeps inside an open user region, so regions are nested and open for a while. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <omp.h>

#define STEPS 4
#define MAX_THREADS 64
#define BLOCK (4u << 20)

static char *blocks[STEPS][MAX_THREADS];

static void pause_ms(long ms)
{
    struct timespec t = {0, ms * 1000000L};
    nanosleep(&t, NULL);
}

int main(void)
{
    double sum = 0;
#pragma pomp inst begin(steps)
    for (int step = 0; step < STEPS; step++) {
#pragma omp parallel reduction(+ : sum)
        {
            int me = omp_get_thread_num() % MAX_THREADS;
#pragma pomp inst begin(touch)
            char *p = malloc(BLOCK);
            if (p) {
                memset(p, step + 1, BLOCK);
                sum += p[BLOCK / 2];
            }
            blocks[step][me] = p;
#pragma pomp inst end(touch)
#pragma pomp inst begin(compute)
            double x = 1.0;
            for (long i = 0; i < 3000000; i++) x = x * 1.0000001 + 1e-9;
            sum += x > 0 ? 1 : 0;
#pragma pomp inst end(compute)
        }
        pause_ms(50);
    }
#pragma pomp inst end(steps)
    for (int s = 0; s < STEPS; s++)
        for (int t = 0; t < MAX_THREADS; t++) free(blocks[s][t]);
    printf("sum=%.0f\n", sum);
    return 0;
}
