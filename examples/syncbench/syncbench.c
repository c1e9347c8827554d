/*
 * syncbench.c -- time per OpenMP synchronisation construct, in the spirit of the EPCC
 * syncbench (our own code, written for pomptrace). examples/syncbench.rs builds it twice, plain
 * and instrumented with opari2 + pomptrace, runs the instrumented build with recording off
 * (POMPTRACE_ENABLE=0) and on, and prints the cost of recording per construct and per event.
 *
 * Method (EPCC's): each construct runs in an inner loop of `inner` repetitions, each doing a
 * fixed busy delay (about 0.1 us, calibrated at start unless --delay fixes it) inside or next
 * to the construct. A
 * reference loop does the same delays without the construct. The inner count is doubled until
 * a test takes at least the target time (the shorter of two runs); then `outer` repetitions of
 * test and reference are timed, interleaved. The time per construct of one repetition is
 *     (test time - mean reference time) / inner,
 * and the program reports its mean (us=), standard deviation (sd_us=) and minimum (min_us=) over
 * the outer repetitions. Loops that share `inner` constructs among the team (critical, lock,
 * atomic) give each thread inner / threads of them; `inner` is always a multiple of the team
 * size.
 *
 * Usage: syncbench [--quick] [--only NAME[,NAME...]] [--inner N] [--outer N] [--delay N]
 *                  [--warm-up MS] [--paired | --recording-off | --floor]
 *        syncbench --list
 *   --quick   10 timed repetitions instead of 40 (each test takes at least 5 ms)
 *   --only    run only the named constructs
 *   --inner   fix the inner count (rounded up to a multiple of the team size; no doubling)
 *   --outer   number of timed repetitions
 *   --delay   fix the iterations of the delay loop (no calibration), so that several runs
 *             time the same delay
 *   --warm-up run each construct for MS milliseconds (with recording as the run has it) before
 *             its timed repetitions: with pomptrace streaming its chunks, the repetitions then
 *             fill buffers used before instead of a thread's first, fresh ones
 *   --list    print `construct=NAME events=E floor=0|1` for every construct and exit
 *   --paired  (instrumented build) switch recording on and off (POMP2_On / POMP2_Off) from one
 *             repetition to the next, in pairs (on, off) and (off, on) by turns, and print
 *             paired_us=: the mean over the pairs of (on - off) per construct. Both sides of a
 *             difference run in the same process within milliseconds, so neither the host's
 *             slow and fast periods nor what differs from process to process (placement of
 *             threads and memory) enter it. Recording off keeps the team structure of parallel
 *             regions (fork, team begin/end, the region's Enter/Leave, join): paired_us= is the
 *             cost of the events POMP2_Off leaves out.
 *   --recording-off  (instrumented build) POMP2_Off before the first construct: the events
 *             written then are those recording off keeps (for counting them).
 *   --floor   (instrumented build, recording off) alternate, in the same pairs, each construct
 *             that has a floor variant (see "the floor" below: parallel, barrier, for,
 *             critical, lock, atomic) with that variant, and print floor_us= and
 *             fresh_floor_us=: the mean over the pairs of (floor variant - construct), the cost
 *             of bare time stamps and record stores at the places pomptrace records, into
 *             mapped and into fresh memory (a run of `outer` repetitions each).
 *   (us=, sd_us= and min_us= of a --paired or --floor run mix the two sides of its pairs.)
 * Output: first `tsc_ns=T delay=D` (T: ns per bare TSC read, best of 5 timings, the floor an
 * event is compared with; D: the delay iterations), then one line per construct:
 *   construct=NAME threads=N us=X events=E sd_us=S min_us=M inner=I outer=O [paired_us=P]
 *   [floor_us=F fresh_floor_us=G]
 * events= is the constant table below: POMP2 events per construct that pomptrace records on
 * the encountering / critical-path thread. The plain build prints the same number.
 *
 * ---- Events per construct (src/ops/constructs.rs, docs/pomp2-semantics.md 4.2/4.3) -----------
 *
 *   parallel  8  master: ThreadFork, ThreadTeamBegin, Enter(parallel), Enter(implicit barrier),
 *                Leave(implicit barrier), Leave(parallel), ThreadTeamEnd, ThreadJoin
 *                (each other team member: the 6 in the middle). The implicit-barrier pair
 *                wraps an explicit `omp barrier` that OPARI2 inserts before the region's end,
 *                so an instrumented region synchronises twice (also for reduction).
 *   parallel_for 10  master: as parallel, with Enter(for) after Enter(parallel) and Leave(for)
 *                before Leave(parallel), and no second barrier: OPARI2 turns the combined
 *                construct into `parallel` + `for nowait` + one explicit barrier, the loop's
 *                implicit one (each other team member: 8). EPCC's PARALLEL FOR.
 *   for       4  each thread: Enter(for), Enter(implicit barrier), Leave(implicit barrier),
 *                Leave(for)
 *   barrier   2  each thread: Enter(barrier), Leave(barrier)
 *   single    6  executor: Enter(single), Enter(single sblock), Leave(single sblock),
 *                Enter(implicit barrier), Leave(implicit barrier), Leave(single)
 *                (the other threads: 4, no sblock)
 *   critical  6  Enter(critical), ThreadAcquireLock, Enter(critical sblock),
 *                Leave(critical sblock), ThreadReleaseLock, Leave(critical)
 *   lock      6  Enter(omp_set_lock), ThreadAcquireLock, Leave(omp_set_lock),
 *                Enter(omp_unset_lock), ThreadReleaseLock, Leave(omp_unset_lock)
 *   ordered   4  Enter(ordered), Enter(ordered sblock), Leave(ordered sblock), Leave(ordered)
 *                (one per loop iteration; the enclosing `for` is entered once per test)
 *   atomic    2  Enter(atomic), Leave(atomic)
 *   reduction 8  as parallel (OPARI2 leaves the reduction clause to the compiler)
 *   task      7  creator: Enter(create task), ThreadTaskCreate, Leave(create task);
 *                executor: ThreadTaskSwitch, Enter(task), Leave(task), ThreadTaskComplete.
 *                The creator waits (taskwait) after every 32 x threads tasks, which keeps
 *                libgomp from running tasks at creation (it does so beyond 64 x threads queued
 *                tasks; such a task costs 8 events, all on the creator). The taskwait itself,
 *                Enter(taskwait) [ThreadTaskSwitch] Leave(taskwait), adds at most 3 events per
 *                batch, i.e. <= 0.1 per task, which the table leaves out.
 *
 * examples/syncbench.rs checks the table on every run: it counts the events actually written
 * per construct in traces of the two runs below and flags a difference.
 * How the table was first verified (gcc 12.2 / libgomp, opari2 2.0.7, pomptrace as of then):
 * the instrumented build (built as examples/syncbench.rs does) was run for each construct with
 *     OMP_NUM_THREADS=T syncbench --only NAME --outer 1 --inner A     and with --inner 2A
 * (T = 1 and 4, A = 4096; A = 1000 for parallel and reduction), and `otf2-print` of each trace
 * was counted per location, record type and region name (PROGRAM_BEGIN/END left out). The
 * difference between the two runs divided by A is the count per construct, free of the warm-up,
 * the references and the enclosing parallel region. Results:
 *   T=1: exactly the table, record by record, on the one location (task: 7.094 = 7 + 3/32, the
 *        taskwait of each batch of 32 tasks with its ThreadTaskSwitch; no task ran undeferred).
 *   T=4: parallel and reduction 8 on the master and 6 on each worker; for 4 and barrier 2 on
 *        every location; single 18 in all = 6 (executor) + 3 x 4, the executor changing from
 *        construct to construct; critical and lock 6/4 = 1.5, ordered 4/4 = 1, atomic 2/4 = 0.5
 *        per location (each thread runs a quarter of the constructs); task 7.015 in all (3 per
 *        task on the creator, 4 per task on whichever thread ran it, taskwait per 128 tasks).
 * --------------------------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

/* The user-level POMP2 calls, present only when the program is linked with a POMP2 library
 * (the instrumented build): weak, so the plain build links and sees NULL. */
