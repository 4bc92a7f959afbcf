//! Page pruning and HOT chains (PostgreSQL's `pruneheap.c` and
//! `heap_hot_search_buffer`).
//!
//! ## HOT chains
//!
//! An UPDATE that changes no indexed column and finds room on the old
//! version's page makes a *heap-only* new version (`HEAP_ONLY`): it gets no
//! index entries, and the old version is marked `HOT_UPDATED` with its
//! `ctid` pointing at it. Index entries keep pointing at the chain's *root*
//! (the first version, which has them); an index fetch walks the chain on
//! the page from the root and returns the version the snapshot sees
//! ([`hot_search`]). Each step checks that the next version's `xmin` is the
//! `xmax` of the one before, as PostgreSQL does.
//!
//! ## Pruning
//!
//! Pruning frees the space of versions dead to everybody — inserted by an
//! aborted transaction, or deleted/updated by one that committed below the
//! VACUUM horizon ([`verdict`]) — without touching indexes:
//!
//! * a chain whose leading versions are dead keeps its root line pointer,
//!   turned into a *redirect* to the first surviving version, so the index
//!   entries still lead to it;
//! * dead heap-only versions (no index entry points at them) become unused
//!   at once, and so do heap-only versions no chain reaches any more (the
//!   new version of an aborted HOT update);
//! * a chain that is dead entirely leaves its root line pointer *dead*:
//!   index entries point at it, so only VACUUM, after removing them, may
//!   free it.
//!
//! Following PostgreSQL, a dead version found after a recently dead one
//! (dead, but some snapshot may see it) takes the earlier one along:
//! versions of a chain die in order.
//!
//! Pruning runs on an exclusively locked page: when an UPDATE finds no
//! room (`heapam`), and in VACUUM's first phase for pages with HOT chains.
//! It is one WAL record, `HeapPruneChains`.

use crate::bufmgr::BufferPool;
use crate::clog::XidStatus;
use crate::heap::{log_page_change, Visibility};
use crate::page::{self, ItemState};
use crate::tuple::{self, HEAP_ONLY, HOT_UPDATED, XMAX_LOCK_ONLY};
use crate::txn::{Xid, FIRST_NORMAL_XID, INVALID_XID};
use crate::wal::{BlockRef, RecordType};
use crate::StorageError;

/// What pruning (and VACUUM) makes of a tuple version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Dead to everybody: its inserter aborted, or its deleter committed
    /// below the horizon.
    Gone,
    /// Visible to someone: not deleted, deleted by a transaction that
    /// aborted or is still running, or inserted by one still running.
    Live,
    /// Deleted by a transaction that committed at or after the horizon.
    RecentlyDead,
}

/// The verdict for a version inserted by `xmin` and deleted by `xmax`
/// (`INVALID_XID` for none or for a mere row locker).
#[inline]
pub fn verdict(xmin: Xid, xmax: Xid, horizon: Xid, status: impl Fn(Xid) -> XidStatus) -> Verdict {
    if xmin >= FIRST_NORMAL_XID {
        match status(xmin) {
            XidStatus::Aborted => return Verdict::Gone,
            XidStatus::Committed => {}
            XidStatus::InProgress | XidStatus::SubCommitted => return Verdict::Live,
        }
    }
    if xmax == INVALID_XID {
        return Verdict::Live;
    }
    match status(xmax) {
        XidStatus::Committed if xmax < horizon => Verdict::Gone,
        XidStatus::Committed => Verdict::RecentlyDead,
        _ => Verdict::Live,
    }
}

/// [`verdict`] for tuple `t`.
pub fn tuple_verdict(t: &[u8], horizon: Xid, status: impl Fn(Xid) -> XidStatus) -> Verdict {
    let xmax = if tuple::infomask(t) & XMAX_LOCK_ONLY != 0 {
        INVALID_XID
    } else {
        tuple::xmax(t)
    };
    verdict(tuple::xmin(t), xmax, horizon, status)
}

