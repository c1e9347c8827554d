//! The lock wrappers OPARI2 substitutes for the OpenMP lock API, and the Fortran helper for
//! `omp_get_max_threads`. Each performs the real OpenMP operation in every state (before the
//! measurement starts, after it ends, with recording off) and records around it.
//!
//! Safety contract of every function here: `lock` points to a lock object of the OpenMP runtime
//! in use, as the corresponding `omp_*` function requires.
#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::ffi::c_void;
use std::os::raw::c_int;

use super::ffi_boundary;
use super::types::{omp_lock_t, omp_nest_lock_t};
use crate::openmp::locks as omp;
use crate::ops::constructs::{lock_call, LockCall};

/// The real operation's outcome. Without the OpenMP runtime's function the program would run
/// unlocked (a static executable linked without it), so the measurement refuses to go on: one
/// line, then abort, which the fatal-signal handling turns into a written trace.
pub(crate) fn real<T>(outcome: Option<T>, name: &str) -> T {
    match outcome {
        Some(value) => value,
        None => refuse_to_run_unlocked(name),
    }
}

#[cold]
fn refuse_to_run_unlocked(name: &str) -> ! {
    crate::base::diagnostics::warn(&format!(
        "{name} is not in this process, so the program's locks would not lock (a static \
         executable must be linked with `pomptrace config --libs --static`); stopping it"
    ));
    std::process::abort()
}

/// The body of a lock wrapper: the real operation `$op` on the lock, recorded as `$call`.
/// With a name, `$op` returns nothing; without, it returns the OpenMP result, which the wrapper
/// returns. A missing runtime function stops the program (`real`).
macro_rules! wrap_lock {
    ($name:literal, $lock:expr, $call:ident => $op:path, $omp_name:literal) => {
        ffi_boundary!($name, {
            let l = $lock as *mut c_void;
            lock_call(LockCall::$call, l as usize, || {
                // SAFETY: the module's contract.
                real(unsafe { $op(l) }, $omp_name);
                0
            });
        })
    };
    ($name:literal, $lock:expr, $call:ident => $op:path, $omp_name:literal, returned) => {
        ffi_boundary!($name, {
            let l = $lock as *mut c_void;
            // SAFETY: the module's contract.
            lock_call(LockCall::$call, l as usize, || {
                real(unsafe { $op(l) }, $omp_name)
            })
        })
    };
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Init_lock(lock: *mut omp_lock_t) {
    wrap_lock!("POMP2_Init_lock", lock, Init => omp::init_lock, "omp_init_lock")
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Destroy_lock(lock: *mut omp_lock_t) {
    wrap_lock!("POMP2_Destroy_lock", lock, Destroy => omp::destroy_lock, "omp_destroy_lock")
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Set_lock(lock: *mut omp_lock_t) {
    wrap_lock!("POMP2_Set_lock", lock, Set => omp::set_lock, "omp_set_lock")
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Unset_lock(lock: *mut omp_lock_t) {
    wrap_lock!("POMP2_Unset_lock", lock, Unset => omp::unset_lock, "omp_unset_lock")
}

/// Returns what `omp_test_lock` returned: non-zero if the lock was obtained.
#[no_mangle]
pub unsafe extern "C" fn POMP2_Test_lock(lock: *mut omp_lock_t) -> c_int {
    wrap_lock!("POMP2_Test_lock", lock, Test => omp::test_lock, "omp_test_lock", returned)
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Init_nest_lock(lock: *mut omp_nest_lock_t) {
    wrap_lock!("POMP2_Init_nest_lock", lock, InitNest => omp::init_nest_lock, "omp_init_nest_lock")
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Destroy_nest_lock(lock: *mut omp_nest_lock_t) {
    wrap_lock!("POMP2_Destroy_nest_lock", lock, DestroyNest => omp::destroy_nest_lock, "omp_destroy_nest_lock")
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Set_nest_lock(lock: *mut omp_nest_lock_t) {
    wrap_lock!("POMP2_Set_nest_lock", lock, SetNest => omp::set_nest_lock, "omp_set_nest_lock")
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Unset_nest_lock(lock: *mut omp_nest_lock_t) {
    wrap_lock!("POMP2_Unset_nest_lock", lock, UnsetNest => omp::unset_nest_lock, "omp_unset_nest_lock")
}

/// Returns what `omp_test_nest_lock` returned: the new nesting count, 0 on failure.
#[no_mangle]
pub unsafe extern "C" fn POMP2_Test_nest_lock(lock: *mut omp_nest_lock_t) -> c_int {
    wrap_lock!("POMP2_Test_nest_lock", lock, TestNest => omp::test_nest_lock, "omp_test_nest_lock", returned)
}

/// `omp_get_max_threads()`, for Fortran code.
#[no_mangle]
pub extern "C" fn POMP2_Lib_get_max_threads() -> c_int {
    ffi_boundary!("POMP2_Lib_get_max_threads", {
        crate::openmp::max_threads()
    })
}
