//! The Fortran spellings of the POMP2 entry points (semantics doc, section 2), for programs whose
//! Fortran sources went through OPARI2.
//!
//! Every entry is exported four times, as the reference library does: lower case with one
//! trailing underscore (gfortran, Intel, NVHPC, Cray), lower case (IBM xlf), lower case with two
//! underscores (g77-style), and upper case. Each spelling is a trampoline to one body, which
//! converts the Fortran arguments and calls the same code as the C entry point. cbindgen never
//! sees this file (the C headers declare only the C entry points).
//!
//! Fortran conventions (semantics doc 2.2-2.4):
//! * everything is passed by reference: region handles are `INTEGER*8` variables in a COMMON
//!   block (the library keeps its pointer in them), task handles `INTEGER*8`, `pomp2_if` a default
//!   LOGICAL and `pomp2_num_threads` an `INTEGER*4`;
//! * a CTC string is a `CHARACTER` constant: not NUL-terminated, blank-padded, its length a hidden
//!   `size_t` argument after all explicit arguments (gfortran >= 8). It is read only when the
//!   handle is still empty, and never beyond that length;
//! * `Do_enter`/`Do_exit` are the C `For_enter`/`For_exit`; the `Untied_task_*` calls are the tied
//!   ones; lock wrappers forward to the runtime's Fortran lock entries (`omp_set_lock_` ...) with
//!   the address of the Fortran lock variable, which also keys the lock registry.
//!
//! Safety contract of every function here (as in OPARI2's generated Fortran): handle and task
//! arguments are NULL or the addresses of 8-byte integer variables, the other scalars NULL or
//! readable, a CTC pointer with its hidden length denotes a readable CHARACTER value whenever the
//! handle is NULL, and lock arguments are the addresses of Fortran OpenMP lock variables.
#![allow(clippy::missing_safety_doc)]

use std::ffi::c_void;
use std::os::raw::{c_char, c_int};

use super::locks::real;
use super::pomp2 as c;
use super::types::OPARI2_Region_handle;
use super::{ffi_boundary, put, user};
use crate::lifecycle::active::Outcome;
use crate::lifecycle::{finish, start};
use crate::openmp::locks::fortran as omp;
use crate::ops::constructs::{self as m, lock_call, LockCall};
use crate::output::registry::Construct;

/// A region handle variable: `INTEGER(KIND=8)`, holding the library's pointer.
type Handle = i64;
/// A task handle variable: `INTEGER(KIND=8)`.
type Task = i64;
/// The hidden length of a CHARACTER argument (`size_t` for gfortran >= 8).
type Len = usize;

// Fortran handles hold pointers in 64-bit integers.
const _: () = assert!(std::mem::size_of::<OPARI2_Region_handle>() == std::mem::size_of::<Handle>());

/// A Fortran CTC string as bytes: at most `len` bytes, cut after the first `**` (the end of
/// every CTC string; the rest is blank padding) or before a NUL.
///
/// # Safety
/// `ctc` is NULL or readable up to the first of: `len` bytes, a `**`, a NUL.
unsafe fn ctc_text<'a>(ctc: *const c_char, len: Len) -> Option<&'a [u8]> {
    if ctc.is_null() {
        return None;
    }
    let bytes = ctc.cast::<u8>();
    let mut n = 0;
    let mut after_star = false;
    while n < len {
        // SAFETY: n < len, and nothing past a `**` or a NUL has been read (the contract).
        let b = unsafe { bytes.add(n).read() };
        if b == 0 {
            break;
        }
        n += 1;
        if b == b'*' && after_star {
            break;
        }
        after_star = b == b'*';
    }
    // SAFETY: the n bytes were just read.
    Some(unsafe { std::slice::from_raw_parts(bytes, n) })
}

/// The construct behind a handle, assigned from the CTC string when the handle is still empty.
/// The string is not looked at when the handle is already assigned.
///
/// # Safety
/// `h` is NULL or an OPARI2 handle variable; `ctc`/`len` as for [`ctc_text`] when `*h` is 0.
unsafe fn construct(
    h: *mut Handle,
    ctc: *const c_char,
    len: Len,
    user: bool,
) -> Option<&'static Construct> {
    // SAFETY: the function's contract; the handle has the size and alignment of a pointer.
    let slot = unsafe { super::slot(h.cast::<OPARI2_Region_handle>()) }?;
    // SAFETY: the string is only read when the handle is empty, when it is valid (the
    // function's contract).
    m::construct(slot, || unsafe { ctc_text(ctc, len) }, user)
}

