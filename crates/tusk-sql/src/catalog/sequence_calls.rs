//! `nextval`, `currval`, `setval` and `lastval`: the session's side of the
//! sequence functions (the sequence itself is tusk-storage's `sequence`).
//!
//! PostgreSQL keeps, per session, the last value each sequence handed
//! this session (`currval`) and which sequence did so last (`lastval`);
//! `setval(..., true)` sets the former. Both outlive the transaction: a
//! rolled-back `nextval` still counts, as the sequence does not go back.
//!
//! A value is safe after a crash once the WAL holds the state its
//! `nextval` logged (see `sequence`). The session remembers the latest
//! such record and [`SessionInfo::flush_sequence_wal`] flushes up to it
//! before the statement's success is reported, as PostgreSQL's commit
//! record does for a transaction that called `nextval`.

use super::info::SessionInfo;
use std::collections::HashMap;
use tusk_exec::error::{sqlstate, ExecError, Result};
use tusk_exec::func::Func;
use tusk_exec::value::Value;
use tusk_storage::sequence::{self, SequenceDef};
use tusk_storage::wal::Lsn;
use tusk_storage::StorageError;

/// What the session remembers of the sequences it used.
#[derive(Debug, Default)]
pub(super) struct SessionSequences {
    /// `currval` of each sequence this session called `nextval` on.
    current: HashMap<u32, i64>,
    /// The sequence of the latest `nextval` (`lastval`).
    last: Option<u32>,
    /// The latest sequence record this session's calls logged and the
    /// WAL may not hold yet.
    flush_to: Lsn,
}

impl SessionInfo {
    /// Computes one of the sequence functions for one row.
    pub(super) fn sequence_call(&self, func: Func, args: &[Value]) -> Result<Value> {
        if func == Func::LastVal {
            let memory = self.sequence_memory();
            return match memory.last.and_then(|oid| memory.current.get(&oid)) {
                Some(v) => Ok(Value::Int8(*v)),
                None => Err(not_yet("lastval is not yet defined in this session")),
            };
        }
        let oid = match args.first() {
            Some(Value::Oid { oid, .. }) => *oid,
            _ => return Ok(Value::Null),
        };
        let (name, seq) = self.sequence_def(oid)?;
        let pool = &self.database().pool;
        match func {
            Func::NextVal => {
                let next = sequence::next_value(pool, oid, &name, &seq)?;
                let mut memory = self.sequence_memory();
                memory.current.insert(oid, next.value);
                memory.last = Some(oid);
                memory.flush_to = memory.flush_to.max(next.lsn);
                Ok(Value::Int8(next.value))
            }
            Func::CurrVal => match self.sequence_memory().current.get(&oid) {
                Some(v) => Ok(Value::Int8(*v)),
                None => Err(not_yet(format!(
                    "currval of sequence \"{name}\" is not yet defined in this session"
                ))),
            },
            _ => {
                let Some(Value::Int8(value)) = args.get(1) else {
                    return Ok(Value::Null);
                };
                let is_called = !matches!(args.get(2), Some(Value::Bool(false)));
                let lsn = sequence::set_value(pool, oid, &name, &seq, *value, is_called)?;
                let mut memory = self.sequence_memory();
                if is_called {
                    memory.current.insert(oid, *value);
                }
                memory.flush_to = memory.flush_to.max(lsn);
                Ok(Value::Int8(*value))
            }
        }
    }

    /// The name and definition of sequence `oid` in the statement's
    /// catalog; 42809 for another kind of relation.
    fn sequence_def(&self, oid: u32) -> Result<(String, SequenceDef)> {
        let catalog = self.catalog();
        let Some(t) = catalog.table_by_oid(oid) else {
            return Err(ExecError::coded(
                sqlstate::UNDEFINED_TABLE,
                format!("could not open relation with OID {oid}"),
            ));
        };
        match &t.sequence {
            Some(s) => Ok((t.name.clone(), s.clone())),
            None => Err(ExecError::coded(
                sqlstate::WRONG_OBJECT_TYPE,
                format!("\"{}\" is not a sequence", t.name),
            )),
        }
    }

    /// Makes the states logged by this session's sequence calls durable
    /// (see the module doc); called before a statement reports success.
    pub fn flush_sequence_wal(&self) -> std::result::Result<(), StorageError> {
        let lsn = std::mem::take(&mut self.sequence_memory().flush_to);
        if lsn == 0 {
            return Ok(());
        }
        self.database().wal.flush(lsn)
    }
}

fn not_yet(message: impl Into<String>) -> ExecError {
    ExecError::coded(sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE, message)
}
