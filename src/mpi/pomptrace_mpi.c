/* libpomptrace_mpi: PMPI wrappers that record MPI calls into pomptrace's trace.
 *
 * Built by mpicc (MPI handle types differ between implementations, so this part is C and is
 * compiled against the MPI in use); it records through the internal C API of libpomptrace
 * (include/pomptrace/pomptrace_mpi.h), which never sees an MPI type. Link it before the MPI
 * library, or load it with LD_PRELOAD:
 *
 *   mpicc ... -L$LIB -lpomptrace_mpi -lpomptrace -Wl,-rpath,$LIB
 *   LD_PRELOAD=$LIB/libpomptrace_mpi.so mpirun ... ./app
 *
 * Every wrapped call is a region of paradigm MPI; point-to-point messages become
 * MpiSend/MpiIsend/MpiIsendComplete/MpiRecv/MpiIrecvRequest/MpiIrecv events, collectives
 * MpiCollectiveBegin/End. Communicators carry their Comm id as an MPI attribute; a
 * communicator created by MPI_Comm_dup/split gets a name its members agree on (the creating
 * rank's world rank and a counter, broadcast over the new communicator), so that the job's
 * unification makes one Comm of it. Requests are kept in a table until they complete.
 * Thread-safe for MPI_THREAD_MULTIPLE: the tables are locked, the ids atomic.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pomptrace/pomptrace_mpi.h"

#define UNDEFINED POMPTRACE_MPI_UNDEFINED

static int world_rank = 0;
static int world_size = 1;
static int comm_keyval = MPI_KEYVAL_INVALID;
static uint32_t world_comm = UNDEFINED;
static uint32_t comms_created = 0;
/* The clock synchronisation's own communicator, so its messages never meet the program's. */
static MPI_Comm sync_comm = MPI_COMM_NULL;

/* ---- regions ------------------------------------------------------------------------------ */

/* The region id of one wrapped function, defined on first use (concurrent first uses define
 * the same region and store the same id). */
#define REGION(var, name, kind)                                                 \
    static uint32_t var = UNDEFINED;                                            \
    uint32_t var##_id = __atomic_load_n(&var, __ATOMIC_RELAXED);                \
    if (var##_id == UNDEFINED) {                                                \
        var##_id = pomptrace_mpi_region(name, kind);                            \
        __atomic_store_n(&var, var##_id, __ATOMIC_RELAXED);                     \
    }

#define ENTER(name, kind)          \
    REGION(region, name, kind)     \
    pomptrace_mpi_enter(region_id)
#define LEAVE() pomptrace_mpi_leave(region_id)
/* A blocking send: its region's Enter and the MpiSend at one time. */
#define ENTER_SEND(name, dest, comm, tag, bytes)                                           \
    REGION(region, name, POMPTRACE_MPI_POINT_TO_POINT)                                     \
    if ((dest) != MPI_PROC_NULL)                                                           \
        pomptrace_mpi_enter_send(region_id, (uint32_t)(dest), comm_id(comm), (uint32_t)(tag), \
                                 bytes);                                                   \
    else                                                                                   \
        pomptrace_mpi_enter(region_id)

/* ---- communicators ------------------------------------------------------------------------ */

static uint64_t type_bytes(MPI_Datatype type, long long count) {
    int size = 0;
    if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS)
        return 0;
    return (uint64_t)count * (uint64_t)size;
}

