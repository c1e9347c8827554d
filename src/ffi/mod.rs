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

use crate::output::registry::Construct;
use types::OPARI2_Region_handle;

/// Runs an entry point's body, turning a panic into one `pomptrace:` message and a default
/// return value.
macro_rules! ffi_boundary {
    ($name:literal, $body:block) => {
        $crate::ffi::guard($name, move || $body)
    };
}
pub(crate) use ffi_boundary;

/// No CTC string: calls that never assign a handle.
pub(crate) const NO_CTC: *const c_char = std::ptr::null();

/// The body of an entry point whose work is one call on the construct behind its handle, and
/// nothing for a NULL or unassigned handle. `$ctc` assigns an empty handle first (`NO_CTC` for
/// calls that carry no string). Relies on the calling module's safety contract: the handle is
/// NULL or an OPARI2 handle variable, the string NULL or NUL-terminated.
macro_rules! on_construct {
    ($name:literal, $handle:expr, $ctc:expr => $call:path) => {
        $crate::ffi::ffi_boundary!($name, {
            // SAFETY: the calling module's contract (see the macro).
            if let Some(c) = unsafe { $crate::ffi::construct($handle, $ctc, false) } {
                $call(c)
            }
        })
    };
}
pub(crate) use on_construct;

/// The body of an entry point that records one Enter or Leave of the construct behind its
/// handle: `$try` / `$call` is a pair of `ops::constructs` (`try_enter_outer` /
/// `enter_outer`, ...). An assigned handle in the common state of a run takes `$try`, which
/// calls nothing: the entry point then needs no stack frame of its own, and nothing on that
/// path can panic, so it runs outside the panic boundary. Everything else (an empty handle, a
/// measurement not running, a full chunk, ...) goes to a cold `extern "C"` function holding
/// `on_construct!`, called in tail position: it catches its own panics, and an `extern "C"`
/// function cannot unwind, so the call needs no landing pad either.
/// `user` before the handle: a user region's handle (assigned as one).
macro_rules! on_region {
    ($name:literal, $handle:expr, $ctc:expr => $try:path, $call:path) => {
        $crate::ffi::on_region!(@ $name, false, $handle, $ctc => $try, $call)
    };
    ($name:literal, user $handle:expr, $ctc:expr => $try:path, $call:path) => {
        $crate::ffi::on_region!(@ $name, true, $handle, $ctc => $try, $call)
    };
    (@ $name:literal, $user:expr, $handle:expr, $ctc:expr => $try:path, $call:path) => {{
        /// # Safety
        /// The entry point's contract.
        #[cold]
        #[inline(never)]
        unsafe extern "C" fn general(
            handle: *mut $crate::ffi::types::OPARI2_Region_handle,
            ctc: *const std::os::raw::c_char,
            outcome: $crate::lifecycle::active::Outcome,
        ) {
            // SAFETY: the entry point's contract.
            let second = |time| match unsafe { $crate::ffi::assigned(handle) } {
                Some(c) => $try(c, Some(time)),
                None => $crate::lifecycle::active::Outcome::GENERAL,
            };
            if !$crate::ffi::after_fast(outcome, second) {
                return;
            }
            $crate::ffi::ffi_boundary!($name, {
                // SAFETY: the entry point's contract.
                if let Some(c) = unsafe { $crate::ffi::construct(handle, ctc, $user) } {
                    $call(c)
                }
            })
        }
        // SAFETY: the calling module's contract (see `on_construct!`).
        let outcome = match unsafe { $crate::ffi::assigned($handle) } {
            Some(c) => $try(c, None),
            None => $crate::lifecycle::active::Outcome::GENERAL,
        };
        if outcome.is_done() {
            return;
        }
        // SAFETY: as above.
        unsafe { general($handle, $ctc, outcome) }
    }};
}
pub(crate) use on_region;