/// What pruning a page does (see the module doc).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PrunePlan {
    /// (root, first surviving version)
    pub redirect: Vec<(u16, u16)>,
    /// Roots of entirely dead chains (and plain dead tuples).
    pub dead: Vec<u16>,
    /// Dead or unreachable heap-only versions.
    pub unused: Vec<u16>,
    /// Versions removed.
    pub removed: u32,
    /// Versions left: live, and recently dead.
    pub live: u32,
    pub recently_dead: u32,
}

impl PrunePlan {
    pub fn is_empty(&self) -> bool {
        self.redirect.is_empty() && self.dead.is_empty() && self.unused.is_empty()
    }
}

/// Whether the page has HOT chains or redirects (so that pruning must
/// follow chains rather than look at tuples one by one).
pub fn has_hot_chains(p: &[u8]) -> bool {
    page::line_pointers(p).any(|(_, (state, off, len))| match state {
        ItemState::Redirect => true,
        ItemState::Normal => tuple::infomask(&p[off..off + len]) & (HEAP_ONLY | HOT_UPDATED) != 0,
        _ => false,
    })
}

/// Decides how to prune page `p` (see the module doc); changes nothing.
pub fn plan(p: &[u8], horizon: Xid, status: impl Fn(Xid) -> XidStatus) -> PrunePlan {
    let n = page::item_count(p) as usize;
    let mut out = PrunePlan::default();
    let mut reached = vec![false; n + 1];
    let normal = |i: usize| -> Option<&[u8]> {
        (1..=n)
            .contains(&i)
            .then(|| page::item_bytes(p, i as u16))
            .flatten()
    };
    let mut chain: Vec<(u16, Verdict)> = Vec::new();
    for root in 1..=n {
        let (state, off, _) = page::item(p, root as u16);
        let first = match state {
            ItemState::Normal if tuple::infomask(normal(root).unwrap()) & HEAP_ONLY == 0 => root,
            ItemState::Redirect => off,
            _ => continue,
        };
        chain.clear();
        let mut at = first;
        let mut prior = None;
        while let Some(t) = normal(at) {
            if reached[at] || prior.is_some_and(|x| tuple::xmin(t) != x) {
                break;
            }
            // After the root, only heap-only versions belong to the chain.
            if at != root && tuple::infomask(t) & HEAP_ONLY == 0 {
                break;
            }
            reached[at] = true;
            chain.push((at as u16, tuple_verdict(t, horizon, &status)));
            if tuple::infomask(t) & HOT_UPDATED == 0 {
                break;
            }
            prior = Some(tuple::xmax(t));
            at = tuple::ctid(t).1 as usize;
        }
        let mut latest_dead = None;
        for (k, &(_, v)) in chain.iter().enumerate() {
            match v {
                Verdict::Gone => latest_dead = Some(k),
                Verdict::RecentlyDead => {}
                Verdict::Live => break,
            }
        }
        let cut = latest_dead.map_or(0, |k| k + 1);
        for (k, &(item, v)) in chain.iter().enumerate() {
            if k >= cut {
                match v {
                    Verdict::RecentlyDead => out.recently_dead += 1,
                    _ => out.live += 1,
                }
                continue;
            }
            out.removed += 1;
            if item as usize != root {
                out.unused.push(item);
            }
        }
        if cut > 0 || (state == ItemState::Redirect && chain.is_empty()) {
            match chain.get(cut) {
                Some(&(next, _)) => out.redirect.push((root as u16, next)),
                None => out.dead.push(root as u16),
            }
        }
    }
    // Heap-only versions no chain reached: the new versions of aborted HOT
    // updates, or the rest of chains cut by an earlier prune.
    for (i, r) in reached.iter().enumerate().skip(1) {
        if *r {
            continue;
        }
        if let Some(t) = normal(i) {
            if tuple::infomask(t) & HEAP_ONLY != 0 {
                if tuple_verdict(t, horizon, &status) == Verdict::Gone {
                    out.unused.push(i as u16);
                    out.removed += 1;
                } else {
                    out.live += 1;
                }
            }
        }
    }
    out.unused.sort_unstable();
    out.dead.sort_unstable();
    out
}

