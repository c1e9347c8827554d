//! OTF2 primitive encodings: compressed integers, fixed-width values, strings, and a bounds-checked
//! decoder that reports the byte offset of whatever it cannot read.
//!
//! All multi-byte values are written little endian; the chunk headers say so with `0x42`.

use std::fmt;

/// Defines `$name(out, value) -> bytes used`: writes a compressed unsigned value of `$bytes`
/// bytes into `out[0..1 + $bytes]` (which must exist; the bytes after the returned length are
/// scratch).
macro_rules! put_compressed_at {
    ($name:ident, $ty:ty, $bytes:literal) => {
        #[inline(always)]
        pub fn $name(out: &mut [u8], value: $ty) -> usize {
            let out = &mut out[..1 + $bytes];
            if value == <$ty>::MAX {
                out[0] = 0xff;
                1
            } else {
                // Zero comes out as the length byte 0 alone (the value bytes written after
                // it are not counted).
                let n = $bytes - (value.leading_zeros() / 8) as usize;
                out[0] = n as u8;
                out[1..].copy_from_slice(&value.to_le_bytes());
                1 + n
            }
        }
    };
}

put_compressed_at!(put_cu32_at, u32, 4);
put_compressed_at!(put_cu64_at, u64, 8);

pub fn put_u8(buf: &mut Vec<u8>, v: u8) {
    buf.push(v);
}

pub fn put_u16(buf: &mut Vec<u8>, v: u16) {
    buf.extend_from_slice(&v.to_le_bytes());
}

pub fn put_u32(buf: &mut Vec<u8>, v: u32) {
    buf.extend_from_slice(&v.to_le_bytes());
}

pub fn put_u64(buf: &mut Vec<u8>, v: u64) {
    buf.extend_from_slice(&v.to_le_bytes());
}

pub fn put_f64(buf: &mut Vec<u8>, v: f64) {
    put_u64(buf, v.to_bits());
}

pub fn put_cu32(buf: &mut Vec<u8>, v: u32) {
    let mut tmp = [0u8; 5];
    let n = put_cu32_at(&mut tmp, v);
    buf.extend_from_slice(&tmp[..n]);
}

pub fn put_cu64(buf: &mut Vec<u8>, v: u64) {
    let mut tmp = [0u8; 9];
    let n = put_cu64_at(&mut tmp, v);
    buf.extend_from_slice(&tmp[..n]);
}

/// Compressed signed 32-bit: positive values minimal, negative values always full width.
pub fn put_ci32(buf: &mut Vec<u8>, v: i32) {
    if v >= 0 {
        put_minimal(buf, v as u32 as u64);
    } else {
        buf.push(4);
        buf.extend_from_slice(&v.to_le_bytes());
    }
}

/// Compressed signed 64-bit: positive values minimal, negative values always full width.
pub fn put_ci64(buf: &mut Vec<u8>, v: i64) {
    if v >= 0 {
        put_minimal(buf, v as u64);
    } else {
        buf.push(8);
        buf.extend_from_slice(&v.to_le_bytes());
    }
}

/// Minimal-length encoding without the all-ones shortcut (signed values never use `ff`).
fn put_minimal(buf: &mut Vec<u8>, v: u64) {
    if v == 0 {
        buf.push(0);
    } else {
        let n = 8 - (v.leading_zeros() / 8) as usize;
        buf.push(n as u8);
        buf.extend_from_slice(&v.to_le_bytes()[..n]);
    }
}

/// NUL-terminated string. An interior NUL would end the string early for every reader, so the
/// string is cut there.
pub fn put_cstr(buf: &mut Vec<u8>, s: &[u8]) {
    let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
    buf.extend_from_slice(&s[..end]);
    buf.push(0);
}