static uint32_t define_comm(MPI_Comm comm, const char *name, uint32_t parent) {
    MPI_Group group, world_group;
    int size = 0;
    PMPI_Comm_group(comm, &group);
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    PMPI_Group_size(group, &size);
    int *ranks = malloc(sizeof(int) * (size_t)(size > 0 ? size : 1));
    int *world = malloc(sizeof(int) * (size_t)(size > 0 ? size : 1));
    uint32_t id = UNDEFINED;
    if (ranks && world) {
        for (int i = 0; i < size; i++) ranks[i] = i;
        PMPI_Group_translate_ranks(group, size, ranks, world_group, world);
        uint32_t *members = (uint32_t *)ranks; /* same size as int, reused */
        for (int i = 0; i < size; i++) members[i] = (uint32_t)world[i];
        id = pomptrace_mpi_define_comm(name, members, (uint32_t)size, parent);
        if (comm_keyval != MPI_KEYVAL_INVALID)
            PMPI_Comm_set_attr(comm, comm_keyval, (void *)(uintptr_t)id);
    }
    free(ranks);
    free(world);
    PMPI_Group_free(&group);
    PMPI_Group_free(&world_group);
    return id;
}

/* The Comm id of a communicator; one created by a call this library does not wrap is defined
 * now, for this process only (its members cannot agree on a name without a collective). */
static uint32_t comm_id(MPI_Comm comm) {
    if (comm == MPI_COMM_NULL || comm_keyval == MPI_KEYVAL_INVALID) return UNDEFINED;
    if (comm == MPI_COMM_WORLD) return world_comm;
    void *value = NULL;
    int found = 0;
    PMPI_Comm_get_attr(comm, comm_keyval, &value, &found);
    if (found) return (uint32_t)(uintptr_t)value;
    char name[96];
    snprintf(name, sizeof name, "MPI communicator of rank %d (created by an untraced call)",
             world_rank);
    return define_comm(comm, name, UNDEFINED);
}

/* A communicator just created by a collective call: its members agree on a name (rank 0 of
 * it picks one and broadcasts it). */
static void define_new_comm(MPI_Comm parent, MPI_Comm comm) {
    if (comm == MPI_COMM_NULL) return;
    int rank = 0;
    unsigned origin[2] = {0, 0};
    PMPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        origin[0] = (unsigned)world_rank;
        origin[1] = __atomic_fetch_add(&comms_created, 1, __ATOMIC_RELAXED);
    }
    PMPI_Bcast(origin, 2, MPI_UNSIGNED, 0, comm);
    char name[64];
    snprintf(name, sizeof name, "MPI communicator %u.%u", origin[0], origin[1]);
    define_comm(comm, name, comm_id(parent));
}

/* ---- requests ----------------------------------------------------------------------------- */

enum { SEND_REQUEST = 1, RECV_REQUEST = 2 };
#define REQUEST_BUCKETS 1024

struct tracked {
    MPI_Request handle;
    uint64_t id;
    uint32_t comm;
    int kind;
    struct tracked *next;
};

static struct tracked *buckets[REQUEST_BUCKETS];
static pthread_mutex_t requests_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t next_request = 1;

static size_t bucket_of(MPI_Request handle) {
    uint64_t bits = 0;
    memcpy(&bits, &handle, sizeof handle < sizeof bits ? sizeof handle : sizeof bits);
    bits ^= bits >> 17;
    bits *= 0x9e3779b97f4a7c15ull;
    return (size_t)(bits >> 54) % REQUEST_BUCKETS;
}

static uint64_t track(MPI_Request handle, int kind, uint32_t comm) {
    struct tracked *t = malloc(sizeof *t);
    if (!t) return 0;
    t->handle = handle;
    t->id = __atomic_fetch_add(&next_request, 1, __ATOMIC_RELAXED);
    t->comm = comm;
    t->kind = kind;
    size_t b = bucket_of(handle);
    pthread_mutex_lock(&requests_lock);
    t->next = buckets[b];
    buckets[b] = t;
    pthread_mutex_unlock(&requests_lock);
    return t->id;
}

/* Removes a request from the table; 0 when it was not tracked. */
static int untrack(MPI_Request handle, struct tracked *out) {
    size_t b = bucket_of(handle);
    int found = 0;
    pthread_mutex_lock(&requests_lock);
    for (struct tracked **p = &buckets[b]; *p; p = &(*p)->next) {
        if ((*p)->handle == handle) {
            struct tracked *t = *p;
            *p = t->next;
            *out = *t;
            free(t);
            found = 1;
            break;
        }
    }
    pthread_mutex_unlock(&requests_lock);
    return found;
}

