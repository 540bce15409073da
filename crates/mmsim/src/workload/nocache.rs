//! Drop-behind as GNU dd's `iflag=nocache` / `oflag=nocache` does it (coreutils
//! `invalidate_cache`): after each block, POSIX_FADV_DONTNEED of the data done since the
//! last advice, in whole multiples of 128 KiB (coreutils' IO_BUFSIZE); at the end of the
//! file, the rest (a range to the end of the file).

use super::{Fadvice, Op};

/// IO_BUFSIZE of coreutils: the granule of dd's cache invalidation.
pub const NOCACHE_GRANULE: u64 = 128 << 10;

/// The part of a file a nocache reader or writer has advised away so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DropBehind {
    advised_to: u64,
}

impl DropBehind {
    /// After the bytes `[0, done)` are read or written: DONTNEED of the whole granules
    /// done since the last advice, if any.
    pub fn after(&mut self, fd: u32, done: u64) -> Option<Op> {
        let len = done.saturating_sub(self.advised_to) / NOCACHE_GRANULE * NOCACHE_GRANULE;
        if len == 0 {
            return None;
        }
        let op = Op::Fadvise {
            fd,
            offset: self.advised_to,
            len,
            advice: Fadvice::Dontneed,
        };
        self.advised_to += len;
        Some(op)
    }

    /// At the end of the file: DONTNEED of the rest (to the end of the file); the next
    /// pass starts from 0.
    pub fn at_eof(&mut self, fd: u32) -> Op {
        let offset = std::mem::take(&mut self.advised_to);
        Op::Fadvise {
            fd,
            offset,
            len: 0,
            advice: Fadvice::Dontneed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advises_whole_granules_then_the_rest() {
        let mut d = DropBehind::default();
        assert_eq!(d.after(3, 100 << 10), None);
        let Some(Op::Fadvise { offset, len, .. }) = d.after(3, 300 << 10) else {
            panic!("a granule was done");
        };
        assert_eq!((offset, len), (0, 256 << 10));
        assert_eq!(d.after(3, 380 << 10), None);
        let Op::Fadvise { offset, len, .. } = d.at_eof(3) else {
            panic!("an advice");
        };
        assert_eq!((offset, len), (256 << 10, 0));
        assert_eq!(d, DropBehind::default());
    }
}
