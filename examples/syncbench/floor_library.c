/*
 * floor_library.c -- the floor as a POMP2 library: every POMP2 call the instrumented syncbench
 * makes reads the TSC and stores the records pomptrace writes for it, at pomptrace's sizes
 * (floor_records.h), into a buffer of the calling thread's own, and does nothing else: no
 * definitions, no team structure, no trace. examples/syncbench.rs builds it as a
 * libpomptrace.so of its own and runs the same instrumented binary against it (the *floor
 * library* configuration): what any tracer that time-stamps the same calls at the same call
 * sites costs, construct by construct and at every thread count, beside what pomptrace costs.
 *
 * Its buffer is small enough to stay in the core's own cache (LIBRARY_BUFFER_BYTES), faulted in
 * at a thread's first record and used round and round: the figure is the bare cost of the
 * stamps and stores, a lower bound for any tracer. It leaves out what the trace's bytes cost on
 * their way to memory (syncbench's floor variants store into 64 MiB, and into fresh memory)
 * and any writing of them. The lock wrappers run the real OpenMP lock functions; task handles
 * are numbered per thread as pomptrace numbers them.
 *
 * Built with -DFLOOR_LIBRARY_COUNTER_CLOCK (syncbench --floor-clock counter), its time stamps
 * come from a counter of the thread's own instead of the TSC: the same stores and calls without
 * the clock reads, which tells how much of the floor is reading the clock.
 */
#include <stdint.h>

#include <omp.h>

#include "floor_records.h"
#include "opari2/pomp2_lib.h"

#ifdef FLOOR_LIBRARY_COUNTER_CLOCK
static __thread unsigned long long counter_clock;
static inline unsigned long long library_clock(void) { return ++counter_clock; }
static inline unsigned long long library_clock_after_acquiring(void) { return ++counter_clock; }
#else
static inline unsigned long long library_clock(void) { return read_tsc(); }
static inline unsigned long long library_clock_after_acquiring(void)
{
    return read_tsc_after_acquiring();
}
#endif

/* Well inside a core's L2 (512 KiB and more on current x86 cores). */
#define LIBRARY_BUFFER_BYTES ((size_t)256 << 10)

static __thread unsigned char *buffer;
static __thread size_t used = LIBRARY_BUFFER_BYTES;
static __thread POMP2_Task_handle current_task;
static __thread POMP2_Task_handle tasks_created;
/* Acquisition orders, as ThreadAcquireLock needs them (one counter for every lock). */
static long lock_order;

static inline unsigned char *room(size_t bytes)
{
    return floor_ring_room(&buffer, &used, LIBRARY_BUFFER_BYTES, bytes);
}

static inline void record(unsigned long long time, int timed, size_t bytes)
{
    floor_encode(room(floor_record_size(timed, bytes)), time, timed, bytes);
}

/* An Enter or Leave at a time of its own. */
static inline void region_event(void) { record(library_clock(), 1, FLOOR_REGION_BYTES); }

/* Two records at one time: the second shares the first's TIMESTAMP. */
static inline void two_records(unsigned long long time, size_t first, size_t second)
{
    record(time, 1, first);
    record(time, 0, second);
}

void POMP2_Assign_handle(POMP2_Region_handle *pomp2_handle, const char *ctc_string)
{
    (void)pomp2_handle;
    (void)ctc_string;
}

/* ---- parallel regions: the records at the times pomptrace writes them ------------------------ */

void POMP2_Parallel_fork(POMP2_Region_handle *pomp2_handle, int if_clause, int num_threads,
                         POMP2_Task_handle *pomp2_old_task, const char *ctc_string)
{
    (void)pomp2_handle;
    (void)if_clause;
    (void)num_threads;
    (void)ctc_string;
    *pomp2_old_task = current_task;
    record(library_clock(), 1, FLOOR_FORK_BYTES);
}

void POMP2_Parallel_begin(POMP2_Region_handle *pomp2_handle)
{
    (void)pomp2_handle;
    unsigned long long t = library_clock();
    two_records(t, FLOOR_TEAM_BEGIN_BYTES, FLOOR_REGION_BYTES);
}

void POMP2_Parallel_end(POMP2_Region_handle *pomp2_handle)
{
    (void)pomp2_handle;
    unsigned long long t = library_clock();
    two_records(t, FLOOR_REGION_BYTES, FLOOR_TEAM_END_BYTES);
}

void POMP2_Parallel_join(POMP2_Region_handle *pomp2_handle, POMP2_Task_handle pomp2_old_task)
{
    (void)pomp2_handle;
    current_task = pomp2_old_task;
    record(library_clock(), 1, FLOOR_JOIN_BYTES);
}

/* ---- one Enter or Leave each ----------------------------------------------------------------- */

#define ENTER_WITH_CTC(name)                                                                  \
    void name(POMP2_Region_handle *pomp2_handle, const char *ctc_string)                      \
    {                                                                                         \
        (void)pomp2_handle;                                                                   \
        (void)ctc_string;                                                                     \
        region_event();                                                                       \
    }
#define ONE_EVENT(name)                                                                       \
    void name(POMP2_Region_handle *pomp2_handle)                                              \
    {                                                                                         \
        (void)pomp2_handle;                                                                   \
        region_event();                                                                       \
    }

