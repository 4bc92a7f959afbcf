//! Slotted 8 kB pages.
//!
//! ```text
//! +----------------+---------------------+--------> <-------------------+
//! | header 24 B    | line pointers 4 B.. |   free space   | tuples ...   |
//! +----------------+---------------------+--------> <-------------------+
//!                                        ^lower           ^upper
//! ```
//!
//! The header holds the page LSN (bytes 0..8, for WAL), a checksum (8..10)
//! computed when the page is written out, flags, and the `lower`/`upper` bounds
//! of the free space. Line pointers grow up from the header; tuple bodies grow
//! down from the end. A line pointer is `(offset: u16, len: u16)`; the top two
//! bits of `offset` hold its state (unused, normal, redirect, dead). A
//! *redirect* has no tuple: its offset field is the item number it points
//! to (the first live version of a HOT chain whose root version was pruned,
//! see `heapam`). Item numbers (offsets in a TID) start at 1, as in
//! PostgreSQL.
//!
//! VACUUM frees space in two steps, as PostgreSQL does: pruning turns the
//! line pointers of dead tuples *dead* and compacts the tuple bodies
//! ([`prune`]); once no index points at them any more they become *unused*
//! ([`set_unused`]) and a later [`add_item`] reuses them. A line pointer is
//! never reused while an index entry may still carry its TID.
//!
//! Functions here operate on plain byte slices; locking is the caller's job.

pub const PAGE_SIZE: usize = 8192;
pub const PAGE_HEADER_SIZE: usize = 24;
pub const LINE_POINTER_SIZE: usize = 4;

const OFF_LSN: usize = 0;
const OFF_CHECKSUM: usize = 8;
const OFF_LOWER: usize = 12;
const OFF_UPPER: usize = 14;
const OFF_FLAGS: usize = 16;
/// Some line pointer is unused (set by VACUUM): [`add_item`] looks for one
/// before growing the line pointer array, and clears the flag when it
/// finds none.
const HAS_FREE_LINES: u16 = 1;
const OFF_VERSION: usize = 18;
const PAGE_VERSION: u16 = 1;

const LP_OFFSET_MASK: u16 = 0x3fff;
const LP_STATE_SHIFT: u16 = 14;

/// State of a line pointer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemState {
    Unused = 0,
    Normal = 1,
    /// Points at another item of the page (its offset field).
    Redirect = 2,
    Dead = 3,
}

// Little-endian fields of a page, shared by every page layout (heap, btree).

#[inline]
pub(crate) fn get_u16(p: &[u8], off: usize) -> u16 {
    u16::from_le_bytes(p[off..off + 2].try_into().unwrap())
}

#[inline]
pub(crate) fn put_u16(p: &mut [u8], off: usize, v: u16) {
    p[off..off + 2].copy_from_slice(&v.to_le_bytes());
}

#[inline]
pub(crate) fn get_u32(p: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(p[off..off + 4].try_into().unwrap())
}

#[inline]
pub(crate) fn put_u32(p: &mut [u8], off: usize, v: u32) {
    p[off..off + 4].copy_from_slice(&v.to_le_bytes());
}

/// Formats an empty page.
pub fn init(page: &mut [u8]) {
    page[..PAGE_SIZE].fill(0);
    put_u16(page, OFF_LOWER, PAGE_HEADER_SIZE as u16);
    put_u16(page, OFF_UPPER, PAGE_SIZE as u16);
    put_u16(page, OFF_VERSION, PAGE_VERSION);
}

/// Whether the page was never initialised (a block extended but not formatted).
pub fn is_new(page: &[u8]) -> bool {
    get_u16(page, OFF_UPPER) == 0
}

pub fn lsn(page: &[u8]) -> u64 {
    u64::from_le_bytes(page[OFF_LSN..OFF_LSN + 8].try_into().unwrap())
}

pub fn set_lsn(page: &mut [u8], lsn: u64) {
    page[OFF_LSN..OFF_LSN + 8].copy_from_slice(&lsn.to_le_bytes());
}

