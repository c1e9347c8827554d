/* thread_census.c -- counts the threads the process starts and those it has at its end. It
 * defines pthread_create itself (passing each call on to the C library's), so every thread any
 * code of the process starts (the OpenMP runtime's, pomptrace's) is counted; an exit handler
 * registered first thing in main, before any POMP2 call and so before pomptrace's own, runs
 * after pomptrace has written the trace and prints
 *   created=N alive=M names=NAME,NAME,...
 * (the threads started, and those in /proc/self/task with their names). Between the two, one
 * parallel region in which every thread records N user regions (argv[1], default 10). */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_int created;

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
                   void *arg)
{
    create_fn real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
    atomic_fetch_add(&created, 1);
    return real(thread, attr, start, arg);
}

static void census(void)
{
    char names[4096] = "";
    int alive = 0;
    DIR *tasks = opendir("/proc/self/task");
    struct dirent *entry;
    while (tasks && (entry = readdir(tasks)) != NULL) {
        if (entry->d_name[0] == '.') {
            continue;
        }
        char path[300], name[64] = "?";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", entry->d_name);
        FILE *comm = fopen(path, "r");
        if (comm != NULL) {
            if (fgets(name, sizeof name, comm) != NULL) {
                name[strcspn(name, "\n")] = '\0';
            }
            fclose(comm);
        }
        if (alive++ > 0) {
            strncat(names, ",", sizeof names - strlen(names) - 1);
        }
        strncat(names, name, sizeof names - strlen(names) - 1);
    }
    if (tasks != NULL) {
        closedir(tasks);
    }
    printf("created=%d alive=%d names=%s\n", atomic_load(&created), alive, names);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    atexit(census);
    long n = argc > 1 ? atol(argv[1]) : 10;
    long total = 0;
#pragma omp parallel reduction(+ : total)
    {
        for (long i = 0; i < n; i++) {
#pragma pomp inst begin(step)
            total += i & 1;
#pragma pomp inst end(step)
        }
    }
    printf("total=%ld\n", total);
    return 0;
}
