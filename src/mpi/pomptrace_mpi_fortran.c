/* libpomptrace_mpi's Fortran bindings: the symbols a Fortran program calls, as Open MPI names
 * them (`mpi_send`, `mpi_send_`, `mpi_send__`, `MPI_SEND` for mpif.h and `use mpi`,
 * `mpi_send_f08_` for `use mpi_f08`), for every call pomptrace_mpi.c wraps.
 *
 * The MPI library's own Fortran bindings call PMPI_* directly, so a program calling them would
 * pass the C wrappers by. Each binding here converts its arguments (handles with the f2c/c2f
 * functions, statuses, the 1-based indices of Fortran, LOGICALs, the Fortran MPI_BOTTOM and
 * MPI_IN_PLACE) and calls the C wrapper, which records the call once, for C and Fortran alike.
 * The mpi_f08 bindings take the same arguments as the mpif.h ones (derived-type handles hold
 * the integer handle, TYPE(MPI_Status) is the integer status array), except that `ierror` is
 * optional: a null pointer when the program leaves it out.
 */
#include <mpi.h>
#include <stdlib.h>

_Static_assert(sizeof(MPI_Fint) == sizeof(int),
               "Fortran INTEGER arrays (counts, displacements, ranks) are passed to C as int");

/* Open MPI's Fortran sentinels (null where the MPI library has none): MPI_BOTTOM,
 * MPI_IN_PLACE, MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE are these common blocks, which a
 * Fortran program may define itself (its copy then takes their names, and MPI_F_STATUS_IGNORE
 * may still point to the MPI library's own): compared by address, as Open MPI's own bindings
 * do. */
extern int mpi_fortran_bottom_ __attribute__((weak));
extern int mpi_fortran_in_place_ __attribute__((weak));
extern int mpi_fortran_status_ignore_ __attribute__((weak));
extern int mpi_fortran_statuses_ignore_ __attribute__((weak));

static int is_status_ignore(const MPI_Fint *fortran) {
    return fortran == MPI_F_STATUS_IGNORE ||
           (&mpi_fortran_status_ignore_ && (const void *)fortran == &mpi_fortran_status_ignore_);
}

static int is_statuses_ignore(const MPI_Fint *fortran) {
    return fortran == MPI_F_STATUSES_IGNORE ||
           (&mpi_fortran_statuses_ignore_ &&
            (const void *)fortran == &mpi_fortran_statuses_ignore_);
}

/* A Fortran buffer argument as C sees it. */
static void *buffer(void *fortran) {
    if (&mpi_fortran_bottom_ && fortran == (void *)&mpi_fortran_bottom_) return MPI_BOTTOM;
    if (&mpi_fortran_in_place_ && fortran == (void *)&mpi_fortran_in_place_) return MPI_IN_PLACE;
    return fortran;
}

#define COMM(f) PMPI_Comm_f2c(*(f))
#define TYPE(f) PMPI_Type_f2c(*(f))
#define OP(f) PMPI_Op_f2c(*(f))
#define GROUP(f) PMPI_Group_f2c(*(f))
/* A Fortran LOGICAL from a C truth value, and back. */
#define LOGICAL(c) ((c) ? 1 : 0)

/* Where a call puts a status for the program, and back into the program's Fortran one. */
static MPI_Status *status_in(MPI_Fint *fortran, MPI_Status *own) {
    return is_status_ignore(fortran) ? MPI_STATUS_IGNORE : own;
}

static void status_out(MPI_Status *c, MPI_Fint *fortran) {
    if (c != MPI_STATUS_IGNORE) PMPI_Status_c2f(c, fortran);
}

/* The number of INTEGERs in a Fortran status (MPI_STATUS_SIZE): C's status holds the same. */
#ifdef MPI_F_STATUS_SIZE
#define FORTRAN_STATUS_SIZE MPI_F_STATUS_SIZE
#else
#define FORTRAN_STATUS_SIZE (sizeof(MPI_Status) / sizeof(MPI_Fint))
#endif

/* A call's C requests and statuses (on the stack for a few). */
struct arrays {
    MPI_Request *requests;
    MPI_Status *statuses;
    MPI_Request small_requests[16];
    MPI_Status small_statuses[16];
};

