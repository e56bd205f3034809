//! The binary's global allocator: the first few MiB come from one region backed by transparent huge pages, the
//! rest from the system allocator.
//!
//! Why: a `doctor` run allocates about 2 MiB in 14,000 blocks and exits within milliseconds. From glibc's heap each
//! new 4 KiB page is a page fault, about 2 µs each on a virtual machine (measured: 510 faults cost 1 ms on the CI
//! machine), which made a quarter of the process's time. From a region the kernel backs with a 2 MiB page the same
//! work takes one fault. No maintained crate does this (a huge-page region first, the system allocator after it);
//! `mimalloc` was measured (2026-12-07) and its start-up cost more than it saved.
//!
//! How: a bump pointer over a 4 MiB region, reserved on the first allocation and advised `MADV_HUGEPAGE`. A block
//! freed or resized at the top of the region is given back or resized in place; any other block freed inside the
//! region stays allocated until the process exits, so at most the region's size is ever wasted. Once the region is
//! full, and for any allocation on a kernel without the region (mmap refused), the system allocator answers; a
//! block is returned to whichever allocator gave it, by its address. Where the kernel offers no transparent huge
//! pages (`/sys/kernel/mm/transparent_hugepage/enabled` missing or `[never]`, as some database and HPC hosts set it)
//! there is no region: its 4 KiB pages would fault as glibc's do, without glibc's reuse of freed blocks.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

/// The region's size: twice what `doctor` on an 8-GPU host allocates in all.
const SIZE: usize = 4 << 20;
/// A transparent huge page on x86-64 and arm64 (4 KiB base pages).
const HUGE: usize = 2 << 20;

const UNSET: u8 = 0;
const MAPPING: u8 = 1;
const READY: u8 = 2;
const NONE: u8 = 3;

/// A start-up arena in front of the system allocator.
pub struct Arena {
    state: AtomicU8,
    /// The region's first byte, and one past its last; set once, before `state` says READY.
    start: AtomicUsize,
    end: AtomicUsize,
    /// The next free byte.
    next: AtomicUsize,
    /// Whether the region is made only where the kernel offers transparent huge pages (the binary's); tests make it
    /// wherever they run.
    needs_huge_pages: bool,
}

impl Arena {
    /// The binary's: a region where the kernel offers transparent huge pages, the system allocator alone elsewhere.
    pub const fn new() -> Self {
        Arena {
            state: AtomicU8::new(UNSET),
            start: AtomicUsize::new(0),
            end: AtomicUsize::new(0),
            next: AtomicUsize::new(0),
            needs_huge_pages: true,
        }
    }

    /// A region whatever the kernel offers (for the tests of the region itself).
    #[cfg(test)]
    const fn always() -> Self {
        Arena {
            needs_huge_pages: false,
            ..Self::new()
        }
    }

    /// Whether the region is in use.
    fn active(&self) -> bool {
        self.state.load(Ordering::Acquire) == READY
    }

    /// The bytes handed out from the region so far (blocks freed at its top excluded).
    #[cfg(test)]
    fn used(&self) -> usize {
        if !self.active() {
            return 0;
        }
        self.next.load(Ordering::Relaxed) - self.start.load(Ordering::Relaxed)
    }

    /// The region, mapped by whichever thread allocates first; the others use the system allocator meanwhile.
    fn region(&self) -> bool {
        match self.state.load(Ordering::Acquire) {
            READY => true,
            UNSET => {
                if self
                    .state
                    .compare_exchange(UNSET, MAPPING, Ordering::Acquire, Ordering::Relaxed)
                    .is_err()
                {
                    return self.state.load(Ordering::Acquire) == READY;
                }
                let got = if self.needs_huge_pages && !huge_pages_offered() {
                    None
                } else {
                    map_region()
                };
                if let Some(start) = got {
                    self.start.store(start, Ordering::Relaxed);
                    self.next.store(start, Ordering::Relaxed);
                    self.end.store(start + SIZE, Ordering::Relaxed);
                }
                self.state
                    .store(if got.is_some() { READY } else { NONE }, Ordering::Release);
                got.is_some()
            }
            _ => false,
        }
    }

    fn contains(&self, p: *mut u8) -> bool {
        if !self.active() {
            return false;
        }
        let a = p as usize;
        a >= self.start.load(Ordering::Relaxed) && a < self.end.load(Ordering::Relaxed)
    }