/// Prunes page `p` (block `block` of `rel`, exclusively locked) as
/// [`plan`] says and logs it; returns the plan.
pub fn prune(
    pool: &BufferPool,
    rel: u32,
    block: u32,
    p: &mut [u8],
    horizon: Xid,
    status: impl Fn(Xid) -> XidStatus,
) -> Result<PrunePlan, StorageError> {
    let plan = plan(p, horizon, status);
    if plan.is_empty() {
        return Ok(plan);
    }
    if !page::prune_items(p, &plan.redirect, &plan.dead, &plan.unused) {
        unreachable!("a prune plan names items of the page it was made for");
    }
    let mut payload = Vec::new();
    encode(&plan, &mut payload);
    log_page_change(
        pool,
        p,
        RecordType::HeapPruneChains,
        INVALID_XID,
        BlockRef { rel, block },
        &payload,
    )?;
    Ok(plan)
}

/// `HeapPruneChains` payload: three lists, each a u16 count and its
/// entries: redirects (root u16, target u16), dead items, unused items.
fn encode(plan: &PrunePlan, out: &mut Vec<u8>) {
    out.extend_from_slice(&(plan.redirect.len() as u16).to_le_bytes());
    for &(r, t) in &plan.redirect {
        out.extend_from_slice(&r.to_le_bytes());
        out.extend_from_slice(&t.to_le_bytes());
    }
    for list in [&plan.dead, &plan.unused] {
        out.extend_from_slice(&(list.len() as u16).to_le_bytes());
        for i in list {
            out.extend_from_slice(&i.to_le_bytes());
        }
    }
}

/// Redo of `HeapPruneChains` on page `p`.
pub(crate) fn redo(p: &mut [u8], payload: &[u8]) -> Result<(), &'static str> {
    let mut at = 0;
    let mut next = || -> Result<u16, &'static str> {
        let b = payload.get(at..at + 2).ok_or("short payload")?;
        at += 2;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    };
    let n = next()?;
    let redirect = (0..n)
        .map(|_| Ok((next()?, next()?)))
        .collect::<Result<Vec<_>, &'static str>>()?;
    let n = next()?;
    let dead = (0..n).map(|_| next()).collect::<Result<Vec<_>, _>>()?;
    let n = next()?;
    let unused = (0..n).map(|_| next()).collect::<Result<Vec<_>, _>>()?;
    if !page::prune_items(p, &redirect, &dead, &unused) {
        return Err("item state does not match");
    }
    Ok(())
}

/// The version of the chain starting at item `item` of page `p` that `vis`
/// sees (at most one does), with its item number (see the module doc).
pub fn hot_search<'p>(p: &'p [u8], item: u16, vis: &mut Visibility<'_>) -> Option<(u16, &'p [u8])> {
    hot_chain(p, item).find(|&(_, t)| vis.sees(t))
}

/// The versions of the HOT chain whose root is item `item` of page `p`,
/// oldest first, with their item numbers: from the root (or the version
/// its redirect names) along `ctid` while a version is `HOT_UPDATED` and
/// the next one's `xmin` is its `xmax`. Index lookups (a scan's fetch, a
/// unique check) walk it.
pub fn hot_chain(p: &[u8], item: u16) -> impl Iterator<Item = (u16, &[u8])> {
    let n = page::item_count(p);
    let mut at = if item == 0 || item > n {
        0
    } else {
        page::redirect_target(p, item).unwrap_or(item)
    };
    let mut prior: Option<Xid> = None;
    let mut steps = 0;
    std::iter::from_fn(move || {
        if at == 0 || at > n || steps == n {
            return None;
        }
        steps += 1;
        let t = page::item_bytes(p, at)?;
        if prior.is_some_and(|x| tuple::xmin(t) != x) {
            return None;
        }
        let this = at;
        if tuple::infomask(t) & HOT_UPDATED == 0 {
            at = 0;
        } else {
            prior = Some(tuple::xmax(t));
            at = tuple::ctid(t).1;
        }
        Some((this, t))
    })
}

