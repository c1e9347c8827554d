/*
 * The OpenMP runtime and the OPARI2 init file, reached through weak references (and dlsym for the lock API).
 *
 * pomptrace must load into programs linked against any OpenMP runtime (or none: LD_PRELOAD into a
 * plain program), and must link whether or not the program has an init file. Weak undefined
 * references resolve to whatever the process provides and to NULL otherwise, so the library
 * neither forces a second OpenMP runtime into the process nor fails to link or load.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

/*
 * The lock functions are looked up with dlsym, which returns a symbol's default version: the one a
 * program compiled today binds to. An unversioned weak reference binds to the oldest version
 * instead, and libgomp keeps its OpenMP 2.5 lock entries as version OMP_1.0: their nest locks
 * have another layout and belong to threads, not tasks, unlike the OMP_3.0 ones the program uses.
 * `lookup()` returns the function (cached in `slot`) or NULL when the process has none.
 */
static void* lookup(void** slot, const char* name, void* linked)
{
    void* f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (f == NULL) {
        f = dlsym(RTLD_DEFAULT, name);
        /* A static executable has no dynamic symbol table to search: there, the function linked
         * into the program (through the weak reference `linked`) is the one. `pomptrace config
         * --libs --static` makes the linker pull the lock functions out of the OpenMP runtime's
         * archive, which the instrumented program no longer references itself. */
        if (f == NULL) f = linked;
        __atomic_store_n(slot, f, __ATOMIC_RELEASE);
    }
    return f;
}
/* OpenMP runtime (libgomp, libomp, ...). Lock types are opaque here. */
extern int omp_get_thread_num(void) __attribute__((weak));
extern int omp_get_num_threads(void) __attribute__((weak));
extern int omp_get_max_threads(void) __attribute__((weak));
extern int omp_get_level(void) __attribute__((weak));
extern int omp_get_ancestor_thread_num(int) __attribute__((weak));
extern int omp_get_team_size(int) __attribute__((weak));
extern int omp_get_dynamic(void) __attribute__((weak));

/* Functions of the init file generated at link time (pomptrace init-regions). */
extern void POMP2_Init_regions(void) __attribute__((weak));
extern void POMP2_USER_Init_regions(void) __attribute__((weak));

int pomptrace_omp_get_thread_num(void) { return omp_get_thread_num ? omp_get_thread_num() : 0; }
int pomptrace_omp_get_num_threads(void) { return omp_get_num_threads ? omp_get_num_threads() : 1; }
int pomptrace_omp_get_max_threads(void) { return omp_get_max_threads ? omp_get_max_threads() : 1; }
int pomptrace_omp_get_level(void) { return omp_get_level ? omp_get_level() : 0; }
int pomptrace_omp_get_dynamic(void) { return omp_get_dynamic ? omp_get_dynamic() : 0; }
/* The nesting level, and the calling thread's number in its current team: what every team
 * begin asks, in one call (no runtime: level 0, thread 0). */
int pomptrace_omp_level_and_thread_num(int *thread_num)
{
    *thread_num = omp_get_thread_num ? omp_get_thread_num() : 0;
    return omp_get_level ? omp_get_level() : 0;
}
/* The size of the calling thread's current team, and its number in it, in one call (no runtime:
 * a team of one). */
int pomptrace_omp_team_size_and_thread_num(int *thread_num)
{
    *thread_num = omp_get_thread_num ? omp_get_thread_num() : 0;
    return omp_get_num_threads ? omp_get_num_threads() : 1;
}
int pomptrace_omp_get_ancestor_thread_num(int level)
{
    return omp_get_ancestor_thread_num ? omp_get_ancestor_thread_num(level) : (level == 0 ? 0 : -1);
}
int pomptrace_omp_get_team_size(int level)
{
    return omp_get_team_size ? omp_get_team_size(level) : (level == 0 ? 1 : -1);
}

/*
 * The lock API: pomptrace_omp_NAME calls the runtime's omp_NAME, pomptrace_omp_f_NAME its
 * Fortran entry point omp_NAME_ (gfortran mangling, arguments by reference). A Fortran lock
 * variable is not a C lock object: libgomp's Fortran nest lock is an 8-byte variable holding a
 * pointer to a separately allocated 16-byte C lock, so the Fortran wrappers call the Fortran
 * entries with the address of the Fortran variable, never the C functions.
 * Operations return 0 when the runtime lacks the function and 1 otherwise; tests return the
 * runtime's result (never negative), -1 when it lacks the function. The caller refuses to go on
 * without the function: the program would run unlocked.
 */
