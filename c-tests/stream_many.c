/* stream_many.c -- every thread records 2*N user-region events as fast as it can; prints the
 * process's peak resident set (VmHWM) at the end, for the bounded-memory streaming test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long peak_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "VmHWM:", 6) == 0) {
            kib = atol(line + 6);
        }
    }
    if (f) {
        fclose(f);
    }
    return kib;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    long total = 0;
#pragma omp parallel reduction(+ : total)
    {
        for (long i = 0; i < n; i++) {
#pragma pomp inst begin(step)
            total += i & 1;
#pragma pomp inst end(step)
        }
    }
    printf("total=%ld vmhwm_kib=%ld\n", total, peak_rss_kib());
    return 0;
}