/// Number of line pointers on the page.
#[inline]
pub fn item_count(page: &[u8]) -> u16 {
    let lower = get_u16(page, OFF_LOWER) as usize;
    (lower.saturating_sub(PAGE_HEADER_SIZE) / LINE_POINTER_SIZE) as u16
}

/// Free bytes between the line pointers and the tuples.
pub fn free_space(page: &[u8]) -> usize {
    (get_u16(page, OFF_UPPER) as usize).saturating_sub(get_u16(page, OFF_LOWER) as usize)
}

/// Line pointer `item` (1-based): (state, offset, length).
#[inline]
pub fn item(page: &[u8], item: u16) -> (ItemState, usize, usize) {
    let at = PAGE_HEADER_SIZE + (item as usize - 1) * LINE_POINTER_SIZE;
    decode_line_pointer(page[at..at + LINE_POINTER_SIZE].try_into().unwrap())
}

/// All line pointers of the page in item order: (item, (state, offset,
/// length)) — for a pass over a whole page, without a bounds check per item.
#[inline]
pub fn line_pointers(page: &[u8]) -> impl Iterator<Item = (u16, (ItemState, usize, usize))> + '_ {
    let n = item_count(page) as usize;
    page[PAGE_HEADER_SIZE..PAGE_HEADER_SIZE + n * LINE_POINTER_SIZE]
        .chunks_exact(LINE_POINTER_SIZE)
        .zip(1..)
        .map(|(lp, i)| (i, decode_line_pointer(lp.try_into().unwrap())))
}

/// A line pointer's 4 bytes as (state, offset, length). The bytes are read
/// as one little-endian word and the state comes from a table indexed by
/// its two state bits, so the decoding has no branch.
#[inline(always)]
fn decode_line_pointer(lp: [u8; LINE_POINTER_SIZE]) -> (ItemState, usize, usize) {
    const STATES: [ItemState; 4] = [
        ItemState::Unused,
        ItemState::Normal,
        ItemState::Redirect,
        ItemState::Dead,
    ];
    let lp = u32::from_le_bytes(lp);
    let raw = lp as u16;
    let state = STATES[usize::from(raw >> LP_STATE_SHIFT)];
    (state, (raw & LP_OFFSET_MASK) as usize, (lp >> 16) as usize)
}

/// The bytes of item `item` if it is in the normal state.
#[inline]
pub fn item_bytes(page: &[u8], item_no: u16) -> Option<&[u8]> {
    match item(page, item_no) {
        (ItemState::Normal, off, len) => Some(&page[off..off + len]),
        _ => None,
    }
}

/// Mutable bytes of a normal item.
pub fn item_bytes_mut(page: &mut [u8], item_no: u16) -> Option<&mut [u8]> {
    match item(page, item_no) {
        (ItemState::Normal, off, len) => Some(&mut page[off..off + len]),
        _ => None,
    }
}

fn set_item(page: &mut [u8], item_no: u16, state: ItemState, off: usize, len: usize) {
    let at = PAGE_HEADER_SIZE + (item_no as usize - 1) * LINE_POINTER_SIZE;
    put_u32(page, at, encode_line_pointer(state, off, len));
}

/// The inverse of `decode_line_pointer`.
#[inline(always)]
fn encode_line_pointer(state: ItemState, off: usize, len: usize) -> u32 {
    u32::from((off as u16) | ((state as u16) << LP_STATE_SHIFT)) | (len as u32) << 16
}

/// Largest tuple body a page can hold.
pub const MAX_ITEM_SIZE: usize = PAGE_SIZE - PAGE_HEADER_SIZE - LINE_POINTER_SIZE;