#pragma weak POMP2_On
#pragma weak POMP2_Off
void POMP2_On(void);
void POMP2_Off(void);

#include "floor_records.h"

/* ---- the delay ------------------------------------------------------------------------------ */

static int delay_length = 100;       /* iterations of the delay loop, about 0.1 us */
static volatile double delay_guard = -1.0; /* never reached: keeps the loop from being removed */
static volatile double sink;

static void delay(int n)
{
    double a = 0.0;
    for (int i = 0; i < n; i++) {
        a += i;
    }
    if (a == delay_guard) {
        sink = a;
    }
}

/* Sets delay_length so that delay() takes about `us` microseconds (best of 5 timings). */
static void calibrate_delay(double us)
{
    const int n = 10000, reps = 200;
    double best = 1e30;
    for (int round = 0; round < 5; round++) {
        double t0 = omp_get_wtime();
        for (int r = 0; r < reps; r++) {
            delay(n);
        }
        double t = (omp_get_wtime() - t0) / ((double)n * reps);
        if (t < best) {
            best = t;
        }
    }
    delay_length = (int)(us * 1e-6 / best + 0.5);
    if (delay_length < 1) {
        delay_length = 1;
    }
}

/* ns per bare TSC read, best of 5 timings: the floor one recorded event is compared with. */
static double tsc_read_ns(void)
{
    const long reads = 200000;
    volatile unsigned long long tsc_sink = 0;
    double best = 1e30;
    for (int round = 0; round < 5; round++) {
        double t0 = omp_get_wtime();
        for (long i = 0; i < reads; i++) {
            tsc_sink += read_tsc();
        }
        double ns = (omp_get_wtime() - t0) / reads * 1e9;
        if (ns < best) {
            best = ns;
        }
    }
    return best;
}

