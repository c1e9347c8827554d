/* libpomptrace_mpi: PMPI wrappers that record MPI calls into pomptrace's trace.
 *
 * Built by mpicc (MPI handle types differ between implementations, so this part is C and is
 * compiled against the MPI in use); it records through the internal C API of libpomptrace
 * (include/pomptrace/pomptrace_mpi.h), which never sees an MPI type. `cargo build` builds it
 * wherever an MPI compiler wrapper is found, and `pomptrace mpicc ...` links it; by hand, link
 * it before the MPI library, or load it with LD_PRELOAD:
 *
 *   mpicc ... -L$LIB -lpomptrace_mpi -lpomptrace -Wl,-rpath,$LIB
 *   LD_PRELOAD=$LIB/libpomptrace_mpi.so mpirun ... ./app
 *
 * Every wrapped call is a region of paradigm MPI; point-to-point messages become
 * MpiSend/MpiIsend/MpiIsendComplete/MpiRecv/MpiIrecvRequest/MpiIrecv events (persistent
 * requests: at each MPI_Start), a tested request that is not complete MpiRequestTest, a
 * cancelled one MpiRequestCancelled; blocking collectives MpiCollectiveBegin/End, non-blocking
 * ones NonBlockingCollectiveRequest at the call and NonBlockingCollectiveComplete where a wait
 * or test completes them (OTF2 3.0). Communicators carry their Comm id as an MPI attribute; a
 * communicator created by a collective call (dup, split, create, merge, ...) gets a name its
 * members agree on (the creating rank's world rank and a counter, broadcast over the new
 * communicator), so that the job's unification makes one Comm of it. Requests are kept in a
 * table until they complete (persistent ones until they are freed). The Fortran bindings
 * (pomptrace_mpi_fortran.c) call these wrappers. Thread-safe for MPI_THREAD_MULTIPLE: the
 * tables are locked, the ids atomic.
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

/* Defines `comm` with the members of `group` (its own group, or an intercommunicator's
 * remote group: the ranks that its messages' peers name). */
static uint32_t define_comm_of_group(MPI_Comm comm, MPI_Group group, const char *name,
                                     uint32_t parent) {
    MPI_Group world_group;
    int size = 0;
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
    PMPI_Group_free(&world_group);
    return id;
}

/* The group a communicator's peer ranks index: its own, or an intercommunicator's remote one. */
static MPI_Group peer_group(MPI_Comm comm) {
    MPI_Group group;
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter)
        PMPI_Comm_remote_group(comm, &group);
    else
        PMPI_Comm_group(comm, &group);
    return group;
}

