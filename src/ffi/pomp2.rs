//! The OpenMP entry points of `pomp2_lib.h`: parallel regions, worksharing, synchronisation and
//! tasks. Calls with a CTC string assign a NULL handle lazily; calls without one skip their
//! events on a NULL handle.
//!
//! Safety contract of every function here (as in OPARI2's generated code): `pomp2_handle` is
//! NULL or the address of an OPARI2 region handle variable; `ctc_string` is NULL or a
//! NUL-terminated string; task-handle out-pointers are NULL or writable.
#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::os::raw::{c_char, c_int};

use super::types::{POMP2_Region_handle, POMP2_Task_handle};
use super::{ffi_boundary, on_construct, on_region, put, slot, with_construct, NO_CTC};
use crate::lifecycle::active::Outcome;
use crate::ops::constructs as m;
use crate::output::registry::{Construct, FastRegion};

/// The body of a wait-type entry point (barrier, implicit barrier, taskwait) with the fast
/// path of `on_region!`: `enter` passes the encountering task out through `$out`, `exit` takes
/// it back as `$old`; `$region` picks the construct's region, `$general` is the function the
/// general path calls with the construct (None for an unassigned handle).
macro_rules! on_wait {
    (enter $name:literal, $handle:expr, $ctc:expr, $out:expr, $region:expr => $general:path) => {{
        /// # Safety
        /// The entry point's contract.
        #[cold]
        #[inline(never)]
        unsafe extern "C" fn general(
            handle: *mut POMP2_Region_handle,
            out: *mut POMP2_Task_handle,
            ctc: *const c_char,
            outcome: Outcome,
        ) {
            let second = |time| {
                // SAFETY: the entry point's contract.
                match unsafe { super::assigned(handle) } {
                    Some(c) => {
                        let (outcome, old) = m::try_wait_enter($region(c), Some(time));
                        if !outcome.needs_general() {
                            // SAFETY: as above (out-pointers are NULL or writable).
                            unsafe { put(out, old) };
                        }
                        outcome
                    }
                    None => Outcome::GENERAL,
                }
            };
            if super::after_fast(outcome, second) {
                with_construct!($name, handle, ctc, |c| $general(c) => out)
            }
        }
        // SAFETY: the module's contract.
        let construct = unsafe { super::assigned($handle) };
        let (outcome, old) = match construct {
            Some(c) => m::try_wait_enter($region(c), None),
            None => (Outcome::GENERAL, 0),
        };
        if !outcome.needs_general() {
            // SAFETY: the module's contract (out-pointers are NULL or writable).
            unsafe { put($out, old) };
            if outcome.is_done() {
                return;
            }
        }
        // SAFETY: as above.
        unsafe { general($handle, $out, $ctc, outcome) }
    }};
    (exit $name:literal, $handle:expr, $old:expr, $region:expr => $general:path) => {{
        /// # Safety
        /// The entry point's contract.
        #[cold]
        #[inline(never)]
        unsafe extern "C" fn general(
            handle: *mut POMP2_Region_handle,
            old: POMP2_Task_handle,
            outcome: Outcome,
        ) {
            // SAFETY: the entry point's contract.
            let second = |time| match unsafe { super::assigned(handle) } {
                Some(c) => m::try_wait_exit($region(c), old, Some(time)),
                None => Outcome::GENERAL,
            };
            if super::after_fast(outcome, second) {
                with_construct!($name, handle, NO_CTC, |c| $general(c, old))
            }
        }
        // SAFETY: the module's contract.
        let construct = unsafe { super::assigned($handle) };
        let outcome = match construct {
            Some(c) => m::try_wait_exit($region(c), $old, None),
            None => Outcome::GENERAL,
        };
        if outcome.is_done() {
            return;
        }
        // SAFETY: as above.
        unsafe { general($handle, $old, outcome) }
    }};
}

/// The outer region of a barrier or taskwait.
fn outer(c: &Construct) -> &FastRegion {
    &c.fast.outer
}

/// The implicit barrier's region of a construct.
fn implicit_barrier(c: &Construct) -> &FastRegion {
    &c.fast.implicit_barrier
}