/* ---- the tests: `inner` constructs each -------------------------------------------------------- */

static omp_lock_t lock;
static long atomic_count;
static volatile double reduction_sink;

static void test_parallel(int inner)
{
    for (int j = 0; j < inner; j++) {
#pragma omp parallel
        {
            delay(delay_length);
        }
    }
}

static void test_parallel_for(int inner)
{
    int n = omp_get_max_threads();
    for (int j = 0; j < inner; j++) {
#pragma omp parallel for
        for (int i = 0; i < n; i++) {
            delay(delay_length);
        }
    }
}

static void test_for(int inner)
{
#pragma omp parallel
    {
        int n = omp_get_num_threads();
        for (int j = 0; j < inner; j++) {
#pragma omp for
            for (int i = 0; i < n; i++) {
                delay(delay_length);
            }
        }
    }
}

static void test_barrier(int inner)
{
#pragma omp parallel
    {
        for (int j = 0; j < inner; j++) {
            delay(delay_length);
#pragma omp barrier
        }
    }
}

static void test_single(int inner)
{
#pragma omp parallel
    {
        for (int j = 0; j < inner; j++) {
#pragma omp single
            {
                delay(delay_length);
            }
        }
    }
}

static void test_critical(int inner)
{
#pragma omp parallel
    {
        int count = inner / omp_get_num_threads();
        for (int j = 0; j < count; j++) {
#pragma omp critical
            {
                delay(delay_length);
            }
        }
    }
}

static void test_lock(int inner)
{
#pragma omp parallel
    {
        int count = inner / omp_get_num_threads();
        for (int j = 0; j < count; j++) {
            omp_set_lock(&lock);
            delay(delay_length);
            omp_unset_lock(&lock);
        }
    }
}

static void test_ordered(int inner)
{
#pragma omp parallel
    {
#pragma omp for ordered schedule(static, 1)
        for (int j = 0; j < inner; j++) {
#pragma omp ordered
            {
                delay(delay_length);
            }
        }
    }
}

static void test_atomic(int inner)
{
#pragma omp parallel
    {
        int count = inner / omp_get_num_threads();
        for (int j = 0; j < count; j++) {
            delay(delay_length);
#pragma omp atomic
            atomic_count += 1;
        }
    }
}

static void test_reduction(int inner)
{
    double x = 0.0;
    for (int j = 0; j < inner; j++) {
#pragma omp parallel reduction(+ : x)
        {
            delay(delay_length);
            x += 1.0;
        }
    }
    reduction_sink = x;
}

static void test_task(int inner)
{
#pragma omp parallel
    {
#pragma omp single
        {
            int batch = 32 * omp_get_num_threads();
            for (int j = 0; j < inner; j++) {
#pragma omp task
                {
                    delay(delay_length);
                }
                if ((j + 1) % batch == 0) {
#pragma omp taskwait
                }
            }
#pragma omp taskwait
        }
    }
}