static uint32_t define_comm(MPI_Comm comm, const char *name, uint32_t parent) {
    MPI_Group group = peer_group(comm);
    uint32_t id = define_comm_of_group(comm, group, name, parent);
    PMPI_Group_free(&group);
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

/* An intercommunicator between the same two groups: how many this process has seen, by a
 * hash of both groups' world ranks. Every member of a group takes part in each creation, in
 * the same order, so all count alike. */
static unsigned intercomm_sequence(uint64_t groups) {
    enum { KEPT = 64 };
    static struct {
        uint64_t groups;
        unsigned seen;
    } counts[KEPT];
    static unsigned used = 0;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    unsigned sequence = 0;
    pthread_mutex_lock(&lock);
    unsigned i = 0;
    while (i < used && counts[i].groups != groups) i++;
    if (i == used && used < KEPT) counts[used++].groups = groups;
    if (i < used) sequence = counts[i].seen++;
    pthread_mutex_unlock(&lock);
    return sequence;
}

/* FNV-1a over the world ranks of a group's members, continuing from `hash`. */
static uint64_t hash_group(uint64_t hash, MPI_Group group) {
    MPI_Group world_group;
    int size = 0;
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    PMPI_Group_size(group, &size);
    for (int i = 0; i < size; i++) {
        int world = 0;
        PMPI_Group_translate_ranks(group, 1, &i, world_group, &world);
        for (int b = 0; b < 4; b++) {
            hash ^= (uint64_t)(((unsigned)world >> (8 * b)) & 0xff);
            hash *= 0x100000001b3ull;
        }
    }
    PMPI_Group_free(&world_group);
    return hash ^ 0xff; /* separates the local group from the remote one */
}

/* An intercommunicator is defined on each side as a Comm of its remote group: its peer ranks
 * index that group, so every message names the right process in both readers (the python
 * reader cannot read OTF2's InterComm definition). The name says which two groups it joins,
 * seen from which side. */
static void define_new_intercomm(MPI_Comm parent, MPI_Comm comm) {
    MPI_Group local, remote;
    PMPI_Comm_group(comm, &local);
    PMPI_Comm_remote_group(comm, &remote);
    uint64_t groups = hash_group(hash_group(0xcbf29ce484222325ull, local), remote);
    char name[96];
    snprintf(name, sizeof name, "MPI intercommunicator %016llx.%u (remote group)",
             (unsigned long long)groups, intercomm_sequence(groups));
    define_comm_of_group(comm, remote, name, comm_id(parent));
    PMPI_Group_free(&local);
    PMPI_Group_free(&remote);
}

/* A communicator just created by a collective call: its members agree on a name (rank 0 of
 * it picks one and broadcasts it). */
static void define_new_comm(MPI_Comm parent, MPI_Comm comm) {
    if (comm == MPI_COMM_NULL) return;
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter) {
        define_new_intercomm(parent, comm);
        return;
    }
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

enum { SEND_REQUEST = 1, RECV_REQUEST = 2, COLLECTIVE_REQUEST = 3 };
#define REQUEST_BUCKETS 1024

/* What a collective call did: its OTF2 operation, Comm, root and this process's bytes. */
struct collective {
    uint32_t op;
    uint32_t comm;
    uint32_t root;
    uint64_t sent;
    uint64_t received;
};

struct tracked {
    MPI_Request handle;
    /* The id of the communication in flight; 0 while a persistent request is inactive. */
    uint64_t id;
    int kind;
    int persistent;
    uint32_t comm;
    /* A persistent send's message, given again at every MPI_Start. */
    uint32_t peer;
    uint32_t tag;
    uint64_t bytes;
    /* A non-blocking collective's, recorded at its completion. */
    struct collective collective;
    struct tracked *next;
};

static struct tracked *buckets[REQUEST_BUCKETS];
static pthread_mutex_t requests_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t next_request = 1;

static uint64_t new_request_id(void) {
    return __atomic_fetch_add(&next_request, 1, __ATOMIC_RELAXED);
}

static size_t bucket_of(MPI_Request handle) {
    uint64_t bits = 0;
    memcpy(&bits, &handle, sizeof handle < sizeof bits ? sizeof handle : sizeof bits);
    bits ^= bits >> 17;
    bits *= 0x9e3779b97f4a7c15ull;
    return (size_t)(bits >> 54) % REQUEST_BUCKETS;
}

/* Adds `entry` (its handle set) to the table; a communication in flight gets a new id, which
 * is returned (0 when memory ran out: the request goes untraced). */
static uint64_t track_entry(const struct tracked *entry) {
    struct tracked *t = malloc(sizeof *t);
    if (!t) return 0;
    *t = *entry;
    if (!t->persistent) t->id = new_request_id();
    size_t b = bucket_of(t->handle);
    pthread_mutex_lock(&requests_lock);
    t->next = buckets[b];
    buckets[b] = t;
    pthread_mutex_unlock(&requests_lock);
    return t->id;
}

static uint64_t track(MPI_Request handle, int kind, uint32_t comm) {
    struct tracked t = {.handle = handle, .kind = kind, .comm = comm};
    return track_entry(&t);
}

/* The table's slot holding `handle`, or NULL; the caller holds the lock. */
static struct tracked **slot_of(MPI_Request handle) {
    for (struct tracked **p = &buckets[bucket_of(handle)]; *p; p = &(*p)->next)
        if ((*p)->handle == handle) return p;
    return NULL;
}

/* A communication of `handle` ended (completed, or a wait/test gave it back inactive): copies
 * what was tracked into `out` and forgets it (a persistent request becomes inactive, kept for
 * its next start). 0 when nothing of it was in flight. */
static int finish(MPI_Request handle, struct tracked *out) {
    int found = 0;
    pthread_mutex_lock(&requests_lock);
    struct tracked **p = slot_of(handle);
    if (p && (*p)->id != 0) {
        struct tracked *t = *p;
        *out = *t;
        found = 1;
        if (t->persistent) {
            t->id = 0;
        } else {
            *p = t->next;
            free(t);
        }
    }
    pthread_mutex_unlock(&requests_lock);
    return found;
}

/* The request is freed: whatever it was, it is no longer tracked. */
static void forget(MPI_Request handle) {
    pthread_mutex_lock(&requests_lock);
    struct tracked **p = slot_of(handle);
    if (p) {
        struct tracked *t = *p;
        *p = t->next;
        free(t);
    }
    pthread_mutex_unlock(&requests_lock);
}

/* A test call found the request not complete: MpiRequestTest when it is in flight. */
static void tested(MPI_Request handle) {
    if (handle == MPI_REQUEST_NULL) return;
    uint64_t id = 0;
    pthread_mutex_lock(&requests_lock);
    struct tracked **p = slot_of(handle);
    if (p) id = (*p)->id;
    pthread_mutex_unlock(&requests_lock);
    if (id != 0) pomptrace_mpi_request_test(id);
}

/* MPI_Start of a persistent request: its communication gets a new id and its start event. */
static void started(MPI_Request handle) {
    struct tracked t;
    int found = 0;
    pthread_mutex_lock(&requests_lock);
    struct tracked **p = slot_of(handle);
    if (p && (*p)->persistent) {
        (*p)->id = new_request_id();
        t = **p;
        found = 1;
    }
    pthread_mutex_unlock(&requests_lock);
    if (!found) return;
    if (t.kind == SEND_REQUEST)
        pomptrace_mpi_isend(t.peer, t.comm, t.tag, t.bytes, t.id);
    else
        pomptrace_mpi_irecv_request(t.id);
}

/* A request completed (handle as it was before the completing call) with `status`. */
static void completed(MPI_Request handle, MPI_Status *status) {
    struct tracked t;
    if (handle == MPI_REQUEST_NULL || !finish(handle, &t)) return;
    if (t.kind == COLLECTIVE_REQUEST) {
        pomptrace_mpi_nbc_complete(t.collective.op, t.collective.comm, t.collective.root,
                                   t.collective.sent, t.collective.received, t.id);
        return;
    }
    int cancelled = 0;
    PMPI_Test_cancelled(status, &cancelled);
    if (cancelled) {
        pomptrace_mpi_request_cancelled(t.id);
        return;
    }
    if (t.kind == SEND_REQUEST) {
        pomptrace_mpi_isend_complete(t.id);
        return;
    }
    if (status->MPI_SOURCE == MPI_PROC_NULL) return;
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
    if (count < 0) count = 0;
    c->saved = count <= 16 ? c->small_saved : malloc(sizeof(MPI_Request) * (size_t)count);
    c->statuses = program_statuses != MPI_STATUSES_IGNORE ? program_statuses
                  : count <= 16 ? c->small_statuses
                                : malloc(sizeof(MPI_Status) * (size_t)count);
    if (c->saved)
        for (int i = 0; i < count; i++) c->saved[i] = requests[i];
}

/* MpiRequestTest for every request of a test call still in flight after it. */
static void completion_tested(struct completion *c, int count) {
    for (int i = 0; c->saved && i < count; i++) tested(c->saved[i]);
}

static void completion_end(struct completion *c, MPI_Status *program_statuses) {
    if (c->saved != c->small_saved) free(c->saved);
    if (c->statuses != program_statuses && c->statuses != c->small_statuses) free(c->statuses);
}

/* ---- probed messages ---------------------------------------------------------------------- */

/* The Comm of each message that MPI_Mprobe/MPI_Improbe matched, until it is received. */
struct probed {
    MPI_Message message;
    uint32_t comm;
    struct probed *next;
};

static struct probed *probed_messages;
static pthread_mutex_t probed_lock = PTHREAD_MUTEX_INITIALIZER;

static void probed(MPI_Message message, MPI_Comm comm) {
    if (message == MPI_MESSAGE_NULL || message == MPI_MESSAGE_NO_PROC) return;
    struct probed *p = malloc(sizeof *p);
    if (!p) return;
    p->message = message;
    p->comm = comm_id(comm);
    pthread_mutex_lock(&probed_lock);
    p->next = probed_messages;
    probed_messages = p;
    pthread_mutex_unlock(&probed_lock);
}

/* The Comm of a probed message, now being received (UNDEFINED when it was not probed here). */
static uint32_t received_probed(MPI_Message message) {
    uint32_t comm = UNDEFINED;
    pthread_mutex_lock(&probed_lock);
    for (struct probed **p = &probed_messages; *p; p = &(*p)->next) {
        if ((*p)->message == message) {
            struct probed *found = *p;
            comm = found->comm;
            *p = found->next;
            free(found);
            break;
        }
    }
    pthread_mutex_unlock(&probed_lock);
    return comm;
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

/* A blocking send of any mode: the MpiSend as the call begins. */
#define BLOCKING_SEND(NAME, PMPI_CALL)                                                         \
    int NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) { \
        ENTER_SEND(#NAME, dest, comm, tag, type_bytes(type, count));                           \
        int rc = PMPI_CALL(buf, count, type, dest, tag, comm);                                 \
        LEAVE();                                                                               \
        return rc;                                                                             \
    }

BLOCKING_SEND(MPI_Send, PMPI_Send)
BLOCKING_SEND(MPI_Ssend, PMPI_Ssend)
BLOCKING_SEND(MPI_Bsend, PMPI_Bsend)
BLOCKING_SEND(MPI_Rsend, PMPI_Rsend)

/* Records what a blocking receive got, with the Leave of its region. */
static void leave_received(uint32_t region, int rc, MPI_Status *status, uint32_t comm) {
    if (rc != MPI_SUCCESS || status->MPI_SOURCE == MPI_PROC_NULL) {
        pomptrace_mpi_leave(region);
        return;
    }
    int bytes = 0;
    PMPI_Get_count(status, MPI_BYTE, &bytes);
    pomptrace_mpi_leave_recv(region, (uint32_t)status->MPI_SOURCE, comm,
                             (uint32_t)status->MPI_TAG, bytes == MPI_UNDEFINED ? 0 : (uint64_t)bytes);
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status) {
    ENTER("MPI_Recv", POMPTRACE_MPI_POINT_TO_POINT);
    MPI_Status own;
    MPI_Status *s = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = PMPI_Recv(buf, count, type, source, tag, comm, s);
    leave_received(region_id, rc, s, comm_id(comm));
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
    leave_received(region_id, rc, s, comm_id(comm));
    return rc;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status) {
    ENTER_SEND("MPI_Sendrecv_replace", dest, comm, sendtag, type_bytes(type, count));
    MPI_Status own;
    MPI_Status *s = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, s);
    leave_received(region_id, rc, s, comm_id(comm));
    return rc;
}

/* A non-blocking send of any mode: the MpiIsend as the call ends. */
#define NONBLOCKING_SEND(NAME, PMPI_CALL)                                                      \
    int NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,  \
             MPI_Request *request) {                                                           \
        ENTER(#NAME, POMPTRACE_MPI_POINT_TO_POINT);                                            \
        int rc = PMPI_CALL(buf, count, type, dest, tag, comm, request);                        \
        if (rc == MPI_SUCCESS && dest != MPI_PROC_NULL) {                                      \
            uint32_t c = comm_id(comm);                                                        \
            uint64_t id = track(*request, SEND_REQUEST, c);                                    \
            pomptrace_mpi_leave_isend(region_id, (uint32_t)dest, c, (uint32_t)tag,             \
                                      type_bytes(type, count), id);                            \
        } else {                                                                               \
            LEAVE();                                                                           \
        }                                                                                      \
        return rc;                                                                             \
    }

NONBLOCKING_SEND(MPI_Isend, PMPI_Isend)
NONBLOCKING_SEND(MPI_Issend, PMPI_Issend)
NONBLOCKING_SEND(MPI_Ibsend, PMPI_Ibsend)
NONBLOCKING_SEND(MPI_Irsend, PMPI_Irsend)

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

/* ---- persistent requests ------------------------------------------------------------------ */

/* A persistent send of any mode: kept inactive until MPI_Start. */
#define PERSISTENT_SEND(NAME, PMPI_CALL)                                                       \
    int NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,  \
             MPI_Request *request) {                                                           \
        ENTER(#NAME, POMPTRACE_MPI_POINT_TO_POINT);                                            \
        int rc = PMPI_CALL(buf, count, type, dest, tag, comm, request);                        \
        if (rc == MPI_SUCCESS && dest != MPI_PROC_NULL) {                                      \
            struct tracked t = {.handle = *request,                                            \
                                .kind = SEND_REQUEST,                                          \
                                .persistent = 1,                                               \
                                .comm = comm_id(comm),                                         \
                                .peer = (uint32_t)dest,                                        \
                                .tag = (uint32_t)tag,                                          \
                                .bytes = type_bytes(type, count)};                             \
            track_entry(&t);                                                                   \
        }                                                                                      \
        LEAVE();                                                                               \
        return rc;                                                                             \
    }

PERSISTENT_SEND(MPI_Send_init, PMPI_Send_init)
PERSISTENT_SEND(MPI_Ssend_init, PMPI_Ssend_init)
PERSISTENT_SEND(MPI_Bsend_init, PMPI_Bsend_init)
PERSISTENT_SEND(MPI_Rsend_init, PMPI_Rsend_init)

int MPI_Recv_init(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                  MPI_Request *request) {
    ENTER("MPI_Recv_init", POMPTRACE_MPI_POINT_TO_POINT);
    int rc = PMPI_Recv_init(buf, count, type, source, tag, comm, request);
    if (rc == MPI_SUCCESS && source != MPI_PROC_NULL) {
        struct tracked t = {
            .handle = *request, .kind = RECV_REQUEST, .persistent = 1, .comm = comm_id(comm)};
        track_entry(&t);
    }
    LEAVE();
    return rc;
}

int MPI_Start(MPI_Request *request) {
    ENTER("MPI_Start", POMPTRACE_MPI_POINT_TO_POINT);
    MPI_Request handle = *request;
    int rc = PMPI_Start(request);
    if (rc == MPI_SUCCESS) started(handle);
    LEAVE();
    return rc;
}

int MPI_Startall(int count, MPI_Request requests[]) {
    ENTER("MPI_Startall", POMPTRACE_MPI_POINT_TO_POINT);
    int rc = PMPI_Startall(count, requests);
    if (rc == MPI_SUCCESS)
        for (int i = 0; i < count; i++) started(requests[i]);
    LEAVE();
    return rc;
}

int MPI_Request_free(MPI_Request *request) {
    ENTER("MPI_Request_free", POMPTRACE_MPI_POINT_TO_POINT);
    MPI_Request handle = *request;
    int rc = PMPI_Request_free(request);
    if (rc == MPI_SUCCESS) forget(handle);
    LEAVE();
    return rc;
}

/* The cancellation shows where the request completes (MpiRequestCancelled). */
int MPI_Cancel(MPI_Request *request) {
    ENTER("MPI_Cancel", POMPTRACE_MPI_POINT_TO_POINT);
    int rc = PMPI_Cancel(request);
    LEAVE();
    return rc;
}

/* ---- probes ------------------------------------------------------------------------------- */

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) {
    ENTER("MPI_Probe", POMPTRACE_MPI_POINT_TO_POINT);
    int rc = PMPI_Probe(source, tag, comm, status);
    LEAVE();
    return rc;
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status) {
    ENTER("MPI_Iprobe", POMPTRACE_MPI_POINT_TO_POINT);
    int rc = PMPI_Iprobe(source, tag, comm, flag, status);
    LEAVE();
    return rc;
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status) {
    ENTER("MPI_Mprobe", POMPTRACE_MPI_POINT_TO_POINT);
    int rc = PMPI_Mprobe(source, tag, comm, message, status);
    if (rc == MPI_SUCCESS) probed(*message, comm);
    LEAVE();
    return rc;
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                MPI_Status *status) {
    ENTER("MPI_Improbe", POMPTRACE_MPI_POINT_TO_POINT);
    int rc = PMPI_Improbe(source, tag, comm, flag, message, status);
    if (rc == MPI_SUCCESS && *flag) probed(*message, comm);
    LEAVE();
    return rc;
}

