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

/// The real operation, reporting once if the process has no OpenMP runtime providing it.
pub(crate) fn real(done: Option<()>, name: &str) -> c_int {
    if done.is_none() {
        crate::base::diagnostics::warn_once(name, || {
            format!("{name} is not available in this process (no OpenMP runtime?)")
        });
    }
    0
}

/// The body of a lock wrapper: the real operation `$op` on the lock, recorded as `$call`.
/// With a name, `$op` returns nothing (it reports a missing runtime under that name); without,
/// it returns the OpenMP result, which the wrapper returns.
macro_rules! wrap_lock {
    ($name:literal, $lock:expr, $call:ident => $op:path, $omp_name:literal) => {
        ffi_boundary!($name, {
            let l = $lock as *mut c_void;
            lock_call(LockCall::$call, l as usize, || {
                // SAFETY: the module's contract.
                real(unsafe { $op(l) }, $omp_name)
            });
        })
    };
    ($name:literal, $lock:expr, $call:ident => $op:path) => {
        ffi_boundary!($name, {
            let l = $lock as *mut c_void;
            // SAFETY: the module's contract.
            lock_call(LockCall::$call, l as usize, || unsafe { $op(l) })
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
    wrap_lock!("POMP2_Test_lock", lock, Test => omp::test_lock)
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
    wrap_lock!("POMP2_Test_nest_lock", lock, TestNest => omp::test_nest_lock)
}

/// `omp_get_max_threads()`, for Fortran code.
#[no_mangle]
pub extern "C" fn POMP2_Lib_get_max_threads() -> c_int {
    ffi_boundary!("POMP2_Lib_get_max_threads", {
        crate::openmp::max_threads()
    })
}
