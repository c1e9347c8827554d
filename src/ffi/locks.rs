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
use crate::measure::constructs::{lock_call, LockCall};
use crate::openmp::locks as omp;

/// The real operation, reporting once if the process has no OpenMP runtime providing it.
pub(crate) fn real(done: Option<()>, name: &str) -> c_int {
    if done.is_none() {
        crate::measure::warn_once(name, || {
            format!("{name} is not available in this process (no OpenMP runtime?)")
        });
    }
    0
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Init_lock(lock: *mut omp_lock_t) {
    ffi_boundary!("POMP2_Init_lock", {
        let l = lock as *mut c_void;
        // SAFETY: the module's contract.
        lock_call(LockCall::Init, l as usize, || {
            real(unsafe { omp::init_lock(l) }, "omp_init_lock")
        });
    })
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Destroy_lock(lock: *mut omp_lock_t) {
    ffi_boundary!("POMP2_Destroy_lock", {
        let l = lock as *mut c_void;
        // SAFETY: the module's contract.
        lock_call(LockCall::Destroy, l as usize, || {
            real(unsafe { omp::destroy_lock(l) }, "omp_destroy_lock")
        });
    })
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Set_lock(lock: *mut omp_lock_t) {
    ffi_boundary!("POMP2_Set_lock", {
        let l = lock as *mut c_void;
        // SAFETY: the module's contract.
        lock_call(LockCall::Set, l as usize, || {
            real(unsafe { omp::set_lock(l) }, "omp_set_lock")
        });
    })
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Unset_lock(lock: *mut omp_lock_t) {
    ffi_boundary!("POMP2_Unset_lock", {
        let l = lock as *mut c_void;
        // SAFETY: the module's contract.
        lock_call(LockCall::Unset, l as usize, || {
            real(unsafe { omp::unset_lock(l) }, "omp_unset_lock")
        });
    })
}

/// Returns what `omp_test_lock` returned: non-zero if the lock was obtained.
#[no_mangle]
pub unsafe extern "C" fn POMP2_Test_lock(lock: *mut omp_lock_t) -> c_int {
    ffi_boundary!("POMP2_Test_lock", {
        let l = lock as *mut c_void;
        // SAFETY: the module's contract.
        lock_call(LockCall::Test, l as usize, || unsafe { omp::test_lock(l) })
    })
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Init_nest_lock(lock: *mut omp_nest_lock_t) {
    ffi_boundary!("POMP2_Init_nest_lock", {
        let l = lock as *mut c_void;
        // SAFETY: the module's contract.
        lock_call(LockCall::InitNest, l as usize, || {
            real(unsafe { omp::init_nest_lock(l) }, "omp_init_nest_lock")
        });
    })
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Destroy_nest_lock(lock: *mut omp_nest_lock_t) {
    ffi_boundary!("POMP2_Destroy_nest_lock", {
        let l = lock as *mut c_void;
        // SAFETY: the module's contract.
        lock_call(LockCall::DestroyNest, l as usize, || {
            real(
                unsafe { omp::destroy_nest_lock(l) },
                "omp_destroy_nest_lock",
            )
        });
    })
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Set_nest_lock(lock: *mut omp_nest_lock_t) {
    ffi_boundary!("POMP2_Set_nest_lock", {
        let l = lock as *mut c_void;
        // SAFETY: the module's contract.
        lock_call(LockCall::SetNest, l as usize, || {
            real(unsafe { omp::set_nest_lock(l) }, "omp_set_nest_lock")
        });
    })
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Unset_nest_lock(lock: *mut omp_nest_lock_t) {
    ffi_boundary!("POMP2_Unset_nest_lock", {
        let l = lock as *mut c_void;
        // SAFETY: the module's contract.
        lock_call(LockCall::UnsetNest, l as usize, || {
            real(unsafe { omp::unset_nest_lock(l) }, "omp_unset_nest_lock")
        });
    })
}

/// Returns what `omp_test_nest_lock` returned: the new nesting count, 0 on failure.
#[no_mangle]
pub unsafe extern "C" fn POMP2_Test_nest_lock(lock: *mut omp_nest_lock_t) -> c_int {
    ffi_boundary!("POMP2_Test_nest_lock", {
        let l = lock as *mut c_void;
        // SAFETY: the module's contract.
        lock_call(LockCall::TestNest, l as usize, || unsafe {
            omp::test_nest_lock(l)
        })
    })
}

/// `omp_get_max_threads()`, for Fortran code.
#[no_mangle]
pub extern "C" fn POMP2_Lib_get_max_threads() -> c_int {
    ffi_boundary!("POMP2_Lib_get_max_threads", {
        crate::openmp::max_threads()
    })
}