/* A request completed (handle as it was before the completing call) with `status`. */
static void completed(MPI_Request handle, MPI_Status *status) {
    struct tracked t;
    if (handle == MPI_REQUEST_NULL || !untrack(handle, &t)) return;
    if (t.kind == SEND_REQUEST) {
        pomptrace_mpi_isend_complete(t.id);
        return;
    }
    int cancelled = 0;
    PMPI_Test_cancelled(status, &cancelled);
    if (cancelled || status->MPI_SOURCE == MPI_PROC_NULL) return;
    int bytes = 0;
    PMPI_Get_count(status, MPI_BYTE, &bytes);
    pomptrace_mpi_irecv((uint32_t)status->MPI_SOURCE, t.comm, (uint32_t)status->MPI_TAG,
                        bytes == MPI_UNDEFINED ? 0 : (uint64_t)bytes, t.id);
}

/* Copies of the request handles before a call that completes some of them, and statuses to
 * read even when the program ignores them. */
struct completion {
    MPI_Request *saved;
    MPI_Status *statuses;
    MPI_Request small_saved[16];
    MPI_Status small_statuses[16];
};

static void completion_begin(struct completion *c, int count, const MPI_Request *requests,
                             MPI_Status *program_statuses) {
    c->saved = count <= 16 ? c->small_saved : malloc(sizeof(MPI_Request) * (size_t)count);
    c->statuses = program_statuses != MPI_STATUSES_IGNORE ? program_statuses
                  : count <= 16 ? c->small_statuses
                                : malloc(sizeof(MPI_Status) * (size_t)count);
    if (c->saved)
        for (int i = 0; i < count; i++) c->saved[i] = requests[i];
}

static void completion_end(struct completion *c, MPI_Status *program_statuses) {
    if (c->saved != c->small_saved) free(c->saved);
    if (c->statuses != program_statuses && c->statuses != c->small_statuses) free(c->statuses);
}

/* ---- clocks ------------------------------------------------------------------------------- */

/* Measures this rank's clock offset against rank 0 (best of a few ping-pongs: the one with
 * the shortest round trip). Rank 0 records an offset of 0. */
static void synchronise_clocks(void) {
    enum { ROUNDS = 8, TAG = 1 };
    if (sync_comm == MPI_COMM_NULL) return;
    if (world_rank == 0) {
        for (int peer = 1; peer < world_size; peer++) {
            for (int k = 0; k < ROUNDS; k++) {
                PMPI_Recv(NULL, 0, MPI_BYTE, peer, TAG, sync_comm, MPI_STATUS_IGNORE);
                uint64_t now = pomptrace_mpi_time();
                PMPI_Send(&now, 1, MPI_UINT64_T, peer, TAG, sync_comm);
            }
        }
        pomptrace_mpi_clock_offset(pomptrace_mpi_time(), 0, 0.0);
        return;
    }
    uint64_t best_round_trip = UINT64_MAX, at = 0;
    int64_t offset = 0;
    for (int k = 0; k < ROUNDS; k++) {
        uint64_t remote = 0, sent = pomptrace_mpi_time();
        PMPI_Send(NULL, 0, MPI_BYTE, 0, TAG, sync_comm);
        PMPI_Recv(&remote, 1, MPI_UINT64_T, 0, TAG, sync_comm, MPI_STATUS_IGNORE);
        uint64_t received = pomptrace_mpi_time();
        if (received - sent < best_round_trip) {
            best_round_trip = received - sent;
            at = sent + (received - sent) / 2;
            offset = (int64_t)(remote - at);
        }
    }
    pomptrace_mpi_clock_offset(at, offset, (double)best_round_trip / 2.0);
}

/* ---- environment -------------------------------------------------------------------------- */