/// Adds `data` to the page; returns its item number, or `None` if it does not fit.
/// Tuple bodies are placed at 8-byte aligned offsets.
/// An unused line pointer is reused (the first one) when the page has any.
pub fn add_item(page: &mut [u8], data: &[u8]) -> Option<u16> {
    let lower = get_u16(page, OFF_LOWER) as usize;
    let upper = get_u16(page, OFF_UPPER) as usize;
    let new_upper = (upper.checked_sub(data.len())?) & !7;
    let mut reuse = None;
    if get_u16(page, OFF_FLAGS) & HAS_FREE_LINES != 0 {
        reuse = (1..=item_count(page)).find(|&i| item(page, i).0 == ItemState::Unused);
        if reuse.is_none() {
            let flags = get_u16(page, OFF_FLAGS) & !HAS_FREE_LINES;
            put_u16(page, OFF_FLAGS, flags);
        }
    }
    let lp_bytes = if reuse.is_some() {
        0
    } else {
        LINE_POINTER_SIZE
    };
    if new_upper < lower + lp_bytes {
        return None;
    }
    page[new_upper..new_upper + data.len()].copy_from_slice(data);
    let item_no = match reuse {
        Some(i) => i,
        None => {
            put_u16(page, OFF_LOWER, (lower + LINE_POINTER_SIZE) as u16);
            item_count(page)
        }
    };
    put_u16(page, OFF_UPPER, new_upper as u16);
    set_item(page, item_no, ItemState::Normal, new_upper, data.len());
    Some(item_no)
}

/// Marks the (normal) items `items` dead and compacts the page: the bodies
/// of the remaining normal items are moved together at the end, so all free
/// space is one gap. Returns false if an item number is out of range or not
/// normal (nothing is changed then).
pub fn prune(page: &mut [u8], items: &[u16]) -> bool {
    let n = item_count(page);
    if items
        .iter()
        .any(|&i| i == 0 || i > n || item(page, i).0 != ItemState::Normal)
    {
        return false;
    }
    for &i in items {
        set_item(page, i, ItemState::Dead, 0, 0);
    }
    compact(page);
    true
}

/// One page prune (see `heapam`): `redirect` pairs `(root, target)` turn
/// roots of HOT chains into redirects to their first live version, `dead`
/// items become dead (their index entries remain until VACUUM), `unused`
/// items (heap-only versions, which no index entry points at) become
/// unused at once; then the page is compacted. Returns false, changing
/// nothing, if an item is out of range or a dead or unused item is not
/// normal (or, for `dead`, a redirect) or a redirect target is not normal.
pub fn prune_items(page: &mut [u8], redirect: &[(u16, u16)], dead: &[u16], unused: &[u16]) -> bool {
    let n = item_count(page);
    let state = |i: u16| (i >= 1 && i <= n).then(|| item(page, i).0);
    let ok = redirect.iter().all(|&(r, t)| {
        matches!(state(r), Some(ItemState::Normal | ItemState::Redirect))
            && state(t) == Some(ItemState::Normal)
            && !dead.contains(&t)
            && !unused.contains(&t)
    }) && dead
        .iter()
        .all(|&i| matches!(state(i), Some(ItemState::Normal | ItemState::Redirect)))
        && unused.iter().all(|&i| state(i) == Some(ItemState::Normal));
    if !ok {
        return false;
    }
    for &(r, t) in redirect {
        set_item(page, r, ItemState::Redirect, t as usize, 0);
    }
    for &i in dead {
        set_item(page, i, ItemState::Dead, 0, 0);
    }
    for &i in unused {
        set_item(page, i, ItemState::Unused, 0, 0);
    }
    if !unused.is_empty() {
        let flags = get_u16(page, OFF_FLAGS) | HAS_FREE_LINES;
        put_u16(page, OFF_FLAGS, flags);
    }
    compact(page);
    true
}

/// Where redirect item `item` points, if it is one.
#[inline]
pub fn redirect_target(page: &[u8], item: u16) -> Option<u16> {
    match self::item(page, item) {
        (ItemState::Redirect, target, _) => Some(target as u16),
        _ => None,
    }
}

#[inline(always)]
fn align8(n: usize) -> usize {
    (n + 7) & !7
}

