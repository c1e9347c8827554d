/* Every MPI call libpomptrace_mpi wraps, once or a few times, by a program that also makes MPI
 * calls from inside OpenMP parallel regions (MPI_THREAD_MULTIPLE): each thread exchanges a
 * message with the same thread of the partner rank, tagged with its thread number. Used by
 * tests/mpi_calls.rs with an even number of ranks.
 *
 * Prints "mpi_calls ok" on rank 0 when every received value is what was sent.
 */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static int failures = 0;

static void expect(int condition, const char *what) {
    if (!condition) {
        failures++;
        fprintf(stderr, "mpi_calls: %s failed\n", what);
    }
}

int main(int argc, char **argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "mpi_calls: MPI_THREAD_MULTIPLE is not provided\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int partner = rank ^ 1;

    /* Blocking point to point and Sendrecv. */
    int value = rank, got = -1;
    if (rank % 2 == 0) {
        MPI_Send(&value, 1, MPI_INT, partner, 10, MPI_COMM_WORLD);
        MPI_Recv(&got, 1, MPI_INT, partner, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(&got, 1, MPI_INT, partner, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&value, 1, MPI_INT, partner, 11, MPI_COMM_WORLD);
    }
    expect(got == partner, "send/recv");
    MPI_Sendrecv(&value, 1, MPI_INT, partner, 12, &got, 1, MPI_INT, partner, 12, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    expect(got == partner, "sendrecv");

    /* Non-blocking, completed by each member of the wait and test families. */
    double out[2] = {rank, rank + 0.5}, in[2] = {-1, -1};
    MPI_Request requests[2];
    MPI_Irecv(&in[0], 1, MPI_DOUBLE, partner, 20, MPI_COMM_WORLD, &requests[0]);
    MPI_Isend(&out[0], 1, MPI_DOUBLE, partner, 20, MPI_COMM_WORLD, &requests[1]);
    MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
    MPI_Wait(&requests[1], MPI_STATUS_IGNORE);
    MPI_Irecv(&in[1], 1, MPI_DOUBLE, partner, 21, MPI_COMM_WORLD, &requests[0]);
    MPI_Isend(&out[1], 1, MPI_DOUBLE, partner, 21, MPI_COMM_WORLD, &requests[1]);
    for (int done = 0; done < 2;) {
        int index;
        MPI_Waitany(2, requests, &index, MPI_STATUS_IGNORE);
        done++;
    }
    expect(in[0] == partner && in[1] == partner + 0.5, "isend/irecv");
    MPI_Irecv(&in[0], 1, MPI_DOUBLE, partner, 22, MPI_COMM_WORLD, &requests[0]);
    MPI_Isend(&out[0], 1, MPI_DOUBLE, partner, 22, MPI_COMM_WORLD, &requests[1]);
    for (int done = 0; done < 2;) {
        int count, indices[2];
        MPI_Waitsome(2, requests, &count, indices, MPI_STATUSES_IGNORE);
        if (count != MPI_UNDEFINED) done += count;
    }
    MPI_Irecv(&in[1], 1, MPI_DOUBLE, partner, 23, MPI_COMM_WORLD, &requests[0]);
    MPI_Isend(&out[1], 1, MPI_DOUBLE, partner, 23, MPI_COMM_WORLD, &requests[1]);
    for (int flag = 0; !flag;) MPI_Test(&requests[0], &flag, MPI_STATUS_IGNORE);
    for (int flag = 0; !flag;) MPI_Testall(1, &requests[1], &flag, MPI_STATUSES_IGNORE);
    expect(in[0] == partner && in[1] == partner + 0.5, "waitsome/test");

    /* Collectives with and without a root. */
    int root_value = rank == 0 ? 42 : 0, sum = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Bcast(&root_value, 1, MPI_INT, 0, MPI_COMM_WORLD);
    expect(root_value == 42, "bcast");
    MPI_Reduce(&value, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect(sum == size * (size - 1) / 2, "allreduce");
    int *all = malloc(sizeof(int) * (size_t)size * 2);
    int *counts = malloc(sizeof(int) * (size_t)size);
    int *displs = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++) {
        counts[i] = 1;
        displs[i] = i;
    }
    MPI_Gather(&value, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gatherv(&value, 1, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Scatter(all, 1, MPI_INT, &got, 1, MPI_INT, 0, MPI_COMM_WORLD);
    expect(got == rank, "scatter");
    MPI_Scatterv(all, counts, displs, MPI_INT, &got, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allgather(&value, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Allgatherv(&value, 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD);
    expect(all[size - 1] == size - 1, "allgatherv");
    MPI_Alltoall(all, 1, MPI_INT, all + size, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoallv(all, counts, displs, MPI_INT, all + size, counts, displs, MPI_INT,
                  MPI_COMM_WORLD);

    /* Communicators: a pair of each rank and its partner, a duplicate of it. */
    MPI_Comm pair, copy;
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &pair);
    MPI_Comm_dup(pair, &copy);
    int pair_sum = 0;
    MPI_Allreduce(&value, &pair_sum, 1, MPI_INT, MPI_SUM, copy);
    expect(pair_sum == rank + partner, "allreduce on the pair");
    int pair_rank;
    MPI_Comm_rank(pair, &pair_rank);
    MPI_Sendrecv(&value, 1, MPI_INT, 1 - pair_rank, 30, &got, 1, MPI_INT, 1 - pair_rank, 30, pair,
                 MPI_STATUS_IGNORE);
    expect(got == partner, "sendrecv on the pair");
    MPI_Comm_free(&copy);
    MPI_Comm_free(&pair);

    /* MPI from every thread at once. */
#pragma omp parallel reduction(+ : failures)
    {
        int thread = omp_get_thread_num(), from_partner = -1;
        MPI_Sendrecv(&thread, 1, MPI_INT, partner, 100 + thread, &from_partner, 1, MPI_INT,
                     partner, 100 + thread, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (from_partner != thread) failures++;
    }

    free(all);
    free(counts);
    free(displs);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && total == 0) printf("mpi_calls ok\n");
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
