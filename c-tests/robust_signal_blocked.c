/* robust_signal_blocked.c -- a worker blocks for good inside a critical section of a parallel
 * region; the master records 40 000 events (so that writing the trace takes a while), then
 * prints "ready" and waits for the worker in a barrier, where the test's fatal signals find
 * it. With argv[1] = "segv" the worker crashes inside the critical section instead. */
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int crash = argc > 1 && strcmp(argv[1], "segv") == 0;
    volatile int worker_inside = 0;
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 1) {
#pragma omp critical
            {
                worker_inside = 1;
                if (crash)
                    *(volatile int *)NULL = 1;
                for (;;)
                    pause();
            }
        } else {
            for (int i = 0; i < 20000; i++) {
#pragma omp flush
            }
            while (!worker_inside)
                usleep(1000);
            printf("ready\n");
            fflush(stdout);
        }
#pragma omp barrier
    }
    return 0;
}