static void after_init(void) {
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    pomptrace_mpi_init((uint32_t)world_rank, (uint32_t)world_size);
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &comm_keyval, NULL);
    world_comm = define_comm(MPI_COMM_WORLD, "MPI_COMM_WORLD", UNDEFINED);
    define_comm(MPI_COMM_SELF, "MPI_COMM_SELF", UNDEFINED);
    PMPI_Comm_dup(MPI_COMM_WORLD, &sync_comm);
    synchronise_clocks();
}

int MPI_Init(int *argc, char ***argv) {
    ENTER("MPI_Init", POMPTRACE_MPI_FUNCTION);
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) after_init();
    LEAVE();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    ENTER("MPI_Init_thread", POMPTRACE_MPI_FUNCTION);
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) after_init();
    LEAVE();
    return rc;
}

int MPI_Finalize(void) {
    ENTER("MPI_Finalize", POMPTRACE_MPI_FUNCTION);
    synchronise_clocks();
    if (sync_comm != MPI_COMM_NULL) PMPI_Comm_free(&sync_comm);
    int rc = PMPI_Finalize();
    LEAVE();
    return rc;
}

/* ---- point to point ----------------------------------------------------------------------- */

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    ENTER_SEND("MPI_Send", dest, comm, tag, type_bytes(type, count));
    int rc = PMPI_Send(buf, count, type, dest, tag, comm);
    LEAVE();
    return rc;
}

/* Records what a blocking receive got, with the Leave of its region. */
static void leave_received(uint32_t region, int rc, MPI_Status *status, MPI_Comm comm) {
    if (rc != MPI_SUCCESS || status->MPI_SOURCE == MPI_PROC_NULL) {
        pomptrace_mpi_leave(region);
        return;
    }
    int bytes = 0;
    PMPI_Get_count(status, MPI_BYTE, &bytes);
    pomptrace_mpi_leave_recv(region, (uint32_t)status->MPI_SOURCE, comm_id(comm),
                             (uint32_t)status->MPI_TAG, bytes == MPI_UNDEFINED ? 0 : (uint64_t)bytes);
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status) {
    ENTER("MPI_Recv", POMPTRACE_MPI_POINT_TO_POINT);
    MPI_Status own;
    MPI_Status *s = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = PMPI_Recv(buf, count, type, source, tag, comm, s);
    leave_received(region_id, rc, s, comm);
    return rc;
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                 int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                 int recvtag, MPI_Comm comm, MPI_Status *status) {
    ENTER_SEND("MPI_Sendrecv", dest, comm, sendtag, type_bytes(sendtype, sendcount));
    MPI_Status own;
    MPI_Status *s = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                           recvtype, source, recvtag, comm, s);
    leave_received(region_id, rc, s, comm);
    return rc;
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *request) {
    ENTER("MPI_Isend", POMPTRACE_MPI_POINT_TO_POINT);
    int rc = PMPI_Isend(buf, count, type, dest, tag, comm, request);
    if (rc == MPI_SUCCESS && dest != MPI_PROC_NULL) {
        uint32_t c = comm_id(comm);
        uint64_t id = track(*request, SEND_REQUEST, c);
        pomptrace_mpi_leave_isend(region_id, (uint32_t)dest, c, (uint32_t)tag,
                                  type_bytes(type, count), id);
    } else {
        LEAVE();
    }
    return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *request) {
    ENTER("MPI_Irecv", POMPTRACE_MPI_POINT_TO_POINT);
    int rc = PMPI_Irecv(buf, count, type, source, tag, comm, request);
    if (rc == MPI_SUCCESS && source != MPI_PROC_NULL)
        pomptrace_mpi_leave_irecv_request(region_id, track(*request, RECV_REQUEST, comm_id(comm)));
    else
        LEAVE();
    return rc;
}

/* ---- completion --------------------------------------------------------------------------- */

