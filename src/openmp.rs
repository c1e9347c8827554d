//! The OpenMP runtime as the measurement sees it, through `src/openmp_shim.c` (weak references:
//! every query has a sensible answer when no OpenMP runtime is loaded).

use std::ffi::c_void;
use std::os::raw::c_int;

extern "C" {
    fn pomptrace_omp_get_thread_num() -> c_int;
    fn pomptrace_omp_get_max_threads() -> c_int;
    fn pomptrace_omp_get_dynamic() -> c_int;
    fn pomptrace_omp_get_level() -> c_int;
    fn pomptrace_omp_level_and_thread_num(thread_num: *mut c_int) -> c_int;
    fn pomptrace_omp_get_num_threads() -> c_int;
    fn pomptrace_omp_get_ancestor_thread_num(level: c_int) -> c_int;
    fn pomptrace_omp_get_team_size(level: c_int) -> c_int;
    fn pomptrace_omp_team_size_and_thread_num(thread_num: *mut c_int) -> c_int;
    fn pomptrace_omp_init_lock(lock: *mut c_void) -> c_int;
    fn pomptrace_omp_destroy_lock(lock: *mut c_void) -> c_int;
    fn pomptrace_omp_set_lock(lock: *mut c_void) -> c_int;
    fn pomptrace_omp_unset_lock(lock: *mut c_void) -> c_int;
    fn pomptrace_omp_test_lock(lock: *mut c_void) -> c_int;
    fn pomptrace_omp_init_nest_lock(lock: *mut c_void) -> c_int;
    fn pomptrace_omp_destroy_nest_lock(lock: *mut c_void) -> c_int;
    fn pomptrace_omp_set_nest_lock(lock: *mut c_void) -> c_int;
    fn pomptrace_omp_unset_nest_lock(lock: *mut c_void) -> c_int;
    fn pomptrace_omp_test_nest_lock(lock: *mut c_void) -> c_int;
    fn pomptrace_omp_f_init_lock(lock: *mut c_void) -> c_int;
    fn pomptrace_omp_f_destroy_lock(lock: *mut c_void) -> c_int;
    fn pomptrace_omp_f_set_lock(lock: *mut c_void) -> c_int;
    fn pomptrace_omp_f_unset_lock(lock: *mut c_void) -> c_int;
    fn pomptrace_omp_f_test_lock(lock: *mut c_void) -> c_int;
    fn pomptrace_omp_f_init_nest_lock(lock: *mut c_void) -> c_int;
    fn pomptrace_omp_f_destroy_nest_lock(lock: *mut c_void) -> c_int;
    fn pomptrace_omp_f_set_nest_lock(lock: *mut c_void) -> c_int;
    fn pomptrace_omp_f_unset_nest_lock(lock: *mut c_void) -> c_int;
    fn pomptrace_omp_f_test_nest_lock(lock: *mut c_void) -> c_int;
    fn pomptrace_call_init_regions();
    fn pomptrace_omp_get_default_device() -> c_int;
    fn pomptrace_omp_set_default_device(device: c_int) -> c_int;
}

// SAFETY (all queries below): the shim functions take no pointers, have no preconditions and
// fall back to constants when the runtime lacks the function.

pub fn thread_num() -> u32 {
    // SAFETY: see above.
    unsafe { pomptrace_omp_get_thread_num() }.max(0) as u32
}
pub fn max_threads() -> i32 {
    // SAFETY: see above.
    unsafe { pomptrace_omp_get_max_threads() }
}
/// Whether the runtime may give a team fewer threads than asked for (dyn-var).
pub fn dynamic() -> bool {
    // SAFETY: see above.
    unsafe { pomptrace_omp_get_dynamic() != 0 }
}
pub fn level() -> u32 {
    // SAFETY: see above.
    unsafe { pomptrace_omp_get_level() }.max(0) as u32
}
/// (nesting level, this thread's number in its current team), in one call.
pub fn level_and_thread_num() -> (u32, u32) {
    let mut thread_num: c_int = 0;
    // SAFETY: the shim writes one int through the pointer it is given.
    let level = unsafe { pomptrace_omp_level_and_thread_num(&mut thread_num) };
    (level.max(0) as u32, thread_num.max(0) as u32)
}
/// (size of the calling thread's current team, its number in it), in one call.
pub fn team_size_and_thread_num() -> (u32, u32) {
    let mut thread_num: c_int = 0;
    // SAFETY: the shim writes one int through the pointer it is given.
    let size = unsafe { pomptrace_omp_team_size_and_thread_num(&mut thread_num) };
    (size.max(1) as u32, thread_num.max(0) as u32)
}
/// Size of the calling thread's current team (1 outside any parallel region).
pub fn num_threads() -> u32 {
    // SAFETY: see above.
    unsafe { pomptrace_omp_get_num_threads() }.max(1) as u32
}
/// Thread number of this thread's ancestor at `level`, or None if the level does not exist.
pub fn ancestor_thread_num(level: u32) -> Option<u32> {
    // SAFETY: see above.
    let n = unsafe { pomptrace_omp_get_ancestor_thread_num(level as c_int) };
    u32::try_from(n).ok()
}
/// Size of the team at `level`, or None if the level does not exist.
pub fn team_size(level: u32) -> Option<u32> {
    // SAFETY: see above.
    let n = unsafe { pomptrace_omp_get_team_size(level as c_int) };
    u32::try_from(n).ok().filter(|&n| n > 0)
}