/* A matched message's receive: MpiRecv from what its status says, on the probe's Comm. */
int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
              MPI_Status *status) {
    ENTER("MPI_Mrecv", POMPTRACE_MPI_POINT_TO_POINT);
    uint32_t comm = received_probed(*message);
    MPI_Status own;
    MPI_Status *s = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = PMPI_Mrecv(buf, count, type, message, s);
    leave_received(region_id, comm == UNDEFINED ? MPI_ERR_OTHER : rc, s, comm);
    return rc;
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
               MPI_Request *request) {
    ENTER("MPI_Imrecv", POMPTRACE_MPI_POINT_TO_POINT);
    uint32_t comm = received_probed(*message);
    int rc = PMPI_Imrecv(buf, count, type, message, request);
    if (rc == MPI_SUCCESS && comm != UNDEFINED)
        pomptrace_mpi_leave_irecv_request(region_id, track(*request, RECV_REQUEST, comm));
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
    if (rc == MPI_SUCCESS) {
        if (*flag)
            completed(saved, s);
        else
            tested(saved);
    }
    LEAVE();
    return rc;
}

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]) {
    ENTER("MPI_Testall", POMPTRACE_MPI_POINT_TO_POINT);
    struct completion c;
    completion_begin(&c, count, requests, statuses);
    int rc = c.statuses ? PMPI_Testall(count, requests, flag, c.statuses)
                        : PMPI_Testall(count, requests, flag, statuses);
    if (rc == MPI_SUCCESS && c.saved && c.statuses) {
        if (*flag)
            for (int i = 0; i < count; i++) completed(c.saved[i], &c.statuses[i]);
        else
            completion_tested(&c, count);
    }
    completion_end(&c, statuses);
    LEAVE();
    return rc;
}

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status) {
    ENTER("MPI_Testany", POMPTRACE_MPI_POINT_TO_POINT);
    struct completion c;
    completion_begin(&c, count, requests, MPI_STATUSES_IGNORE);
    MPI_Status own;
    MPI_Status *s = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = PMPI_Testany(count, requests, index, flag, s);
    if (rc == MPI_SUCCESS && c.saved) {
        if (*flag && *index != MPI_UNDEFINED)
            completed(c.saved[*index], s);
        else
            completion_tested(&c, count);
    }
    completion_end(&c, MPI_STATUSES_IGNORE);
    LEAVE();
    return rc;
}

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[]) {
    ENTER("MPI_Testsome", POMPTRACE_MPI_POINT_TO_POINT);
    struct completion c;
    completion_begin(&c, incount, requests, statuses);
    int rc = c.statuses ? PMPI_Testsome(incount, requests, outcount, indices, c.statuses)
                        : PMPI_Testsome(incount, requests, outcount, indices, statuses);
    if (rc == MPI_SUCCESS && c.saved && c.statuses && *outcount != MPI_UNDEFINED) {
        for (int i = 0; i < *outcount; i++) completed(c.saved[indices[i]], &c.statuses[i]);
        /* Those completed are no longer in flight: the rest were tested. */
        completion_tested(&c, incount);
    }
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

/* What each collective moves at this rank (the blocking and the non-blocking form alike). */

static struct collective collective(uint32_t op, MPI_Comm comm, int root, uint64_t sent,
                                    uint64_t received) {
    struct collective c = {op, comm_id(comm), (uint32_t)root, sent, received};
    return c;
}

static struct collective barrier_info(MPI_Comm comm) {
    return collective(POMPTRACE_MPI_OP_BARRIER, comm, UNDEFINED, 0, 0);
}

static struct collective bcast_info(int count, MPI_Datatype type, int root, MPI_Comm comm) {
    uint64_t bytes = type_bytes(type, count);
    int is_root = comm_rank(comm) == root;
    return collective(POMPTRACE_MPI_OP_BCAST, comm, root, is_root ? bytes : 0,
                      is_root ? 0 : bytes);
}

static struct collective reduce_info(int count, MPI_Datatype type, int root, MPI_Comm comm) {
    uint64_t bytes = type_bytes(type, count);
    return collective(POMPTRACE_MPI_OP_REDUCE, comm, root, bytes,
                      comm_rank(comm) == root ? bytes : 0);
}

static struct collective allreduce_info(int count, MPI_Datatype type, MPI_Comm comm) {
    uint64_t bytes = type_bytes(type, count);
    return collective(POMPTRACE_MPI_OP_ALLREDUCE, comm, UNDEFINED, bytes, bytes);
}

static struct collective gather_info(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                     int recvcount, MPI_Datatype recvtype, int root,
                                     MPI_Comm comm) {
    return collective(POMPTRACE_MPI_OP_GATHER, comm, root,
                      own_block_bytes(sendbuf, sendtype, sendcount, recvtype, recvcount),
                      AT_ROOT(comm, root, per_rank_bytes(recvtype, recvcount, comm)));
}

static struct collective gatherv_info(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                      const int recvcounts[], MPI_Datatype recvtype, int root,
                                      MPI_Comm comm) {
    return collective(POMPTRACE_MPI_OP_GATHERV, comm, root,
                      sendbuf == MPI_IN_PLACE ? 0 : type_bytes(sendtype, sendcount),
                      AT_ROOT(comm, root, per_rank_counts_bytes(recvtype, recvcounts, comm)));
}

static struct collective scatter_info(int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                      int recvcount, MPI_Datatype recvtype, int root,
                                      MPI_Comm comm) {
    return collective(POMPTRACE_MPI_OP_SCATTER, comm, root,
                      AT_ROOT(comm, root, per_rank_bytes(sendtype, sendcount, comm)),
                      own_block_bytes(recvbuf, recvtype, recvcount, sendtype, sendcount));
}

static struct collective scatterv_info(const int sendcounts[], MPI_Datatype sendtype,
                                       void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                       int root, MPI_Comm comm) {
    return collective(POMPTRACE_MPI_OP_SCATTERV, comm, root,
                      AT_ROOT(comm, root, per_rank_counts_bytes(sendtype, sendcounts, comm)),
                      recvbuf == MPI_IN_PLACE ? 0 : type_bytes(recvtype, recvcount));
}

static struct collective allgather_info(const void *sendbuf, int sendcount,
                                        MPI_Datatype sendtype, int recvcount,
                                        MPI_Datatype recvtype, MPI_Comm comm) {
    return collective(POMPTRACE_MPI_OP_ALLGATHER, comm, UNDEFINED,
                      own_block_bytes(sendbuf, sendtype, sendcount, recvtype, recvcount),
                      per_rank_bytes(recvtype, recvcount, comm));
}

static struct collective allgatherv_info(const void *sendbuf, int sendcount,
                                         MPI_Datatype sendtype, const int recvcounts[],
                                         MPI_Datatype recvtype, MPI_Comm comm) {
    return collective(POMPTRACE_MPI_OP_ALLGATHERV, comm, UNDEFINED,
                      sendbuf == MPI_IN_PLACE ? 0 : type_bytes(sendtype, sendcount),
                      per_rank_counts_bytes(recvtype, recvcounts, comm));
}

static struct collective alltoall_info(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    uint64_t got = per_rank_bytes(recvtype, recvcount, comm);
    return collective(POMPTRACE_MPI_OP_ALLTOALL, comm, UNDEFINED,
                      sendbuf == MPI_IN_PLACE ? got : per_rank_bytes(sendtype, sendcount, comm),
                      got);
}

static struct collective alltoallv_info(const void *sendbuf, const int sendcounts[],
                                        MPI_Datatype sendtype, const int recvcounts[],
                                        MPI_Datatype recvtype, MPI_Comm comm) {
    uint64_t got = per_rank_counts_bytes(recvtype, recvcounts, comm);
    return collective(
        POMPTRACE_MPI_OP_ALLTOALLV, comm, UNDEFINED,
        sendbuf == MPI_IN_PLACE ? got : per_rank_counts_bytes(sendtype, sendcounts, comm), got);
}

/* Every rank contributes the whole vector and gets its own block of the result. */
static struct collective reduce_scatter_info(const int recvcounts[], MPI_Datatype type,
                                             MPI_Comm comm) {
    return collective(POMPTRACE_MPI_OP_REDUCE_SCATTER, comm, UNDEFINED,
                      per_rank_counts_bytes(type, recvcounts, comm),
                      type_bytes(type, recvcounts ? recvcounts[comm_rank(comm)] : 0));
}

static struct collective reduce_scatter_block_info(int recvcount, MPI_Datatype type,
                                                   MPI_Comm comm) {
    return collective(POMPTRACE_MPI_OP_REDUCE_SCATTER_BLOCK, comm, UNDEFINED,
                      per_rank_bytes(type, recvcount, comm), type_bytes(type, recvcount));
}

static struct collective scan_info(int count, MPI_Datatype type, MPI_Comm comm) {
    uint64_t bytes = type_bytes(type, count);
    return collective(POMPTRACE_MPI_OP_SCAN, comm, UNDEFINED, bytes, bytes);
}

/* Rank 0's result of an exclusive scan is undefined: it receives nothing. */
static struct collective exscan_info(int count, MPI_Datatype type, MPI_Comm comm) {
    uint64_t bytes = type_bytes(type, count);
    return collective(POMPTRACE_MPI_OP_EXSCAN, comm, UNDEFINED, bytes,
                      comm_rank(comm) == 0 ? 0 : bytes);
}

/* A blocking collective: Enter and MpiCollectiveBegin at one time as it begins, MpiCollectiveEnd
 * (what INFO says) and Leave at one time as it ends. */
#define BLOCKING_COLLECTIVE(NAME, ROLE, CALL, INFO)                                        \
    REGION(region, NAME, ROLE)                                                             \
    pomptrace_mpi_enter_collective(region_id);                                             \
    int rc = CALL;                                                                         \
    struct collective c = INFO;                                                            \
    pomptrace_mpi_leave_collective(region_id, c.op, c.comm, c.root, c.sent, c.received);   \
    return rc

/* A non-blocking collective: its request is tracked with what INFO says, recorded as
 * NonBlockingCollectiveRequest as the call ends and NonBlockingCollectiveComplete where it
 * completes. */
#define NONBLOCKING_COLLECTIVE(NAME, ROLE, CALL, INFO)                                     \
    ENTER(NAME, ROLE);                                                                     \
    int rc = CALL;                                                                         \
    if (rc == MPI_SUCCESS) {                                                               \
        struct tracked t = {.handle = *request, .kind = COLLECTIVE_REQUEST, .collective = INFO}; \
        t.comm = t.collective.comm;                                                        \
        pomptrace_mpi_leave_nbc_request(region_id, track_entry(&t));                       \
    } else {                                                                               \
        LEAVE();                                                                           \
    }                                                                                      \
    return rc

int MPI_Barrier(MPI_Comm comm) {
    BLOCKING_COLLECTIVE("MPI_Barrier", POMPTRACE_MPI_BARRIER, PMPI_Barrier(comm),
                        barrier_info(comm));
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request) {
    NONBLOCKING_COLLECTIVE("MPI_Ibarrier", POMPTRACE_MPI_BARRIER, PMPI_Ibarrier(comm, request),
                           barrier_info(comm));
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
    BLOCKING_COLLECTIVE("MPI_Bcast", POMPTRACE_MPI_ONE_TO_ALL,
                        PMPI_Bcast(buffer, count, type, root, comm),
                        bcast_info(count, type, root, comm));
}

int MPI_Ibcast(void *buffer, int count, MPI_Datatype type, int root, MPI_Comm comm,
               MPI_Request *request) {
    NONBLOCKING_COLLECTIVE("MPI_Ibcast", POMPTRACE_MPI_ONE_TO_ALL,
                           PMPI_Ibcast(buffer, count, type, root, comm, request),
                           bcast_info(count, type, root, comm));
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm) {
    BLOCKING_COLLECTIVE("MPI_Reduce", POMPTRACE_MPI_ALL_TO_ONE,
                        PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm),
                        reduce_info(count, type, root, comm));
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request *request) {
    NONBLOCKING_COLLECTIVE("MPI_Ireduce", POMPTRACE_MPI_ALL_TO_ONE,
                           PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, request),
                           reduce_info(count, type, root, comm));
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
    BLOCKING_COLLECTIVE("MPI_Allreduce", POMPTRACE_MPI_ALL_TO_ALL,
                        PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm),
                        allreduce_info(count, type, comm));
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, MPI_Request *request) {
    NONBLOCKING_COLLECTIVE("MPI_Iallreduce", POMPTRACE_MPI_ALL_TO_ALL,
                           PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request),
                           allreduce_info(count, type, comm));
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    BLOCKING_COLLECTIVE(
        "MPI_Gather", POMPTRACE_MPI_ALL_TO_ONE,
        PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
        gather_info(sendbuf, sendcount, sendtype, recvcount, recvtype, root, comm));
}

