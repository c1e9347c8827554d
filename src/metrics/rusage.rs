//! `getrusage(2)` values of the calling thread (`RUSAGE_THREAD`): one system call reads all.

/// A field of `struct rusage`, as the metric names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RusageField {
    UserTime,
    SystemTime,
    MaxResidentSize,
    MinorFaults,
    MajorFaults,
    VoluntarySwitches,
    InvoluntarySwitches,
}

/// Reads the calling thread's usage; None if the call fails (it cannot for a valid `who`).
pub fn thread_usage() -> Option<libc::rusage> {
    // SAFETY: an all-zero rusage is a valid value; getrusage writes only into it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable rusage.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    (rc == 0).then_some(usage)
}

fn micros(t: libc::timeval) -> u64 {
    (t.tv_sec as u64)
        .saturating_mul(1_000_000)
        .saturating_add(t.tv_usec as u64)
}

impl RusageField {
    /// The field's value in the metric's unit (microseconds, KiB, counts).
    pub fn value(self, usage: &libc::rusage) -> u64 {
        match self {
            RusageField::UserTime => micros(usage.ru_utime),
            RusageField::SystemTime => micros(usage.ru_stime),
            RusageField::MaxResidentSize => usage.ru_maxrss.max(0) as u64,
            RusageField::MinorFaults => usage.ru_minflt.max(0) as u64,
            RusageField::MajorFaults => usage.ru_majflt.max(0) as u64,
            RusageField::VoluntarySwitches => usage.ru_nvcsw.max(0) as u64,
            RusageField::InvoluntarySwitches => usage.ru_nivcsw.max(0) as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_time_and_minor_faults_grow_with_work_on_this_thread() {
        let before = thread_usage().expect("getrusage(RUSAGE_THREAD)");
        let mut block = vec![0u8; 8 << 20];
        for i in (0..block.len()).step_by(4096) {
            block[i] = 1;
        }
        let mut x = 1.0f64;
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_millis(30) {
            x = std::hint::black_box(x * 1.000_000_1 + 1e-9);
        }
        std::hint::black_box(&block);
        let after = thread_usage().unwrap();
        let grew = |f: RusageField| f.value(&after) > f.value(&before);
        assert!(grew(RusageField::MinorFaults));
        assert!(
            RusageField::UserTime.value(&after) + RusageField::SystemTime.value(&after)
                > RusageField::UserTime.value(&before) + RusageField::SystemTime.value(&before)
        );
        assert!(RusageField::MaxResidentSize.value(&after) >= 8 << 10);
    }
}
