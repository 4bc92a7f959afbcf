//! The byte layout of btree pages: the metapage and node pages with
//! variable-length entries.
//!
//! ```text
//!  0 common page header (page::init: LSN, checksum, ...; `upper` != 0 so
//!    page::is_new is false)
//! 24 magic u32 | level u16 (0 = leaf) | reserved u16
//! 32 right link u32 (NO_BLOCK on the rightmost page of a level)
//! 36 count u16        entries on the page
//! 38 data u16         start of the entry bodies (they fill data..PAGE_SIZE)
//! 40 high u16         offset of the high key's body, 0 = none (+infinity)
//! 42 garbage u16      bytes of bodies no slot points at any more
//! 44 slots            count u16 offsets of entry bodies, in key order
//!    ... free ...
//!    bodies           packed from the end of the page down to `data`
//! ```
//!
//! An entry body is `key length u16 | TID block u32 | TID item u16 |
//! [child u32 on internal pages] | key bytes`. The high key's body has the
//! leaf form (no child). Entries are ordered by (key bytes, TID); on an
//! internal page entry `i` says that `child` holds the entries from its
//! (key, TID) up to entry `i + 1`'s, and entry 0 stands for "everything
//! below entry 1": its key is never compared (it is stored empty, as
//! PostgreSQL's "minus infinity" first item is), because the page's lower
//! bound is the separator its parent holds for it.
//!
//! Insertions write a new body below `data` and a slot in key order;
//! removals only drop slots and count the garbage. When the gap between
//! the slots and `data` is too small but the garbage would make room, the
//! bodies are compacted ([`compact`]). So the same logical page can have
//! its bodies in different places: WAL records name entries by position,
//! never by byte offset.
//!
//! ## Size limit
//!
//! Every page must take at least two entries and a high key of the largest
//! size, so that a split always has room on both sides. With the 44-byte
//! header that bounds keys by [`MAX_KEY`] bytes.
//!
//! The metapage (block 0) holds the magic `TBTM`, the root block and the
//! tree's height.

use crate::heap::Tid;
use crate::page::{self, get_u16, get_u32, put_u16, put_u32, PAGE_SIZE};
use std::cmp::Ordering;

/// "No block": the right link of a rightmost page.
pub const NO_BLOCK: u32 = u32::MAX;

const META_MAGIC: u32 = 0x4d54_4254; // "TBTM"
const NODE_MAGIC: u32 = 0x4e54_4254; // "TBTN"
const OFF_MAGIC: usize = page::PAGE_HEADER_SIZE;
const OFF_LEVEL: usize = 28;
const OFF_RIGHT: usize = 32;
const OFF_COUNT: usize = 36;
const OFF_DATA: usize = 38;
const OFF_HIGH: usize = 40;
const OFF_GARBAGE: usize = 42;
const SLOTS: usize = 44;
const SLOT: usize = 2;
// Metapage fields.
const OFF_ROOT: usize = 28;
const OFF_HEIGHT: usize = 32;

/// Bytes before the key in a leaf body (and a high key's).
pub const LEAF_HEADER: usize = 8;
/// Bytes before the key in an internal body.
pub const INTERNAL_HEADER: usize = 12;
/// The largest key a page takes: two internal entries and a high key of
/// this size, with their slots, fill a page (see the module doc).
pub const MAX_KEY: usize =
    (PAGE_SIZE - SLOTS - 2 * (INTERNAL_HEADER + SLOT) - (LEAF_HEADER + SLOT)) / 3;
/// Room for slots and bodies on an empty page.
pub const USABLE: usize = PAGE_SIZE - SLOTS;

/// One entry as read from a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry<'p> {
    pub key: &'p [u8],
    pub tid: Tid,
    /// The child block (internal pages; 0 on leaves).
    pub child: u32,
}

impl Entry<'_> {
    /// The order of entries: key bytes, then TID.
    #[inline]
    pub fn cmp_to(&self, key: &[u8], tid: Tid) -> Ordering {
        self.key.cmp(key).then(self.tid.cmp(&tid))
    }

    /// Bytes the entry takes on a page of `level`, slot included.
    pub fn size(&self, level: u16) -> usize {
        body_size(level, self.key.len()) + SLOT
    }
}

