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
 * `name_fn()` returns the function (cached) or NULL when the process has none.
 */
static void* lookup(void** slot, const char* name)
{
    void* f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (f == NULL) {
        f = dlsym(RTLD_DEFAULT, name);
        __atomic_store_n(slot, f, __ATOMIC_RELEASE);
    }
    return f;
}
#define OMP_LOCK_FUNCTION(ret, name)                                                               \
    static ret (*name##_fn(void))(void*)                                                           \
    {                                                                                              \
        static void* slot;                                                                         \
        return (ret(*)(void*))lookup(&slot, #name);                                                \
    }
OMP_LOCK_FUNCTION(void, omp_init_lock)
OMP_LOCK_FUNCTION(void, omp_destroy_lock)
OMP_LOCK_FUNCTION(void, omp_set_lock)
OMP_LOCK_FUNCTION(void, omp_unset_lock)
OMP_LOCK_FUNCTION(int, omp_test_lock)
OMP_LOCK_FUNCTION(void, omp_init_nest_lock)
OMP_LOCK_FUNCTION(void, omp_destroy_nest_lock)
OMP_LOCK_FUNCTION(void, omp_set_nest_lock)
OMP_LOCK_FUNCTION(void, omp_unset_nest_lock)
OMP_LOCK_FUNCTION(int, omp_test_nest_lock)

/* OpenMP runtime (libgomp, libomp, ...). Lock types are opaque here. */
extern int omp_get_thread_num(void) __attribute__((weak));
extern int omp_get_num_threads(void) __attribute__((weak));
extern int omp_get_max_threads(void) __attribute__((weak));
extern int omp_get_level(void) __attribute__((weak));
extern int omp_get_ancestor_thread_num(int) __attribute__((weak));
extern int omp_get_team_size(int) __attribute__((weak));

/*
 * The Fortran entry points of the same lock API (gfortran mangling, arguments by reference). A
 * Fortran lock variable is not a C lock object: libgomp's Fortran nest lock is an 8-byte variable
 * holding a pointer to a separately allocated 16-byte C lock. The Fortran wrappers therefore call
 * these, with the address of the Fortran variable, never the C functions above.
 */
OMP_LOCK_FUNCTION(void, omp_init_lock_)
OMP_LOCK_FUNCTION(void, omp_destroy_lock_)
OMP_LOCK_FUNCTION(void, omp_set_lock_)
OMP_LOCK_FUNCTION(void, omp_unset_lock_)
OMP_LOCK_FUNCTION(int, omp_test_lock_)
OMP_LOCK_FUNCTION(void, omp_init_nest_lock_)
OMP_LOCK_FUNCTION(void, omp_destroy_nest_lock_)
OMP_LOCK_FUNCTION(void, omp_set_nest_lock_)
OMP_LOCK_FUNCTION(void, omp_unset_nest_lock_)
OMP_LOCK_FUNCTION(int, omp_test_nest_lock_)

/* Functions of the init file generated at link time (pomptrace init-regions). */
extern void POMP2_Init_regions(void) __attribute__((weak));
extern size_t POMP2_Get_num_regions(void) __attribute__((weak));
extern void POMP2_USER_Init_regions(void) __attribute__((weak));
extern size_t POMP2_USER_Get_num_regions(void) __attribute__((weak));

int pomptrace_omp_available(void) { return omp_get_thread_num != NULL; }
int pomptrace_omp_get_thread_num(void) { return omp_get_thread_num ? omp_get_thread_num() : 0; }
int pomptrace_omp_get_num_threads(void) { return omp_get_num_threads ? omp_get_num_threads() : 1; }
int pomptrace_omp_get_max_threads(void) { return omp_get_max_threads ? omp_get_max_threads() : 1; }
int pomptrace_omp_get_level(void) { return omp_get_level ? omp_get_level() : 0; }
int pomptrace_omp_get_ancestor_thread_num(int level)
{
    return omp_get_ancestor_thread_num ? omp_get_ancestor_thread_num(level) : (level == 0 ? 0 : -1);
}
int pomptrace_omp_get_team_size(int level)
{
    return omp_get_team_size ? omp_get_team_size(level) : (level == 0 ? 1 : -1);
}

/* Each returns 0 when the runtime lacks the function (the caller then reports it once). */
int pomptrace_omp_init_lock(void* l) { void (*f)(void*) = omp_init_lock_fn(); if (!f) return 0; f(l); return 1; }
int pomptrace_omp_destroy_lock(void* l) { void (*f)(void*) = omp_destroy_lock_fn(); if (!f) return 0; f(l); return 1; }
int pomptrace_omp_set_lock(void* l) { void (*f)(void*) = omp_set_lock_fn(); if (!f) return 0; f(l); return 1; }
int pomptrace_omp_unset_lock(void* l) { void (*f)(void*) = omp_unset_lock_fn(); if (!f) return 0; f(l); return 1; }
int pomptrace_omp_test_lock(void* l) { int (*f)(void*) = omp_test_lock_fn(); return f ? f(l) : 0; }
int pomptrace_omp_init_nest_lock(void* l) { void (*f)(void*) = omp_init_nest_lock_fn(); if (!f) return 0; f(l); return 1; }
int pomptrace_omp_destroy_nest_lock(void* l) { void (*f)(void*) = omp_destroy_nest_lock_fn(); if (!f) return 0; f(l); return 1; }
int pomptrace_omp_set_nest_lock(void* l) { void (*f)(void*) = omp_set_nest_lock_fn(); if (!f) return 0; f(l); return 1; }
int pomptrace_omp_unset_nest_lock(void* l) { void (*f)(void*) = omp_unset_nest_lock_fn(); if (!f) return 0; f(l); return 1; }
int pomptrace_omp_test_nest_lock(void* l) { int (*f)(void*) = omp_test_nest_lock_fn(); return f ? f(l) : 0; }

/* Fortran entries: the same contract as the C ones above. */
int pomptrace_omp_f_init_lock(void* l) { void (*f)(void*) = omp_init_lock__fn(); if (!f) return 0; f(l); return 1; }
int pomptrace_omp_f_destroy_lock(void* l) { void (*f)(void*) = omp_destroy_lock__fn(); if (!f) return 0; f(l); return 1; }
int pomptrace_omp_f_set_lock(void* l) { void (*f)(void*) = omp_set_lock__fn(); if (!f) return 0; f(l); return 1; }
int pomptrace_omp_f_unset_lock(void* l) { void (*f)(void*) = omp_unset_lock__fn(); if (!f) return 0; f(l); return 1; }
int pomptrace_omp_f_test_lock(void* l) { int (*f)(void*) = omp_test_lock__fn(); return f ? f(l) : 0; }
int pomptrace_omp_f_init_nest_lock(void* l) { void (*f)(void*) = omp_init_nest_lock__fn(); if (!f) return 0; f(l); return 1; }
int pomptrace_omp_f_destroy_nest_lock(void* l) { void (*f)(void*) = omp_destroy_nest_lock__fn(); if (!f) return 0; f(l); return 1; }
int pomptrace_omp_f_set_nest_lock(void* l) { void (*f)(void*) = omp_set_nest_lock__fn(); if (!f) return 0; f(l); return 1; }
int pomptrace_omp_f_unset_nest_lock(void* l) { void (*f)(void*) = omp_unset_nest_lock__fn(); if (!f) return 0; f(l); return 1; }
int pomptrace_omp_f_test_nest_lock(void* l) { int (*f)(void*) = omp_test_nest_lock__fn(); return f ? f(l) : 0; }

void pomptrace_call_init_regions(void)
{
    if (POMP2_Init_regions) POMP2_Init_regions();
    if (POMP2_USER_Init_regions) POMP2_USER_Init_regions();
}

size_t pomptrace_init_file_region_count(void)
{
    return (POMP2_Get_num_regions ? POMP2_Get_num_regions() : 0)
         + (POMP2_USER_Get_num_regions ? POMP2_USER_Get_num_regions() : 0);
}

int pomptrace_has_init_file(void) { return POMP2_Init_regions != NULL || POMP2_USER_Init_regions != NULL; }

/*
 * pomp_tpd: the thread-private variable that code instrumented with `opari2 --omp-tpd` declares
 * extern and copies into every team (copyin). It must be a real TLS symbol; gfortran references
 * `pomp_tpd_`, C with the default mangling `pomp_tpd`. pomptrace identifies threads through the
 * OpenMP ancestry routines instead, so the value is only kept, never interpreted.
 */
__thread long long pomp_tpd_ __attribute__((aligned(16))) = 0;
__thread long long pomp_tpd __attribute__((aligned(16))) = 0;

/*
 * The one thread-local the hot path reads: a pointer to the calling thread's state (see
 * src/measure/thread.rs). Defined here because C can ask for the initial-exec TLS model, which
 * makes reading it one `mov %fs:` instead of a call to __tls_get_addr from the shared library;
 * the Rust side reads it with two instructions of inline assembly. Hidden: no one else uses it.
 */
__thread void* pomptrace_thread_state __attribute__((tls_model("initial-exec"), visibility("hidden"))) = 0;
void** pomptrace_thread_state_slot(void) { return &pomptrace_thread_state; }

/*
 * The default-device ICV, used as a channel from a forking thread to its new team: OpenMP copies
 * a task's data-environment ICVs into every implicit task of the team it forks, so a value set
 * just before the fork is what each member reads first thing in the region (and restores).
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