int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request *request) {
    NONBLOCKING_COLLECTIVE("MPI_Igather", POMPTRACE_MPI_ALL_TO_ONE,
                           PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                        recvtype, root, comm, request),
                           gather_info(sendbuf, sendcount, sendtype, recvcount, recvtype, root,
                                       comm));
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm) {
    BLOCKING_COLLECTIVE("MPI_Gatherv", POMPTRACE_MPI_ALL_TO_ONE,
                        PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                     recvtype, root, comm),
                        gatherv_info(sendbuf, sendcount, sendtype, recvcounts, recvtype, root,
                                     comm));
}

int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request *request) {
    NONBLOCKING_COLLECTIVE("MPI_Igatherv", POMPTRACE_MPI_ALL_TO_ONE,
                           PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                         displs, recvtype, root, comm, request),
                           gatherv_info(sendbuf, sendcount, sendtype, recvcounts, recvtype,
                                        root, comm));
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    BLOCKING_COLLECTIVE(
        "MPI_Scatter", POMPTRACE_MPI_ONE_TO_ALL,
        PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
        scatter_info(sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}

int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request) {
    NONBLOCKING_COLLECTIVE("MPI_Iscatter", POMPTRACE_MPI_ONE_TO_ALL,
                           PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                         recvtype, root, comm, request),
                           scatter_info(sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                                        comm));
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm) {
    BLOCKING_COLLECTIVE("MPI_Scatterv", POMPTRACE_MPI_ONE_TO_ALL,
                        PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                      recvtype, root, comm),
                        scatterv_info(sendcounts, sendtype, recvbuf, recvcount, recvtype, root,
                                      comm));
}

