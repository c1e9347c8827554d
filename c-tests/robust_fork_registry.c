/* robust_fork_registry.c -- calls POMP2_* directly (no opari2). Two threads keep assigning new
 * region handles and creating new locks (so the region registry and the lock table are held
 * much of the time) while the main thread forks children; each child assigns a new handle and
 * uses a new lock of its own, then leaves through exit(). A child that has not ended after
 * 3 s is reported ("child N hung") and killed, and the program stops there (exit status 1).
 * argv[1]: number of forks. Prints "forks N ok". */
#include <omp.h>
#include <opari2/pomp2_lib.h>
#include <opari2/pomp2_user_lib.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;

static void new_handle_and_lock(const char *who, long n)
{
    char ctc[200];
    POMP2_Region_handle handle = NULL;
    omp_lock_t lock;
    snprintf(ctc, sizeof ctc,
             "120*regionType=critical*sscl=%s.c:%ld:%ld*escl=%s.c:%ld:%ld*criticalName=%s_%ld**",
             who, n, n, who, n + 1, n + 1, who, n);
    POMP2_Assign_handle(&handle, ctc);
    POMP2_Init_lock(&lock);
    POMP2_Set_lock(&lock);
    POMP2_Unset_lock(&lock);
    POMP2_Destroy_lock(&lock);
}

static void *assign_until_stopped(void *arg)
{
    const char *who = arg;
    for (long n = 1; !stop; n++)
        new_handle_and_lock(who, n);
    return NULL;
}

/* waitpid with a deadline: 1 if the child ended with status 0. */
static int child_ok(pid_t pid, int n)
{
    struct timespec pause = {0, 1000000};
    int status;
    for (int waited = 0; waited < 3000; waited++) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (r < 0)
            return 0;
        nanosleep(&pause, NULL);
    }
    printf("child %d hung\n", n);
    fflush(stdout);
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    exit(1);
}

int main(int argc, char **argv)
{
    int forks = argc > 1 ? atoi(argv[1]) : 100, ok = 0;
    pthread_t threads[2];
    if (omp_get_max_threads() < 1) /* links the OpenMP runtime the lock calls go to */
        return 2;
    POMP2_Init();
    pthread_create(&threads[0], NULL, assign_until_stopped, "thread_a");
    pthread_create(&threads[1], NULL, assign_until_stopped, "thread_b");
    for (int n = 0; n < forks; n++) {
        pid_t pid = fork();
        if (pid == 0) {
            new_handle_and_lock("child", n);
            exit(0);
        }
        ok += pid > 0 && child_ok(pid, n);
    }
    stop = 1;
    pthread_join(threads[0], NULL);
    pthread_join(threads[1], NULL);
    printf("forks %d ok\n", ok);
    return ok == forks ? 0 : 1;
}