/// The body of an entry point that hands the construct behind its handle (None for NULL or
/// unassigned) to `$call`; with `=> $out`, the result goes through that out-pointer (NULL or
/// writable, by the calling module's contract).
macro_rules! with_construct {
    ($name:literal, $handle:expr, $ctc:expr, |$c:ident| $call:expr) => {
        $crate::ffi::ffi_boundary!($name, {
            // SAFETY: the calling module's contract (see `on_construct!`).
            let $c = unsafe { $crate::ffi::construct($handle, $ctc, false) };
            $call
        })
    };
    ($name:literal, $handle:expr, $ctc:expr, |$c:ident| $call:expr => $out:expr) => {
        $crate::ffi::ffi_boundary!($name, {
            // SAFETY: the calling module's contract (see `on_construct!`).
            let $c = unsafe { $crate::ffi::construct($handle, $ctc, false) };
            let result = $call;
            // SAFETY: the calling module's contract: the out-pointer is NULL or writable.
            unsafe { $crate::ffi::put($out, result) }
        })
    };
}
pub(crate) use with_construct;

/// What is left of a call after its fast path said `outcome` (not `DONE`): the second try
/// (`second`, given the time of the first) when the outcome asks for it, so that the event is
/// recorded at its time before anything else runs, then a signal that arrived meanwhile
/// raised; true if the general path still has to record the call.
#[inline(always)]
pub(crate) fn after_fast(
    outcome: crate::lifecycle::active::Outcome,
    second: impl FnOnce(u64) -> crate::lifecycle::active::Outcome,
) -> bool {
    let needs_general = match outcome.counted_at() {
        Some(time) => second(time).needs_general(),
        None => outcome.needs_general(),
    };
    crate::lifecycle::active::raise_pending_signal();
    needs_general
}

#[inline(always)]
pub(crate) fn guard<R: Default>(name: &'static str, body: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(r) => r,
        Err(payload) => {
            // Out of line and by value: the name is materialised only here, in the landing
            // pad's path, not stored on every call.
            panicked(name, payload);
            R::default()
        }
    }
}

/// The one `pomptrace:` message for a panic caught at the boundary of `name`.
#[cold]
#[inline(never)]
fn panicked(name: &'static str, payload: Box<dyn std::any::Any + Send>) {
    drop(payload);
    crate::base::diagnostics::warn_once(name, || {
        format!("internal error in {name}; the call was skipped (please report this)")
    });
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
#[inline(always)]
pub(crate) unsafe fn construct(
    handle: *mut OPARI2_Region_handle,
    ctc_string: *const c_char,
    user: bool,
) -> Option<&'static Construct> {
    // SAFETY: forwarded to the caller's contract; the string is only read for an empty handle.
    let slot = unsafe { slot(handle)? };
    crate::ops::constructs::construct(slot, || unsafe { ctc(ctc_string) }, user)
}

/// The construct behind an assigned handle; None for NULL or an unassigned handle. Calls
/// nothing (the fast paths of `on_region!`).
///
/// # Safety
/// As for [`slot`].
#[inline(always)]
pub(crate) unsafe fn assigned(handle: *mut OPARI2_Region_handle) -> Option<&'static Construct> {
    // SAFETY: forwarded to the caller's contract.
    let slot = unsafe { slot(handle)? };
    let construct = slot.load(std::sync::atomic::Ordering::Acquire);
    // SAFETY: as in `ops::constructs::construct`: a handle holds null or a leaked,
    // immutable construct.
    unsafe { construct.as_ref() }
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

#[cfg(test)]
mod tests {
    #[test]
    fn a_panic_stops_at_the_boundary_with_the_default_result() {
        let r: u32 = ffi_boundary!("POMP2_Test_boundary", { panic!("deliberate") });
        assert_eq!(r, 0);
        let r: u32 = ffi_boundary!("POMP2_Test_boundary", { 7 });
        assert_eq!(r, 7);
    }
}