/* 0 when memory ran out. */
static int arrays_in(struct arrays *a, int count, const MPI_Fint *requests, MPI_Fint *statuses) {
    if (count < 0) count = 0;
    a->requests = count <= 16 ? a->small_requests : malloc(sizeof(MPI_Request) * (size_t)count);
    /* (MPI_STATUSES_IGNORE may be a null pointer.) */
    int ignored = is_statuses_ignore(statuses);
    a->statuses = ignored ? MPI_STATUSES_IGNORE
                  : count <= 16 ? a->small_statuses
                                : malloc(sizeof(MPI_Status) * (size_t)count);
    if (!a->requests || (!ignored && !a->statuses)) {
        if (a->requests != a->small_requests) free(a->requests);
        a->requests = NULL;
        if (!ignored && a->statuses != a->small_statuses) free(a->statuses);
        a->statuses = MPI_STATUSES_IGNORE;
        return 0;
    }
    for (int i = 0; i < count; i++) a->requests[i] = PMPI_Request_f2c(requests[i]);
    return 1;
}

/* Gives the requests back, and the first `statuses` statuses. */
static void arrays_out(struct arrays *a, int count, MPI_Fint *requests, int statuses,
                       MPI_Fint *fortran_statuses) {
    for (int i = 0; a->requests && i < count; i++)
        requests[i] = PMPI_Request_c2f(a->requests[i]);
    if (a->statuses != MPI_STATUSES_IGNORE)
        for (int i = 0; i < statuses; i++)
            PMPI_Status_c2f(&a->statuses[i], fortran_statuses + (size_t)i * FORTRAN_STATUS_SIZE);
    if (a->requests != a->small_requests) free(a->requests);
    if (a->statuses != a->small_statuses && a->statuses != MPI_STATUSES_IGNORE) free(a->statuses);
}

