/* A hybrid MPI + OpenMP 2-D Jacobi solver (Laplace equation on an N x N grid, fixed hot top
 * edge), used by tests/mpi_*.rs. The rows are split into one block per rank; each iteration
 * exchanges the halo rows with the neighbours through MPI_Isend/MPI_Irecv/MPI_Waitall, updates
 * the block in an OpenMP loop, and sums the residual over the ranks with MPI_Allreduce. The
 * size and the iteration count come from rank 0 by MPI_Bcast; a final MPI_Reduce and
 * MPI_Barrier close the run.
 *
 * Usage: mpi_jacobi [N [ITERATIONS]]; prints "ranks R threads T residual X checksum Y" on rank 0.
 * With MPI_JACOBI_KILL_RANK=r in the environment, rank r kills itself (SIGKILL) after its last
 * MPI call, as a node failure would: it never gets to write its trace. It waits (up to a minute)
 * until every other rank has written its part of the trace (POMPTRACE_EXPERIMENT_DIRECTORY/
 * ranks/<rank>.otf2), so that the launcher's clean-up cannot interrupt them. With
 * MPI_JACOBI_KILL_AT_ITERATION=i as well, rank r kills itself in the middle of the run instead,
 * at the start of iteration i (after a pause that lets pomptrace's writer thread store the
 * event chunks already full): the other ranks wait for it and are ended by the launcher.
 */
#include <mpi.h>
#include <omp.h>
#include <signal.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_UP 1
#define TAG_DOWN 2

int main(int argc, char **argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int params[2] = {64, 20};
    if (rank == 0) {
        if (argc > 1) params[0] = atoi(argv[1]);
        if (argc > 2) params[1] = atoi(argv[2]);
    }
    MPI_Bcast(params, 2, MPI_INT, 0, MPI_COMM_WORLD);
    const int n = params[0], iterations = params[1];

    /* Rows [first, first + rows) of the global grid, plus one halo row above and below. */
    const int rows = n / size + (rank < n % size ? 1 : 0);
    const int first = rank * (n / size) + (rank < n % size ? rank : n % size);
    const size_t width = (size_t)n;
    double *u = calloc((size_t)(rows + 2) * width, sizeof *u);
    double *next = calloc((size_t)(rows + 2) * width, sizeof *next);
    if (!u || !next) {
        fprintf(stderr, "out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (first == 0) {
        for (int j = 0; j < n; j++) u[width + j] = next[width + j] = 1.0;
    }
    const int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    const int down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;

    const char *kill_rank = getenv("MPI_JACOBI_KILL_RANK");
    const char *kill_at = getenv("MPI_JACOBI_KILL_AT_ITERATION");
    const int killed_here = kill_rank && atoi(kill_rank) == rank;

    double residual = 0.0;
    for (int it = 0; it < iterations; it++) {
        if (killed_here && kill_at && atoi(kill_at) == it) {
            usleep(500000);
            raise(SIGKILL);
        }
        MPI_Request requests[4];
        MPI_Irecv(u, n, MPI_DOUBLE, up, TAG_DOWN, MPI_COMM_WORLD, &requests[0]);
        MPI_Irecv(u + (size_t)(rows + 1) * width, n, MPI_DOUBLE, down, TAG_UP, MPI_COMM_WORLD,
                  &requests[1]);
        MPI_Isend(u + width, n, MPI_DOUBLE, up, TAG_UP, MPI_COMM_WORLD, &requests[2]);
        MPI_Isend(u + (size_t)rows * width, n, MPI_DOUBLE, down, TAG_DOWN, MPI_COMM_WORLD,
                  &requests[3]);
        MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);

        double local = 0.0;
#pragma omp parallel for reduction(+ : local)
        for (int i = 1; i <= rows; i++) {
            const int global_row = first + i - 1;
            if (global_row == 0 || global_row == n - 1) continue;
            for (int j = 1; j < n - 1; j++) {
                const size_t k = (size_t)i * width + (size_t)j;
                next[k] = 0.25 * (u[k - width] + u[k + width] + u[k - 1] + u[k + 1]);
                const double d = next[k] - u[k];
                local += d * d;
            }
        }
        double *swap = u;
        u = next;
        next = swap;
        MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }

    double sum = 0.0, checksum = 0.0;
#pragma omp parallel for reduction(+ : sum)
    for (int i = 1; i <= rows; i++) {
        for (int j = 0; j < n; j++) sum += u[(size_t)i * width + (size_t)j];
    }
    MPI_Reduce(&sum, &checksum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        printf("ranks %d threads %d residual %.6e checksum %.6f\n", size, omp_get_max_threads(),
               residual, checksum);
    }
    free(u);
    free(next);
    MPI_Finalize();
    const char *trace = getenv("POMPTRACE_EXPERIMENT_DIRECTORY");
    if (killed_here) {
        for (int waited = 0; trace && waited < 600; waited++) {
            int written = 0;
            for (int r = 0; r < size; r++) {
                char part[4096];
                snprintf(part, sizeof part, "%s/ranks/%d.otf2", trace, r);
                written += r != rank && access(part, F_OK) == 0;
            }
            if (written == size - 1) break;
            usleep(100000);
        }
        raise(SIGKILL);
    }
    return 0;
}