/* ---- the floor: what any tracer that timestamps every event has to do ------------------------ */

/* The floor variant of a construct runs it as the instrumented build does (OPARI2's structure:
 * a worksharing loop with nowait and an explicit barrier, the same paused POMP2 calls) and, at
 * each place where pomptrace records, reads the TSC and stores a record of the size pomptrace
 * writes there into memory of the thread's own: nothing more. Run with recording off, --floor
 * alternates each construct with its floor variant: the difference is the cost of bare time
 * stamps and stores at those places, the floor a tracer's cost per event can be compared with
 * there (a barrier, for one, exposes the time stamp reads on either side of it on the team's
 * critical path). It does so twice, with two kinds of memory:
 *   mapped: one buffer used round and round, faulted in before (what the time stamps and
 *           stores cost alone);
 *   fresh:  memory never touched before, faulted in 4 KiB at a time as the records reach it
 *           (what a tracer that keeps its trace in memory, or hands it to the page cache, pays
 *           at least: every byte of the trace is new memory). */

static int floor_fresh; /* which memory the floor variants write to: fresh or mapped */
static __thread unsigned char *floor_buffer, *floor_fresh_buffer;
static __thread size_t floor_used = FLOOR_BUFFER_BYTES, floor_fresh_used = FLOOR_BUFFER_BYTES;
static long floor_lock_order; /* the lock's acquisition order, as a ThreadAcquireLock needs */

/* The next `bytes` of the thread's buffer: fresh memory (a new mapping when one is full), or
 * the mapped buffer (from its start again when it is full; faulted in at the thread's first
 * record, in the warm-up). */
static unsigned char *floor_room(size_t bytes)
{
    if (floor_fresh) {
        if (floor_fresh_used + bytes > FLOOR_BUFFER_BYTES) {
            if (floor_fresh_buffer != NULL) {
                munmap(floor_fresh_buffer, FLOOR_BUFFER_BYTES);
            }
            floor_fresh_buffer = floor_map(FLOOR_BUFFER_BYTES, 0);
            floor_fresh_used = 0;
        }
        unsigned char *room = floor_fresh_buffer + floor_fresh_used;
        floor_fresh_used += bytes;
        return room;
    }
    return floor_ring_room(&floor_buffer, &floor_used, FLOOR_BUFFER_BYTES, bytes);
}

/* A record of `bytes` at `time`, preceded by a TIMESTAMP when `timed`. */
static inline void floor_record(unsigned long long time, int timed, size_t bytes)
{
    floor_encode(floor_room(floor_record_size(timed, bytes)), time, timed, bytes);
}

/* An Enter or Leave at a time of its own. */
static inline void floor_event(void) { floor_record(read_tsc(), 1, FLOOR_REGION_BYTES); }

/* Two records at one time: the second shares the first's TIMESTAMP. */
static inline void floor_two_records(unsigned long long time, size_t first, size_t second)
{
    floor_record(time, 1, first);
    floor_record(time, 0, second);
}

/* A lock's acquisition: the time after it (fenced, as pomptrace reads it: after the locked
 * instruction that took the lock) and the next acquisition order. Returns the time. */
static inline unsigned long long floor_acquire(void)
{
    unsigned long long t = read_tsc_after_acquiring();
    floor_lock_order += 1;
    floor_record(t, 1, FLOOR_LOCK_BYTES);
    return t;
}

/* A region as OPARI2 builds it synchronises twice (the barrier OPARI2 inserts, then the
 * runtime's at the end), and stamps on both sides of the first can only be taken by the
 * region's own code: so the variant has one explicit barrier more, with the stamps around it,
 * and is timed against `floor_parallel_base`, the same region with that barrier and no stamps.
 * Its stamps: ThreadFork; ThreadTeamBegin and the Enter of the region at one time; the Enter
 * and Leave of the implicit barrier; the Leave of the region and ThreadTeamEnd at one time;
 * ThreadJoin (8 records at 6 times, as pomptrace writes them). */
