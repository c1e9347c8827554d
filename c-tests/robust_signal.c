/* robust_signal.c -- dies inside a parallel region (segv | abort | term, from argv[1]) after
 * recording some events, while the other threads wait in a barrier (the master gives them
 * 200 ms to get there). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "segv";
    double sum = 0.0;
#pragma omp parallel reduction(+ : sum)
    {
#pragma omp for
        for (int i = 0; i < 1000; i++) {
            sum += i * 0.5;
        }
#pragma omp master
        {
            usleep(200000); /* let the other threads reach the barrier first */
            if (strcmp(how, "segv") == 0) {
                volatile int *nowhere = NULL;
                *nowhere = 1;
            } else if (strcmp(how, "abort") == 0) {
                abort();
            } else {
                raise(SIGTERM);
            }
        }
#pragma omp barrier
    }
    return sum > 0 ? 0 : 1;
}
