//! What the loop needs from the kernel beyond std: an eventfd that wakes it
//! for control commands, ppoll with a nanosecond timeout (pacing needs
//! better than epoll's milliseconds), and random connection IDs.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// An eventfd: `wake` makes it readable until `drain`.
pub struct Wake(OwnedFd);

impl Wake {
    /// A new eventfd, non-blocking and closed on exec.
    pub fn new() -> io::Result<Wake> {
        // SAFETY: eventfd takes no pointers; a non-negative result is a
        // new descriptor this process owns.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd was just opened and nothing else owns it.
        Ok(Wake(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Another handle on the same eventfd, for the thread that wakes.
    pub fn try_clone(&self) -> io::Result<Wake> {
        Ok(Wake(self.0.try_clone()?))
    }

    /// The descriptor to poll.
    pub fn fd(&self) -> i32 {
        self.0.as_raw_fd()
    }

    /// Makes the descriptor readable.
    pub fn wake(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to our own eventfd.
        unsafe { libc::write(self.fd(), (&one as *const u64).cast(), 8) };
    }

    /// Reads the counter back to zero.
    pub fn drain(&self) {
        let mut n: u64 = 0;
        // SAFETY: reads 8 bytes into a live u64 from our own eventfd.
        unsafe { libc::read(self.fd(), (&mut n as *mut u64).cast(), 8) };
    }
}

/// Waits until one of fds is readable or timeout passes (None: no
/// timeout); says which are readable. An interrupted wait returns none.
pub fn wait(fds: &[i32], timeout: Option<Duration>) -> io::Result<Vec<bool>> {
    let mut polled: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ts = timeout.map(|d| libc::timespec {
        tv_sec: d.as_secs().min(i64::MAX as u64) as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    });
    let ts_ptr = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: polled and ts live across the call; no signal mask is set.
    let n = unsafe {
        libc::ppoll(
            polled.as_mut_ptr(),
            polled.len() as libc::nfds_t,
            ts_ptr,
            std::ptr::null(),
        )
    };
    if n < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(vec![false; fds.len()]);
        }
        return Err(e);
    }
    Ok(polled
        .iter()
        .map(|p| p.revents & (libc::POLLIN | libc::POLLERR | libc::POLLHUP) != 0)
        .collect())
}

/// N bytes from the kernel's random source.
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    let mut got = 0;
    while got < N {
        // SAFETY: writes at most N - got bytes into b from offset got.
        let n = unsafe { libc::getrandom(b[got..].as_mut_ptr().cast(), N - got, 0) };
        if n > 0 {
            got += n as usize;
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn a_wake_makes_the_wait_return_at_once() {
        let w = Wake::new().unwrap();
        let start = Instant::now();
        assert_eq!(
            wait(&[w.fd()], Some(Duration::from_millis(20))).unwrap(),
            vec![false]
        );
        assert!(
            start.elapsed() >= Duration::from_millis(20),
            "waited the timeout"
        );
        w.wake();
        assert_eq!(wait(&[w.fd()], None).unwrap(), vec![true]);
        w.drain();
        assert_eq!(wait(&[w.fd()], Some(Duration::ZERO)).unwrap(), vec![false]);
    }

    #[test]
    fn connection_ids_differ() {
        assert_ne!(random_bytes::<16>(), random_bytes::<16>());
    }
}