static void floor_parallel(int inner)
{
    for (int j = 0; j < inner; j++) {
        floor_record(read_tsc(), 1, FLOOR_FORK_BYTES);
#pragma omp parallel
        {
            unsigned long long t = read_tsc();
            floor_two_records(t, FLOOR_TEAM_BEGIN_BYTES, FLOOR_REGION_BYTES);
            delay(delay_length);
            floor_event();
#pragma omp barrier
            floor_event();
            t = read_tsc();
            floor_two_records(t, FLOOR_REGION_BYTES, FLOOR_TEAM_END_BYTES);
        }
        floor_record(read_tsc(), 1, FLOOR_JOIN_BYTES);
    }
}

static void floor_parallel_base(int inner)
{
    for (int j = 0; j < inner; j++) {
#pragma omp parallel
        {
            delay(delay_length);
#pragma omp barrier
        }
    }
}

static void floor_barrier(int inner)
{
#pragma omp parallel
    {
        for (int j = 0; j < inner; j++) {
            delay(delay_length);
            floor_event();
#pragma omp barrier
            floor_event();
        }
    }
}

static void floor_for(int inner)
{
#pragma omp parallel
    {
        int n = omp_get_num_threads();
        for (int j = 0; j < inner; j++) {
            floor_event();
#pragma omp for nowait
            for (int i = 0; i < n; i++) {
                delay(delay_length);
            }
            floor_event();
#pragma omp barrier
            floor_event();
            floor_event();
        }
    }
}

static void floor_critical(int inner)
{
#pragma omp parallel
    {
        int count = inner / omp_get_num_threads();
        for (int j = 0; j < count; j++) {
            floor_event();
#pragma omp critical
            {
                unsigned long long t = floor_acquire();
                floor_record(t, 0, FLOOR_REGION_BYTES);
                delay(delay_length);
                floor_two_records(read_tsc(), FLOOR_REGION_BYTES, FLOOR_LOCK_BYTES);
            }
            floor_event();
        }
    }
}

static void floor_lock(int inner)
{
#pragma omp parallel
    {
        int count = inner / omp_get_num_threads();
        for (int j = 0; j < count; j++) {
            floor_event();
            omp_set_lock(&lock);
            unsigned long long t = floor_acquire();
            floor_record(t, 0, FLOOR_REGION_BYTES);
            delay(delay_length);
            t = read_tsc();
            omp_unset_lock(&lock);
            floor_two_records(t, FLOOR_REGION_BYTES, FLOOR_LOCK_BYTES);
            floor_event();
        }
    }
}

static void floor_atomic(int inner)
{
#pragma omp parallel
    {
        int count = inner / omp_get_num_threads();
        for (int j = 0; j < count; j++) {
            delay(delay_length);
            floor_event();
#pragma omp atomic
            atomic_count += 1;
            floor_event();
        }
    }
}

/* ---- the references: the same delays without the construct ------------------------------------ */

/* `inner` delays one after the other: for constructs whose delays are on the critical path
 * (parallel, parallel_for, for, barrier, single, reduction) or serialised (critical, lock, ordered). */
static void reference_serial(int inner)
{
    for (int j = 0; j < inner; j++) {
        delay(delay_length);
    }
}

/* `inner` delays shared by the team, inner / threads each: for constructs whose delays run
 * concurrently (atomic, task). One parallel region per test, as in the tests. */
static void reference_shared(int inner)
{
#pragma omp parallel
    {
        int count = inner / omp_get_num_threads();
        for (int j = 0; j < count; j++) {
            delay(delay_length);
        }
    }
}

/* ---- driver ------------------------------------------------------------------------------------ */

typedef void (*bench_fn)(int inner);

struct construct {
    const char *name;
    bench_fn test;
    bench_fn reference;
    int events;     /* see the table at the top */
    bench_fn floor; /* the floor variant (see above), or NULL */
    bench_fn floor_base; /* what the floor variant is timed against; NULL: the construct */
};

static const struct construct constructs[] = {
    {"parallel", test_parallel, reference_serial, 8, floor_parallel, floor_parallel_base},
    {"parallel_for", test_parallel_for, reference_serial, 10, NULL, NULL},
    {"for", test_for, reference_serial, 4, floor_for, NULL},
    {"barrier", test_barrier, reference_serial, 2, floor_barrier, NULL},
    {"single", test_single, reference_serial, 6, NULL, NULL},
    {"critical", test_critical, reference_serial, 6, floor_critical, NULL},
    {"lock", test_lock, reference_serial, 6, floor_lock, NULL},
    {"ordered", test_ordered, reference_serial, 4, NULL, NULL},
    {"atomic", test_atomic, reference_shared, 2, floor_atomic, NULL},
    {"reduction", test_reduction, reference_serial, 8, NULL, NULL},
    {"task", test_task, reference_shared, 7, NULL, NULL},
};