/// An entry body's size on a page of `level`.
#[inline]
pub const fn body_size(level: u16, key_len: usize) -> usize {
    key_len
        + if level == 0 {
            LEAF_HEADER
        } else {
            INTERNAL_HEADER
        }
}

/// Bytes an entry takes with its slot.
#[inline]
pub const fn entry_size(level: u16, key_len: usize) -> usize {
    body_size(level, key_len) + SLOT
}

/// Bytes a high key takes with its slot-sized reference (the header field
/// costs nothing, but counting a slot keeps the arithmetic uniform).
#[inline]
pub fn high_key_size(key_len: usize) -> usize {
    LEAF_HEADER + key_len + SLOT
}

pub fn meta_init(p: &mut [u8], root: u32, height: u16) {
    page::init(p);
    put_u32(p, OFF_MAGIC, META_MAGIC);
    put_u32(p, OFF_ROOT, root);
    put_u16(p, OFF_HEIGHT, height);
}

/// Root block and height, if `p` is a metapage.
pub fn meta_read(p: &[u8]) -> Option<(u32, u16)> {
    (!page::is_new(p) && get_u32(p, OFF_MAGIC) == META_MAGIC)
        .then(|| (get_u32(p, OFF_ROOT), get_u16(p, OFF_HEIGHT)))
}

pub fn init(p: &mut [u8], level: u16) {
    page::init(p);
    put_u32(p, OFF_MAGIC, NODE_MAGIC);
    put_u16(p, OFF_LEVEL, level);
    put_u32(p, OFF_RIGHT, NO_BLOCK);
    put_u16(p, OFF_DATA, PAGE_SIZE as u16);
}

/// Whether `p` is a node page whose header is consistent (pages from disk
/// are checked before use: a damaged page must not send reads out of
/// bounds).
pub fn is_node(p: &[u8]) -> bool {
    if page::is_new(p) || get_u32(p, OFF_MAGIC) != NODE_MAGIC {
        return false;
    }
    let data = get_u16(p, OFF_DATA) as usize;
    let high = get_u16(p, OFF_HIGH) as usize;
    SLOTS + count(p) * SLOT <= data && data <= PAGE_SIZE && (high == 0 || high >= data)
}

pub fn level(p: &[u8]) -> u16 {
    get_u16(p, OFF_LEVEL)
}

pub fn is_leaf(p: &[u8]) -> bool {
    level(p) == 0
}

#[inline]
pub fn count(p: &[u8]) -> usize {
    get_u16(p, OFF_COUNT) as usize
}

pub fn right(p: &[u8]) -> u32 {
    get_u32(p, OFF_RIGHT)
}

pub fn set_right(p: &mut [u8], b: u32) {
    put_u32(p, OFF_RIGHT, b);
}

#[inline]
fn slot(p: &[u8], i: usize) -> usize {
    get_u16(p, SLOTS + i * SLOT) as usize
}

/// The body at byte `off` read as an entry; `internal` says whether a
/// child field precedes the key. Out-of-page lengths (a damaged page) are
/// cut at the page end rather than read beyond it.
#[inline]
fn body(p: &[u8], off: usize, internal: bool) -> Entry<'_> {
    let klen = get_u16(p, off) as usize;
    let tid = Tid {
        block: get_u32(p, off + 2),
        item: get_u16(p, off + 6),
    };
    let (child, at) = if internal {
        (get_u32(p, off + 8), off + INTERNAL_HEADER)
    } else {
        (0, off + LEAF_HEADER)
    };
    let end = (at + klen).min(PAGE_SIZE);
    Entry {
        key: &p[at.min(end)..end],
        tid,
        child,
    }
}

/// Entry `i` (in key order).
#[inline]
pub fn entry(p: &[u8], i: usize) -> Entry<'_> {
    body(p, slot(p, i), !is_leaf(p))
}

/// Entry `i` of a page known to be internal or not (what [`entry`] finds
/// out each time: a search asks once per page).
#[inline]
pub fn entry_of(p: &[u8], i: usize, internal: bool) -> Entry<'_> {
    body(p, slot(p, i), internal)
}

