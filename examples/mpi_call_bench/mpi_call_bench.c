/* Times MPI calls in a loop, for examples/mpi_call_bench.rs, which runs it once plain and once
 * with libpomptrace_mpi preloaded: the difference is what tracing adds per call.
 *
 * Usage: mpi_call_bench CALLS ROUNDS (run as one rank: no partner's speed in the numbers).
 * Prints one line per case: "<case> <ns per iteration, best round>"; an iteration of
 * "isend+irecv+waitall" is three calls (a message to itself and its receive).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const long calls = argc > 1 ? atol(argv[1]) : 100000;
    const int rounds = argc > 2 ? atoi(argv[2]) : 5;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *names[] = {"barrier", "allreduce", "isend+irecv+waitall"};
    for (int c = 0; c < 3; c++) {
        double best = 1e300;
        for (int r = 0; r < rounds; r++) {
            double in = 1.0, out = 0.0;
            MPI_Request requests[2];
            const double start = now_ns();
            for (long i = 0; i < calls; i++) {
                switch (c) {
                case 0:
                    MPI_Barrier(MPI_COMM_WORLD);
                    break;
                case 1:
                    MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                    break;
                default:
                    MPI_Irecv(&out, 1, MPI_DOUBLE, rank, 7, MPI_COMM_WORLD, &requests[0]);
                    MPI_Isend(&in, 1, MPI_DOUBLE, rank, 7, MPI_COMM_WORLD, &requests[1]);
                    MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
                }
            }
            const double per = (now_ns() - start) / (double)calls;
            if (per < best) best = per;
        }
        if (rank == 0) printf("%s %.1f\n", names[c], best);
    }
    MPI_Finalize();
    return 0;
}