/// For each item of page `p` (index 0 unused), the root of the HOT chain
/// it belongs to — itself for a tuple that is not heap-only; 0 for a
/// heap-only version no chain reaches. An index build must point its
/// entries at roots (PostgreSQL's `heap_get_root_tuples`): a heap-only
/// version may be freed by pruning while its chain lives on.
pub fn root_items(p: &[u8]) -> Vec<u16> {
    let n = page::item_count(p) as usize;
    let mut root = vec![0u16; n + 1];
    for r in 1..=n {
        let (state, off, _) = page::item(p, r as u16);
        let mut at = match state {
            ItemState::Normal => {
                let t = page::item_bytes(p, r as u16).expect("normal");
                if tuple::infomask(t) & HEAP_ONLY != 0 {
                    continue;
                }
                r
            }
            ItemState::Redirect => off,
            _ => continue,
        };
        let mut prior = None;
        for _ in 0..n {
            let Some(t) = (1..=n)
                .contains(&at)
                .then(|| page::item_bytes(p, at as u16))
                .flatten()
            else {
                break;
            };
            if prior.is_some_and(|x| tuple::xmin(t) != x) || root[at] != 0 {
                break;
            }
            root[at] = r as u16;
            if tuple::infomask(t) & HOT_UPDATED == 0 {
                break;
            }
            prior = Some(tuple::xmax(t));
            at = tuple::ctid(t).1 as usize;
        }
    }
    root
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tuple::{TupleBuilder, XmaxState, XMAX_IS_UPDATE};

    /// A page with a HOT chain 1 -> 2 -> 3 (xids 10 -> 11 -> 12), a plain
    /// tuple 4 deleted by 11, and heap-only 5 from an aborted update (13).
    fn page() -> Vec<u8> {
        let mut p = vec![0u8; page::PAGE_SIZE];
        page::init(&mut p);
        let mut b = TupleBuilder::new();
        let mut add = |xmin: Xid, xmax: Xid, mask: u16, next: u16| {
            b.begin();
            b.push_i32(xmin as i32);
            let mut t = b.finish(xmin).to_vec();
            XmaxState {
                xmax,
                cmax: 0,
                infomask: mask,
                ctid: (0, next),
            }
            .apply(&mut t);
            page::add_item(&mut p, &t).unwrap()
        };
        add(10, 11, XMAX_IS_UPDATE | HOT_UPDATED, 2);
        add(11, 12, HEAP_ONLY | XMAX_IS_UPDATE | HOT_UPDATED, 3);
        add(12, 0, HEAP_ONLY, 0);
        add(10, 11, 0, 0);
        add(13, 0, HEAP_ONLY, 0);
        p
    }

    fn status(x: Xid) -> XidStatus {
        match x {
            13 => XidStatus::Aborted,
            x if x < 20 => XidStatus::Committed,
            _ => XidStatus::InProgress,
        }
    }

    #[test]
    fn chains_are_redirected_and_heap_only_versions_freed() {
        let p = page();
        // Horizon 12: versions deleted by 10 and 11 are dead; 2 (deleted by
        // 12) is recently dead.
        let first = plan(&p, 12, status);
        assert_eq!(first.redirect, vec![(1, 2)]);
        assert_eq!(first.dead, vec![4]);
        assert_eq!(first.unused, vec![5]);
        assert_eq!((first.removed, first.live, first.recently_dead), (3, 1, 1));
        // Horizon 20: the chain's root now leads to 3 directly.
        let mut p2 = p.clone();
        assert!(page::prune_items(
            &mut p2,
            &first.redirect,
            &first.dead,
            &first.unused
        ));
        let plan2 = plan(&p2, 20, status);
        assert_eq!(plan2.redirect, vec![(1, 3)]);
        assert_eq!(plan2.unused, vec![2]);
        assert!(plan2.dead.is_empty());
        let mut enc = Vec::new();
        encode(&plan2, &mut enc);
        redo(&mut p2, &enc).unwrap();
        assert_eq!(page::redirect_target(&p2, 1), Some(3));
        assert!(plan(&p2, 20, status).is_empty(), "nothing left to do");
        assert_eq!(root_items(&p2)[3], 1, "the version 3 belongs to root 1");
        assert_eq!(root_items(&page()), vec![0, 1, 1, 1, 4, 0]);
    }
}
