//! Lower-case hex of digests. The `hex` crate's `encode` builds its string a character
//! at a time through an iterator; this writes into a string of the right size, on every
//! authenticated request (the API key's hash) and every signature.

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// `bytes` as lower-case hex, two digits a byte.
pub fn lower_hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_what_the_hex_crate_writes() {
        let bytes: Vec<u8> = (0..=255).collect();
        assert_eq!(lower_hex(&bytes), hex::encode(&bytes));
        assert_eq!(lower_hex(&[]), "");
        assert_eq!(lower_hex(&[0x0f, 0xa0]), "0fa0");
    }
}
