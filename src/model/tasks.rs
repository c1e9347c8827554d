//! Task ids and the current task of each thread (semantics doc, section 5).
//!
//! Explicit task ids are `(OpenMP thread number << 32) | counter` with a per-thread counter
//! starting at 1; the implicit task of a location is `(location number << 32) | 0`. A task id
//! splits into the `creatingThread` and `generationNumber` fields of the OTF2 task records.

use crate::model::thread;

/// The calling thread's current task.
#[inline(always)]
pub fn current() -> i64 {
    thread::state().task.get()
}

#[inline(always)]
pub fn set_current(task: i64) {
    thread::state().task.set(task);
}

/// A fresh id for a task created by the calling thread.
pub fn new_handle() -> i64 {
    thread::state().new_task_id()
}

/// The implicit task of a location.
pub fn implicit(location_number: u32) -> i64 {
    (location_number as i64) << 32
}

/// (creating thread, generation number) of a task id; signed ids are split as unsigned.
pub fn split(task: i64) -> (u32, u32) {
    let bits = task as u64;
    ((bits >> 32) as u32, bits as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_split_into_thread_and_generation() {
        assert_eq!(split((3i64 << 32) | 7), (3, 7));
        assert_eq!(split(implicit(5)), (5, 0));
        assert_eq!(split(-1), (u32::MAX, u32::MAX));
    }

    #[test]
    fn new_handles_count_up_per_thread() {
        let a = new_handle();
        let b = new_handle();
        assert_eq!(split(b).1, split(a).1 + 1);
        assert!(split(a).1 >= 1);
    }
}