/// The key of entry `i`, as [`entry_of`] reads it, without the rest.
#[inline]
pub fn key_of(p: &[u8], i: usize, internal: bool) -> &[u8] {
    let off = slot(p, i);
    let at = off
        + if internal {
            INTERNAL_HEADER
        } else {
            LEAF_HEADER
        };
    let end = (at + get_u16(p, off) as usize).min(PAGE_SIZE);
    &p[at.min(end)..end]
}

/// The TID of leaf entry `i` (VACUUM reads only that).
#[inline]
pub fn leaf_tid(p: &[u8], i: usize) -> Tid {
    let off = slot(p, i);
    Tid {
        block: get_u32(p, off + 2),
        item: get_u16(p, off + 6),
    }
}

/// The high key: an exclusive upper bound of the page's entries; `None`
/// on the rightmost page of a level (+infinity).
pub fn high_key(p: &[u8]) -> Option<Entry<'_>> {
    match get_u16(p, OFF_HIGH) as usize {
        0 => None,
        off => Some(body(p, off, false)),
    }
}

/// Contiguous free bytes between the slots and the bodies.
fn gap(p: &[u8]) -> usize {
    get_u16(p, OFF_DATA) as usize - (SLOTS + count(p) * SLOT)
}

/// Free bytes once compacted.
pub fn free(p: &[u8]) -> usize {
    gap(p) + get_u16(p, OFF_GARBAGE) as usize
}

/// Whether a body of `body_len` bytes and its slot fit (after compaction).
pub fn fits(p: &[u8], body_len: usize) -> bool {
    free(p) >= body_len + SLOT
}

/// Writes a body of `len` bytes below `data` (compacting first if the gap
/// is too small; the caller checked [`fits`]) and returns its offset.
fn alloc(p: &mut [u8], len: usize, extra_slots: usize) -> usize {
    if gap(p) < len + extra_slots * SLOT {
        compact(p);
    }
    let data = get_u16(p, OFF_DATA) as usize - len;
    debug_assert!(data >= SLOTS + (count(p) + extra_slots) * SLOT);
    put_u16(p, OFF_DATA, data as u16);
    data
}

fn write_body(p: &mut [u8], off: usize, key: &[u8], tid: Tid, child: Option<u32>) {
    put_u16(p, off, key.len() as u16);
    put_u32(p, off + 2, tid.block);
    put_u16(p, off + 6, tid.item);
    let at = match child {
        Some(c) => {
            put_u32(p, off + 8, c);
            off + INTERNAL_HEADER
        }
        None => off + LEAF_HEADER,
    };
    p[at..at + key.len()].copy_from_slice(key);
}

/// Inserts an entry at position `i` (`child` ignored on leaves). The
/// caller checked that it [`fits`].
pub fn insert(p: &mut [u8], i: usize, key: &[u8], tid: Tid, child: u32) {
    let internal = !is_leaf(p);
    let len = body_size(level(p), key.len());
    let off = alloc(p, len, 1);
    write_body(p, off, key, tid, internal.then_some(child));
    let n = count(p);
    let at = SLOTS + i * SLOT;
    p.copy_within(at..SLOTS + n * SLOT, at + SLOT);
    put_u16(p, at, off as u16);
    put_u16(p, OFF_COUNT, (n + 1) as u16);
}

/// Sets (or clears) the high key. The caller checked that it fits.
pub fn set_high_key(p: &mut [u8], hk: Option<(&[u8], Tid)>) {
    if let Some(old) = high_key(p) {
        let len = LEAF_HEADER + old.key.len();
        add_garbage(p, len);
        put_u16(p, OFF_HIGH, 0);
    }
    if let Some((key, tid)) = hk {
        let off = alloc(p, LEAF_HEADER + key.len(), 0);
        write_body(p, off, key, tid, None);
        put_u16(p, OFF_HIGH, off as u16);
    }
}

fn add_garbage(p: &mut [u8], len: usize) {
    let g = get_u16(p, OFF_GARBAGE) as usize + len;
    put_u16(p, OFF_GARBAGE, g as u16);
}

