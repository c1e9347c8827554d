/* robust_fork.c -- a measured program forks; the child records a user region, uses a lock and leaves through exit() while the parent waits, then the parent goes on. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static long team(void)
{
    long n = 0;
#pragma omp parallel
    {
#pragma omp atomic
        n++;
    }
    return n;
}

int main(void)
{
    long before = team(), after;
    int status = -1;
    pid_t pid = fork();
    if (pid == 0) {
        omp_lock_t lock;
        long v = 0;
        omp_init_lock(&lock);
#pragma pomp inst begin(child)
        omp_set_lock(&lock);
        v = 42;
        omp_unset_lock(&lock);
#pragma pomp inst end(child)
        omp_destroy_lock(&lock);
        printf("child v=%ld\n", v);
        fflush(stdout);
        exit(v == 42 ? 7 : 1);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return 1;
    after = team();
    printf("parent before=%ld after=%ld child=%d\n", before, after, WEXITSTATUS(status));
    return 0;
}