static double time_once(bench_fn f, int inner)
{
    double t0 = omp_get_wtime();
    f(inner);
    return omp_get_wtime() - t0;
}

/* Times `outer` repetitions of `inner` constructs (each after a repetition of the reference,
 * into `times` and `refs`) in pairs (first, second) and (second, first) by turns, and returns
 * the mean over the pairs of (first - second) in us per construct. `switch_recording`: the
 * first side records (POMP2_On) and the second does not (POMP2_Off), as --paired runs them. */
static double time_pairs(const struct construct *k, int inner, int outer, bench_fn first,
                         bench_fn second, int switch_recording, double *times, double *refs)
{
    for (int r = 0; r < outer; r++) {
        refs[r] = time_once(k->reference, inner);
        /* Repetition r is the first side when r and its pair's number have the same parity. */
        int first_side = (r % 2) == ((r / 2) % 2);
        if (switch_recording) {
            if (first_side) {
                POMP2_On();
            } else {
                POMP2_Off();
            }
        }
        times[r] = time_once(first_side ? first : second, inner);
    }
    if (switch_recording) {
        POMP2_On();
    }
    double sum = 0.0;
    for (int r = 0; r + 1 < outer; r += 2) {
        int first_leads = (r / 2) % 2 == 0;
        sum += (times[first_leads ? r : r + 1] - times[first_leads ? r + 1 : r]) / inner * 1e6;
    }
    return sum / (outer / 2);
}