    /// A block from the region, or `None` when it has no room.
    fn bump(&self, layout: Layout) -> Option<*mut u8> {
        if !self.region() {
            return None;
        }
        let end = self.end.load(Ordering::Relaxed);
        let mut cur = self.next.load(Ordering::Relaxed);
        loop {
            let at = cur.checked_add(layout.align() - 1)? & !(layout.align() - 1);
            let top = at.checked_add(layout.size())?;
            if top > end {
                return None;
            }
            match self
                .next
                .compare_exchange_weak(cur, top, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return Some(at as *mut u8),
                Err(now) => cur = now,
            }
        }
    }

    /// Moves the top of the region from the end of the block at `p` (`old` bytes) to `new` bytes after `p`, if that
    /// block is the top one and the region has room.
    fn resize_top(&self, p: *mut u8, old: usize, new: usize) -> bool {
        let at = p as usize;
        let Some(top) = at.checked_add(new) else {
            return false;
        };
        top <= self.end.load(Ordering::Relaxed)
            && self
                .next
                .compare_exchange(at + old, top, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }
}

impl Default for Arena {
    fn default() -> Self {
        Self::new()
    }
}

/// Whether the kernel gives transparent huge pages to a region advised for them: its `enabled` setting names
/// `[always]` or `[madvise]`. Read with a stack buffer: this runs inside the first allocation.
fn huge_pages_offered() -> bool {
    let path = c"/sys/kernel/mm/transparent_hugepage/enabled";
    // SAFETY: a NUL-terminated path; the descriptor is closed below.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return false;
    }
    let mut buf = [0u8; 128];
    // SAFETY: `buf` is writable for its length; `fd` is open.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    // SAFETY: `fd` was opened above and is closed once.
    unsafe { libc::close(fd) };
    usize::try_from(n).is_ok_and(|n| thp_mode_allows_advice(&buf[..n]))
}

/// `always [madvise] never` → true; `always madvise [never]` → false.
fn thp_mode_allows_advice(setting: &[u8]) -> bool {
    let Some(open) = setting.iter().position(|&b| b == b'[') else {
        return false;
    };
    let chosen = &setting[open + 1..];
    chosen.starts_with(b"always]") || chosen.starts_with(b"madvise]")
}

/// `SIZE` bytes at a huge-page boundary, advised for huge pages; `None` where the kernel refuses the mapping.
fn map_region() -> Option<usize> {
    // SAFETY: an anonymous private mapping at an address the kernel picks; nothing else refers to it.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            SIZE + HUGE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return None;
    }
    let start = (base as usize + HUGE - 1) & !(HUGE - 1);
    // The unaligned slack at either end is never touched, so it costs no memory; it stays mapped (two munmap calls
    // would cost more than they give back). Advice refused (a kernel without THP), the region still works with small
    // pages.
    // SAFETY: [start, start + SIZE) lies inside the mapping made above.
    unsafe { libc::madvise(start as *mut libc::c_void, SIZE, libc::MADV_HUGEPAGE) };
    Some(start)
}

// SAFETY: every block handed out is either a fresh, suitably aligned range of the region that no other block
// overlaps (the bump pointer only moves past it, or back over it when that very block is freed or resized at the
// top), or the system allocator's; `dealloc` and `realloc` tell the two apart by address.
unsafe impl GlobalAlloc for Arena {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match self.bump(layout) {
            Some(p) => p,
            // SAFETY: the caller's layout, passed on.
            None => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match self.bump(layout) {
            Some(p) => {
                // A block at the top may have been freed and handed out again: fresh pages are zero, those are not.
                // SAFETY: `p` is `layout.size()` writable bytes of the region.
                unsafe { std::ptr::write_bytes(p, 0, layout.size()) };
                p
            }
            // SAFETY: the caller's layout, passed on.
            None => unsafe { System.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        if self.contains(p) {
            // Given back only when it is the top block; otherwise it stays until the process exits.
            self.resize_top(p, layout.size(), 0);
        } else {
            // SAFETY: a block the system allocator gave, with its layout.
            unsafe { System.dealloc(p, layout) }
        }
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !self.contains(p) {
            // SAFETY: a block the system allocator gave, with its layout and the caller's new size.
            return unsafe { System.realloc(p, layout, new_size) };
        }
        if self.resize_top(p, layout.size(), new_size) || new_size <= layout.size() {
            return p;
        }
        // SAFETY: the caller guarantees `new_size`, rounded up to the alignment, does not overflow.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: a non-zero size (it is larger than the old one).
        let q = unsafe { self.alloc(new_layout) };
        if !q.is_null() {
            // SAFETY: two distinct blocks, the old one `layout.size()` bytes long and the new one longer.
            unsafe {
                std::ptr::copy_nonoverlapping(p, q, layout.size());
                self.dealloc(p, layout);
            }
        }
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).unwrap()
    }

