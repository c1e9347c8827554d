//! The entry points of `pomp2_user_lib.h`: user regions (`#pragma pomp inst begin/end`) and the
//! control calls (`inst init/finalize/on/off`).
//!
//! Safety contract: `pomp2_handle` is NULL or the address of an OPARI2 region handle
//! variable; `ctc_string` is NULL or a NUL-terminated string.
#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::os::raw::c_char;

use super::types::POMP2_USER_Region_handle;
use super::{ffi_boundary, on_region, slot};
use crate::lifecycle::{finish, start, state};
use crate::ops::constructs as m;

/// Starts the measurement now (it otherwise starts at the first POMP2 call).
#[no_mangle]
pub extern "C" fn POMP2_Init() {
    ffi_boundary!("POMP2_Init", {
        let _ = start::started();
    })
}

/// Ends the measurement and writes the trace; later calls record nothing. Without it, the
/// trace is written when the program exits.
#[no_mangle]
pub extern "C" fn POMP2_Finalize() {
    ffi_boundary!("POMP2_Finalize", { finish::finalize() })
}

/// Resumes recording after `POMP2_Off`.
#[no_mangle]
pub extern "C" fn POMP2_On() {
    ffi_boundary!("POMP2_On", { on_off(true) })
}

/// Suspends recording (parallel region fork/join and team records are still written).
#[no_mangle]
pub extern "C" fn POMP2_Off() {
    ffi_boundary!("POMP2_Off", { on_off(false) })
}

/// `inst on` / `inst off` (shared with the Fortran entry points): starts the measurement if
/// needed, then sets the recording flag.
pub(crate) fn on_off(on: bool) {
    let _ = start::started();
    state::set_recording(on);
}

/// Enters a user region (`#pragma pomp inst begin(name)`).
#[no_mangle]
pub unsafe extern "C" fn POMP2_Begin(
    pomp2_handle: *mut POMP2_USER_Region_handle,
    ctc_string: *const c_char,
) {
    on_region!("POMP2_Begin", user pomp2_handle, ctc_string => m::try_enter_outer, m::enter_outer)
}

/// Leaves a user region (`inst end(name)` and every `inst altend(name)`).
#[no_mangle]
pub unsafe extern "C" fn POMP2_End(pomp2_handle: *mut POMP2_USER_Region_handle) {
    on_region!("POMP2_End", user pomp2_handle, std::ptr::null() => m::try_leave_outer, m::leave_outer)
}

/// Defines a user region (called by the init file, or lazily by `POMP2_Begin`).
#[no_mangle]
pub unsafe extern "C" fn POMP2_USER_Assign_handle(
    pomp2_handle: *mut POMP2_USER_Region_handle,
    ctc_string: *const c_char,
) {
    ffi_boundary!("POMP2_USER_Assign_handle", {
        // SAFETY: the module's contract.
        unsafe {
            if let (Some(slot), Some(text)) = (slot(pomp2_handle), super::ctc(ctc_string)) {
                m::assign(slot, text, true);
            }
        }
    })
}
