/*
 * pthread_teams.c -- several pthreads, each opening OpenMP teams of two threads in a loop, while
 * the initial thread does the same. Every pthread is a thread of control of its own, so its
 * teams must get locations of their own.
 *
 * Usage: pthread_teams PTHREADS REGIONS
 * prints one line per thread of control: "control <i> master <tid> workers <tid>,<tid>,..."
 * (i = 0 for the initial thread), the OS threads that ran its teams' thread 0 and thread 1.
 */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_WORKERS 64

struct control {
    long master;
    long workers[MAX_WORKERS];
    int nworkers;
    pthread_mutex_t mutex;
    double sum;
};

static int regions;

static void note_worker(struct control* c, long tid)
{
    pthread_mutex_lock(&c->mutex);
    int known = 0;
    for (int i = 0; i < c->nworkers; i++) known |= c->workers[i] == tid;
    if (!known && c->nworkers < MAX_WORKERS) c->workers[c->nworkers++] = tid;
    pthread_mutex_unlock(&c->mutex);
}

static void* run_teams(void* arg)
{
    struct control* c = arg;
    c->master = syscall(SYS_gettid);
    double sum = 0.0;
    for (int r = 0; r < regions; r++) {
#pragma omp parallel num_threads(2) reduction(+ : sum)
        {
            if (omp_get_thread_num() != 0) note_worker(c, syscall(SYS_gettid));
            sum += omp_get_thread_num() + 1;
        }
    }
    c->sum = sum;
    return NULL;
}

int main(int argc, char** argv)
{
    int pthreads = argc > 1 ? atoi(argv[1]) : 2;
    regions = argc > 2 ? atoi(argv[2]) : 100;
    struct control* controls = calloc(pthreads + 1, sizeof *controls);
    pthread_t* ids = calloc(pthreads, sizeof *ids);
    for (int i = 0; i <= pthreads; i++) pthread_mutex_init(&controls[i].mutex, NULL);
    /* The initial thread opens a team first, so that it is the trace's master thread. */
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() != 0) note_worker(&controls[0], syscall(SYS_gettid));
    }
    for (int i = 0; i < pthreads; i++) pthread_create(&ids[i], NULL, run_teams, &controls[i + 1]);
    run_teams(&controls[0]);
    for (int i = 0; i < pthreads; i++) pthread_join(ids[i], NULL);
    for (int i = 0; i <= pthreads; i++) {
        if (controls[i].sum != 3.0 * regions) {
            fprintf(stderr, "control %d computed %g\n", i, controls[i].sum);
            return 1;
        }
        printf("control %d master %ld workers ", i, controls[i].master);
        for (int w = 0; w < controls[i].nworkers; w++) printf("%s%ld", w ? "," : "", controls[i].workers[w]);
        printf("\n");
    }
    return 0;
}