int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *request) {
    NONBLOCKING_COLLECTIVE("MPI_Iscatterv", POMPTRACE_MPI_ONE_TO_ALL,
                           PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf,
                                          recvcount, recvtype, root, comm, request),
                           scatterv_info(sendcounts, sendtype, recvbuf, recvcount, recvtype,
                                         root, comm));
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    BLOCKING_COLLECTIVE(
        "MPI_Allgather", POMPTRACE_MPI_ALL_TO_ALL,
        PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
        allgather_info(sendbuf, sendcount, sendtype, recvcount, recvtype, comm));
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    NONBLOCKING_COLLECTIVE("MPI_Iallgather", POMPTRACE_MPI_ALL_TO_ALL,
                           PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                           recvtype, comm, request),
                           allgather_info(sendbuf, sendcount, sendtype, recvcount, recvtype,
                                          comm));
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm) {
    BLOCKING_COLLECTIVE("MPI_Allgatherv", POMPTRACE_MPI_ALL_TO_ALL,
                        PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                        displs, recvtype, comm),
                        allgatherv_info(sendbuf, sendcount, sendtype, recvcounts, recvtype,
                                        comm));
}

int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request) {
    NONBLOCKING_COLLECTIVE("MPI_Iallgatherv", POMPTRACE_MPI_ALL_TO_ALL,
                           PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                            displs, recvtype, comm, request),
                           allgatherv_info(sendbuf, sendcount, sendtype, recvcounts, recvtype,
                                           comm));
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    BLOCKING_COLLECTIVE(
        "MPI_Alltoall", POMPTRACE_MPI_ALL_TO_ALL,
        PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
        alltoall_info(sendbuf, sendcount, sendtype, recvcount, recvtype, comm));
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    NONBLOCKING_COLLECTIVE("MPI_Ialltoall", POMPTRACE_MPI_ALL_TO_ALL,
                           PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                          recvtype, comm, request),
                           alltoall_info(sendbuf, sendcount, sendtype, recvcount, recvtype,
                                         comm));
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
    BLOCKING_COLLECTIVE("MPI_Alltoallv", POMPTRACE_MPI_ALL_TO_ALL,
                        PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                       recvcounts, rdispls, recvtype, comm),
                        alltoallv_info(sendbuf, sendcounts, sendtype, recvcounts, recvtype,
                                       comm));
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request *request) {
    NONBLOCKING_COLLECTIVE("MPI_Ialltoallv", POMPTRACE_MPI_ALL_TO_ALL,
                           PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                           recvcounts, rdispls, recvtype, comm, request),
                           alltoallv_info(sendbuf, sendcounts, sendtype, recvcounts, recvtype,
                                          comm));
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    BLOCKING_COLLECTIVE("MPI_Reduce_scatter", POMPTRACE_MPI_ALL_TO_ALL,
                        PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm),
                        reduce_scatter_info(recvcounts, type, comm));
}

