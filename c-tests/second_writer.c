/*
 * second_writer.c -- the initial thread opens instrumented teams while a pthread runs teams that
 * were not instrumented (second_writer_plain.c) and calls an instrumented orphaned loop from
 * them (work()): those threads are first seen inside a parallel region the library did not see
 * begin, so their place in the thread tree is a guess, which may be a position the initial
 * thread or its team members write. Each must record into a location of its own.
 *
 * Usage: second_writer REGIONS; prints "teams <t> iterations <i>" (2 * REGIONS team members,
 * 16 * REGIONS loop iterations: every team and loop ran).
 */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

void* run_plain_teams(void* regions); /* second_writer_plain.c */
void work(void);

static long iterations;

/* An orphaned loop: its POMP2 calls come from whatever team calls it. */
void work(void)
{
#pragma omp for
    for (int i = 0; i < 16; i++) {
#pragma omp atomic
        iterations++;
    }
}

int main(int argc, char** argv)
{
    int regions = argc > 1 ? atoi(argv[1]) : 200;
    long sum = 0;
    /* The initial thread is the trace's master: the pthread's first team, which the library
     * does not see begin, then puts its thread 0 in the master's place. */
#pragma omp parallel num_threads(2) reduction(+ : sum)
    sum += 1;
    pthread_t plain;
    pthread_create(&plain, NULL, run_plain_teams, &regions);
    for (int r = 1; r < regions; r++) {
#pragma omp parallel num_threads(2) reduction(+ : sum)
        sum += 1;
    }
    void* plain_sum;
    pthread_join(plain, &plain_sum);
    printf("teams %ld iterations %ld\n", sum + (long)plain_sum, iterations);
    return 0;
}