/// Packs the bodies of the normal items against the end of the page, in
/// place.
///
/// Every body occupies an 8-byte aligned *slot* `[off, off + align8(len))`
/// (`add_item` places bodies at `(upper - len) & !7` with `upper` a multiple
/// of 8), and slots never overlap. Bodies are taken in descending offset
/// order and each goes to the top of the packed area: all bodies above it
/// have already moved and fit in the space above it, so its destination is
/// never below its source and never over a body still to be moved — the
/// move is an overlapping copy upwards, done in place without a scratch
/// page (PostgreSQL's `compactify_tuples`, presorted case). A page filled by
/// inserts alone has bodies in descending offset order by item number; once
/// line pointers are reused the order is sorted first. Bodies that are
/// adjacent before and after the move (a run of live tuples between two
/// pruned ones) move together.
fn compact(page: &mut [u8]) {
    let mut presorted = true;
    let mut prev = PAGE_SIZE;
    for (_, (state, off, _)) in line_pointers(page) {
        if state == ItemState::Normal {
            presorted &= off < prev;
            prev = off;
        }
    }
    // Bodies lie at or above `lower`, so the line pointer array and the
    // bodies can be borrowed apart.
    let lower = PAGE_HEADER_SIZE + item_count(page) as usize * LINE_POINTER_SIZE;
    let mut packer = Packer::new(lower);
    if presorted {
        let (head, body) = page[..PAGE_SIZE].split_at_mut(lower);
        for lp in head[PAGE_HEADER_SIZE..].chunks_exact_mut(LINE_POINTER_SIZE) {
            packer.step(body, lp);
        }
        packer.flush(body);
    } else {
        let mut order: Vec<u16> = line_pointers(page)
            .filter(|(_, lp)| lp.0 == ItemState::Normal)
            .map(|(i, _)| i)
            .collect();
        order.sort_unstable_by_key(|&i| std::cmp::Reverse(item(page, i).1));
        let (head, body) = page[..PAGE_SIZE].split_at_mut(lower);
        for i in order {
            let at = PAGE_HEADER_SIZE + (usize::from(i) - 1) * LINE_POINTER_SIZE;
            packer.step(body, &mut head[at..at + LINE_POINTER_SIZE]);
        }
        packer.flush(body);
    }
    put_u16(page, OFF_UPPER, packer.upper as u16);
}

/// The state of [`compact`]'s pass: bodies are handed to [`step`](Self::step)
/// in descending offset order and each moves to the top of the packed area.
struct Packer {
    /// Start of the tuple area: `body` slices begin here.
    lower: usize,
    /// Top of the free space so far.
    upper: usize,
    /// The run being moved: source bytes `[lo, hi)`, destination `lo + shift`.
    lo: usize,
    hi: usize,
    shift: usize,
}

impl Packer {
    fn new(lower: usize) -> Self {
        Packer {
            lower,
            upper: PAGE_SIZE,
            lo: PAGE_SIZE,
            hi: PAGE_SIZE,
            shift: 0,
        }
    }

    /// Places the body of line pointer `lp` (4 bytes) if it is normal:
    /// extends the current run when the body lies right below it, else
    /// moves the run and starts a new one; rewrites `lp`'s offset.
    #[inline(always)]
    fn step(&mut self, body: &mut [u8], lp: &mut [u8]) {
        let (ItemState::Normal, off, len) = decode_line_pointer((&*lp).try_into().unwrap()) else {
            return;
        };
        let slot = align8(len);
        self.upper -= slot;
        debug_assert!(self.upper >= off && off >= self.lower, "slots overlap");
        if off + slot != self.lo {
            self.flush(body);
            (self.hi, self.shift) = (off + slot, self.upper - off);
        }
        self.lo = off;
        if self.upper != off {
            let new = encode_line_pointer(ItemState::Normal, self.upper, len);
            lp.copy_from_slice(&new.to_le_bytes());
        }
    }

    /// Moves the current run (also the last one, once every body is placed).
    #[inline(always)]
    fn flush(&mut self, body: &mut [u8]) {
        if self.shift != 0 {
            let src = self.lo - self.lower;
            move_bytes(body, src, src + self.shift, self.hi - self.lo);
        }
    }
}

