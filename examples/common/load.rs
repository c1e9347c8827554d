//! Shared by the benchmarks that take `--load N`: N busy processes, pinned to nothing, that run
//! for the whole measurement, so that its figures are those of a node whose cores are all
//! taken. Each is this example's own executable run again, spinning (see `spin_if_asked`),
//! and it dies with the benchmark (`PR_SET_PDEATHSIG`) if the benchmark is killed.

use std::process::{Child, Command, Stdio};

/// The environment variable that makes an example's process one of the busy ones.
const BUSY: &str = "POMPTRACE_EXAMPLE_BUSY_PROCESS";

/// Called first in `main`: in a busy process, spins until killed; otherwise returns at once.
pub fn spin_if_asked() {
    if std::env::var_os(BUSY).is_none() {
        return;
    }
    // SAFETY: prctl(PR_SET_PDEATHSIG) only sets the signal this process gets when its parent
    // thread ends; getppid only reads.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() == 1 {
            // The benchmark is gone already.
            std::process::exit(0);
        }
    }
    let mut x = 0u64;
    loop {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
    }
}

/// `count` busy processes, killed when this is dropped.
pub struct Load {
    busy: Vec<Child>,
}

impl Load {
    pub fn start(count: usize) -> Self {
        let exe = std::env::current_exe().expect("this example's executable");
        let busy = (0..count)
            .map(|_| {
                Command::new(&exe)
                    .env(BUSY, "1")
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .expect("start a busy process")
            })
            .collect();
        Self { busy }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        for child in &mut self.busy {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// `--load N` in `args` (removed from it): N, or 0 without the option.
pub fn take_load_option(args: &mut Vec<String>) -> usize {
    let Some(at) = args.iter().position(|a| a == "--load") else {
        return 0;
    };
    let value = args.get(at + 1).and_then(|n| n.parse().ok());
    let Some(n) = value else {
        eprintln!("--load takes a number of busy processes");
        std::process::exit(2)
    };
    args.drain(at..at + 2);
    n
}
