/* Loads an instrumented library (argv[1]) with dlopen, runs its kernel, unloads it with
 * dlclose, then forks and exits: libpomptrace came in with the library, and its exit, fork and
 * signal handlers must not point into unmapped memory afterwards. tests/pomp2_dlclose.rs. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 2; }
    int (*kernel)(int) = (int (*)(int))dlsym(lib, "kernel");
    printf("kernel %d\n", kernel(100000));
    fflush(stdout);
    dlclose(lib);
    pid_t child = fork();
    if (child == 0) { _exit(0); }
    int status; waitpid(child, &status, 0);
    printf("child %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}