/// The encountering thread, before the team exists.
#[no_mangle]
pub unsafe extern "C" fn POMP2_Parallel_fork(
    pomp2_handle: *mut POMP2_Region_handle,
    if_clause: c_int,
    num_threads: c_int,
    pomp2_old_task: *mut POMP2_Task_handle,
    ctc_string: *const c_char,
) {
    // The construct is assigned here; the fork needs no region, only what the construct's
    // teams are known to receive (`Construct::copies_tpd`).
    with_construct!("POMP2_Parallel_fork", pomp2_handle, ctc_string, |c| {
        m::parallel_fork(c, if_clause != 0, num_threads)
    } => pomp2_old_task)
}

/// Every team member, first statement of the region.
#[no_mangle]
pub unsafe extern "C" fn POMP2_Parallel_begin(pomp2_handle: *mut POMP2_Region_handle) {
    with_construct!("POMP2_Parallel_begin", pomp2_handle, NO_CTC, |c| {
        m::parallel_begin(c)
    })
}

/// Every team member, last statement of the region.
#[no_mangle]
pub unsafe extern "C" fn POMP2_Parallel_end(pomp2_handle: *mut POMP2_Region_handle) {
    with_construct!("POMP2_Parallel_end", pomp2_handle, NO_CTC, |c| {
        m::parallel_end(c)
    })
}

/// The encountering thread, after the region.
#[no_mangle]
pub unsafe extern "C" fn POMP2_Parallel_join(
    pomp2_handle: *mut POMP2_Region_handle,
    pomp2_old_task: POMP2_Task_handle,
) {
    ffi_boundary!("POMP2_Parallel_join", {
        let _ = pomp2_handle;
        m::parallel_join(pomp2_old_task)
    })
}