int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request *request) {
    NONBLOCKING_COLLECTIVE(
        "MPI_Ireduce_scatter", POMPTRACE_MPI_ALL_TO_ALL,
        PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm, request),
        reduce_scatter_info(recvcounts, type, comm));
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    BLOCKING_COLLECTIVE("MPI_Reduce_scatter_block", POMPTRACE_MPI_ALL_TO_ALL,
                        PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm),
                        reduce_scatter_block_info(recvcount, type, comm));
}

int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                              MPI_Request *request) {
    NONBLOCKING_COLLECTIVE(
        "MPI_Ireduce_scatter_block", POMPTRACE_MPI_ALL_TO_ALL,
        PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm, request),
        reduce_scatter_block_info(recvcount, type, comm));
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
             MPI_Comm comm) {
    BLOCKING_COLLECTIVE("MPI_Scan", POMPTRACE_MPI_OTHER_COLLECTIVE,
                        PMPI_Scan(sendbuf, recvbuf, count, type, op, comm),
                        scan_info(count, type, comm));
}

int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
              MPI_Comm comm, MPI_Request *request) {
    NONBLOCKING_COLLECTIVE("MPI_Iscan", POMPTRACE_MPI_OTHER_COLLECTIVE,
                           PMPI_Iscan(sendbuf, recvbuf, count, type, op, comm, request),
                           scan_info(count, type, comm));
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm) {
    BLOCKING_COLLECTIVE("MPI_Exscan", POMPTRACE_MPI_OTHER_COLLECTIVE,
                        PMPI_Exscan(sendbuf, recvbuf, count, type, op, comm),
                        exscan_info(count, type, comm));
}

