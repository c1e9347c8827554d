//! C types of the POMP2 interface (OPARI2 2.0 `pomp2_lib.h` / `pomp2_user_lib.h`).
#![allow(non_camel_case_types)]

use std::ffi::c_void;

/// The per-construct slot OPARI2 allocates; the library stores what it likes in it.
pub type OPARI2_Region_handle = *mut c_void;
/// OpenMP construct handle.
pub type POMP2_Region_handle = OPARI2_Region_handle;
/// User region handle.
pub type POMP2_USER_Region_handle = OPARI2_Region_handle;
/// Task id: upper 32 bits the creating thread's number, lower 32 bits a per-thread counter.
pub type POMP2_Task_handle = i64;

/// The OpenMP runtime's lock type (opaque here; the header takes it from `<omp.h>`).
#[repr(C)]
pub struct omp_lock_t {
    _opaque: [u8; 0],
}

/// The OpenMP runtime's nest lock type (opaque here; the header takes it from `<omp.h>`).
#[repr(C)]
pub struct omp_nest_lock_t {
    _opaque: [u8; 0],
}