/* One binding under all of Open MPI's names; `ierr` may be null (mpi_f08's optional ierror). */
#define FORTRAN(lower, UPPER, params, ...)                                      \
    static void fortran_##lower params {                                       \
        int rc = MPI_SUCCESS;                                                  \
        __VA_ARGS__;                                                           \
        if (ierr) *ierr = (MPI_Fint)rc;                                        \
    }                                                                          \
    void lower params __attribute__((alias("fortran_" #lower)));              \
    void lower##_ params __attribute__((alias("fortran_" #lower)));           \
    void lower##__ params __attribute__((alias("fortran_" #lower)));          \
    void UPPER params __attribute__((alias("fortran_" #lower)));              \
    void lower##_f08_ params __attribute__((alias("fortran_" #lower)));

/* ---- environment -------------------------------------------------------------------------- */

FORTRAN(mpi_init, MPI_INIT, (MPI_Fint * ierr), rc = MPI_Init(NULL, NULL))

FORTRAN(mpi_init_thread, MPI_INIT_THREAD,
        (MPI_Fint * required, MPI_Fint *provided, MPI_Fint *ierr), int p = 0;
        rc = MPI_Init_thread(NULL, NULL, (int)*required, &p); *provided = (MPI_Fint)p)

FORTRAN(mpi_finalize, MPI_FINALIZE, (MPI_Fint * ierr), rc = MPI_Finalize())

/* ---- point to point ----------------------------------------------------------------------- */

#define SEND_BINDING(lower, UPPER, c_call)                                                     \
    FORTRAN(lower, UPPER,                                                                      \
            (void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag,        \
             MPI_Fint *comm, MPI_Fint *ierr),                                                  \
            rc = c_call(buffer(buf), (int)*count, TYPE(type), (int)*dest, (int)*tag, COMM(comm)))

SEND_BINDING(mpi_send, MPI_SEND, MPI_Send)
SEND_BINDING(mpi_ssend, MPI_SSEND, MPI_Ssend)
SEND_BINDING(mpi_bsend, MPI_BSEND, MPI_Bsend)
SEND_BINDING(mpi_rsend, MPI_RSEND, MPI_Rsend)

FORTRAN(mpi_recv, MPI_RECV,
        (void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *source, MPI_Fint *tag,
         MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr),
        MPI_Status own;
        MPI_Status *s = status_in(status, &own);
        rc = MPI_Recv(buffer(buf), (int)*count, TYPE(type), (int)*source, (int)*tag, COMM(comm),
                      s);
        status_out(s, status))

FORTRAN(mpi_sendrecv, MPI_SENDRECV,
        (void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, MPI_Fint *dest,
         MPI_Fint *sendtag, void *recvbuf, MPI_Fint *recvcount, MPI_Fint *recvtype,
         MPI_Fint *source, MPI_Fint *recvtag, MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr),
        MPI_Status own;
        MPI_Status *s = status_in(status, &own);
        rc = MPI_Sendrecv(buffer(sendbuf), (int)*sendcount, TYPE(sendtype), (int)*dest,
                          (int)*sendtag, buffer(recvbuf), (int)*recvcount, TYPE(recvtype),
                          (int)*source, (int)*recvtag, COMM(comm), s);
        status_out(s, status))

FORTRAN(mpi_sendrecv_replace, MPI_SENDRECV_REPLACE,
        (void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *sendtag,
         MPI_Fint *source, MPI_Fint *recvtag, MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr),
        MPI_Status own;
        MPI_Status *s = status_in(status, &own);
        rc = MPI_Sendrecv_replace(buffer(buf), (int)*count, TYPE(type), (int)*dest,
                                  (int)*sendtag, (int)*source, (int)*recvtag, COMM(comm), s);
        status_out(s, status))

/* Isend, Irecv and the persistent *_init calls: (buf, count, type, peer, tag, comm, request). */
#define REQUEST_BINDING(lower, UPPER, c_call)                                                  \
    FORTRAN(lower, UPPER,                                                                      \
            (void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *peer, MPI_Fint *tag,        \
             MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr),                               \
            MPI_Request r = MPI_REQUEST_NULL;                                                  \
            rc = c_call(buffer(buf), (int)*count, TYPE(type), (int)*peer, (int)*tag,           \
                        COMM(comm), &r);                                                       \
            *request = PMPI_Request_c2f(r))

REQUEST_BINDING(mpi_isend, MPI_ISEND, MPI_Isend)
REQUEST_BINDING(mpi_issend, MPI_ISSEND, MPI_Issend)
REQUEST_BINDING(mpi_ibsend, MPI_IBSEND, MPI_Ibsend)
REQUEST_BINDING(mpi_irsend, MPI_IRSEND, MPI_Irsend)
REQUEST_BINDING(mpi_irecv, MPI_IRECV, MPI_Irecv)
REQUEST_BINDING(mpi_send_init, MPI_SEND_INIT, MPI_Send_init)
REQUEST_BINDING(mpi_ssend_init, MPI_SSEND_INIT, MPI_Ssend_init)
REQUEST_BINDING(mpi_bsend_init, MPI_BSEND_INIT, MPI_Bsend_init)
REQUEST_BINDING(mpi_rsend_init, MPI_RSEND_INIT, MPI_Rsend_init)
REQUEST_BINDING(mpi_recv_init, MPI_RECV_INIT, MPI_Recv_init)

FORTRAN(mpi_start, MPI_START, (MPI_Fint * request, MPI_Fint *ierr),
        MPI_Request r = PMPI_Request_f2c(*request);
        rc = MPI_Start(&r); *request = PMPI_Request_c2f(r))

FORTRAN(mpi_startall, MPI_STARTALL, (MPI_Fint * count, MPI_Fint *requests, MPI_Fint *ierr),
        struct arrays a;
        if (!arrays_in(&a, (int)*count, requests, MPI_F_STATUSES_IGNORE)) rc = MPI_ERR_NO_MEM;
        else rc = MPI_Startall((int)*count, a.requests);
        arrays_out(&a, (int)*count, requests, 0, NULL))

FORTRAN(mpi_request_free, MPI_REQUEST_FREE, (MPI_Fint * request, MPI_Fint *ierr),
        MPI_Request r = PMPI_Request_f2c(*request);
        rc = MPI_Request_free(&r); *request = PMPI_Request_c2f(r))

FORTRAN(mpi_cancel, MPI_CANCEL, (MPI_Fint * request, MPI_Fint *ierr),
        MPI_Request r = PMPI_Request_f2c(*request);
        rc = MPI_Cancel(&r))

/* ---- probes ------------------------------------------------------------------------------- */

FORTRAN(mpi_probe, MPI_PROBE,
        (MPI_Fint * source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr),
        MPI_Status own;
        MPI_Status *s = status_in(status, &own);
        rc = MPI_Probe((int)*source, (int)*tag, COMM(comm), s); status_out(s, status))

FORTRAN(mpi_iprobe, MPI_IPROBE,
        (MPI_Fint * source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *flag, MPI_Fint *status,
         MPI_Fint *ierr),
        MPI_Status own;
        MPI_Status *s = status_in(status, &own); int f = 0;
        rc = MPI_Iprobe((int)*source, (int)*tag, COMM(comm), &f, s); *flag = LOGICAL(f);
        if (f) status_out(s, status))

FORTRAN(mpi_mprobe, MPI_MPROBE,
        (MPI_Fint * source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *message, MPI_Fint *status,
         MPI_Fint *ierr),
        MPI_Status own;
        MPI_Status *s = status_in(status, &own); MPI_Message m = MPI_MESSAGE_NULL;
        rc = MPI_Mprobe((int)*source, (int)*tag, COMM(comm), &m, s);
        *message = PMPI_Message_c2f(m); status_out(s, status))

FORTRAN(mpi_improbe, MPI_IMPROBE,
        (MPI_Fint * source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *flag, MPI_Fint *message,
         MPI_Fint *status, MPI_Fint *ierr),
        MPI_Status own;
        MPI_Status *s = status_in(status, &own); MPI_Message m = MPI_MESSAGE_NULL; int f = 0;
        rc = MPI_Improbe((int)*source, (int)*tag, COMM(comm), &f, &m, s); *flag = LOGICAL(f);
        if (f) {
            *message = PMPI_Message_c2f(m);
            status_out(s, status);
        })

FORTRAN(mpi_mrecv, MPI_MRECV,
        (void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *message, MPI_Fint *status,
         MPI_Fint *ierr),
        MPI_Status own;
        MPI_Status *s = status_in(status, &own); MPI_Message m = PMPI_Message_f2c(*message);
        rc = MPI_Mrecv(buffer(buf), (int)*count, TYPE(type), &m, s);
        *message = PMPI_Message_c2f(m); status_out(s, status))

FORTRAN(mpi_imrecv, MPI_IMRECV,
        (void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *message, MPI_Fint *request,
         MPI_Fint *ierr),
        MPI_Message m = PMPI_Message_f2c(*message);
        MPI_Request r = MPI_REQUEST_NULL;
        rc = MPI_Imrecv(buffer(buf), (int)*count, TYPE(type), &m, &r);
        *message = PMPI_Message_c2f(m); *request = PMPI_Request_c2f(r))

/* ---- completion --------------------------------------------------------------------------- */

FORTRAN(mpi_wait, MPI_WAIT, (MPI_Fint * request, MPI_Fint *status, MPI_Fint *ierr),
        MPI_Status own;
        MPI_Status *s = status_in(status, &own); MPI_Request r = PMPI_Request_f2c(*request);
        rc = MPI_Wait(&r, s); *request = PMPI_Request_c2f(r); status_out(s, status))

FORTRAN(mpi_test, MPI_TEST,
        (MPI_Fint * request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr),
        MPI_Status own;
        MPI_Status *s = status_in(status, &own); MPI_Request r = PMPI_Request_f2c(*request);
        int f = 0; rc = MPI_Test(&r, &f, s); *request = PMPI_Request_c2f(r);
        *flag = LOGICAL(f); if (f) status_out(s, status))

FORTRAN(mpi_waitall, MPI_WAITALL,
        (MPI_Fint * count, MPI_Fint *requests, MPI_Fint *statuses, MPI_Fint *ierr),
        struct arrays a;
        int n = (int)*count;
        if (!arrays_in(&a, n, requests, statuses)) rc = MPI_ERR_NO_MEM;
        else rc = MPI_Waitall(n, a.requests, a.statuses);
        arrays_out(&a, n, requests, n, statuses))

FORTRAN(mpi_testall, MPI_TESTALL,
        (MPI_Fint * count, MPI_Fint *requests, MPI_Fint *flag, MPI_Fint *statuses,
         MPI_Fint *ierr),
        struct arrays a;
        int n = (int)*count; int f = 0;
        if (!arrays_in(&a, n, requests, statuses)) rc = MPI_ERR_NO_MEM;
        else rc = MPI_Testall(n, a.requests, &f, a.statuses);
        *flag = LOGICAL(f); arrays_out(&a, n, requests, f ? n : 0, statuses))

FORTRAN(mpi_waitany, MPI_WAITANY,
        (MPI_Fint * count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *status,
         MPI_Fint *ierr),
        struct arrays a;
        int n = (int)*count; int i = MPI_UNDEFINED; MPI_Status own;
        MPI_Status *s = status_in(status, &own);
        if (!arrays_in(&a, n, requests, MPI_F_STATUSES_IGNORE)) rc = MPI_ERR_NO_MEM;
        else rc = MPI_Waitany(n, a.requests, &i, s);
        arrays_out(&a, n, requests, 0, NULL);
        *index = i == MPI_UNDEFINED ? MPI_UNDEFINED : i + 1; status_out(s, status))

FORTRAN(mpi_testany, MPI_TESTANY,
        (MPI_Fint * count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *flag,
         MPI_Fint *status, MPI_Fint *ierr),
        struct arrays a;
        int n = (int)*count; int i = MPI_UNDEFINED; int f = 0; MPI_Status own;
        MPI_Status *s = status_in(status, &own);
        if (!arrays_in(&a, n, requests, MPI_F_STATUSES_IGNORE)) rc = MPI_ERR_NO_MEM;
        else rc = MPI_Testany(n, a.requests, &i, &f, s);
        arrays_out(&a, n, requests, 0, NULL); *flag = LOGICAL(f);
        *index = i == MPI_UNDEFINED ? MPI_UNDEFINED : i + 1; if (f) status_out(s, status))

/* Waitsome and Testsome: (incount, requests, outcount, indices, statuses). */
#define SOME_BINDING(lower, UPPER, c_call)                                                    \
    FORTRAN(lower, UPPER,                                                                     \
            (MPI_Fint * incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,   \
             MPI_Fint *statuses, MPI_Fint *ierr),                                             \
            struct arrays a;                                                                  \
            int n = (int)*incount; int out = MPI_UNDEFINED;                                   \
            if (!arrays_in(&a, n, requests, statuses)) rc = MPI_ERR_NO_MEM;                   \
            else rc = c_call(n, a.requests, &out, (int *)indices, a.statuses);                \
            int done = out == MPI_UNDEFINED ? 0 : out;                                        \
            arrays_out(&a, n, requests, done, statuses);                                      \
            for (int k = 0; k < done; k++) indices[k] += 1;                                   \
            *outcount = out)

SOME_BINDING(mpi_waitsome, MPI_WAITSOME, MPI_Waitsome)
SOME_BINDING(mpi_testsome, MPI_TESTSOME, MPI_Testsome)

/* ---- collectives -------------------------------------------------------------------------- */

/* The non-blocking form's request, given back to Fortran. */
#define REQUEST_OUT(request, r) *(request) = PMPI_Request_c2f(r)

FORTRAN(mpi_barrier, MPI_BARRIER, (MPI_Fint * comm, MPI_Fint *ierr), rc = MPI_Barrier(COMM(comm)))

FORTRAN(mpi_ibarrier, MPI_IBARRIER, (MPI_Fint * comm, MPI_Fint *request, MPI_Fint *ierr),
        MPI_Request r = MPI_REQUEST_NULL;
        rc = MPI_Ibarrier(COMM(comm), &r); REQUEST_OUT(request, r))

FORTRAN(mpi_bcast, MPI_BCAST,
        (void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *root, MPI_Fint *comm,
         MPI_Fint *ierr),
        rc = MPI_Bcast(buffer(buf), (int)*count, TYPE(type), (int)*root, COMM(comm)))

FORTRAN(mpi_ibcast, MPI_IBCAST,
        (void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *root, MPI_Fint *comm,
         MPI_Fint *request, MPI_Fint *ierr),
        MPI_Request r = MPI_REQUEST_NULL;
        rc = MPI_Ibcast(buffer(buf), (int)*count, TYPE(type), (int)*root, COMM(comm), &r);
        REQUEST_OUT(request, r))

FORTRAN(mpi_reduce, MPI_REDUCE,
        (void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op,
         MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr),
        rc = MPI_Reduce(buffer(sendbuf), buffer(recvbuf), (int)*count, TYPE(type), OP(op),
                        (int)*root, COMM(comm)))

FORTRAN(mpi_ireduce, MPI_IREDUCE,
        (void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op,
         MPI_Fint *root, MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr),
        MPI_Request r = MPI_REQUEST_NULL;
        rc = MPI_Ireduce(buffer(sendbuf), buffer(recvbuf), (int)*count, TYPE(type), OP(op),
                         (int)*root, COMM(comm), &r);
        REQUEST_OUT(request, r))

/* Allreduce, Scan and Exscan: (sendbuf, recvbuf, count, type, op, comm). */
#define REDUCTION_BINDING(lower, UPPER, c_call)                                               \
    FORTRAN(lower, UPPER,                                                                     \
            (void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op,     \
             MPI_Fint *comm, MPI_Fint *ierr),                                                 \
            rc = c_call(buffer(sendbuf), buffer(recvbuf), (int)*count, TYPE(type), OP(op),    \
                        COMM(comm)))
#define IREDUCTION_BINDING(lower, UPPER, c_call)                                              \
    FORTRAN(lower, UPPER,                                                                     \
            (void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op,     \
             MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr),                              \
            MPI_Request r = MPI_REQUEST_NULL;                                                 \
            rc = c_call(buffer(sendbuf), buffer(recvbuf), (int)*count, TYPE(type), OP(op),    \
                        COMM(comm), &r);                                                      \
            REQUEST_OUT(request, r))

REDUCTION_BINDING(mpi_allreduce, MPI_ALLREDUCE, MPI_Allreduce)
IREDUCTION_BINDING(mpi_iallreduce, MPI_IALLREDUCE, MPI_Iallreduce)
REDUCTION_BINDING(mpi_scan, MPI_SCAN, MPI_Scan)
IREDUCTION_BINDING(mpi_iscan, MPI_ISCAN, MPI_Iscan)
REDUCTION_BINDING(mpi_exscan, MPI_EXSCAN, MPI_Exscan)
IREDUCTION_BINDING(mpi_iexscan, MPI_IEXSCAN, MPI_Iexscan)

/* Gather and Scatter: (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root). */
#define ROOTED_BINDING(lower, UPPER, c_call)                                                  \
    FORTRAN(lower, UPPER,                                                                     \
            (void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, void *recvbuf,           \
             MPI_Fint *recvcount, MPI_Fint *recvtype, MPI_Fint *root, MPI_Fint *comm,         \
             MPI_Fint *ierr),                                                                 \
            rc = c_call(buffer(sendbuf), (int)*sendcount, TYPE(sendtype), buffer(recvbuf),    \
                        (int)*recvcount, TYPE(recvtype), (int)*root, COMM(comm)))
#define IROOTED_BINDING(lower, UPPER, c_call)                                                 \
    FORTRAN(lower, UPPER,                                                                     \
            (void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, void *recvbuf,           \
             MPI_Fint *recvcount, MPI_Fint *recvtype, MPI_Fint *root, MPI_Fint *comm,         \
             MPI_Fint *request, MPI_Fint *ierr),                                              \
            MPI_Request r = MPI_REQUEST_NULL;                                                 \
            rc = c_call(buffer(sendbuf), (int)*sendcount, TYPE(sendtype), buffer(recvbuf),    \
                        (int)*recvcount, TYPE(recvtype), (int)*root, COMM(comm), &r);         \
            REQUEST_OUT(request, r))

ROOTED_BINDING(mpi_gather, MPI_GATHER, MPI_Gather)
IROOTED_BINDING(mpi_igather, MPI_IGATHER, MPI_Igather)
ROOTED_BINDING(mpi_scatter, MPI_SCATTER, MPI_Scatter)
IROOTED_BINDING(mpi_iscatter, MPI_ISCATTER, MPI_Iscatter)

FORTRAN(mpi_gatherv, MPI_GATHERV,
        (void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, void *recvbuf,
         MPI_Fint *recvcounts, MPI_Fint *displs, MPI_Fint *recvtype, MPI_Fint *root,
         MPI_Fint *comm, MPI_Fint *ierr),
        rc = MPI_Gatherv(buffer(sendbuf), (int)*sendcount, TYPE(sendtype), buffer(recvbuf),
                         (const int *)recvcounts, (const int *)displs, TYPE(recvtype),
                         (int)*root, COMM(comm)))

FORTRAN(mpi_igatherv, MPI_IGATHERV,
        (void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, void *recvbuf,
         MPI_Fint *recvcounts, MPI_Fint *displs, MPI_Fint *recvtype, MPI_Fint *root,
         MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr),
        MPI_Request r = MPI_REQUEST_NULL;
        rc = MPI_Igatherv(buffer(sendbuf), (int)*sendcount, TYPE(sendtype), buffer(recvbuf),
                          (const int *)recvcounts, (const int *)displs, TYPE(recvtype),
                          (int)*root, COMM(comm), &r);
        REQUEST_OUT(request, r))

FORTRAN(mpi_scatterv, MPI_SCATTERV,
        (void *sendbuf, MPI_Fint *sendcounts, MPI_Fint *displs, MPI_Fint *sendtype,
         void *recvbuf, MPI_Fint *recvcount, MPI_Fint *recvtype, MPI_Fint *root, MPI_Fint *comm,
         MPI_Fint *ierr),
        rc = MPI_Scatterv(buffer(sendbuf), (const int *)sendcounts, (const int *)displs,
                          TYPE(sendtype), buffer(recvbuf), (int)*recvcount, TYPE(recvtype),
                          (int)*root, COMM(comm)))

FORTRAN(mpi_iscatterv, MPI_ISCATTERV,
        (void *sendbuf, MPI_Fint *sendcounts, MPI_Fint *displs, MPI_Fint *sendtype,
         void *recvbuf, MPI_Fint *recvcount, MPI_Fint *recvtype, MPI_Fint *root, MPI_Fint *comm,
         MPI_Fint *request, MPI_Fint *ierr),
        MPI_Request r = MPI_REQUEST_NULL;
        rc = MPI_Iscatterv(buffer(sendbuf), (const int *)sendcounts, (const int *)displs,
                           TYPE(sendtype), buffer(recvbuf), (int)*recvcount, TYPE(recvtype),
                           (int)*root, COMM(comm), &r);
        REQUEST_OUT(request, r))

/* Allgather and Alltoall: (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype). */
#define ALL_BINDING(lower, UPPER, c_call)                                                     \
    FORTRAN(lower, UPPER,                                                                     \
            (void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, void *recvbuf,           \
             MPI_Fint *recvcount, MPI_Fint *recvtype, MPI_Fint *comm, MPI_Fint *ierr),        \
            rc = c_call(buffer(sendbuf), (int)*sendcount, TYPE(sendtype), buffer(recvbuf),    \
                        (int)*recvcount, TYPE(recvtype), COMM(comm)))
#define IALL_BINDING(lower, UPPER, c_call)                                                    \
    FORTRAN(lower, UPPER,                                                                     \
            (void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, void *recvbuf,           \
             MPI_Fint *recvcount, MPI_Fint *recvtype, MPI_Fint *comm, MPI_Fint *request,      \
             MPI_Fint *ierr),                                                                 \
            MPI_Request r = MPI_REQUEST_NULL;                                                 \
            rc = c_call(buffer(sendbuf), (int)*sendcount, TYPE(sendtype), buffer(recvbuf),    \
                        (int)*recvcount, TYPE(recvtype), COMM(comm), &r);                     \
            REQUEST_OUT(request, r))

ALL_BINDING(mpi_allgather, MPI_ALLGATHER, MPI_Allgather)
IALL_BINDING(mpi_iallgather, MPI_IALLGATHER, MPI_Iallgather)
ALL_BINDING(mpi_alltoall, MPI_ALLTOALL, MPI_Alltoall)
IALL_BINDING(mpi_ialltoall, MPI_IALLTOALL, MPI_Ialltoall)

FORTRAN(mpi_allgatherv, MPI_ALLGATHERV,
        (void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, void *recvbuf,
         MPI_Fint *recvcounts, MPI_Fint *displs, MPI_Fint *recvtype, MPI_Fint *comm,
         MPI_Fint *ierr),
        rc = MPI_Allgatherv(buffer(sendbuf), (int)*sendcount, TYPE(sendtype), buffer(recvbuf),
                            (const int *)recvcounts, (const int *)displs, TYPE(recvtype),
                            COMM(comm)))

FORTRAN(mpi_iallgatherv, MPI_IALLGATHERV,
        (void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, void *recvbuf,
         MPI_Fint *recvcounts, MPI_Fint *displs, MPI_Fint *recvtype, MPI_Fint *comm,
         MPI_Fint *request, MPI_Fint *ierr),
        MPI_Request r = MPI_REQUEST_NULL;
        rc = MPI_Iallgatherv(buffer(sendbuf), (int)*sendcount, TYPE(sendtype),
                             buffer(recvbuf), (const int *)recvcounts, (const int *)displs,
                             TYPE(recvtype), COMM(comm), &r);
        REQUEST_OUT(request, r))

FORTRAN(mpi_alltoallv, MPI_ALLTOALLV,
        (void *sendbuf, MPI_Fint *sendcounts, MPI_Fint *sdispls, MPI_Fint *sendtype,
         void *recvbuf, MPI_Fint *recvcounts, MPI_Fint *rdispls, MPI_Fint *recvtype,
         MPI_Fint *comm, MPI_Fint *ierr),
        rc = MPI_Alltoallv(buffer(sendbuf), (const int *)sendcounts, (const int *)sdispls,
                           TYPE(sendtype), buffer(recvbuf), (const int *)recvcounts,
                           (const int *)rdispls, TYPE(recvtype), COMM(comm)))

FORTRAN(mpi_ialltoallv, MPI_IALLTOALLV,
        (void *sendbuf, MPI_Fint *sendcounts, MPI_Fint *sdispls, MPI_Fint *sendtype,
         void *recvbuf, MPI_Fint *recvcounts, MPI_Fint *rdispls, MPI_Fint *recvtype,
         MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr),
        MPI_Request r = MPI_REQUEST_NULL;
        rc = MPI_Ialltoallv(buffer(sendbuf), (const int *)sendcounts, (const int *)sdispls,
                            TYPE(sendtype), buffer(recvbuf), (const int *)recvcounts,
                            (const int *)rdispls, TYPE(recvtype), COMM(comm), &r);
        REQUEST_OUT(request, r))

FORTRAN(mpi_reduce_scatter, MPI_REDUCE_SCATTER,
        (void *sendbuf, void *recvbuf, MPI_Fint *recvcounts, MPI_Fint *type, MPI_Fint *op,
         MPI_Fint *comm, MPI_Fint *ierr),
        rc = MPI_Reduce_scatter(buffer(sendbuf), buffer(recvbuf), (const int *)recvcounts,
                                TYPE(type), OP(op), COMM(comm)))

FORTRAN(mpi_ireduce_scatter, MPI_IREDUCE_SCATTER,
        (void *sendbuf, void *recvbuf, MPI_Fint *recvcounts, MPI_Fint *type, MPI_Fint *op,
         MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr),
        MPI_Request r = MPI_REQUEST_NULL;
        rc = MPI_Ireduce_scatter(buffer(sendbuf), buffer(recvbuf), (const int *)recvcounts,
                                 TYPE(type), OP(op), COMM(comm), &r);
        REQUEST_OUT(request, r))

FORTRAN(mpi_reduce_scatter_block, MPI_REDUCE_SCATTER_BLOCK,
        (void *sendbuf, void *recvbuf, MPI_Fint *recvcount, MPI_Fint *type, MPI_Fint *op,
         MPI_Fint *comm, MPI_Fint *ierr),
        rc = MPI_Reduce_scatter_block(buffer(sendbuf), buffer(recvbuf), (int)*recvcount,
                                      TYPE(type), OP(op), COMM(comm)))

FORTRAN(mpi_ireduce_scatter_block, MPI_IREDUCE_SCATTER_BLOCK,
        (void *sendbuf, void *recvbuf, MPI_Fint *recvcount, MPI_Fint *type, MPI_Fint *op,
         MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr),
        MPI_Request r = MPI_REQUEST_NULL;
        rc = MPI_Ireduce_scatter_block(buffer(sendbuf), buffer(recvbuf), (int)*recvcount,
                                       TYPE(type), OP(op), COMM(comm), &r);
        REQUEST_OUT(request, r))

/* ---- communicators ------------------------------------------------------------------------ */

/* The new communicator, given back to Fortran. */
#define COMM_OUT(fortran, c) *(fortran) = PMPI_Comm_c2f(c)

FORTRAN(mpi_comm_dup, MPI_COMM_DUP, (MPI_Fint * comm, MPI_Fint *newcomm, MPI_Fint *ierr),
        MPI_Comm c = MPI_COMM_NULL;
        rc = MPI_Comm_dup(COMM(comm), &c); COMM_OUT(newcomm, c))

FORTRAN(mpi_comm_split, MPI_COMM_SPLIT,
        (MPI_Fint * comm, MPI_Fint *color, MPI_Fint *key, MPI_Fint *newcomm, MPI_Fint *ierr),
        MPI_Comm c = MPI_COMM_NULL;
        rc = MPI_Comm_split(COMM(comm), (int)*color, (int)*key, &c); COMM_OUT(newcomm, c))

FORTRAN(mpi_comm_create, MPI_COMM_CREATE,
        (MPI_Fint * comm, MPI_Fint *group, MPI_Fint *newcomm, MPI_Fint *ierr),
        MPI_Comm c = MPI_COMM_NULL;
        rc = MPI_Comm_create(COMM(comm), GROUP(group), &c); COMM_OUT(newcomm, c))

FORTRAN(mpi_comm_create_group, MPI_COMM_CREATE_GROUP,
        (MPI_Fint * comm, MPI_Fint *group, MPI_Fint *tag, MPI_Fint *newcomm, MPI_Fint *ierr),
        MPI_Comm c = MPI_COMM_NULL;
        rc = MPI_Comm_create_group(COMM(comm), GROUP(group), (int)*tag, &c);
        COMM_OUT(newcomm, c))

FORTRAN(mpi_comm_free, MPI_COMM_FREE, (MPI_Fint * comm, MPI_Fint *ierr),
        MPI_Comm c = COMM(comm);
        rc = MPI_Comm_free(&c); COMM_OUT(comm, c))

FORTRAN(mpi_intercomm_create, MPI_INTERCOMM_CREATE,
        (MPI_Fint * local_comm, MPI_Fint *local_leader, MPI_Fint *peer_comm,
         MPI_Fint *remote_leader, MPI_Fint *tag, MPI_Fint *newintercomm, MPI_Fint *ierr),
        MPI_Comm c = MPI_COMM_NULL;
        rc = MPI_Intercomm_create(COMM(local_comm), (int)*local_leader, COMM(peer_comm),
                                  (int)*remote_leader, (int)*tag, &c);
        COMM_OUT(newintercomm, c))

FORTRAN(mpi_intercomm_merge, MPI_INTERCOMM_MERGE,
        (MPI_Fint * intercomm, MPI_Fint *high, MPI_Fint *newintracomm, MPI_Fint *ierr),
        MPI_Comm c = MPI_COMM_NULL;
        rc = MPI_Intercomm_merge(COMM(intercomm), *high != 0, &c); COMM_OUT(newintracomm, c))
