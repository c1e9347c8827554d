/* tasks_paced.c -- N rounds (argv[1]) of a parallel region in which one thread creates TASKS
 * untied tasks (kept by opari2 --omp-task-untied=keep), each a user region holding its thread
 * busy for about PACE microseconds (argv[2], default 20), and waits for them; every thread
 * also visits a user region of its own per round. A steady stream of parallel regions, tasks
 * and nested regions, for tests that kill a run in the middle. Prints the number of tasks. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TASKS 4

static void busy_for(long microseconds)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000000L + (now.tv_nsec - start.tv_nsec) / 1000L <
             microseconds);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100;
    long pace = argc > 2 ? atol(argv[2]) : 20;
    long tasks = 0;
    for (long round = 0; round < n; round++) {
#pragma omp parallel reduction(+ : tasks)
        {
#pragma pomp inst begin(own)
            busy_for(pace);
#pragma pomp inst end(own)
#pragma omp single
            {
                for (int t = 0; t < TASKS; t++) {
#pragma omp task untied
                    {
#pragma pomp inst begin(task_body)
                        busy_for(pace);
#pragma pomp inst end(task_body)
                    }
                    tasks++;
                }
#pragma omp taskwait
            }
        }
    }
    printf("tasks=%ld\n", tasks);
    return 0;
}
