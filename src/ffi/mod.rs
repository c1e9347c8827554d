//! Every exported symbol, and nothing else: argument conversion and a call into the
//! measurement. Each body runs inside [`ffi_boundary!`], so no panic ever unwinds into C.
//!
//! `types.rs` declares the C types shared by both headers; `pomp2.rs` is `pomp2_lib.h` (the
//! OpenMP constructs and tasks), `locks.rs` the lock wrappers (also in `pomp2_lib.h`), and
//! `user.rs` is `pomp2_user_lib.h` (user regions and the control calls). `fortran.rs` exports
//! the Fortran spellings of all of them (no header; OPARI2's Fortran output declares nothing).

pub mod fortran;
pub mod locks;
pub mod mpi;
pub mod pomp2;
pub mod types;
pub mod user;

use std::ffi::CStr;
use std::os::raw::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::AtomicPtr;

use crate::measure::regions::Construct;
use types::OPARI2_Region_handle;

/// Runs an entry point's body, turning a panic into one `pomptrace:` message and a default
/// return value.
macro_rules! ffi_boundary {
    ($name:literal, $body:block) => {
        $crate::ffi::guard($name, move || $body)
    };
}
pub(crate) use ffi_boundary;

pub(crate) fn guard<R: Default>(name: &'static str, body: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(r) => r,
        Err(_) => {
            crate::measure::warn_once(name, || {
                format!("internal error in {name}; the call was skipped (please report this)")
            });
            R::default()
        }
    }
}

/// A region handle as the measurement sees it (None for a NULL pointer).
///
/// # Safety
/// `handle` is null or points to an OPARI2 region handle variable: pointer-sized, aligned,
/// zero-initialised, and written only by this library.
pub(crate) unsafe fn slot<'a>(
    handle: *mut OPARI2_Region_handle,
) -> Option<&'a AtomicPtr<Construct>> {
    // SAFETY: AtomicPtr<T> has the layout of *mut T, which has the layout of `void*`; see the
    // function's contract for validity.
    unsafe { (handle as *const AtomicPtr<Construct>).as_ref() }
}

/// The bytes of a NUL-terminated CTC string (None for NULL).
///
/// # Safety
/// `ctc` is null or points to a NUL-terminated string.
pub(crate) unsafe fn ctc<'a>(ctc: *const c_char) -> Option<&'a [u8]> {
    // SAFETY: the function's contract.
    (!ctc.is_null()).then(|| unsafe { CStr::from_ptr(ctc) }.to_bytes())
}

/// The construct behind a handle, assigned from `ctc` if needed; None for NULL handles or an
/// unassigned handle without a string.
///
/// # Safety
/// As for [`slot`] and [`ctc`].
pub(crate) unsafe fn construct(
    handle: *mut OPARI2_Region_handle,
    ctc_string: *const c_char,
    user: bool,
) -> Option<&'static Construct> {
    // SAFETY: forwarded to the caller's contract.
    let (slot, text) = unsafe { (slot(handle)?, ctc(ctc_string)) };
    crate::measure::constructs::construct(slot, text, user)
}

/// Writes through an out-pointer if it is not NULL.
///
/// # Safety
/// `out` is null or valid for a write of `T`.
pub(crate) unsafe fn put<T>(out: *mut T, value: T) {
    if !out.is_null() {
        // SAFETY: the function's contract.
        unsafe { out.write(value) };
    }
}
