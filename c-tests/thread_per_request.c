/*
 * thread_per_request.c -- a server that starts a thread per request: REQUESTS short pthreads,
 * at most ALIVE at once, each opening one OpenMP team of two threads. A tracer that keeps
 * every ended thread's buffers grows with the requests; one that reuses them stays near what
 * ALIVE threads need.
 *
 * Usage: thread_per_request REQUESTS ALIVE
 * prints "requests <n> sum <s> peak_rss_kib <k>": the requests served, the sum of their
 * results (n * 3 when every team had its two threads), and the peak resident memory of the
 * process before it exits (VmHWM).
 */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long peak_rss_kib(void)
{
    FILE* status = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (status && fgets(line, sizeof line, status)) {
        if (strncmp(line, "VmHWM:", 6) == 0) kib = atol(line + 6);
    }
    if (status) fclose(status);
    return kib;
}

static void* serve(void* arg)
{
    long* result = arg;
    long sum = 0;
#pragma omp parallel num_threads(2) reduction(+ : sum)
    {
        sum += omp_get_thread_num() + 1;
    }
    *result = sum;
    return NULL;
}

int main(int argc, char** argv)
{
    int requests = argc > 1 ? atoi(argv[1]) : 100;
    int alive = argc > 2 ? atoi(argv[2]) : 4;
    pthread_t* threads = calloc(alive, sizeof *threads);
    long* results = calloc(alive, sizeof *results);
    long total = 0;
    int served = 0;
    while (served < requests) {
        int batch = requests - served < alive ? requests - served : alive;
        for (int i = 0; i < batch; i++) {
            if (pthread_create(&threads[i], NULL, serve, &results[i]) != 0) {
                fprintf(stderr, "pthread_create failed at request %d\n", served + i);
                return 1;
            }
        }
        for (int i = 0; i < batch; i++) {
            pthread_join(threads[i], NULL);
            total += results[i];
        }
        served += batch;
    }
    printf("requests %d sum %ld peak_rss_kib %ld\n", served, total, peak_rss_kib());
    return 0;
}
