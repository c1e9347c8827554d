/* stream_many.c -- every thread records 2*N user-region events as fast as it can; prints the
 * process's peak resident set (VmHWM) at the end, for the bounded-memory streaming test.
 * With STREAM_MANY_GATE=FILE it prints `waiting` after the parallel region and waits (up to 60 s)
 * until FILE exists, so that a test knows the process is still recording meanwhile. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    const char *gate = getenv("STREAM_MANY_GATE");
    if (gate != NULL) {
        printf("waiting\n");
        fflush(stdout);
        for (int i = 0; i < 6000 && access(gate, F_OK) != 0; i++) {
            usleep(10000);
        }
    }
    printf("total=%ld vmhwm_kib=%ld\n", total, peak_rss_kib());
    return 0;
}
