/*
 * default_device_teams.c -- pthreads that open OpenMP teams while the program reads and sets the
 * default device in its regions (omp_get/set_default_device: a task's ICV, which a team's
 * implicit tasks inherit from the task that forks it). Nothing a tracer does may show in what
 * the program reads.
 *
 * Usage: default_device_teams PTHREADS REGIONS [FINALIZE_AFTER]
 * Thread of control i (0: the initial thread) sets its default device to 100 + i, then opens
 * REGIONS teams of two; in region r each member reads the default device, sets it to
 * 1000 * (i + 1) + r and reads it back; after the region the forking thread reads its own
 * again. With FINALIZE_AFTER, the initial thread ends the measurement (POMP2_Finalize, when the
 * program is linked with a POMP2 library) once every thread of control has opened that many
 * teams, while they go on opening more. Prints per thread of control
 * "control <i> inherited <value>:<count> ... after <value>:<count> ...": each value read and
 * how often (the same in every run, traced or not). The initial thread opens one team before
 * it starts the pthreads.
 *
 * Built with -DCOUNT_DEVICE_WRITES, the program interposes omp_set_default_device and prints
 * on stderr "device writes by others <n>": the calls that did not come from its own code.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef COUNT_DEVICE_WRITES
static long writes_by_all, writes_by_us;
void omp_set_default_device(int device)
{
    static void (*real)(int);
    if (!real) real = (void (*)(int))dlsym(RTLD_NEXT, "omp_set_default_device");
    __atomic_fetch_add(&writes_by_all, 1, __ATOMIC_RELAXED);
    real(device);
}
#define SET_DEVICE(d) (__atomic_fetch_add(&writes_by_us, 1, __ATOMIC_RELAXED), omp_set_default_device(d))
#else
#define SET_DEVICE(d) omp_set_default_device(d)
#endif

/* Linked only when the program is (pomptrace provides it). */
extern void POMP2_Finalize(void) __attribute__((weak));

#define MAX_VALUES 8

struct tally {
    int value[MAX_VALUES];
    long count[MAX_VALUES];
    int values;
};

struct control {
    int index;
    struct tally inherited; /* what team members read first thing in a region */
    struct tally set_back;  /* what they read after setting it */
    struct tally after;     /* what the forking thread reads after each region */
    volatile int opened;
    pthread_mutex_t mutex;
};

static int regions;
static int finalize_after = -1;

static void note(struct control* c, struct tally* t, int value)
{
    pthread_mutex_lock(&c->mutex);
    int i = 0;
    while (i < t->values && t->value[i] != value) i++;
    if (i == t->values && t->values < MAX_VALUES) t->value[t->values++] = value;
    if (i < MAX_VALUES) t->count[i]++;
    pthread_mutex_unlock(&c->mutex);
}

static void print_tally(const char* name, const struct tally* t)
{
    printf(" %s", name);
    for (int i = 0; i < t->values; i++) printf(" %d:%ld", t->value[i], t->count[i]);
}

static void* run(void* arg)
{
    struct control* c = arg;
    SET_DEVICE(100 + c->index);
    for (int r = 0; r < regions; r++) {
#pragma omp parallel num_threads(2)
        {
            note(c, &c->inherited, omp_get_default_device());
            SET_DEVICE(1000 * (c->index + 1) + r);
            note(c, &c->set_back, omp_get_default_device() - r);
        }
        note(c, &c->after, omp_get_default_device());
        c->opened = r + 1;
    }
    return NULL;
}

int main(int argc, char** argv)
{
    int pthreads = argc > 1 ? atoi(argv[1]) : 3;
    regions = argc > 2 ? atoi(argv[2]) : 200;
    if (argc > 3) finalize_after = atoi(argv[3]);
    struct control* controls = calloc(pthreads + 1, sizeof *controls);
    pthread_t* ids = calloc(pthreads, sizeof *ids);
    for (int i = 0; i <= pthreads; i++) {
        controls[i].index = i;
        pthread_mutex_init(&controls[i].mutex, NULL);
    }
    int first = 0;
#pragma omp parallel num_threads(2) reduction(+ : first)
    first += omp_get_default_device() == 0;
    if (first != 2) fprintf(stderr, "the first team read another default device\n");
    for (int i = 0; i < pthreads; i++) pthread_create(&ids[i], NULL, run, &controls[i + 1]);
    if (finalize_after >= 0) {
        /* The initial thread waits until every pthread has opened that many teams, then ends
         * the measurement while they keep opening teams; then it opens its own. */
        for (int i = 1; i <= pthreads; i++) {
            while (controls[i].opened < finalize_after) sched_yield();
        }
        if (POMP2_Finalize) POMP2_Finalize();
    }
    run(&controls[0]);
    for (int i = 0; i < pthreads; i++) pthread_join(ids[i], NULL);
    for (int i = 0; i <= pthreads; i++) {
        printf("control %d", i);
        print_tally("inherited", &controls[i].inherited);
        print_tally("set", &controls[i].set_back);
        print_tally("after", &controls[i].after);
        printf("\n");
    }
#ifdef COUNT_DEVICE_WRITES
    fprintf(stderr, "device writes by others %ld\n", writes_by_all - writes_by_us);
#endif
    return 0;
}
