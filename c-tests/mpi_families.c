/* One family of MPI calls per run, for tests/mpi_families.rs (2 ranks, or any even number):
 *
 *   mpi_families sync        MPI_Ssend, MPI_Bsend, MPI_Rsend and MPI_Issend, MPI_Ibsend,
 *                            MPI_Irsend, each to the partner rank (rank ^ 1)
 *   mpi_families persistent  MPI_Send_init/MPI_Recv_init, started 3 times by MPI_Startall and
 *                            once by MPI_Start, completed by MPI_Waitall/MPI_Wait/MPI_Test,
 *                            freed by MPI_Request_free; a cancelled receive
 *   mpi_families nbc         every non-blocking collective, completed by MPI_Wait, MPI_Waitall,
 *                            MPI_Test and MPI_Testany
 *   mpi_families probe       MPI_Probe, MPI_Iprobe, MPI_Mprobe + MPI_Mrecv, MPI_Improbe +
 *                            MPI_Imrecv, each before its receive
 *   mpi_families scan        MPI_Scan, MPI_Exscan, MPI_Reduce_scatter,
 *                            MPI_Reduce_scatter_block, MPI_Sendrecv_replace, MPI_Testsome
 *   mpi_families comms       MPI_Comm_create, MPI_Comm_create_group, MPI_Intercomm_create
 *                            between the even and the odd ranks (a message across it),
 *                            MPI_Intercomm_merge
 *
 * Every received value is checked; rank 0 prints "mpi_families FAMILY ok" when all were right.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
static int rank, size, partner;

static void expect(int condition, const char *what) {
    if (!condition) {
        failures++;
        fprintf(stderr, "mpi_families: rank %d: %s failed\n", rank, what);
    }
}

/* Sends `value` to the partner with `send` while the partner receives it: even ranks first. */
static void sync_sends(void) {
    int value = rank, got = -1;
    typedef int (*blocking_send)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
    blocking_send sends[2] = {MPI_Ssend, MPI_Bsend};
    char buffer[1024 + MPI_BSEND_OVERHEAD];
    MPI_Buffer_attach(buffer, sizeof buffer);
    for (int i = 0; i < 2; i++) {
        for (int turn = 0; turn < 2; turn++) {
            if (rank % 2 == turn) {
                sends[i](&value, 1, MPI_INT, partner, 30 + i, MPI_COMM_WORLD);
            } else {
                MPI_Recv(&got, 1, MPI_INT, partner, 30 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                expect(got == partner, "ssend/bsend");
            }
        }
    }
    /* Ready mode needs the receive posted first: the barrier says it is. */
    MPI_Request r;
    MPI_Irecv(&got, 1, MPI_INT, partner, 32, MPI_COMM_WORLD, &r);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Rsend(&value, 1, MPI_INT, partner, 32, MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    expect(got == partner, "rsend");

    typedef int (*nonblocking_send)(const void *, int, MPI_Datatype, int, int, MPI_Comm,
                                    MPI_Request *);
    nonblocking_send isends[3] = {MPI_Issend, MPI_Ibsend, MPI_Irsend};
    for (int i = 0; i < 3; i++) {
        MPI_Request both[2];
        MPI_Irecv(&got, 1, MPI_INT, partner, 40 + i, MPI_COMM_WORLD, &both[0]);
        MPI_Barrier(MPI_COMM_WORLD);
        isends[i](&value, 1, MPI_INT, partner, 40 + i, MPI_COMM_WORLD, &both[1]);
        MPI_Waitall(2, both, MPI_STATUSES_IGNORE);
        expect(got == partner, "issend/ibsend/irsend");
    }
    void *detached;
    int detached_size;
    MPI_Buffer_detach(&detached, &detached_size);
}

static void persistent(void) {
    double out = 0, in = -1;
    MPI_Request requests[2];
    MPI_Recv_init(&in, 1, MPI_DOUBLE, partner, 50, MPI_COMM_WORLD, &requests[0]);
    MPI_Send_init(&out, 1, MPI_DOUBLE, partner, 50, MPI_COMM_WORLD, &requests[1]);
    for (int round = 0; round < 3; round++) {
        out = rank * 10 + round;
        MPI_Startall(2, requests);
        MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
        expect(in == partner * 10 + round, "startall");
    }
    out = rank * 10 + 3;
    MPI_Start(&requests[0]);
    MPI_Start(&requests[1]);
    MPI_Wait(&requests[1], MPI_STATUS_IGNORE);
    for (int done = 0; !done;) MPI_Test(&requests[0], &done, MPI_STATUS_IGNORE);
    expect(in == partner * 10 + 3, "start");
    MPI_Request_free(&requests[0]);
    MPI_Request_free(&requests[1]);

    /* A receive no one sends to, cancelled. */
    MPI_Request never;
    MPI_Status status;
    int cancelled = 0;
    MPI_Irecv(&in, 1, MPI_DOUBLE, partner, 59, MPI_COMM_WORLD, &never);
    MPI_Cancel(&never);
    MPI_Wait(&never, &status);
    MPI_Test_cancelled(&status, &cancelled);
    expect(cancelled, "cancel");
}

static void nonblocking_collectives(void) {
    MPI_Request r[4];
    MPI_Ibarrier(MPI_COMM_WORLD, &r[0]);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);

    int value = rank == 0 ? 42 : -1;
    MPI_Ibcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD, &r[0]);
    for (int done = 0; !done;) MPI_Test(&r[0], &done, MPI_STATUS_IGNORE);
    expect(value == 42, "ibcast");

    int one = 1, total = 0, at_root = 0;
    MPI_Iallreduce(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[0]);
    MPI_Ireduce(&one, &at_root, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    expect(total == size, "iallreduce");
    expect(rank != 0 || at_root == size, "ireduce");

    int *all = malloc(sizeof(int) * (size_t)size), *back = malloc(sizeof(int) * (size_t)size);
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++) {
        counts[i] = 1;
        displs[i] = i;
    }
    MPI_Iallgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD, &r[0]);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    for (int i = 0; i < size; i++) expect(all[i] == i, "iallgather");
    MPI_Ialltoall(all, 1, MPI_INT, back, 1, MPI_INT, MPI_COMM_WORLD, &r[0]);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    for (int i = 0; i < size; i++) expect(back[i] == rank, "ialltoall");
    MPI_Igather(&rank, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD, &r[0]);
    MPI_Iscatter(all, 1, MPI_INT, &value, 1, MPI_INT, 0, MPI_COMM_WORLD, &r[1]);
    /* Testany until both are done: each completes in a call of its own. */
    for (int done = 0; done < 2;) {
        int index, flag;
        MPI_Testany(2, r, &index, &flag, MPI_STATUS_IGNORE);
        done += flag && index != MPI_UNDEFINED;
    }
    expect(value == rank, "igather/iscatter");
    MPI_Igatherv(&rank, 1, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD, &r[0]);
    MPI_Iscatterv(all, counts, displs, MPI_INT, &value, 1, MPI_INT, 0, MPI_COMM_WORLD, &r[1]);
    MPI_Iallgatherv(&rank, 1, MPI_INT, back, counts, displs, MPI_INT, MPI_COMM_WORLD, &r[2]);
    MPI_Ialltoallv(all, counts, displs, MPI_INT, back, counts, displs, MPI_INT, MPI_COMM_WORLD,
                   &r[3]);
    MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
    int got = -1;
    MPI_Ireduce_scatter_block(all, &got, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[0]);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    MPI_Ireduce_scatter(all, &got, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[0]);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    int prefix = -1;
    MPI_Iscan(&one, &prefix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[0]);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    expect(prefix == rank + 1, "iscan");
    MPI_Iexscan(&one, &prefix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[0]);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    expect(rank == 0 || prefix == rank, "iexscan");
    free(all);
    free(back);
    free(counts);
    free(displs);
}