/// Removes the entries at the ascending positions `gone`.
pub fn remove(p: &mut [u8], gone: &[u16]) {
    let lvl = level(p);
    let n = count(p);
    let mut dead = 0;
    for &g in gone {
        dead += body_size(lvl, entry(p, g as usize).key.len());
    }
    // The slots between two removed ones move down together.
    let mut out = gone.first().map_or(n, |&g| g as usize);
    for (k, &g) in gone.iter().enumerate() {
        let from = g as usize + 1;
        let to = gone.get(k + 1).map_or(n, |&x| x as usize);
        p.copy_within(SLOTS + from * SLOT..SLOTS + to * SLOT, SLOTS + out * SLOT);
        out += to - from;
    }
    put_u16(p, OFF_COUNT, out as u16);
    add_garbage(p, dead);
}

/// Rewrites the bodies packed at the end of the page, dropping garbage.
pub fn compact(p: &mut [u8]) {
    let internal = !is_leaf(p);
    let lvl = level(p);
    let n = count(p);
    let mut copy = [0u8; PAGE_SIZE];
    copy.copy_from_slice(&p[..PAGE_SIZE]);
    let mut data = PAGE_SIZE;
    let mut place = |p: &mut [u8], off: usize, len: usize| {
        data -= len;
        p[data..data + len].copy_from_slice(&copy[off..off + len]);
        data
    };
    for i in 0..n {
        let off = slot(&copy, i);
        let len = body_size(lvl, body(&copy, off, internal).key.len());
        let new = place(p, off, len);
        put_u16(p, SLOTS + i * SLOT, new as u16);
    }
    if let Some(hk) = high_key(&copy) {
        let off = get_u16(&copy, OFF_HIGH) as usize;
        let new = place(p, off, LEAF_HEADER + hk.key.len());
        put_u16(p, OFF_HIGH, new as u16);
    }
    put_u16(p, OFF_DATA, data as u16);
    put_u16(p, OFF_GARBAGE, 0);
}

/// Fills the (just initialised) page `p` with `entries` in order and the
/// high key `hk`: split halves and pages of a bulk build.
pub fn fill<'a>(
    p: &mut [u8],
    entries: impl IntoIterator<Item = (&'a [u8], Tid, u32)>,
    hk: Option<(&[u8], Tid)>,
) {
    debug_assert_eq!(count(p), 0);
    set_high_key(p, hk);
    for (i, (key, tid, child)) in entries.into_iter().enumerate() {
        insert(p, i, key, tid, child);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tid(i: u16) -> Tid {
        Tid { block: 1, item: i }
    }

    #[test]
    fn insert_remove_compact() {
        let mut p = vec![0u8; PAGE_SIZE];
        init(&mut p, 0);
        assert!(is_node(&p) && is_leaf(&p));
        let keys: Vec<Vec<u8>> = (0..50u8).map(|i| vec![i; 1 + i as usize]).collect();
        for (i, k) in keys.iter().enumerate() {
            assert!(fits(&p, body_size(0, k.len())));
            insert(&mut p, i, k, tid(i as u16), 0);
        }
        set_high_key(&mut p, Some((b"zz", tid(9))));
        let before = free(&p);
        remove(&mut p, &[0, 3, 4, 49]);
        assert_eq!(count(&p), 46);
        assert_eq!(entry(&p, 2).key, &keys[5][..]);
        assert!(free(&p) > before);
        let gap_before = gap(&p);
        compact(&mut p);
        assert!(gap(&p) > gap_before);
        assert_eq!(free(&p), gap(&p));
        assert_eq!(entry(&p, 2).key, &keys[5][..]);
        assert_eq!(entry(&p, 45).tid, tid(48));
        assert_eq!(high_key(&p).unwrap().key, b"zz");
        assert!(is_node(&p));
    }

    #[test]
    fn the_largest_keys_fit_two_to_a_page_with_a_high_key() {
        let mut p = vec![0u8; PAGE_SIZE];
        init(&mut p, 1);
        let k = vec![7u8; MAX_KEY];
        set_high_key(&mut p, Some((&k, tid(1))));
        insert(&mut p, 0, &k, tid(2), 5);
        assert!(fits(&p, body_size(1, MAX_KEY)));
        insert(&mut p, 1, &k, tid(3), 6);
        assert!(!fits(&p, body_size(1, 1)) || free(&p) < body_size(1, MAX_KEY));
        assert_eq!(entry(&p, 1).child, 6);
    }
}