int MPI_Wait(MPI_Request *request, MPI_Status *status) {
    ENTER("MPI_Wait", POMPTRACE_MPI_POINT_TO_POINT);
    MPI_Request saved = *request;
    MPI_Status own;
    MPI_Status *s = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = PMPI_Wait(request, s);
    if (rc == MPI_SUCCESS) completed(saved, s);
    LEAVE();
    return rc;
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
    ENTER("MPI_Waitall", POMPTRACE_MPI_POINT_TO_POINT);
    struct completion c;
    completion_begin(&c, count, requests, statuses);
    int rc = c.statuses ? PMPI_Waitall(count, requests, c.statuses)
                        : PMPI_Waitall(count, requests, statuses);
    if (rc == MPI_SUCCESS && c.saved && c.statuses)
        for (int i = 0; i < count; i++) completed(c.saved[i], &c.statuses[i]);
    completion_end(&c, statuses);
    LEAVE();
    return rc;
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status) {
    ENTER("MPI_Waitany", POMPTRACE_MPI_POINT_TO_POINT);
    struct completion c;
    completion_begin(&c, count, requests, MPI_STATUSES_IGNORE);
    MPI_Status own;
    MPI_Status *s = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = PMPI_Waitany(count, requests, index, s);
    if (rc == MPI_SUCCESS && c.saved && *index != MPI_UNDEFINED) completed(c.saved[*index], s);
    completion_end(&c, MPI_STATUSES_IGNORE);
    LEAVE();
    return rc;
}

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[]) {
    ENTER("MPI_Waitsome", POMPTRACE_MPI_POINT_TO_POINT);
    struct completion c;
    completion_begin(&c, incount, requests, statuses);
    int rc = c.statuses ? PMPI_Waitsome(incount, requests, outcount, indices, c.statuses)
                        : PMPI_Waitsome(incount, requests, outcount, indices, statuses);
    if (rc == MPI_SUCCESS && c.saved && c.statuses && *outcount != MPI_UNDEFINED)
        for (int i = 0; i < *outcount; i++) completed(c.saved[indices[i]], &c.statuses[i]);
    completion_end(&c, statuses);
    LEAVE();
    return rc;
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status) {
    ENTER("MPI_Test", POMPTRACE_MPI_POINT_TO_POINT);
    MPI_Request saved = *request;
    MPI_Status own;
    MPI_Status *s = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = PMPI_Test(request, flag, s);
    if (rc == MPI_SUCCESS && *flag) completed(saved, s);
    LEAVE();
    return rc;
}

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]) {
    ENTER("MPI_Testall", POMPTRACE_MPI_POINT_TO_POINT);
    struct completion c;
    completion_begin(&c, count, requests, statuses);
    int rc = c.statuses ? PMPI_Testall(count, requests, flag, c.statuses)
                        : PMPI_Testall(count, requests, flag, statuses);
    if (rc == MPI_SUCCESS && *flag && c.saved && c.statuses)
        for (int i = 0; i < count; i++) completed(c.saved[i], &c.statuses[i]);
    completion_end(&c, statuses);
    LEAVE();
    return rc;
}

/* ---- collectives -------------------------------------------------------------------------- */

static int comm_size(MPI_Comm comm) {
    int size = 1;
    PMPI_Comm_size(comm, &size);
    return size;
}

static int comm_rank(MPI_Comm comm) {
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    return rank;
}

static long long sum(const int *counts, int n) {
    long long total = 0;
    for (int i = 0; counts && i < n; i++) total += counts[i];
    return total;
}

/* `bytes` at the root of a rooted collective, 0 at the other ranks (where the root's arguments
 * may be undefined: `bytes` is evaluated only at the root). */
#define AT_ROOT(comm, root, bytes) (comm_rank(comm) == (root) ? (bytes) : 0)

/* The bytes of `count` elements of `type` for each rank of `comm`. */
static uint64_t per_rank_bytes(MPI_Datatype type, int count, MPI_Comm comm) {
    return type_bytes(type, (long long)count * comm_size(comm));
}

