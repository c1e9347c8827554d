/* budget_spin.c -- a hot region in a spin loop, among constructs that each run a fixed number of
 * times whatever the spin's length: a short run tells how many events of theirs a long one must
 * hold. Usage: budget_spin flush|user SPINS -- every thread spins SPINS times on
 * `#pragma omp flush` (flush) or on the very short user region `hot` (user);
 * budget_spin paced PER_SECOND SECONDS -- every thread flushes PER_SECOND times a second (at
 * most) for SECONDS. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int user = argc > 1 && strcmp(argv[1], "user") == 0;
    int paced = argc > 1 && strcmp(argv[1], "paced") == 0;
    long spins = argc > 2 ? atol(argv[2]) : 1000;
    double seconds = argc > 3 ? atof(argv[3]) : 1.0;
    long total = 0;
#pragma pomp inst begin(setup)
    total += 1;
#pragma pomp inst end(setup)
#pragma omp parallel reduction(+ : total)
    {
        for (int round = 0; round < 20; round++) {
#pragma omp for
            for (int i = 0; i < 64; i++) {
                total += i;
            }
#pragma omp single
            total += 1;
        }
        if (paced) {
            double start = omp_get_wtime();
            long done = 0;
            for (;;) {
                double elapsed = omp_get_wtime() - start;
                if (elapsed >= seconds) {
                    break;
                }
                for (long due = (long)(elapsed * spins); done < due; done++) {
#pragma omp flush
                }
            }
        } else if (user) {
            for (long i = 0; i < spins; i++) {
#pragma pomp inst begin(hot)
                total += i & 1;
#pragma pomp inst end(hot)
            }
        } else {
            for (long i = 0; i < spins; i++) {
#pragma omp flush
            }
        }
#pragma omp barrier
        for (int round = 0; round < 20; round++) {
#pragma omp critical
            total += 1;
#pragma omp master
            total += 2;
#pragma omp barrier
        }
#pragma pomp inst begin(tail)
        total += 3;
#pragma pomp inst end(tail)
    }
    printf("budget_spin: %ld\n", total);
    return 0;
}