/// Every thread that encounters a `for` (or Fortran `do`) loop.
#[no_mangle]
pub unsafe extern "C" fn POMP2_For_enter(
    pomp2_handle: *mut POMP2_Region_handle,
    ctc_string: *const c_char,
) {
    on_region!("POMP2_For_enter", pomp2_handle, ctc_string => m::try_enter_outer, m::enter_outer)
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_For_exit(pomp2_handle: *mut POMP2_Region_handle) {
    on_region!("POMP2_For_exit", pomp2_handle, NO_CTC => m::try_leave_outer, m::leave_outer)
}

/// Every thread that encounters a `sections` construct.
#[no_mangle]
pub unsafe extern "C" fn POMP2_Sections_enter(
    pomp2_handle: *mut POMP2_Region_handle,
    ctc_string: *const c_char,
) {
    on_region!("POMP2_Sections_enter", pomp2_handle, ctc_string => m::try_enter_outer, m::enter_outer)
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Sections_exit(pomp2_handle: *mut POMP2_Region_handle) {
    on_region!("POMP2_Sections_exit", pomp2_handle, NO_CTC => m::try_leave_outer, m::leave_outer)
}

/// The thread that executes a `section` (the handle is the `sections` one).
#[no_mangle]
pub unsafe extern "C" fn POMP2_Section_begin(
    pomp2_handle: *mut POMP2_Region_handle,
    ctc_string: *const c_char,
) {
    on_region!("POMP2_Section_begin", pomp2_handle, ctc_string => m::try_enter_inner, m::enter_inner)
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Section_end(pomp2_handle: *mut POMP2_Region_handle) {
    on_region!("POMP2_Section_end", pomp2_handle, NO_CTC => m::try_leave_inner, m::leave_inner)
}

/// Every thread that encounters a `single` construct.
#[no_mangle]
pub unsafe extern "C" fn POMP2_Single_enter(
    pomp2_handle: *mut POMP2_Region_handle,
    ctc_string: *const c_char,
) {
    on_region!("POMP2_Single_enter", pomp2_handle, ctc_string => m::try_enter_outer, m::enter_outer)
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Single_exit(pomp2_handle: *mut POMP2_Region_handle) {
    on_region!("POMP2_Single_exit", pomp2_handle, NO_CTC => m::try_leave_outer, m::leave_outer)
}

/// The thread that executes the `single` block.
#[no_mangle]
pub unsafe extern "C" fn POMP2_Single_begin(pomp2_handle: *mut POMP2_Region_handle) {
    on_region!("POMP2_Single_begin", pomp2_handle, NO_CTC => m::try_enter_inner, m::enter_inner)
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Single_end(pomp2_handle: *mut POMP2_Region_handle) {
    on_region!("POMP2_Single_end", pomp2_handle, NO_CTC => m::try_leave_inner, m::leave_inner)
}

/// The master thread at a `master` construct.
#[no_mangle]
pub unsafe extern "C" fn POMP2_Master_begin(
    pomp2_handle: *mut POMP2_Region_handle,
    ctc_string: *const c_char,
) {
    on_region!("POMP2_Master_begin", pomp2_handle, ctc_string => m::try_enter_inner, m::enter_inner)
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Master_end(pomp2_handle: *mut POMP2_Region_handle) {
    on_region!("POMP2_Master_end", pomp2_handle, NO_CTC => m::try_leave_inner, m::leave_inner)
}

/// Every thread at a `critical` construct, outside the mutual exclusion.
#[no_mangle]
pub unsafe extern "C" fn POMP2_Critical_enter(
    pomp2_handle: *mut POMP2_Region_handle,
    ctc_string: *const c_char,
) {
    on_region!("POMP2_Critical_enter", pomp2_handle, ctc_string => m::try_enter_outer, m::enter_outer)
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Critical_exit(pomp2_handle: *mut POMP2_Region_handle) {
    on_region!("POMP2_Critical_exit", pomp2_handle, NO_CTC => m::try_leave_outer, m::leave_outer)
}

/// Inside the mutual exclusion of a `critical` construct.
#[no_mangle]
pub unsafe extern "C" fn POMP2_Critical_begin(pomp2_handle: *mut POMP2_Region_handle) {
    on_construct!("POMP2_Critical_begin", pomp2_handle, NO_CTC => m::critical_begin)
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Critical_end(pomp2_handle: *mut POMP2_Region_handle) {
    on_construct!("POMP2_Critical_end", pomp2_handle, NO_CTC => m::critical_end)
}

/// The thread executing an iteration, before waiting for its `ordered` turn.
#[no_mangle]
pub unsafe extern "C" fn POMP2_Ordered_enter(
    pomp2_handle: *mut POMP2_Region_handle,
    ctc_string: *const c_char,
) {
    on_region!("POMP2_Ordered_enter", pomp2_handle, ctc_string => m::try_enter_outer, m::enter_outer)
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Ordered_exit(pomp2_handle: *mut POMP2_Region_handle) {
    on_region!("POMP2_Ordered_exit", pomp2_handle, NO_CTC => m::try_leave_outer, m::leave_outer)
}

/// The same thread, while it holds the ordered turn.
#[no_mangle]
pub unsafe extern "C" fn POMP2_Ordered_begin(pomp2_handle: *mut POMP2_Region_handle) {
    on_region!("POMP2_Ordered_begin", pomp2_handle, NO_CTC => m::try_enter_inner, m::enter_inner)
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Ordered_end(pomp2_handle: *mut POMP2_Region_handle) {
    on_region!("POMP2_Ordered_end", pomp2_handle, NO_CTC => m::try_leave_inner, m::leave_inner)
}

/// Around an `atomic` statement.
#[no_mangle]
pub unsafe extern "C" fn POMP2_Atomic_enter(
    pomp2_handle: *mut POMP2_Region_handle,
    ctc_string: *const c_char,
) {
    on_region!("POMP2_Atomic_enter", pomp2_handle, ctc_string => m::try_enter_outer, m::enter_outer)
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Atomic_exit(pomp2_handle: *mut POMP2_Region_handle) {
    on_region!("POMP2_Atomic_exit", pomp2_handle, NO_CTC => m::try_leave_outer, m::leave_outer)
}

/// Around a `flush`.
#[no_mangle]
pub unsafe extern "C" fn POMP2_Flush_enter(
    pomp2_handle: *mut POMP2_Region_handle,
    ctc_string: *const c_char,
) {
    on_region!("POMP2_Flush_enter", pomp2_handle, ctc_string => m::try_enter_outer, m::enter_outer)
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Flush_exit(pomp2_handle: *mut POMP2_Region_handle) {
    on_region!("POMP2_Flush_exit", pomp2_handle, NO_CTC => m::try_leave_outer, m::leave_outer)
}

/// Every thread at a Fortran `workshare` construct.
#[no_mangle]
pub unsafe extern "C" fn POMP2_Workshare_enter(
    pomp2_handle: *mut POMP2_Region_handle,
    ctc_string: *const c_char,
) {
    on_region!("POMP2_Workshare_enter", pomp2_handle, ctc_string => m::try_enter_outer, m::enter_outer)
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Workshare_exit(pomp2_handle: *mut POMP2_Region_handle) {
    on_region!("POMP2_Workshare_exit", pomp2_handle, NO_CTC => m::try_leave_outer, m::leave_outer)
}

/// Every thread at an explicit `barrier`.
#[no_mangle]
pub unsafe extern "C" fn POMP2_Barrier_enter(
    pomp2_handle: *mut POMP2_Region_handle,
    pomp2_old_task: *mut POMP2_Task_handle,
    ctc_string: *const c_char,
) {
    on_wait!(enter "POMP2_Barrier_enter", pomp2_handle, ctc_string, pomp2_old_task, outer => barrier_enter)
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Barrier_exit(
    pomp2_handle: *mut POMP2_Region_handle,
    pomp2_old_task: POMP2_Task_handle,
) {
    on_wait!(exit "POMP2_Barrier_exit", pomp2_handle, pomp2_old_task, outer => barrier_exit)
}

/// Every thread at the barrier OPARI2 makes explicit at the end of a construct.
#[no_mangle]
pub unsafe extern "C" fn POMP2_Implicit_barrier_enter(
    pomp2_handle: *mut POMP2_Region_handle,
    pomp2_old_task: *mut POMP2_Task_handle,
) {
    on_wait!(enter "POMP2_Implicit_barrier_enter", pomp2_handle, NO_CTC, pomp2_old_task, implicit_barrier => implicit_barrier_enter)
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Implicit_barrier_exit(
    pomp2_handle: *mut POMP2_Region_handle,
    pomp2_old_task: POMP2_Task_handle,
) {
    on_wait!(exit "POMP2_Implicit_barrier_exit", pomp2_handle, pomp2_old_task, implicit_barrier => implicit_barrier_exit)
}

/// The encountering thread at a `taskwait`.
#[no_mangle]
pub unsafe extern "C" fn POMP2_Taskwait_begin(
    pomp2_handle: *mut POMP2_Region_handle,
    pomp2_old_task: *mut POMP2_Task_handle,
    ctc_string: *const c_char,
) {
    on_wait!(enter "POMP2_Taskwait_begin", pomp2_handle, ctc_string, pomp2_old_task, outer => barrier_enter)
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Taskwait_end(
    pomp2_handle: *mut POMP2_Region_handle,
    pomp2_old_task: POMP2_Task_handle,
) {
    on_wait!(exit "POMP2_Taskwait_end", pomp2_handle, pomp2_old_task, outer => barrier_exit)
}

/// The creating thread, before a `task` directive.
#[no_mangle]
pub unsafe extern "C" fn POMP2_Task_create_begin(
    pomp2_handle: *mut POMP2_Region_handle,
    pomp2_new_task: *mut POMP2_Task_handle,
    pomp2_old_task: *mut POMP2_Task_handle,
    pomp2_if: c_int,
    ctc_string: *const c_char,
) {
    let _ = pomp2_if;
    with_construct!("POMP2_Task_create_begin", pomp2_handle, ctc_string, |c| {
        if let Some((new, old)) = task_create_begin(c) {
            // SAFETY: the module's contract (out-pointers are NULL or writable).
            unsafe {
                put(pomp2_new_task, new);
                put(pomp2_old_task, old);
            }
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Task_create_end(
    pomp2_handle: *mut POMP2_Region_handle,
    pomp2_old_task: POMP2_Task_handle,
) {
    with_construct!("POMP2_Task_create_end", pomp2_handle, NO_CTC, |c| {
        task_create_end(c, pomp2_old_task)
    })
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Task_begin(
    pomp2_handle: *mut POMP2_Region_handle,
    pomp2_task: POMP2_Task_handle,
) {
    with_construct!("POMP2_Task_begin", pomp2_handle, NO_CTC, |c| task_begin(
        c, pomp2_task
    ))
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Task_end(pomp2_handle: *mut POMP2_Region_handle) {
    on_construct!("POMP2_Task_end", pomp2_handle, NO_CTC => m::task_end)
}

/// As `POMP2_Task_create_begin`, for untied tasks (`--omp-task-untied=keep`).
#[no_mangle]
pub unsafe extern "C" fn POMP2_Untied_task_create_begin(
    pomp2_handle: *mut POMP2_Region_handle,
    pomp2_new_task: *mut POMP2_Task_handle,
    pomp2_old_task: *mut POMP2_Task_handle,
    pomp2_if: c_int,
    ctc_string: *const c_char,
) {
    // Untied tasks are recorded as tied ones, as the reference does.
    // SAFETY: same contract as the tied entry point.
    unsafe {
        POMP2_Task_create_begin(
            pomp2_handle,
            pomp2_new_task,
            pomp2_old_task,
            pomp2_if,
            ctc_string,
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Untied_task_create_end(
    pomp2_handle: *mut POMP2_Region_handle,
    pomp2_old_task: POMP2_Task_handle,
) {
    // Untied tasks are recorded as tied ones, as the reference does.
    // SAFETY: same contract as the tied entry point.
    unsafe { POMP2_Task_create_end(pomp2_handle, pomp2_old_task) }
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Untied_task_begin(
    pomp2_handle: *mut POMP2_Region_handle,
    pomp2_task: POMP2_Task_handle,
) {
    // Untied tasks are recorded as tied ones, as the reference does.
    // SAFETY: same contract as the tied entry point.
    unsafe { POMP2_Task_begin(pomp2_handle, pomp2_task) }
}

#[no_mangle]
pub unsafe extern "C" fn POMP2_Untied_task_end(pomp2_handle: *mut POMP2_Region_handle) {
    // Untied tasks are recorded as tied ones, as the reference does.
    // SAFETY: same contract as the tied entry point.
    unsafe { POMP2_Task_end(pomp2_handle) }
}

/// A fresh task id: `(omp_get_thread_num() << 32) + counter`, the counter per thread from 1.
#[no_mangle]
pub unsafe extern "C" fn POMP2_Get_new_task_handle() -> POMP2_Task_handle {
    ffi_boundary!("POMP2_Get_new_task_handle", {
        crate::model::tasks::new_handle()
    })
}

/// Defines a construct's regions (called by the init file, or lazily).
#[no_mangle]
pub unsafe extern "C" fn POMP2_Assign_handle(
    pomp2_handle: *mut POMP2_Region_handle,
    ctc_string: *const c_char,
) {
    ffi_boundary!("POMP2_Assign_handle", {
        // SAFETY: the module's contract.
        unsafe {
            if let (Some(slot), Some(text)) = (slot(pomp2_handle), super::ctc(ctc_string)) {
                m::assign(slot, text, false);
            }
        }
    })
}

// ---- what the calls do once their arguments are converted; shared with fortran.rs ----------

/// The region a wait-type call records (None: an unassigned handle, recorded as nothing).
fn wait_region(c: Option<&Construct>, pick: impl Fn(&Construct) -> u32) -> u32 {
    c.map_or(crate::output::registry::NO_REGION, pick)
}

/// Barrier and taskwait entry: returns the encountering task for `pomp2_old_task`.
#[inline(always)]
pub(crate) fn barrier_enter(c: Option<&Construct>) -> POMP2_Task_handle {
    m::wait_enter(wait_region(c, |c| c.outer))
}

/// Barrier and taskwait exit.
#[inline(always)]
pub(crate) fn barrier_exit(c: Option<&Construct>, old: POMP2_Task_handle) {
    m::wait_exit(wait_region(c, |c| c.outer), old)
}

/// Implicit barrier entry: returns the encountering task for `pomp2_old_task`.
#[inline(always)]
pub(crate) fn implicit_barrier_enter(c: Option<&Construct>) -> POMP2_Task_handle {
    m::wait_enter(wait_region(c, |c| c.implicit_barrier))
}

#[inline(always)]
pub(crate) fn implicit_barrier_exit(c: Option<&Construct>, old: POMP2_Task_handle) {
    m::wait_exit(wait_region(c, |c| c.implicit_barrier), old)
}

/// Task creation: (new task, encountering task), or None for an unassigned handle (the
/// out-arguments are then left alone).
pub(crate) fn task_create_begin(
    c: Option<&Construct>,
) -> Option<(POMP2_Task_handle, POMP2_Task_handle)> {
    c.map(m::task_create_begin)
}

/// The end of task creation; restores the encountering task even for an unassigned handle.
pub(crate) fn task_create_end(c: Option<&Construct>, old: POMP2_Task_handle) {
    match c {
        Some(c) => m::task_create_end(c, old),
        None => crate::model::tasks::set_current(old),
    }
}

/// The first statement of a task body; makes `task` current even for an unassigned handle.
pub(crate) fn task_begin(c: Option<&Construct>, task: POMP2_Task_handle) {
    match c {
        Some(c) => m::task_begin(c, task),
        None => crate::model::tasks::set_current(task),
    }
}