int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                MPI_Comm comm, MPI_Request *request) {
    NONBLOCKING_COLLECTIVE("MPI_Iexscan", POMPTRACE_MPI_OTHER_COLLECTIVE,
                           PMPI_Iexscan(sendbuf, recvbuf, count, type, op, comm, request),
                           exscan_info(count, type, comm));
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

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm) {
    ENTER("MPI_Comm_create", POMPTRACE_MPI_FUNCTION);
    int rc = PMPI_Comm_create(comm, group, newcomm);
    if (rc == MPI_SUCCESS) define_new_comm(comm, *newcomm);
    LEAVE();
    return rc;
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm) {
    ENTER("MPI_Comm_create_group", POMPTRACE_MPI_FUNCTION);
    int rc = PMPI_Comm_create_group(comm, group, tag, newcomm);
    if (rc == MPI_SUCCESS) define_new_comm(comm, *newcomm);
    LEAVE();
    return rc;
}

int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                         int remote_leader, int tag, MPI_Comm *newintercomm) {
    ENTER("MPI_Intercomm_create", POMPTRACE_MPI_FUNCTION);
    int rc = PMPI_Intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag,
                                   newintercomm);
    if (rc == MPI_SUCCESS) define_new_comm(local_comm, *newintercomm);
    LEAVE();
    return rc;
}

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm) {
    ENTER("MPI_Intercomm_merge", POMPTRACE_MPI_FUNCTION);
    int rc = PMPI_Intercomm_merge(intercomm, high, newintracomm);
    /* No parent: each side knows the intercommunicator as a Comm of its own (the remote
     * group), and the merged one must be one Comm for both. */
    if (rc == MPI_SUCCESS) define_new_comm(MPI_COMM_NULL, *newintracomm);
    LEAVE();
    return rc;
}

int MPI_Comm_free(MPI_Comm *comm) {
    ENTER("MPI_Comm_free", POMPTRACE_MPI_FUNCTION);
    int rc = PMPI_Comm_free(comm);
    LEAVE();
    return rc;
}