static int selected(const char *only, const char *name)
{
    if (only == NULL) {
        return 1;
    }
    size_t len = strlen(name);
    for (const char *p = only; *p != '\0';) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == len && strncmp(p, name, len) == 0) {
            return 1;
        }
        p += n + (end != NULL);
    }
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: syncbench [--quick] [--only NAME[,NAME...]] [--inner N] [--outer N] "
                    "[--delay N] [--warm-up MS]\n"
                    "                 [--paired | --recording-off | --floor]\n"
                    "       syncbench --list\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const double target = 0.005; /* seconds per test, at least */
    int outer = 40, fixed_inner = 0, fixed_delay = 0, paired = 0, recording_off = 0, floor = 0;
    double warm_up_ms = 0.0;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            outer = 10;
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (strcmp(argv[i], "--inner") == 0 && i + 1 < argc) {
            fixed_inner = atoi(argv[++i]);
            if (fixed_inner < 1) {
                usage();
            }
        } else if (strcmp(argv[i], "--delay") == 0 && i + 1 < argc) {
            fixed_delay = atoi(argv[++i]);
            if (fixed_delay < 1) {
                usage();
            }
        } else if (strcmp(argv[i], "--warm-up") == 0 && i + 1 < argc) {
            warm_up_ms = atof(argv[++i]);
            if (!(warm_up_ms >= 0.0)) {
                usage();
            }
        } else if (strcmp(argv[i], "--paired") == 0) {
            paired = 1;
        } else if (strcmp(argv[i], "--recording-off") == 0) {
            recording_off = 1;
        } else if (strcmp(argv[i], "--floor") == 0) {
            floor = 1;
        } else if (strcmp(argv[i], "--list") == 0) {
            for (size_t c = 0; c < sizeof constructs / sizeof constructs[0]; c++) {
                printf("construct=%s events=%d floor=%d\n", constructs[c].name,
                       constructs[c].events, constructs[c].floor != NULL);
            }
            return 0;
        } else if (strcmp(argv[i], "--outer") == 0 && i + 1 < argc) {
            outer = atoi(argv[++i]);
            if (outer < 1) {
                usage();
            }
        } else {
            usage();
        }
    }
    int any = 0;
    for (size_t c = 0; c < sizeof constructs / sizeof constructs[0]; c++) {
        any |= selected(only, constructs[c].name);
    }
    if (!any || paired + recording_off + floor > 1) {
        usage();
    }
    if ((paired || recording_off || floor) && (POMP2_On == NULL || POMP2_Off == NULL)) {
        fprintf(stderr,
                "syncbench: --paired, --recording-off and --floor need the instrumented build\n");
        return 2;
    }
    if ((paired || floor) && outer % 2 != 0) {
        outer++; /* whole pairs */
    }

    if (fixed_delay > 0) {
        delay_length = fixed_delay;
    } else {
        calibrate_delay(0.1);
    }
    int threads = omp_get_max_threads();
    printf("# syncbench: %d threads, delay %d iterations (about 0.1 us), outer %d\n", threads,
           delay_length, outer);
    printf("tsc_ns=%.3f delay=%d\n", tsc_read_ns(), delay_length);
    fflush(stdout);
    omp_init_lock(&lock);
    if (recording_off || floor) {
        POMP2_Off();
    }

    double *test_times = malloc(sizeof(double) * (size_t)outer);
    double *ref_times = malloc(sizeof(double) * (size_t)outer);
    if (test_times == NULL || ref_times == NULL) {
        fprintf(stderr, "syncbench: out of memory\n");
        return 1;
    }
    for (size_t c = 0; c < sizeof constructs / sizeof constructs[0]; c++) {
        const struct construct *k = &constructs[c];
        if (!selected(only, k->name)) {
            continue;
        }
        /* Warm up (thread pool, first-time registration), then fix the inner count. */
        k->test(threads);
        k->reference(threads);
        bench_fn floor_variant = floor ? k->floor : NULL;
        bench_fn floor_base = k->floor_base != NULL ? k->floor_base : k->test;
        if (floor_variant != NULL) {
            floor_variant(threads);
            if (k->floor_base != NULL) {
                k->floor_base(threads);
            }
        }
        int inner;
        if (fixed_inner > 0) {
            inner = (fixed_inner + threads - 1) / threads * threads;
        } else {
            /* The shorter of two runs, so that one preempted run does not stop the doubling
             * early (on an oversubscribed machine that left a handful of constructs to time). */
            inner = threads;
            while (inner < (1 << 28)) {
                double t = time_once(k->test, inner), again = time_once(k->test, inner);
                if ((t < again ? t : again) >= target) {
                    break;
                }
                inner *= 2;
            }
        }
        /* --warm-up: the construct itself for that long before the timed repetitions. */
        for (double t0 = omp_get_wtime(); (omp_get_wtime() - t0) * 1e3 < warm_up_ms;) {
            k->test(inner);
        }
        double pair_us = 0.0, fresh_floor_us = 0.0;
        if (paired) {
            pair_us = time_pairs(k, inner, outer, k->test, k->test, 1, test_times, ref_times);
        } else if (floor_variant != NULL) {
            floor_fresh = 1;
            fresh_floor_us =
                time_pairs(k, inner, outer, floor_variant, floor_base, 0, test_times, ref_times);
            floor_fresh = 0;
            pair_us =
                time_pairs(k, inner, outer, floor_variant, floor_base, 0, test_times, ref_times);
        } else {
            time_pairs(k, inner, outer, k->test, k->test, 0, test_times, ref_times);
        }
        double ref = 0.0;
        for (int r = 0; r < outer; r++) {
            ref += ref_times[r];
        }
        ref /= outer;
        double sum = 0.0, sum2 = 0.0, min = 1e30;
        for (int r = 0; r < outer; r++) {
            double us = (test_times[r] - ref) / inner * 1e6;
            sum += us;
            sum2 += us * us;
            if (us < min) {
                min = us;
            }
        }
        double mean = sum / outer;
        double var = outer > 1 ? (sum2 - outer * mean * mean) / (outer - 1) : 0.0;
        printf("construct=%s threads=%d us=%.4f events=%d sd_us=%.4f min_us=%.4f inner=%d outer=%d",
               k->name, threads, mean, k->events, sqrt(var > 0.0 ? var : 0.0), min, inner, outer);
        if (paired) {
            printf(" paired_us=%.4f", pair_us);
        }
        if (floor_variant != NULL) {
            printf(" floor_us=%.4f fresh_floor_us=%.4f", pair_us, fresh_floor_us);
        }
        printf("\n");
        fflush(stdout);
    }
    omp_destroy_lock(&lock);
    free(test_times);
    free(ref_times);
    return 0;
}
