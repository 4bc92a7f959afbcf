//! Support shared by the differential tests: running processes with a
//! timeout, a throwaway PostgreSQL 15 cluster driven through psql, the
//! outcome of a statement and how two outcomes are compared, and running
//! statements on tusk in-process.
#![allow(dead_code)]

pub mod outcome;
pub mod pg;
pub mod process;
pub mod querygen;
pub mod tusk;