static int call_operation(void** slot, const char* name, void* linked, void* lock)
{
    void (*f)(void*) = (void (*)(void*))lookup(slot, name, linked);
    if (!f) return 0;
    f(lock);
    return 1;
}
static int call_test(void** slot, const char* name, void* linked, void* lock)
{
    int (*f)(void*) = (int (*)(void*))lookup(slot, name, linked);
    return f ? f(lock) : -1;
}
#define LOCK_ENTRIES(call, name)                                                                   \
    extern void omp_##name(void) __attribute__((weak));                                            \
    extern void omp_##name##_(void) __attribute__((weak));                                         \
    int pomptrace_omp_##name(void* l)                                                              \
    {                                                                                              \
        static void* slot;                                                                         \
        return call(&slot, "omp_" #name, (void*)omp_##name, l);                                    \
    }                                                                                              \
    int pomptrace_omp_f_##name(void* l)                                                            \
    {                                                                                              \
        static void* slot;                                                                         \
        return call(&slot, "omp_" #name "_", (void*)omp_##name##_, l);                             \
    }
LOCK_ENTRIES(call_operation, init_lock)
LOCK_ENTRIES(call_operation, destroy_lock)
LOCK_ENTRIES(call_operation, set_lock)
LOCK_ENTRIES(call_operation, unset_lock)
LOCK_ENTRIES(call_test, test_lock)
LOCK_ENTRIES(call_operation, init_nest_lock)
LOCK_ENTRIES(call_operation, destroy_nest_lock)
LOCK_ENTRIES(call_operation, set_nest_lock)
LOCK_ENTRIES(call_operation, unset_nest_lock)
LOCK_ENTRIES(call_test, test_nest_lock)

void pomptrace_call_init_regions(void)
{
    if (POMP2_Init_regions) POMP2_Init_regions();
    if (POMP2_USER_Init_regions) POMP2_USER_Init_regions();
}


/*
 * pomp_tpd: the thread-private variable that code instrumented with `opari2 --omp-tpd` declares
 * extern and copies into every member of a team it forks (copyin). It must be a real TLS symbol;
 * gfortran and C with `--omp-tpd-mangling=gnu` (what `pomptrace gcc` passes) reference
 * `pomp_tpd_`, C with the default mangling `pomp_tpd`: one variable under both names. A forking
 * thread stores its node of the thread tree in it, so each member of the team finds its parent
 * there at its team begin (src/model/team.rs). Read and written by the Rust side through the
 * interposable name `pomp_tpd_`: a Fortran program defines its own (a TLS common), which then
 * takes the place of this one. On a cache line of its own: every member of a team reads the
 * forking thread's value, so a write to anything beside it would cost each of them a miss.
 */
__thread long long pomp_tpd_ __attribute__((aligned(64))) = 0;
extern __thread long long pomp_tpd __attribute__((alias("pomp_tpd_"), aligned(64)));
long long* pomptrace_pomp_tpd_slot(void) { return &pomp_tpd_; }

/*
 * The one thread-local the hot path reads: a pointer to the calling thread's state (see
 * src/model/thread.rs). Defined here because C can ask for the initial-exec TLS model, which
 * makes reading it one `mov %fs:` instead of a call to __tls_get_addr from the shared library;
 * the Rust side reads it with two instructions of inline assembly. Hidden: no one else uses it.
 */
__thread void* pomptrace_thread_state __attribute__((tls_model("initial-exec"), visibility("hidden"))) = 0;
void** pomptrace_thread_state_slot(void) { return &pomptrace_thread_state; }

/*
 * The default-device ICV, the channel from a forking thread to its new team where the team does
 * not receive pomp_tpd (see src/model/team.rs): OpenMP copies a task's data-environment ICVs into
 * every implicit task of the team it forks, so a value set just before the fork is what each
 * member reads first thing in the region, and puts back before the program's code runs.
 */
extern int omp_get_default_device(void) __attribute__((weak));
extern void omp_set_default_device(int) __attribute__((weak));
int pomptrace_omp_get_default_device(void) { return omp_get_default_device ? omp_get_default_device() : 0; }
int pomptrace_omp_set_default_device(int device)
{
    if (!omp_set_default_device || !omp_get_default_device) return 0;
    omp_set_default_device(device);
    return 1;
}
