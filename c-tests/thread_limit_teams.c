/*
 * thread_limit_teams.c -- requests for more threads than the runtime gives: under a thread
 * limit (OMP_THREAD_LIMIT, 4 here) each thread of control (the initial thread and PTHREADS
 * pthreads) opens teams of two, whose two members each open a nested team of num_threads(3)
 * at once. Both nested teams cannot have three threads: each gets what the limit leaves when
 * it starts, so the same request gets 1, 2 or 3 threads from one region to the next.
 *
 * Usage: thread_limit_teams PTHREADS REGIONS
 * (the initial thread opens one team more, before it starts the pthreads) prints per thread of
 * control "control <i> outer <size>:<count> ... inner <size>:<count> ...":
 * how many of its outer and nested teams got each size (as their thread 0 saw it).
 */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define SIZES 5

static int regions;

struct control {
    long outer[SIZES];
    long inner[SIZES];
};

static void count(long* tally, int size)
{
    __atomic_fetch_add(&tally[size < SIZES ? size : 0], 1, __ATOMIC_RELAXED);
}

static void* run(void* arg)
{
    struct control* c = arg;
    for (int r = 0; r < regions; r++) {
#pragma omp parallel num_threads(2)
        {
            if (omp_get_thread_num() == 0) count(c->outer, omp_get_num_threads());
#pragma omp parallel num_threads(3)
            {
                if (omp_get_thread_num() == 0) count(c->inner, omp_get_num_threads());
            }
        }
    }
    return NULL;
}

static void print_tally(const char* name, const long* tally)
{
    printf(" %s", name);
    for (int s = 1; s < SIZES; s++) {
        if (tally[s]) printf(" %d:%ld", s, tally[s]);
    }
}

int main(int argc, char** argv)
{
    int pthreads = argc > 1 ? atoi(argv[1]) : 2;
    regions = argc > 2 ? atoi(argv[2]) : 200;
    omp_set_max_active_levels(2);
    struct control* controls = calloc(pthreads + 1, sizeof *controls);
    pthread_t* ids = calloc(pthreads, sizeof *ids);
    /* The initial thread opens a team first, so that it is the trace's master thread. */
    int first_regions = regions;
    regions = 1;
    run(&controls[0]);
    regions = first_regions;
    for (int i = 0; i < pthreads; i++) pthread_create(&ids[i], NULL, run, &controls[i + 1]);
    run(&controls[0]);
    for (int i = 0; i < pthreads; i++) pthread_join(ids[i], NULL);
    for (int i = 0; i <= pthreads; i++) {
        printf("control %d", i);
        print_tally("outer", controls[i].outer);
        print_tally("inner", controls[i].inner);
        printf("\n");
    }
    return 0;
}
