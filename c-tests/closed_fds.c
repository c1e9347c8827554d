/* closed_fds.c -- records a traced region, then closes every descriptor from 3 to 1023 (as
 * daemons and some job launchers do), opens its own file FILE and writes one line to it after
 * each of 20 traced parallel regions of N iterations per thread; prints total=<value>. The file
 * must hold exactly what the program wrote, traced or not. Usage: closed_fds FILE [N] */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static long steps(long n)
{
    long total = 0;
#pragma omp parallel reduction(+ : total)
    {
        for (long i = 0; i < n; i++) {
#pragma pomp inst begin(step)
            total += i & 1;
#pragma pomp inst end(step)
        }
    }
    return total;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        return 2;
    }
    long n = argc > 2 ? atol(argv[2]) : 20000;
    long total = steps(n);
    for (int fd = 3; fd < 1024; fd++) {
        close(fd);
    }
    int out = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0) {
        perror("open");
        return 1;
    }
    for (int round = 0; round < 20; round++) {
        total += steps(n);
        char line[64];
        int len = snprintf(line, sizeof line, "round %d total %ld\n", round, total);
        if (write(out, line, len) != len) {
            perror("write");
            return 1;
        }
    }
    close(out);
    printf("total=%ld\n", total);
    return 0;
}