/// Copies `len` bytes from `src` to `dst` within `p`; the ranges may
/// overlap (`copy_within`). A short move — one tuple or index entry, the
/// common case in compaction — is two loads and two stores of 8 or 16
/// bytes (overlapping when `len` is not twice that), inlined, instead of a
/// call to `memmove`: both loads happen before either store, so overlap is
/// harmless.
#[inline(always)]
pub(crate) fn move_bytes(p: &mut [u8], src: usize, dst: usize, len: usize) {
    #[inline(always)]
    fn two<const N: usize>(p: &mut [u8], src: usize, dst: usize, len: usize) {
        let head: [u8; N] = p[src..src + N].try_into().unwrap();
        let tail: [u8; N] = p[src + len - N..src + len].try_into().unwrap();
        p[dst..dst + N].copy_from_slice(&head);
        p[dst + len - N..dst + len].copy_from_slice(&tail);
    }
    if len == 16 {
        let v: [u8; 16] = p[src..src + 16].try_into().unwrap();
        p[dst..dst + 16].copy_from_slice(&v);
    } else if (16..=32).contains(&len) {
        two::<16>(p, src, dst, len);
    } else if (8..16).contains(&len) {
        two::<8>(p, src, dst, len);
    } else {
        p.copy_within(src..src + len, dst);
    }
}

/// Marks the dead items `items` unused, so that inserts may reuse them.
/// Returns false if an item is out of range or not dead (nothing changed).
pub fn set_unused(page: &mut [u8], items: &[u16]) -> bool {
    let n = item_count(page);
    if items
        .iter()
        .any(|&i| i == 0 || i > n || item(page, i).0 != ItemState::Dead)
    {
        return false;
    }
    for &i in items {
        set_item(page, i, ItemState::Unused, 0, 0);
    }
    let flags = get_u16(page, OFF_FLAGS) | HAS_FREE_LINES;
    put_u16(page, OFF_FLAGS, flags);
    true
}

/// Computes the page checksum for block `block` (with the checksum field as zero).
pub fn checksum(page: &[u8], block: u32) -> u16 {
    let mut crc = crc32c::crc32c(&page[..OFF_CHECKSUM]);
    crc = crc32c::crc32c_append(crc, &[0, 0]);
    crc = crc32c::crc32c_append(crc, &page[OFF_CHECKSUM + 2..PAGE_SIZE]);
    crc ^= block;
    ((crc >> 16) ^ (crc & 0xffff)) as u16 | 1
}

/// Stamps the checksum into a page about to be written.
pub fn set_checksum(page: &mut [u8], block: u32) {
    let c = checksum(page, block);
    put_u16(page, OFF_CHECKSUM, c);
}

