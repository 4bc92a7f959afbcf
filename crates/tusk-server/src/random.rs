//! Random bytes from the kernel, for cancel keys and SCRAM salts.
//!
//! `/dev/urandom` never blocks once the kernel's pool is initialised, which
//! it is long before a server starts; failing to read it is a broken system,
//! and the server stops rather than hand out predictable keys.

use std::io::Read;

/// `N` random bytes.
pub fn bytes<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .expect("reading /dev/urandom");
    b
}

#[cfg(test)]
mod tests {
    #[test]
    fn differs() {
        assert_ne!(super::bytes::<16>(), super::bytes::<16>());
    }
}
