//! The commit-tree protocol on status bytes, on its own so that the loom
//! model below checks the very code the commit log (`clog`) uses.
//!
//! Status bytes are written with `Release` and read with `Acquire`, without
//! locks. A transaction tree (a top-level xid and its sub-xids) commits in
//! three steps ([`commit_tree`]): sub-xids sub-committed, the top xid
//! committed, sub-xids committed. A reader resolves a sub-committed status
//! through the parent link ([`resolve`]). The property: a reader that has
//! seen any xid of the tree committed and then looks at any other xid of
//! the tree sees it committed too — the tree commits atomically for
//! readers. It holds because each `Committed` store of a sub-xid comes
//! after the top xid's in program order: loading it with `Acquire`
//! synchronises with its `Release` and makes the top's store visible; and a
//! reader that sees `SubCommitted` asks the top xid, whose status is the
//! tree's.

#[cfg(tusk_storage_loom)]
pub(crate) use loom::sync::atomic::{AtomicU8, Ordering};
#[cfg(not(tusk_storage_loom))]
pub(crate) use std::sync::atomic::{AtomicU8, Ordering};

use crate::clog::XidStatus;
use crate::txn::Xid;

/// Stores `s` in a status byte.
#[inline]
pub(crate) fn store(slot: &AtomicU8, s: XidStatus) {
    slot.store(s as u8, Ordering::Release);
}

/// Loads a status byte.
#[inline]
pub(crate) fn load(slot: &AtomicU8) -> XidStatus {
    XidStatus::from_u8(slot.load(Ordering::Acquire))
}

/// Commits `top` with its sub-xids `subs`; `slot` finds an xid's byte.
pub(crate) fn commit_tree<'a>(slot: impl Fn(Xid) -> &'a AtomicU8, top: Xid, subs: &[Xid]) {
    for &s in subs {
        store(slot(s), XidStatus::SubCommitted);
    }
    store(slot(top), XidStatus::Committed);
    for &s in subs {
        store(slot(s), XidStatus::Committed);
    }
}

/// The status of `xid`, a sub-committed one resolved through `parent`.
pub(crate) fn resolve<'a>(
    slot: impl Fn(Xid) -> Option<&'a AtomicU8>,
    parent: impl Fn(Xid) -> Option<Xid>,
    mut xid: Xid,
) -> XidStatus {
    loop {
        let Some(s) = slot(xid) else {
            return XidStatus::InProgress;
        };
        match load(s) {
            XidStatus::SubCommitted => match parent(xid) {
                Some(p) => xid = p,
                // The tree finished committing since we looked.
                None => return load(s),
            },
            status => return status,
        }
    }
}

#[cfg(all(test, tusk_storage_loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;

    /// Xid 0 is the top, 1 and 2 its sub-xids. A reader looks at the xids
    /// in an order; once it has seen one committed, every later look must
    /// say committed as well.
    #[test]
    fn a_tree_commits_atomically_for_readers() {
        for order in [[1usize, 0, 2], [0, 1, 2], [2, 1, 0]] {
            loom::model(move || {
                let slots: Arc<[AtomicU8; 3]> = Arc::new(std::array::from_fn(|_| AtomicU8::new(0)));
                let parent = |x: Xid| (x != 0).then_some(0);
                let w = {
                    let slots = slots.clone();
                    loom::thread::spawn(move || commit_tree(|x| &slots[x as usize], 0, &[1, 2]))
                };
                let mut seen = false;
                for &x in &order {
                    let s = resolve(|x| Some(&slots[x as usize]), parent, x as Xid);
                    assert_ne!(s, XidStatus::SubCommitted, "resolved");
                    if seen {
                        assert_eq!(s, XidStatus::Committed, "xid {x} after a committed one");
                    }
                    seen |= s == XidStatus::Committed;
                }
                w.join().unwrap();
            });
        }
    }
}