/// Verifies a page read from disk. All-zero pages (extended, never written) pass.
pub fn verify_checksum(page: &[u8], block: u32) -> bool {
    let stored = get_u16(page, OFF_CHECKSUM);
    if stored == 0 {
        return page[..PAGE_SIZE].iter().all(|&b| b == 0);
    }
    stored == checksum(page, block)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_and_read_items() {
        let mut p = vec![0u8; PAGE_SIZE];
        init(&mut p);
        assert_eq!(item_count(&p), 0);
        let a = add_item(&mut p, b"hello").unwrap();
        let b = add_item(&mut p, b"world!").unwrap();
        assert_eq!((a, b), (1, 2));
        assert_eq!(item_bytes(&p, 1).unwrap(), b"hello");
        assert_eq!(item_bytes(&p, 2).unwrap(), b"world!");
        let mut n = 2;
        while add_item(&mut p, &[1u8; 100]).is_some() {
            n += 1;
        }
        assert!(n > 60);
        assert!(free_space(&p) < 104 + 8);
    }

    #[test]
    fn prune_compacts_and_unused_items_are_reused() {
        let mut p = vec![0u8; PAGE_SIZE];
        init(&mut p);
        for k in 0..10u8 {
            add_item(&mut p, &[k; 100]).unwrap();
        }
        let before = free_space(&p);
        assert!(prune(&mut p, &[2, 5, 6]));
        assert!(!prune(&mut p, &[2]), "already dead");
        assert!(free_space(&p) >= before + 300);
        for k in [1u8, 3, 4, 7, 8, 9, 10] {
            assert_eq!(item_bytes(&p, k as u16).unwrap(), &[k - 1; 100][..]);
        }
        assert_eq!(item(&p, 5).0, ItemState::Dead);
        assert!(set_unused(&mut p, &[2, 5, 6]));
        assert_eq!(add_item(&mut p, b"x"), Some(2));
        assert_eq!(add_item(&mut p, b"y"), Some(5));
        assert_eq!(add_item(&mut p, b"z"), Some(6));
        assert_eq!(add_item(&mut p, b"w"), Some(11));
        assert_eq!(item_bytes(&p, 5).unwrap(), b"y");
        assert_eq!(item_bytes(&p, 10).unwrap(), &[9u8; 100][..]);
    }

    #[test]
    fn move_bytes_is_copy_within() {
        let orig: Vec<u8> = (0..200u8).collect();
        for len in 0..=70 {
            for src in [0, 3, 40, 64] {
                for dst in [0, 1, 8, 17, 40, 41, 100] {
                    let mut want = orig.clone();
                    want.copy_within(src..src + len, dst);
                    let mut got = orig.clone();
                    move_bytes(&mut got, src, dst, len);
                    assert_eq!(got, want, "len {len} src {src} dst {dst}");
                }
            }
        }
    }

    #[test]
    fn compaction_keeps_every_live_tuple() {
        // Odd lengths, pruning, reuse of freed items (offsets no longer
        // descend with item numbers) and pruning again: compaction must
        // keep every live tuple's bytes.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        for _round in 0..200 {
            let mut p = vec![0u8; PAGE_SIZE];
            init(&mut p);
            let mut model: std::collections::BTreeMap<u16, Vec<u8>> = Default::default();
            for step in 0..6 {
                loop {
                    let len = 1 + next(90) as usize;
                    let bytes: Vec<u8> = (0..len).map(|j| (j as u8) ^ (step * 31)).collect();
                    match add_item(&mut p, &bytes) {
                        Some(i) => {
                            model.insert(i, bytes);
                        }
                        None => break,
                    }
                    if next(4) == 0 {
                        break;
                    }
                }
                let victims: Vec<u16> = model.keys().copied().filter(|_| next(3) == 0).collect();
                assert!(prune(&mut p, &victims));
                assert!(set_unused(&mut p, &victims));
                for v in &victims {
                    model.remove(v);
                }
                for (&i, bytes) in &model {
                    assert_eq!(item_bytes(&p, i).unwrap(), &bytes[..], "item {i}");
                }
            }
        }
    }

    #[test]
    fn prune_items_redirects_and_frees() {
        let mut p = vec![0u8; PAGE_SIZE];
        init(&mut p);
        for k in 0..6u8 {
            add_item(&mut p, &[k; 64]).unwrap();
        }
        let before = free_space(&p);
        assert!(
            !prune_items(&mut p, &[(1, 2)], &[2], &[]),
            "target must stay normal"
        );
        assert!(prune_items(&mut p, &[(1, 3)], &[4], &[2]));
        assert_eq!(redirect_target(&p, 1), Some(3));
        assert_eq!(item(&p, 2).0, ItemState::Unused);
        assert_eq!(item(&p, 4).0, ItemState::Dead);
        assert_eq!(item_bytes(&p, 3).unwrap(), &[2u8; 64][..]);
        assert!(free_space(&p) >= before + 3 * 64);
        // A redirect whose chain died entirely becomes dead.
        assert!(prune_items(&mut p, &[], &[1], &[3]));
        assert_eq!(item(&p, 1).0, ItemState::Dead);
        assert_eq!(add_item(&mut p, b"x"), Some(2), "unused items are reused");
    }

    #[test]
    fn checksum_detects_corruption() {
        let mut p = vec![0u8; PAGE_SIZE];
        assert!(verify_checksum(&p, 3));
        init(&mut p);
        add_item(&mut p, b"abc").unwrap();
        set_checksum(&mut p, 3);
        assert!(verify_checksum(&p, 3));
        assert!(!verify_checksum(&p, 4));
        p[5000] ^= 1;
        assert!(!verify_checksum(&p, 3));
    }
}