/// Appends `id`, the length field and the payload (the framing of every non-singleton record).
/// `long_form` selects the 9-byte length field.
pub fn put_framed(buf: &mut Vec<u8>, id: u8, payload: &[u8], long_form: bool) {
    buf.push(id);
    if long_form {
        buf.push(0xff);
        put_u64(buf, payload.len() as u64);
    } else {
        buf.push(payload.len() as u8);
    }
    buf.extend_from_slice(payload);
}

/// Where and why decoding stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// Absolute byte offset (in the file) where the problem was found.
    pub offset: u64,
    pub message: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "offset {}: {}", self.offset, self.message)
    }
}

pub type DecodeResult<T> = Result<T, DecodeError>;

/// A bounds-checked reader over a byte slice that knows the slice's offset within its file.
#[derive(Clone)]
pub struct Decoder<'a> {
    data: &'a [u8],
    pos: usize,
    base: u64,
}

impl<'a> Decoder<'a> {
    pub fn new(data: &'a [u8], base: u64) -> Self {
        Self { data, pos: 0, base }
    }

    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }
    pub fn pos(&self) -> usize {
        self.pos
    }
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    pub fn error<T>(&self, message: impl Into<String>) -> DecodeResult<T> {
        Err(DecodeError {
            offset: self.offset(),
            message: message.into(),
        })
    }

    pub fn bytes(&mut self, n: usize) -> DecodeResult<&'a [u8]> {
        if self.remaining() < n {
            return self.error(format!(
                "truncated: {} bytes needed, {} left",
                n,
                self.remaining()
            ));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// A decoder over the next `n` bytes (a record payload); advances past them.
    pub fn sub(&mut self, n: usize) -> DecodeResult<Decoder<'a>> {
        let base = self.offset();
        let data = self.bytes(n)?;
        Ok(Decoder::new(data, base))
    }

    pub fn u8(&mut self) -> DecodeResult<u8> {
        Ok(self.bytes(1)?[0])
    }
    pub fn peek_u8(&self) -> Option<u8> {
        self.data.get(self.pos).copied()
    }
    pub fn u16(&mut self) -> DecodeResult<u16> {
        Ok(u16::from_le_bytes(
            self.bytes(2)?.try_into().expect("2 bytes"),
        ))
    }
    pub fn u32(&mut self) -> DecodeResult<u32> {
        Ok(u32::from_le_bytes(
            self.bytes(4)?.try_into().expect("4 bytes"),
        ))
    }
    pub fn u64(&mut self) -> DecodeResult<u64> {
        Ok(u64::from_le_bytes(
            self.bytes(8)?.try_into().expect("8 bytes"),
        ))
    }
    pub fn f64(&mut self) -> DecodeResult<f64> {
        Ok(f64::from_bits(self.u64()?))
    }

    fn compressed(&mut self, max_len: u8, what: &str) -> DecodeResult<u64> {
        let at = self.offset();
        let n = self.u8()?;
        if n == 0xff {
            return Ok(if max_len == 4 {
                u32::MAX as u64
            } else {
                u64::MAX
            });
        }
        if n > max_len {
            return Err(DecodeError {
                offset: at,
                message: format!("invalid length byte {n} in compressed {what}"),
            });
        }
        let mut bytes = [0u8; 8];
        bytes[..n as usize].copy_from_slice(self.bytes(n as usize)?);
        Ok(u64::from_le_bytes(bytes))
    }

    pub fn cu32(&mut self) -> DecodeResult<u32> {
        Ok(self.compressed(4, "uint32")? as u32)
    }
    pub fn cu64(&mut self) -> DecodeResult<u64> {
        self.compressed(8, "uint64")
    }
    /// Signed values are sign-extended from their stored width (negative ones are full width).
    pub fn ci32(&mut self) -> DecodeResult<i32> {
        Ok(self.compressed(4, "int32")? as u32 as i32)
    }
    pub fn ci64(&mut self) -> DecodeResult<i64> {
        Ok(self.compressed(8, "int64")? as i64)
    }

    /// A NUL-terminated string, decoded as UTF-8 (invalid sequences are replaced).
    pub fn cstr(&mut self) -> DecodeResult<String> {
        let rest = &self.data[self.pos..];
        match rest.iter().position(|&b| b == 0) {
            Some(end) => {
                let s = String::from_utf8_lossy(&rest[..end]).into_owned();
                self.pos += end + 1;
                Ok(s)
            }
            None => self.error("unterminated string"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cu32(v: u32) -> Vec<u8> {
        let mut b = Vec::new();
        put_cu32(&mut b, v);
        b
    }
    fn cu64(v: u64) -> Vec<u8> {
        let mut b = Vec::new();
        put_cu64(&mut b, v);
        b
    }
    fn ci64(v: i64) -> Vec<u8> {
        let mut b = Vec::new();
        put_ci64(&mut b, v);
        b
    }

    #[test]
    fn compressed_unsigned_matches_the_documented_bytes() {
        assert_eq!(cu32(0), [0x00]);
        assert_eq!(cu32(1), [0x01, 0x01]);
        assert_eq!(cu32(255), [0x01, 0xff]);
        assert_eq!(cu32(256), [0x02, 0x00, 0x01]);
        assert_eq!(cu32(300), [0x02, 0x2c, 0x01]);
        assert_eq!(cu32(9370), [0x02, 0x9a, 0x24]);
        assert_eq!(cu32(69000), [0x03, 0x88, 0x0d, 0x01]);
        assert_eq!(cu32(1_000_000_000), [0x04, 0x00, 0xca, 0x9a, 0x3b]);
        assert_eq!(cu32(0xffff_fffe), [0x04, 0xfe, 0xff, 0xff, 0xff]);
        assert_eq!(cu32(u32::MAX), [0xff]);
        assert_eq!(cu64((1 << 32) + 5), [0x05, 0x05, 0, 0, 0, 0x01]);
        assert_eq!(cu64(u64::MAX), [0xff]);
        assert_eq!(cu64(u32::MAX as u64), [0x04, 0xff, 0xff, 0xff, 0xff]);
    }

    #[test]
    fn compressed_signed_matches_the_documented_bytes() {
        assert_eq!(ci64(0), [0x00]);
        assert_eq!(ci64(10), [0x01, 0x0a]);
        assert_eq!(
            ci64(-3),
            [0x08, 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        );
        assert_eq!(
            ci64(-1),
            [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        );
        assert_eq!(
            ci64(i64::MAX),
            [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]
        );
        let mut b = Vec::new();
        put_ci32(&mut b, -7);
        assert_eq!(b, [0x04, 0xf9, 0xff, 0xff, 0xff]);
        b.clear();
        put_ci32(&mut b, 200);
        assert_eq!(b, [0x01, 0xc8]);
    }

    #[test]
    fn decoding_inverts_encoding() {
        for v in [0u64, 1, 255, 256, 1 << 40, u64::MAX - 1, u64::MAX] {
            assert_eq!(Decoder::new(&cu64(v), 0).cu64().unwrap(), v);
        }
        for v in [0i64, 5, -1, -3, i64::MIN, i64::MAX] {
            assert_eq!(Decoder::new(&ci64(v), 0).ci64().unwrap(), v);
        }
        let mut b = Vec::new();
        put_ci32(&mut b, i32::MIN);
        assert_eq!(Decoder::new(&b, 0).ci32().unwrap(), i32::MIN);
    }

    #[test]
    fn decoder_reports_the_offset_of_bad_input() {
        let err = Decoder::new(&[0x02, 0x01], 100).cu32().unwrap_err();
        assert_eq!(err.offset, 101);
        let err = Decoder::new(&[0x07], 40).cu32().unwrap_err();
        assert_eq!(err.offset, 40);
        assert!(err.message.contains("invalid length byte 7"));
        assert!(Decoder::new(b"abc", 0).cstr().is_err());
    }
}
