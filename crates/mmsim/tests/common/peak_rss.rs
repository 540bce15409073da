//! The peak RSS of a child process, from wait4's rusage (shared by the integration tests
//! and the replay benchmark, which includes this file by path).

/// Run `cmd` (stdout discarded) to its end and return its peak RSS in bytes (Linux reports
/// ru_maxrss in KiB); panics unless it exits with status 0. The figure is at least the
/// calling process's own high-water RSS: the spawn shares the caller's mm until exec, and
/// exec keeps the larger of the two (a process that is large itself measures a floor
/// first, with a trivial command).
// The child is reaped by wait4 (which also gives its rusage), not by `Child::wait`.
#[allow(clippy::zombie_processes)]
pub fn peak_rss(cmd: &mut std::process::Command) -> u64 {
    let child = cmd
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("the command runs");
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    // SAFETY: `pid` is our child, not yet waited for; `status` and `usage` outlive the call.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4: {}", std::io::Error::last_os_error());
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{cmd:?} failed"
    );
    usage.ru_maxrss as u64 * 1024
}
