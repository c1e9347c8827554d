/* robust_lifecycle.c -- measurement lifecycle: argv[1] = run (plain end) | finalize (inst finalize, then more work) | exit (exit(3) inside an open user region) | chdir (changes directory before its threads exist). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ITERATIONS 20000

static long counter;

/* Every thread increments a shared counter under an OpenMP lock; returns the counter. */
static long locked_count(void)
{
    omp_lock_t lock;
    int i;
    counter = 0;
    omp_init_lock(&lock);
#pragma omp parallel for schedule(static)
    for (i = 0; i < ITERATIONS; i++) {
        omp_set_lock(&lock);
        counter = counter + 1;
        omp_unset_lock(&lock);
    }
    omp_destroy_lock(&lock);
    return counter;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "run";
    long first, second = 0;
#pragma pomp inst begin(before)
    if (strcmp(mode, "chdir") == 0 && (mkdir("elsewhere", 0755) != 0 || chdir("elsewhere") != 0))
        return 2;
    first = locked_count();
#pragma pomp inst end(before)
    if (strcmp(mode, "exit") == 0) {
#pragma pomp inst begin(unclosed)
#pragma omp parallel
        {
#pragma omp atomic
            second++;
        }
        printf("counter=%ld threads=%ld\n", first, second);
        fflush(stdout);
        exit(3);
#pragma pomp inst end(unclosed)
    }
    if (strcmp(mode, "finalize") == 0) {
#pragma pomp inst finalize
        /* Everything below runs after the measurement has ended. */
#pragma pomp inst begin(after_finalize)
        second = locked_count();
#pragma omp parallel
        {
#pragma omp critical
            second++;
#pragma omp single
            {
#pragma omp task
                {
#pragma omp critical
                    second++;
                }
            }
        }
#pragma pomp inst end(after_finalize)
#pragma pomp inst finalize
    }
    printf("counter=%ld second=%ld\n", first, second);
    return first == ITERATIONS ? 0 : 1;
}