/// The construct behind a handle for calls without a CTC string (None while unassigned).
///
/// # Safety
/// `h` is NULL or an OPARI2 handle variable.
unsafe fn assigned(h: *mut Handle) -> Option<&'static Construct> {
    // SAFETY: the function's contract; no string is passed.
    unsafe { super::construct(h.cast::<OPARI2_Region_handle>(), std::ptr::null(), false) }
}

/// A scalar passed by reference (its default for NULL).
///
/// # Safety
/// `p` is NULL or readable.
unsafe fn value<T: Copy + Default>(p: *const T) -> T {
    // SAFETY: the function's contract.
    unsafe { p.as_ref() }.copied().unwrap_or_default()
}

/// Defines Fortran entry points, each in its four spellings. An entry is either
/// `name, "UPPER", (args) [-> ret] { body }`, where `name` is the lower-case name without the
/// `pomp2_` prefix and the body runs inside [`ffi_boundary!`], or one of the two shorthands for
/// entries whose work is one call on the construct behind the handle:
/// `name, "UPPER": with_ctc call;` (handle and CTC string: an empty handle is assigned first)
/// and `name, "UPPER": assigned call;` (handle only), `call` a function of
/// `ops::constructs`; and one for the lock wrappers, `name, "UPPER": lock Call;`, which
/// records `LockCall::Call` around the runtime's Fortran entry of the same name
/// (`omp_<name>_`), or `name, "UPPER": test_lock Call;` for the two that return the runtime's
/// result.
macro_rules! fortran {
    () => {};
    (
        $(#[$attr:meta])* $name:ident, $upper:literal: with_ctc $call:ident fast $try:ident;
        $($rest:tt)*
    ) => {
        fortran!(@fast_entry $(#[$attr])* $name, $upper, (h: *mut Handle, ctc: *const c_char, len: Len)
            // SAFETY: the module's contract.
            fast |counted_at| {
                // SAFETY: the module's contract.
                match unsafe { fast_construct(h) } {
                    Some(c) => m::$try(c, counted_at),
                    None => Outcome::GENERAL,
                }
            }
            general {
                // SAFETY: the module's contract.
                if let Some(c) = unsafe { construct(h, ctc, len, false) } {
                    m::$call(c)
                }
            });
        fortran!($($rest)*);
    };
    (
        $(#[$attr:meta])* $name:ident, $upper:literal: assigned $call:ident fast $try:ident;
        $($rest:tt)*
    ) => {
        fortran!(@fast_entry $(#[$attr])* $name, $upper, (h: *mut Handle)
            // SAFETY: the module's contract.
            fast |counted_at| {
                // SAFETY: the module's contract.
                match unsafe { fast_construct(h) } {
                    Some(c) => m::$try(c, counted_at),
                    None => Outcome::GENERAL,
                }
            }
            general {
                // SAFETY: the module's contract.
                if let Some(c) = unsafe { assigned(h) } {
                    m::$call(c)
                }
            });
        fortran!($($rest)*);
    };
    ($(#[$attr:meta])* $name:ident, $upper:literal: with_ctc $call:ident; $($rest:tt)*) => {
        fortran!(@entry $(#[$attr])* $name, $upper, (h: *mut Handle, ctc: *const c_char, len: Len) {
            // SAFETY: the module's contract.
            if let Some(c) = unsafe { construct(h, ctc, len, false) } {
                m::$call(c)
            }
        });
        fortran!($($rest)*);
    };
    ($(#[$attr:meta])* $name:ident, $upper:literal: lock $call:ident; $($rest:tt)*) => {
        fortran!(@entry $(#[$attr])* $name, $upper, (lock: *mut c_void) {
            lock_call(LockCall::$call, lock as usize, || {
                // SAFETY: the module's contract.
                real(unsafe { omp::$name(lock) }, concat!("omp_", stringify!($name), "_"));
                0
            });
        });
        fortran!($($rest)*);
    };
    ($(#[$attr:meta])* $name:ident, $upper:literal: test_lock $call:ident; $($rest:tt)*) => {
        fortran!(@entry $(#[$attr])* $name, $upper, (lock: *mut c_void) -> c_int {
            // SAFETY: the module's contract.
            lock_call(LockCall::$call, lock as usize, || {
                real(unsafe { omp::$name(lock) }, concat!("omp_", stringify!($name), "_"))
            })
        });
        fortran!($($rest)*);
    };
    ($(#[$attr:meta])* $name:ident, $upper:literal: assigned $call:ident; $($rest:tt)*) => {
        fortran!(@entry $(#[$attr])* $name, $upper, (h: *mut Handle) {
            // SAFETY: the module's contract.
            if let Some(c) = unsafe { assigned(h) } {
                m::$call(c)
            }
        });
        fortran!($($rest)*);
    };
    (
        $(#[$attr:meta])*
        $name:ident, $upper:literal, ($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block
        $($rest:tt)*
    ) => {
        fortran!(@entry $(#[$attr])* $name, $upper, ($($arg: $ty),*) $(-> $ret)? $body);
        fortran!($($rest)*);
    };
    (
        @entry $(#[$attr:meta])*
        $name:ident, $upper:literal, ($($arg:ident: $ty:ty),*) $(-> $ret:ty)? $body:block
    ) => {
        $(#[$attr])*
        pub mod $name {
            #[allow(unused_imports)]
            use super::*;

            /// The entry point's work, compiled once and shared by the four spellings.
            ///
            /// # Safety
            /// The contract of `ffi::fortran`.
            #[inline(never)]
            pub(crate) unsafe fn body($($arg: $ty),*) $(-> $ret)? {
                ffi_boundary!($upper, $body)
            }

            fortran!(@spellings $name, $upper, ($($arg: $ty),*) $(-> $ret)?);
        }
    };
    // An entry with the fast path of `ffi::on_region!`: `$fast` calls nothing and says
    // whether it did the work; otherwise `$general` runs in a cold `extern "C"` function of
    // its own (its own panic boundary; it cannot unwind, so the call needs no landing pad).
    (
        @fast_entry $(#[$attr:meta])*
        $name:ident, $upper:literal, ($($arg:ident: $ty:ty),*)
        fast |$counted_at:ident| $fast:block general $general:block
    ) => {
        $(#[$attr])*
        pub mod $name {
            #[allow(unused_imports)]
            use super::*;

            /// # Safety
            /// The contract of `ffi::fortran`.
            #[cold]
            #[inline(never)]
            unsafe extern "C" fn general($($arg: $ty,)* outcome: Outcome) {
                let second = |time| {
                    let $counted_at = Some(time);
                    $fast
                };
                if crate::ffi::after_fast(outcome, second) {
                    ffi_boundary!($upper, $general)
                }
            }

            /// The entry point's work, compiled once and shared by the four spellings.
            ///
            /// # Safety
            /// The contract of `ffi::fortran`.
            #[inline(never)]
            pub(crate) unsafe fn body($($arg: $ty),*) {
                let outcome = {
                    let $counted_at = None;
                    $fast
                };
                if outcome.is_done() {
                    return;
                }
                // SAFETY: the same contract.
                unsafe { general($($arg,)* outcome) }
            }

            fortran!(@spellings $name, $upper, ($($arg: $ty),*));
        }
    };
    (@spellings $name:ident, $upper:literal, ($($arg:ident: $ty:ty),*) $(-> $ret:ty)?) => {
            #[export_name = concat!("pomp2_", stringify!($name), "_")]
            pub unsafe extern "C" fn lower_underscore($($arg: $ty),*) $(-> $ret)? {
                // SAFETY: the same contract.
                unsafe { body($($arg),*) }
            }

            #[export_name = concat!("pomp2_", stringify!($name))]
            pub unsafe extern "C" fn lower($($arg: $ty),*) $(-> $ret)? {
                // SAFETY: the same contract.
                unsafe { body($($arg),*) }
            }

            #[export_name = concat!("pomp2_", stringify!($name), "__")]
            pub unsafe extern "C" fn lower_two_underscores($($arg: $ty),*) $(-> $ret)? {
                // SAFETY: the same contract.
                unsafe { body($($arg),*) }
            }

            #[export_name = $upper]
            pub unsafe extern "C" fn upper($($arg: $ty),*) $(-> $ret)? {
                // SAFETY: the same contract.
                unsafe { body($($arg),*) }
            }
    };
}

/// The construct behind an assigned handle, calling nothing (fast paths).
///
/// # Safety
/// `h` is NULL or an OPARI2 handle variable.
#[inline(always)]
unsafe fn fast_construct(h: *mut Handle) -> Option<&'static Construct> {
    // SAFETY: the function's contract; the handle has the size and alignment of a pointer.
    unsafe { super::assigned(h.cast::<OPARI2_Region_handle>()) }
}

// ---- parallel regions ---------------------------------------------------------------------

fortran! {
    /// `POMP2_Parallel_fork(h, pomp2_if, pomp2_num_threads, pomp2_old_task, ctc)`.
    parallel_fork, "POMP2_PARALLEL_FORK",
    (h: *mut Handle, if_clause: *const c_int, num_threads: *const c_int, old: *mut Task,
     ctc: *const c_char, len: Len) {
        // SAFETY: the module's contract.
        unsafe {
            let c = construct(h, ctc, len, false);
            put(old, m::parallel_fork(c, value(if_clause) != 0, value(num_threads)));
        }
    }

    parallel_begin, "POMP2_PARALLEL_BEGIN", (h: *mut Handle) {
        // SAFETY: the module's contract.
        m::parallel_begin(unsafe { assigned(h) })
    }

    parallel_end, "POMP2_PARALLEL_END", (h: *mut Handle) {
        // SAFETY: the module's contract.
        m::parallel_end(unsafe { assigned(h) })
    }

    parallel_join, "POMP2_PARALLEL_JOIN", (h: *mut Handle, old: *const Task) {
        let _ = h;
        // SAFETY: the module's contract.
        m::parallel_join(unsafe { value(old) })
    }
}

// ---- worksharing and synchronisation: Enter/Leave of the outer or inner region ------------

fortran! {
    // `!$omp do` (the C `POMP2_For_enter`).
    do_enter, "POMP2_DO_ENTER": with_ctc enter_outer fast try_enter_outer;
    do_exit, "POMP2_DO_EXIT": assigned leave_outer fast try_leave_outer;

    // OPARI2 calls this without the CTC argument for `!$omp parallel sections` (semantics doc
    // 2.4), so `ctc` and `len` are garbage there. That call always comes with an assigned
    // handle: the combined construct shares the handle of its `pomp2_parallel_fork`, which
    // assigns it first. The string is read only for an empty handle, i.e. only for a plain
    // `!$omp sections`, which does pass it.
    sections_enter, "POMP2_SECTIONS_ENTER": with_ctc enter_outer fast try_enter_outer;
    sections_exit, "POMP2_SECTIONS_EXIT": assigned leave_outer fast try_leave_outer;
    section_begin, "POMP2_SECTION_BEGIN": with_ctc enter_inner fast try_enter_inner;
    section_end, "POMP2_SECTION_END": assigned leave_inner fast try_leave_inner;
    single_enter, "POMP2_SINGLE_ENTER": with_ctc enter_outer fast try_enter_outer;
    single_exit, "POMP2_SINGLE_EXIT": assigned leave_outer fast try_leave_outer;
    single_begin, "POMP2_SINGLE_BEGIN": assigned enter_inner fast try_enter_inner;
    single_end, "POMP2_SINGLE_END": assigned leave_inner fast try_leave_inner;
    master_begin, "POMP2_MASTER_BEGIN": with_ctc enter_inner fast try_enter_inner;
    master_end, "POMP2_MASTER_END": assigned leave_inner fast try_leave_inner;
    critical_enter, "POMP2_CRITICAL_ENTER": with_ctc enter_outer fast try_enter_outer;
    critical_exit, "POMP2_CRITICAL_EXIT": assigned leave_outer fast try_leave_outer;
    critical_begin, "POMP2_CRITICAL_BEGIN": assigned critical_begin;
    critical_end, "POMP2_CRITICAL_END": assigned critical_end;
    ordered_enter, "POMP2_ORDERED_ENTER": with_ctc enter_outer fast try_enter_outer;
    ordered_exit, "POMP2_ORDERED_EXIT": assigned leave_outer fast try_leave_outer;
    ordered_begin, "POMP2_ORDERED_BEGIN": assigned enter_inner fast try_enter_inner;
    ordered_end, "POMP2_ORDERED_END": assigned leave_inner fast try_leave_inner;
    atomic_enter, "POMP2_ATOMIC_ENTER": with_ctc enter_outer fast try_enter_outer;
    atomic_exit, "POMP2_ATOMIC_EXIT": assigned leave_outer fast try_leave_outer;
    flush_enter, "POMP2_FLUSH_ENTER": with_ctc enter_outer fast try_enter_outer;
    flush_exit, "POMP2_FLUSH_EXIT": assigned leave_outer fast try_leave_outer;
    workshare_enter, "POMP2_WORKSHARE_ENTER": with_ctc enter_outer fast try_enter_outer;
    workshare_exit, "POMP2_WORKSHARE_EXIT": assigned leave_outer fast try_leave_outer;
}

// ---- barriers and taskwait ----------------------------------------------------------------

fortran! {
    barrier_enter, "POMP2_BARRIER_ENTER",
    (h: *mut Handle, old: *mut Task, ctc: *const c_char, len: Len) {
        // SAFETY: the module's contract.
        unsafe { put(old, c::barrier_enter(construct(h, ctc, len, false))) }
    }

    barrier_exit, "POMP2_BARRIER_EXIT", (h: *mut Handle, old: *const Task) {
        // SAFETY: the module's contract.
        unsafe { c::barrier_exit(assigned(h), value(old)) }
    }

    implicit_barrier_enter, "POMP2_IMPLICIT_BARRIER_ENTER", (h: *mut Handle, old: *mut Task) {
        // SAFETY: the module's contract.
        unsafe { put(old, c::implicit_barrier_enter(assigned(h))) }
    }

    implicit_barrier_exit, "POMP2_IMPLICIT_BARRIER_EXIT", (h: *mut Handle, old: *const Task) {
        // SAFETY: the module's contract.
        unsafe { c::implicit_barrier_exit(assigned(h), value(old)) }
    }

    taskwait_begin, "POMP2_TASKWAIT_BEGIN",
    (h: *mut Handle, old: *mut Task, ctc: *const c_char, len: Len) {
        // SAFETY: the module's contract.
        unsafe { put(old, c::barrier_enter(construct(h, ctc, len, false))) }
    }

    taskwait_end, "POMP2_TASKWAIT_END", (h: *mut Handle, old: *const Task) {
        // SAFETY: the module's contract.
        unsafe { c::barrier_exit(assigned(h), value(old)) }
    }
}

// ---- tasks (untied ones are recorded as tied ones, as the reference does) -------------------

fortran! {
    task_create_begin, "POMP2_TASK_CREATE_BEGIN",
    (h: *mut Handle, new: *mut Task, old: *mut Task, _if_clause: *const c_int,
     ctc: *const c_char, len: Len) {
        // SAFETY: the module's contract.
        unsafe {
            if let Some((n, o)) = c::task_create_begin(construct(h, ctc, len, false)) {
                put(new, n);
                put(old, o);
            }
        }
    }

    task_create_end, "POMP2_TASK_CREATE_END", (h: *mut Handle, old: *const Task) {
        // SAFETY: the module's contract.
        unsafe { c::task_create_end(assigned(h), value(old)) }
    }

    task_begin, "POMP2_TASK_BEGIN", (h: *mut Handle, task: *const Task) {
        // SAFETY: the module's contract.
        unsafe { c::task_begin(assigned(h), value(task)) }
    }

    task_end, "POMP2_TASK_END": assigned task_end;
    untied_task_create_begin, "POMP2_UNTIED_TASK_CREATE_BEGIN",
    (h: *mut Handle, new: *mut Task, old: *mut Task, _if_clause: *const c_int,
     ctc: *const c_char, len: Len) {
        // SAFETY: the module's contract.
        unsafe { super::task_create_begin::body(h, new, old, _if_clause, ctc, len) }
    }

    untied_task_create_end, "POMP2_UNTIED_TASK_CREATE_END", (h: *mut Handle, old: *const Task) {
        // SAFETY: the module's contract.
        unsafe { super::task_create_end::body(h, old) }
    }

    untied_task_begin, "POMP2_UNTIED_TASK_BEGIN", (h: *mut Handle, task: *const Task) {
        // SAFETY: the module's contract.
        unsafe { super::task_begin::body(h, task) }
    }

    untied_task_end, "POMP2_UNTIED_TASK_END", (h: *mut Handle) {
        // SAFETY: the module's contract.
        unsafe { super::task_end::body(h) }
    }
}

// ---- handle registration, user regions and control calls ------------------------------------

fortran! {
    /// Called by the `pomp2_init_reg_*_` subroutines of the init file.
    assign_handle, "POMP2_ASSIGN_HANDLE", (h: *mut Handle, ctc: *const c_char, len: Len) {
        // SAFETY: the module's contract.
        let _ = unsafe { construct(h, ctc, len, false) };
    }

    /// Called by the `pomp2_user_init_reg_*_` subroutines of the init file.
    user_assign_handle, "POMP2_USER_ASSIGN_HANDLE",
    (h: *mut Handle, ctc: *const c_char, len: Len) {
        // SAFETY: the module's contract.
        let _ = unsafe { construct(h, ctc, len, true) };
    }

    /// `!$pomp inst begin(name)`.
    begin, "POMP2_BEGIN", (h: *mut Handle, ctc: *const c_char, len: Len) {
        // SAFETY: the module's contract.
        if let Some(c) = unsafe { construct(h, ctc, len, true) } {
            m::enter_outer(c)
        }
    }

    // `!$pomp inst end(name)` and every `!$pomp inst altend(name)`.
    end, "POMP2_END": assigned leave_outer fast try_leave_outer;

    /// `!$pomp inst init`.
    init, "POMP2_INIT", () {
        let _ = start::started();
    }

    /// `!$pomp inst finalize`.
    finalize, "POMP2_FINALIZE", () {
        finish::finalize()
    }

    /// `!$pomp inst on`.
    on, "POMP2_ON", () {
        user::on_off(true)
    }

    /// `!$pomp inst off`.
    off, "POMP2_OFF", () {
        user::on_off(false)
    }

    /// `pomp2_lib_get_max_threads()`, which OPARI2 uses for the default team size.
    lib_get_max_threads, "POMP2_LIB_GET_MAX_THREADS", () -> c_int {
        crate::openmp::max_threads()
    }
}

// ---- lock wrappers: the runtime's Fortran lock entries, keyed by the variable's address -----

fortran! {
    init_lock, "POMP2_INIT_LOCK": lock Init;
    destroy_lock, "POMP2_DESTROY_LOCK": lock Destroy;
    set_lock, "POMP2_SET_LOCK": lock Set;
    unset_lock, "POMP2_UNSET_LOCK": lock Unset;

    /// Returns the LOGICAL `omp_test_lock` returned.
    test_lock, "POMP2_TEST_LOCK": test_lock Test;

    init_nest_lock, "POMP2_INIT_NEST_LOCK": lock InitNest;
    destroy_nest_lock, "POMP2_DESTROY_NEST_LOCK": lock DestroyNest;
    set_nest_lock, "POMP2_SET_NEST_LOCK": lock SetNest;
    unset_nest_lock, "POMP2_UNSET_NEST_LOCK": lock UnsetNest;

    /// Returns the new nesting count (0: not obtained), as `omp_test_nest_lock` does.
    test_nest_lock, "POMP2_TEST_NEST_LOCK": test_lock TestNest;
}

#[cfg(test)]
mod tests {
    use super::ctc_text;

    fn text(s: &[u8], len: usize) -> Vec<u8> {
        // SAFETY: `s` is readable for its whole length, and len <= s.len() in every call.
        unsafe { ctc_text(s.as_ptr().cast(), len) }
            .unwrap()
            .to_vec()
    }

    #[test]
    fn ctc_strings_are_bounded_by_the_hidden_length() {
        let padded = b"20*regionType=barrier**  ";
        assert_eq!(text(padded, padded.len()), b"20*regionType=barrier**");
        // The length wins over a missing terminator; a NUL ends the text too.
        assert_eq!(text(b"5*regionType=x*", 6), b"5*regi");
        assert_eq!(text(b"5*re\0gionType", 12), b"5*re");
        assert_eq!(text(b"3**garbage", 10), b"3**");
        assert_eq!(text(b"anything", 0), b"");
        // SAFETY: NULL is allowed.
        assert!(unsafe { ctc_text(std::ptr::null(), 5) }.is_none());
    }
}