ENTER_WITH_CTC(POMP2_For_enter)
ONE_EVENT(POMP2_For_exit)
ENTER_WITH_CTC(POMP2_Single_enter)
ONE_EVENT(POMP2_Single_exit)
ONE_EVENT(POMP2_Single_begin)
ONE_EVENT(POMP2_Single_end)
ENTER_WITH_CTC(POMP2_Critical_enter)
ONE_EVENT(POMP2_Critical_exit)
ENTER_WITH_CTC(POMP2_Ordered_enter)
ONE_EVENT(POMP2_Ordered_exit)
ONE_EVENT(POMP2_Ordered_begin)
ONE_EVENT(POMP2_Ordered_end)
ENTER_WITH_CTC(POMP2_Atomic_enter)
ONE_EVENT(POMP2_Atomic_exit)

/* Barriers and taskwait: the Enter saves the encountering task, the Leave puts it back. */
static inline void wait_enter(POMP2_Task_handle *pomp2_old_task)
{
    *pomp2_old_task = current_task;
    region_event();
}

static inline void wait_exit(POMP2_Task_handle pomp2_old_task)
{
    current_task = pomp2_old_task;
    region_event();
}

#define WAIT_ENTER_WITH_CTC(name)                                                             \
    void name(POMP2_Region_handle *pomp2_handle, POMP2_Task_handle *pomp2_old_task,           \
              const char *ctc_string)                                                         \
    {                                                                                         \
        (void)pomp2_handle;                                                                   \
        (void)ctc_string;                                                                     \
        wait_enter(pomp2_old_task);                                                           \
    }
#define WAIT_ENTER(name)                                                                      \
    void name(POMP2_Region_handle *pomp2_handle, POMP2_Task_handle *pomp2_old_task)           \
    {                                                                                         \
        (void)pomp2_handle;                                                                   \
        wait_enter(pomp2_old_task);                                                           \
    }
#define WAIT_EXIT(name)                                                                       \
    void name(POMP2_Region_handle *pomp2_handle, POMP2_Task_handle pomp2_old_task)            \
    {                                                                                         \
        (void)pomp2_handle;                                                                   \
        wait_exit(pomp2_old_task);                                                            \
    }

WAIT_ENTER_WITH_CTC(POMP2_Barrier_enter)
WAIT_EXIT(POMP2_Barrier_exit)
WAIT_ENTER(POMP2_Implicit_barrier_enter)
WAIT_EXIT(POMP2_Implicit_barrier_exit)
WAIT_ENTER_WITH_CTC(POMP2_Taskwait_begin)
WAIT_EXIT(POMP2_Taskwait_end)

/* ---- critical sections and locks: ThreadAcquireLock / ThreadReleaseLock around them ---------- */

/* An acquisition: ThreadAcquireLock with the next acquisition order and the Enter, at the time
 * after it (fenced, as pomptrace reads it after the locked instruction that took the lock). */
static inline void acquired(void)
{
    unsigned long long t = library_clock_after_acquiring();
    lock_order += 1;
    two_records(t, FLOOR_LOCK_BYTES, FLOOR_REGION_BYTES);
}

void POMP2_Critical_begin(POMP2_Region_handle *pomp2_handle)
{
    (void)pomp2_handle;
    acquired();
}

void POMP2_Critical_end(POMP2_Region_handle *pomp2_handle)
{
    (void)pomp2_handle;
    unsigned long long t = library_clock();
    two_records(t, FLOOR_REGION_BYTES, FLOOR_LOCK_BYTES);
}

void POMP2_Init_lock(omp_lock_t *lock)
{
    region_event();
    omp_init_lock(lock);
    region_event();
}

void POMP2_Destroy_lock(omp_lock_t *lock)
{
    region_event();
    omp_destroy_lock(lock);
    region_event();
}

void POMP2_Set_lock(omp_lock_t *lock)
{
    region_event();
    omp_set_lock(lock);
    acquired();
}

void POMP2_Unset_lock(omp_lock_t *lock)
{
    unsigned long long t = library_clock();
    omp_unset_lock(lock);
    two_records(t, FLOOR_REGION_BYTES, FLOOR_LOCK_BYTES);
    region_event();
}

/* ---- tasks ----------------------------------------------------------------------------------- */

void POMP2_Task_create_begin(POMP2_Region_handle *pomp2_handle, POMP2_Task_handle *pomp2_new_task,
                             POMP2_Task_handle *pomp2_old_task, int pomp2_if,
                             const char *ctc_string)
{
    (void)pomp2_handle;
    (void)pomp2_if;
    (void)ctc_string;
    *pomp2_old_task = current_task;
    tasks_created += 1;
    *pomp2_new_task = ((POMP2_Task_handle)omp_get_thread_num() << 32) | tasks_created;
    unsigned long long t = library_clock();
    two_records(t, FLOOR_REGION_BYTES, FLOOR_TASK_BYTES);
}

void POMP2_Task_create_end(POMP2_Region_handle *pomp2_handle, POMP2_Task_handle pomp2_old_task)
{
    (void)pomp2_handle;
    current_task = pomp2_old_task;
    region_event();
}

void POMP2_Task_begin(POMP2_Region_handle *pomp2_handle, POMP2_Task_handle pomp2_task)
{
    (void)pomp2_handle;
    current_task = pomp2_task;
    unsigned long long t = library_clock();
    two_records(t, FLOOR_TASK_BYTES, FLOOR_REGION_BYTES);
}

void POMP2_Task_end(POMP2_Region_handle *pomp2_handle)
{
    (void)pomp2_handle;
    unsigned long long t = library_clock();
    two_records(t, FLOOR_REGION_BYTES, FLOOR_TASK_BYTES);
}