static void probes(void) {
    int value = rank, got = -1, flag = 0;
    MPI_Status status;
    /* Each rank sends four messages to its partner, then probes for the partner's. */
    MPI_Request sends[4];
    for (int i = 0; i < 4; i++)
        MPI_Isend(&value, 1, MPI_INT, partner, 60 + i, MPI_COMM_WORLD, &sends[i]);
    MPI_Probe(partner, 60, MPI_COMM_WORLD, &status);
    expect(status.MPI_TAG == 60, "probe");
    MPI_Recv(&got, 1, MPI_INT, status.MPI_SOURCE, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    expect(got == partner, "probe recv");
    while (!flag) MPI_Iprobe(partner, 61, MPI_COMM_WORLD, &flag, &status);
    MPI_Recv(&got, 1, MPI_INT, partner, 61, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    expect(got == partner, "iprobe recv");
    MPI_Message message;
    MPI_Mprobe(partner, 62, MPI_COMM_WORLD, &message, &status);
    got = -1;
    MPI_Mrecv(&got, 1, MPI_INT, &message, MPI_STATUS_IGNORE);
    expect(got == partner, "mrecv");
    for (flag = 0; !flag;) MPI_Improbe(partner, 63, MPI_COMM_WORLD, &flag, &message, &status);
    MPI_Request r;
    got = -1;
    MPI_Imrecv(&got, 1, MPI_INT, &message, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    expect(got == partner, "imrecv");
    MPI_Waitall(4, sends, MPI_STATUSES_IGNORE);
}

static void scans(void) {
    int one = 1, prefix = -1;
    MPI_Scan(&one, &prefix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect(prefix == rank + 1, "scan");
    MPI_Exscan(&one, &prefix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect(rank == 0 || prefix == rank, "exscan");
    int *ones = malloc(sizeof(int) * (size_t)size), *counts = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++) ones[i] = counts[i] = 1;
    int got = -1;
    MPI_Reduce_scatter(ones, &got, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect(got == size, "reduce_scatter");
    got = -1;
    MPI_Reduce_scatter_block(ones, &got, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect(got == size, "reduce_scatter_block");
    int value = rank;
    MPI_Sendrecv_replace(&value, 1, MPI_INT, partner, 70, partner, 70, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
    expect(value == partner, "sendrecv_replace");
    /* Testsome over two receives and two sends. */
    int in[2] = {-1, -1}, out[2] = {rank, rank};
    MPI_Request r[4];
    MPI_Irecv(&in[0], 1, MPI_INT, partner, 71, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(&in[1], 1, MPI_INT, partner, 72, MPI_COMM_WORLD, &r[1]);
    MPI_Isend(&out[0], 1, MPI_INT, partner, 71, MPI_COMM_WORLD, &r[2]);
    MPI_Isend(&out[1], 1, MPI_INT, partner, 72, MPI_COMM_WORLD, &r[3]);
    for (int done = 0; done < 4;) {
        int count, indices[4];
        MPI_Testsome(4, r, &count, indices, MPI_STATUSES_IGNORE);
        done += count == MPI_UNDEFINED ? 4 : count;
    }
    expect(in[0] == partner && in[1] == partner, "testsome");
    free(ones);
    free(counts);
}

static void communicators(void) {
    MPI_Group world, evens;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int half = (size + 1) / 2, *even_ranks = malloc(sizeof(int) * (size_t)half);
    for (int i = 0; i < half; i++) even_ranks[i] = 2 * i;
    MPI_Group_incl(world, half, even_ranks, &evens);
    MPI_Comm created, grouped;
    MPI_Comm_create(MPI_COMM_WORLD, evens, &created);
    expect((created != MPI_COMM_NULL) == (rank % 2 == 0), "comm_create");
    if (rank % 2 == 0) {
        MPI_Comm_create_group(MPI_COMM_WORLD, evens, 5, &grouped);
        int members = 0;
        MPI_Allreduce(&(int){1}, &members, 1, MPI_INT, MPI_SUM, grouped);
        expect(members == half, "comm_create_group");
        MPI_Comm_free(&grouped);
        MPI_Comm_free(&created);
    }
    /* The even and the odd ranks, joined by an intercommunicator; each rank sends its world
     * rank to the rank of the same number on the other side. */
    MPI_Comm side, inter, merged;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &side);
    MPI_Intercomm_create(side, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 80, &inter);
    int side_rank, got = -1;
    MPI_Comm_rank(side, &side_rank);
    MPI_Sendrecv(&rank, 1, MPI_INT, side_rank, 81, &got, 1, MPI_INT, side_rank, 81, inter,
                 MPI_STATUS_IGNORE);
    expect(got == partner, "intercomm sendrecv");
    MPI_Intercomm_merge(inter, rank % 2, &merged);
    int members = 0;
    MPI_Allreduce(&(int){1}, &members, 1, MPI_INT, MPI_SUM, merged);
    expect(members == size, "intercomm_merge");
    MPI_Comm_free(&merged);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&side);
    MPI_Group_free(&evens);
    MPI_Group_free(&world);
    free(even_ranks);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    partner = rank ^ 1;
    const char *family = argc > 1 ? argv[1] : "";
    if (size % 2 != 0) {
        fprintf(stderr, "mpi_families: needs an even number of ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (strcmp(family, "sync") == 0)
        sync_sends();
    else if (strcmp(family, "persistent") == 0)
        persistent();
    else if (strcmp(family, "nbc") == 0)
        nonblocking_collectives();
    else if (strcmp(family, "probe") == 0)
        probes();
    else if (strcmp(family, "scan") == 0)
        scans();
    else if (strcmp(family, "comms") == 0)
        communicators();
    else {
        fprintf(stderr, "mpi_families: unknown family '%s'\n", family);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int all_failures = 0;
    MPI_Reduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && all_failures == 0) printf("mpi_families %s ok\n", family);
    MPI_Finalize();
    return all_failures != 0;
}