/// The calling task's default-device ICV (0 without a runtime).
pub fn default_device() -> i32 {
    // SAFETY: see above.
    unsafe { pomptrace_omp_get_default_device() }
}
/// Sets the calling task's default-device ICV; false when the runtime lacks the routines.
pub fn set_default_device(device: i32) -> bool {
    // SAFETY: see above.
    unsafe { pomptrace_omp_set_default_device(device) != 0 }
}

/// Runs the init file's `POMP2_Init_regions` and `POMP2_USER_Init_regions` if linked in.
pub fn call_init_regions() {
    // SAFETY: calls functions of the program's init file (if present), which take no arguments.
    unsafe { pomptrace_call_init_regions() }
}

/// The real OpenMP lock operations. Each returns None when the runtime lacks the function.
/// The OpenMP lock API through the shim, as `locks::NAME` (C lock variables) and
/// `locks::fortran::NAME` (the runtime's Fortran entry points, `omp_set_lock_` ..., for Fortran
/// lock variables, whose layout is not the C lock type's).
pub mod locks {
    use super::*;

    /// An operation: None where the runtime lacks the function.
    macro_rules! lock_op {
        ($name:ident, $shim:ident) => {
            /// # Safety
            /// `lock` must point to a lock variable of the kind the OpenMP function expects.
            pub unsafe fn $name(lock: *mut c_void) -> Option<()> {
                // SAFETY: forwarded to the caller's contract.
                (unsafe { $shim(lock) } != 0).then_some(())
            }
        };
    }

    /// A test: what the runtime returned (non-zero: obtained); None where it lacks the
    /// function.
    macro_rules! lock_test {
        ($name:ident, $shim:ident) => {
            /// # Safety
            /// `lock` must point to an initialised lock variable of the kind the OpenMP
            /// function expects.
            pub unsafe fn $name(lock: *mut c_void) -> Option<i32> {
                // SAFETY: forwarded to the caller's contract.
                let result = unsafe { $shim(lock) };
                (result >= 0).then_some(result)
            }
        };
    }

    /// `name => C shim, Fortran shim` for every operation and test.
    macro_rules! lock_api {
        (
            operations { $($op:ident => $op_c:ident, $op_f:ident;)* }
            tests { $($test:ident => $test_c:ident, $test_f:ident;)* }
        ) => {
            $(lock_op!($op, $op_c);)*
            $(lock_test!($test, $test_c);)*
            pub mod fortran {
                use super::super::*;
                $(lock_op!($op, $op_f);)*
                $(lock_test!($test, $test_f);)*
            }
        };
    }

    lock_api! {
        operations {
            init_lock => pomptrace_omp_init_lock, pomptrace_omp_f_init_lock;
            destroy_lock => pomptrace_omp_destroy_lock, pomptrace_omp_f_destroy_lock;
            set_lock => pomptrace_omp_set_lock, pomptrace_omp_f_set_lock;
            unset_lock => pomptrace_omp_unset_lock, pomptrace_omp_f_unset_lock;
            init_nest_lock => pomptrace_omp_init_nest_lock, pomptrace_omp_f_init_nest_lock;
            destroy_nest_lock => pomptrace_omp_destroy_nest_lock, pomptrace_omp_f_destroy_nest_lock;
            set_nest_lock => pomptrace_omp_set_nest_lock, pomptrace_omp_f_set_nest_lock;
            unset_nest_lock => pomptrace_omp_unset_nest_lock, pomptrace_omp_f_unset_nest_lock;
        }
        tests {
            test_lock => pomptrace_omp_test_lock, pomptrace_omp_f_test_lock;
            test_nest_lock => pomptrace_omp_test_nest_lock, pomptrace_omp_f_test_nest_lock;
        }
    }
}
