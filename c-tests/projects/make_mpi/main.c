/* Usage: jacobi [N [ITERATIONS]]; prints "ranks R threads T residual X checksum Y" on rank 0,
 * with the MPI calls of c-tests/mpi_jacobi.c in the same order. */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "jacobi.h"

int main(int argc, char **argv) {
    int provided = 0, rank = 0, size = 1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int params[2] = {64, 20};
    if (rank == 0) {
        if (argc > 1) params[0] = atoi(argv[1]);
        if (argc > 2) params[1] = atoi(argv[2]);
    }
    MPI_Bcast(params, 2, MPI_INT, 0, MPI_COMM_WORLD);
    const int n = params[0], iterations = params[1];
    struct block b = {
        .n = n,
        .rows = n / size + (rank < n % size ? 1 : 0),
        .first = rank * (n / size) + (rank < n % size ? rank : n % size),
        .up = rank > 0 ? rank - 1 : MPI_PROC_NULL,
        .down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL,
    };
    const size_t cells = (size_t)(b.rows + 2) * (size_t)n;
    b.u = calloc(cells, sizeof *b.u);
    b.next = calloc(cells, sizeof *b.next);
    if (!b.u || !b.next) MPI_Abort(MPI_COMM_WORLD, 1);
    if (b.first == 0)
        for (int j = 0; j < n; j++) b.u[n + j] = b.next[n + j] = 1.0;

    double residual = 0.0;
    for (int it = 0; it < iterations; it++) {
        exchange_halos(&b);
        double local = sweep(&b);
        MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    double sum = 0.0, checksum = 0.0;
#pragma omp parallel for reduction(+ : sum)
    for (int i = 1; i <= b.rows; i++)
        for (int j = 0; j < n; j++) sum += b.u[(size_t)i * (size_t)n + (size_t)j];
    MPI_Reduce(&sum, &checksum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("ranks %d threads %d residual %.6e checksum %.6f\n", size, omp_get_max_threads(),
               residual, checksum);
    free(b.u);
    free(b.next);
    MPI_Finalize();
    return 0;
}