/* The bytes of `counts[i]` elements of `type` for each rank i of `comm`. */
static uint64_t per_rank_counts_bytes(MPI_Datatype type, const int *counts, MPI_Comm comm) {
    return type_bytes(type, sum(counts, comm_size(comm)));
}

/* The bytes of this rank's own block in `buf`; with MPI_IN_PLACE the block is in the other
 * buffer, as its type and count say. */
static uint64_t own_block_bytes(const void *buf, MPI_Datatype type, int count,
                                MPI_Datatype other_type, int other_count) {
    return buf == MPI_IN_PLACE ? type_bytes(other_type, other_count) : type_bytes(type, count);
}

/* A collective's Enter and MpiCollectiveBegin at one time, its MpiCollectiveEnd and Leave at
 * another. */
#define COLLECTIVE_BEGIN(name, kind) \
    REGION(region, name, kind)       \
    pomptrace_mpi_enter_collective(region_id)

#define COLLECTIVE_END(op, comm, root, sent, received) \
    pomptrace_mpi_leave_collective(region_id, op, comm_id(comm), (uint32_t)(root), sent, received)

int MPI_Barrier(MPI_Comm comm) {
    COLLECTIVE_BEGIN("MPI_Barrier", POMPTRACE_MPI_BARRIER);
    int rc = PMPI_Barrier(comm);
    COLLECTIVE_END(POMPTRACE_MPI_OP_BARRIER, comm, UNDEFINED, 0, 0);
    return rc;
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
    COLLECTIVE_BEGIN("MPI_Bcast", POMPTRACE_MPI_ONE_TO_ALL);
    int rc = PMPI_Bcast(buffer, count, type, root, comm);
    uint64_t bytes = type_bytes(type, count);
    int is_root = comm_rank(comm) == root;
    COLLECTIVE_END(POMPTRACE_MPI_OP_BCAST, comm, root, is_root ? bytes : 0, is_root ? 0 : bytes);
    return rc;
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm) {
    COLLECTIVE_BEGIN("MPI_Reduce", POMPTRACE_MPI_ALL_TO_ONE);
    int rc = PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
    uint64_t bytes = type_bytes(type, count);
    COLLECTIVE_END(POMPTRACE_MPI_OP_REDUCE, comm, root, bytes,
                   comm_rank(comm) == root ? bytes : 0);
    return rc;
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
    COLLECTIVE_BEGIN("MPI_Allreduce", POMPTRACE_MPI_ALL_TO_ALL);
    int rc = PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
    uint64_t bytes = type_bytes(type, count);
    COLLECTIVE_END(POMPTRACE_MPI_OP_ALLREDUCE, comm, UNDEFINED, bytes, bytes);
    return rc;
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    COLLECTIVE_BEGIN("MPI_Gather", POMPTRACE_MPI_ALL_TO_ONE);
    int rc = PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    uint64_t sent = own_block_bytes(sendbuf, sendtype, sendcount, recvtype, recvcount);
    uint64_t got = AT_ROOT(comm, root, per_rank_bytes(recvtype, recvcount, comm));
    COLLECTIVE_END(POMPTRACE_MPI_OP_GATHER, comm, root, sent, got);
    return rc;
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm) {
    COLLECTIVE_BEGIN("MPI_Gatherv", POMPTRACE_MPI_ALL_TO_ONE);
    int rc = PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                          root, comm);
    uint64_t sent = sendbuf == MPI_IN_PLACE ? 0 : type_bytes(sendtype, sendcount);
    uint64_t got = AT_ROOT(comm, root, per_rank_counts_bytes(recvtype, recvcounts, comm));
    COLLECTIVE_END(POMPTRACE_MPI_OP_GATHERV, comm, root, sent, got);
    return rc;
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    COLLECTIVE_BEGIN("MPI_Scatter", POMPTRACE_MPI_ONE_TO_ALL);
    int rc = PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    uint64_t sent = AT_ROOT(comm, root, per_rank_bytes(sendtype, sendcount, comm));
    uint64_t got = own_block_bytes(recvbuf, recvtype, recvcount, sendtype, sendcount);
    COLLECTIVE_END(POMPTRACE_MPI_OP_SCATTER, comm, root, sent, got);
    return rc;
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm) {
    COLLECTIVE_BEGIN("MPI_Scatterv", POMPTRACE_MPI_ONE_TO_ALL);
    int rc = PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                           root, comm);
    uint64_t sent = AT_ROOT(comm, root, per_rank_counts_bytes(sendtype, sendcounts, comm));
    uint64_t got = recvbuf == MPI_IN_PLACE ? 0 : type_bytes(recvtype, recvcount);
    COLLECTIVE_END(POMPTRACE_MPI_OP_SCATTERV, comm, root, sent, got);
    return rc;
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    COLLECTIVE_BEGIN("MPI_Allgather", POMPTRACE_MPI_ALL_TO_ALL);
    int rc = PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    uint64_t sent = own_block_bytes(sendbuf, sendtype, sendcount, recvtype, recvcount);
    uint64_t got = per_rank_bytes(recvtype, recvcount, comm);
    COLLECTIVE_END(POMPTRACE_MPI_OP_ALLGATHER, comm, UNDEFINED, sent, got);
    return rc;
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm) {
    COLLECTIVE_BEGIN("MPI_Allgatherv", POMPTRACE_MPI_ALL_TO_ALL);
    int rc = PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                             recvtype, comm);
    uint64_t sent = sendbuf == MPI_IN_PLACE ? 0 : type_bytes(sendtype, sendcount);
    uint64_t got = per_rank_counts_bytes(recvtype, recvcounts, comm);
    COLLECTIVE_END(POMPTRACE_MPI_OP_ALLGATHERV, comm, UNDEFINED, sent, got);
    return rc;
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    COLLECTIVE_BEGIN("MPI_Alltoall", POMPTRACE_MPI_ALL_TO_ALL);
    int rc = PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    uint64_t got = per_rank_bytes(recvtype, recvcount, comm);
    uint64_t sent = sendbuf == MPI_IN_PLACE ? got : per_rank_bytes(sendtype, sendcount, comm);
    COLLECTIVE_END(POMPTRACE_MPI_OP_ALLTOALL, comm, UNDEFINED, sent, got);
    return rc;
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
    COLLECTIVE_BEGIN("MPI_Alltoallv", POMPTRACE_MPI_ALL_TO_ALL);
    int rc = PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                            rdispls, recvtype, comm);
    uint64_t got = per_rank_counts_bytes(recvtype, recvcounts, comm);
    uint64_t sent =
        sendbuf == MPI_IN_PLACE ? got : per_rank_counts_bytes(sendtype, sendcounts, comm);
    COLLECTIVE_END(POMPTRACE_MPI_OP_ALLTOALLV, comm, UNDEFINED, sent, got);
    return rc;
}

/* ---- communicators ------------------------------------------------------------------------ */

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
    ENTER("MPI_Comm_dup", POMPTRACE_MPI_FUNCTION);
    int rc = PMPI_Comm_dup(comm, newcomm);
    if (rc == MPI_SUCCESS) define_new_comm(comm, *newcomm);
    LEAVE();
    return rc;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
    ENTER("MPI_Comm_split", POMPTRACE_MPI_FUNCTION);
    int rc = PMPI_Comm_split(comm, color, key, newcomm);
    if (rc == MPI_SUCCESS) define_new_comm(comm, *newcomm);
    LEAVE();
    return rc;
}

int MPI_Comm_free(MPI_Comm *comm) {
    ENTER("MPI_Comm_free", POMPTRACE_MPI_FUNCTION);
    int rc = PMPI_Comm_free(comm);
    LEAVE();
    return rc;
}