    #[test]
    fn blocks_are_aligned_distinct_and_the_top_one_comes_back() {
        let a = Arena::always();
        unsafe {
            let p = a.alloc(layout(10, 1));
            let q = a.alloc(layout(64, 64));
            assert!(a.contains(p) && a.contains(q), "both from the region");
            assert_eq!(q as usize % 64, 0);
            assert!(q as usize >= p as usize + 10, "no overlap");
            p.write_bytes(0xAA, 10);
            q.write_bytes(0xBB, 64);
            assert_eq!(*p.add(9), 0xAA);
            let used = a.used();
            a.dealloc(q, layout(64, 64));
            assert_eq!(
                a.used(),
                q as usize - a.start.load(Ordering::Relaxed),
                "the top block was given back"
            );
            assert!(a.used() < used);
            // A block below the top stays; the next one starts after it.
            let r = a.alloc(layout(8, 8));
            a.dealloc(p, layout(10, 1));
            let s = a.alloc(layout(8, 8));
            assert!(s as usize >= r as usize + 8);
        }
    }

    #[test]
    fn realloc_grows_the_top_block_in_place_and_copies_any_other() {
        let a = Arena::always();
        unsafe {
            let p = a.alloc(layout(16, 8));
            for i in 0..16 {
                *p.add(i) = i as u8;
            }
            let p2 = a.realloc(p, layout(16, 8), 4096);
            assert_eq!(p2, p, "the top block grows where it is");
            let other = a.alloc(layout(8, 8));
            let p3 = a.realloc(p2, layout(4096, 8), 8192);
            assert_ne!(p3, p2, "a block below the top moves");
            assert!(
                (0..16).all(|i| *p3.add(i) == i as u8),
                "and keeps its bytes"
            );
            assert!(a.contains(other));
            // Shrinking keeps the block where it is.
            assert_eq!(a.realloc(p3, layout(8192, 8), 100), p3);
        }
    }

    #[test]
    fn a_full_region_hands_over_to_the_system_allocator_and_takes_its_blocks_back() {
        let a = Arena::always();
        unsafe {
            let big = a.alloc(layout(SIZE - 64, 8));
            assert!(a.contains(big));
            let p = a.alloc(layout(4096, 8));
            assert!(
                !p.is_null() && !a.contains(p),
                "no room left: the system allocator's"
            );
            p.write_bytes(1, 4096);
            // A region block that must grow past the end moves to the system allocator, bytes and all.
            *big = 7;
            let moved = a.realloc(big, layout(SIZE - 64, 8), SIZE + 1);
            assert!(!a.contains(moved));
            assert_eq!(*moved, 7);
            // And the region is empty again: the moved block was its top one.
            assert_eq!(a.used(), 0);
            a.dealloc(moved, layout(SIZE + 1, 8));
            a.dealloc(p, layout(4096, 8));
        }
    }

    #[test]
    fn zeroed_blocks_are_zero_even_where_a_freed_block_was() {
        let a = Arena::always();
        unsafe {
            let p = a.alloc(layout(256, 8));
            p.write_bytes(0xFF, 256);
            a.dealloc(p, layout(256, 8));
            let z = a.alloc_zeroed(layout(256, 8));
            assert_eq!(z, p, "the same bytes, handed out again");
            assert!((0..256).all(|i| *z.add(i) == 0));
        }
    }

    #[test]
    fn the_region_is_made_only_where_huge_pages_are_offered() {
        assert!(thp_mode_allows_advice(b"always [madvise] never\n"));
        assert!(thp_mode_allows_advice(b"[always] madvise never\n"));
        assert!(!thp_mode_allows_advice(b"always madvise [never]\n"));
        assert!(!thp_mode_allows_advice(b""));
        // On this machine: a region exactly when the kernel offers huge pages.
        let a = Arena::new();
        unsafe {
            let p = a.alloc(layout(64, 8));
            assert_eq!(a.contains(p), huge_pages_offered());
            a.dealloc(p, layout(64, 8));
        }
    }

    #[test]
    fn threads_get_distinct_blocks() {
        static A: Arena = Arena::always();
        let blocks: Vec<Vec<usize>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|t| {
                    s.spawn(move || {
                        (0..1000)
                            .map(|_| unsafe {
                                let p = A.alloc(layout(24, 8));
                                p.write_bytes(t as u8, 24);
                                p as usize
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut all: Vec<usize> = blocks.iter().flatten().copied().collect();
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n, "no block handed out twice");
        for (t, bs) in blocks.iter().enumerate() {
            assert!(bs
                .iter()
                .all(|&p| unsafe { *(p as *const u8).add(23) } == t as u8));
        }
    }
}
