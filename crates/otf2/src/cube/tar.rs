//! The tar container of a `.cubex` file (cubew_tar_writing.c): POSIX ustar headers of 512
//! bytes, each member's data padded to a multiple of 512 bytes, two zero blocks at the end.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};

const BLOCK: usize = 512;
/// The largest member an 11-digit octal size field holds (cubew switches to a pax header past
/// it; this writer's callers never get near it).
pub(super) const MAX_MEMBER_SIZE: u64 = 0o77777777777;

fn put_octal(field: &mut [u8], value: u64) {
    // `width - 1` digits and a terminating NUL, as cubew's "%11.11lo" / "%7.7lo".
    let digits = field.len() - 1;
    let text = format!("{value:0digits$o}");
    field[..digits].copy_from_slice(&text.as_bytes()[text.len() - digits..]);
    field[digits] = 0;
}

/// A ustar header for a regular file `name` of `size` bytes.
fn header(name: &str, size: u64, mtime: u64) -> io::Result<[u8; BLOCK]> {
    if name.len() >= 100 || name.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("tar member name {name:?} does not fit a ustar header"),
        ));
    }
    if size > MAX_MEMBER_SIZE {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("tar member {name} has {size} bytes, more than a ustar header can describe"),
        ));
    }
    let mut h = [0u8; BLOCK];
    h[..name.len()].copy_from_slice(name.as_bytes());
    put_octal(&mut h[100..108], 0o600); // mode
    put_octal(&mut h[108..116], 0); // uid
    put_octal(&mut h[116..124], 0); // gid
    put_octal(&mut h[124..136], size);
    put_octal(&mut h[136..148], mtime & 0o77777777777);
    h[156] = b'0'; // regular file
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[148..156].copy_from_slice(b"        ");
    let sum: u64 = h.iter().map(|&b| u64::from(b)).sum();
    // Six octal digits, NUL, space: the form cubew and GNU tar write.
    put_octal(&mut h[148..155], sum);
    h[155] = b' ';
    Ok(h)
}

/// Writes members one after the other, then the end-of-archive blocks.
pub(super) struct TarWriter<W: Write> {
    out: W,
    mtime: u64,
}

impl<W: Write> TarWriter<W> {
    pub fn new(out: W) -> Self {
        let mtime = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        TarWriter { out, mtime }
    }

    /// Writes one member whose content `write` produces; it must write exactly `size` bytes.
    pub fn member(
        &mut self,
        name: &str,
        size: u64,
        write: impl FnOnce(&mut W) -> io::Result<()>,
    ) -> io::Result<()> {
        self.out.write_all(&header(name, size, self.mtime)?)?;
        write(&mut self.out)?;
        let padding = (BLOCK as u64 - size % BLOCK as u64) % BLOCK as u64;
        self.out.write_all(&[0u8; BLOCK][..padding as usize])
    }

    /// Writes the two zero blocks that end an archive and gives the output back.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.write_all(&[0u8; 2 * BLOCK])?;
        Ok(self.out)
    }
}

/// A member found in an archive: where its data starts and how long it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Member {
    pub name: String,
    pub offset: u64,
    pub size: u64,
}

fn bad(message: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.into())
}

fn field_str(field: &[u8]) -> &[u8] {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    &field[..end]
}

/// A numeric header field: octal digits (space or NUL padded), or GNU's base-256 form.
fn parse_number(field: &[u8], what: &str) -> io::Result<u64> {
    if let Some((&first, rest)) = field.split_first() {
        if first & 0x80 != 0 {
            if first & 0x40 != 0 {
                return Err(bad(format!("tar: negative {what}")));
            }
            let mut value = u64::from(first & 0x3f);
            for &b in rest {
                value = value
                    .checked_mul(256)
                    .and_then(|v| v.checked_add(u64::from(b)))
                    .ok_or_else(|| bad(format!("tar: {what} too large")))?;
            }
            return Ok(value);
        }
    }
    let text = field_str(field);
    let digits: &[u8] = {
        let start = text.iter().position(|&b| b != b' ').unwrap_or(text.len());
        let trimmed = &text[start..];
        let end = trimmed
            .iter()
            .position(|&b| b == b' ')
            .unwrap_or(trimmed.len());
        &trimmed[..end]
    };
    let mut value = 0u64;
    for &d in digits {
        if !(b'0'..=b'7').contains(&d) {
            return Err(bad(format!("tar: malformed {what} field")));
        }
        value = value
            .checked_mul(8)
            .and_then(|v| v.checked_add(u64::from(d - b'0')))
            .ok_or_else(|| bad(format!("tar: {what} too large")))?;
    }
    Ok(value)
}

fn checksum_matches(h: &[u8; BLOCK]) -> io::Result<bool> {
    let stored = parse_number(&h[148..156], "checksum")?;
    let mut unsigned = 0u64;
    let mut signed = 0i64;
    for (i, &b) in h.iter().enumerate() {
        let b = if (148..156).contains(&i) { b' ' } else { b };
        unsigned += u64::from(b);
        signed += i64::from(b as i8);
    }
    Ok(stored == unsigned || i64::try_from(stored) == Ok(signed))
}

/// The `size` and `path` records of a pax extended header.
fn parse_pax(data: &[u8]) -> (Option<u64>, Option<String>) {
    let (mut size, mut path) = (None, None);
    let mut rest = data;
    while !rest.is_empty() {
        let Some(space) = rest.iter().position(|&b| b == b' ') else {
            break;
        };
        let Some(len) = std::str::from_utf8(&rest[..space])
            .ok()
            .and_then(|s| s.parse::<usize>().ok())
            .filter(|&len| len > space && len <= rest.len())
        else {
            break;
        };
        let record = &rest[space + 1..len];
        let record = record.strip_suffix(b"\n").unwrap_or(record);
        if let Ok(text) = std::str::from_utf8(record) {
            if let Some(v) = text.strip_prefix("size=") {
                size = v.parse().ok();
            } else if let Some(v) = text.strip_prefix("path=") {
                path = Some(v.to_string());
            }
        }
        rest = &rest[len..];
    }
    (size, path)
}

/// Lists the regular members of the archive `file` of `file_len` bytes. Data is not read,
/// except pax and GNU long-name records (at most 64 KiB each).
pub(super) fn list(file: &mut File, file_len: u64) -> io::Result<Vec<Member>> {
    const MAX_META: u64 = 64 * 1024;
    let mut members = Vec::new();
    let mut pos = 0u64;
    let mut pending_size: Option<u64> = None;
    let mut pending_name: Option<String> = None;
    file.seek(SeekFrom::Start(0))?;
    loop {
        if pos == file_len {
            // Archives that stop without end blocks are read up to where they stop.
            break;
        }
        if file_len - pos < BLOCK as u64 {
            return Err(bad("tar: truncated header"));
        }
        let mut h = [0u8; BLOCK];
        file.seek(SeekFrom::Start(pos))?;
        file.read_exact(&mut h)?;
        pos += BLOCK as u64;
        if h.iter().all(|&b| b == 0) {
            // cubew pads a member whose size is a multiple of 512 with a whole zero block, so a
            // lone zero block followed by a header is not the end yet.
            if file_len - pos < BLOCK as u64 {
                break;
            }
            let mut next = [0u8; BLOCK];
            file.read_exact(&mut next)?;
            if next.iter().all(|&b| b == 0) {
                break;
            }
            continue;
        }
        if !checksum_matches(&h)? {
            return Err(bad(format!(
                "tar: header checksum mismatch at byte {}",
                pos - BLOCK as u64
            )));
        }
        let header_size = parse_number(&h[124..136], "size")?;
        let size = pending_size.take().unwrap_or(header_size);
        let data_start = pos;
        if data_start
            .checked_add(size)
            .map_or(true, |end| end > file_len)
        {
            return Err(bad("tar: member extends past the end of the file"));
        }
        let padded = size
            .checked_add(BLOCK as u64 - 1)
            .map(|s| s / BLOCK as u64 * BLOCK as u64)
            .ok_or_else(|| bad("tar: member size overflows"))?;
        pos = data_start.saturating_add(padded).min(file_len);
        let typeflag = h[156];
        match typeflag {
            b'0' | 0 | b'7' => {
                let mut name = field_str(&h[0..100]).to_vec();
                if &h[257..262] == b"ustar" {
                    let prefix = field_str(&h[345..500]);
                    if !prefix.is_empty() {
                        let mut full = prefix.to_vec();
                        full.push(b'/');
                        full.extend_from_slice(&name);
                        name = full;
                    }
                }
                let name = match pending_name.take() {
                    Some(long) => long,
                    None => {
                        String::from_utf8(name).map_err(|_| bad("tar: member name is not UTF-8"))?
                    }
                };
                members.push(Member {
                    name,
                    offset: data_start,
                    size,
                });
            }
            b'x' | b'L' => {
                if size > MAX_META {
                    return Err(bad("tar: oversized extended header"));
                }
                let mut data = vec![0u8; size as usize];
                file.seek(SeekFrom::Start(data_start))?;
                file.read_exact(&mut data)?;
                if typeflag == b'x' {
                    let (pax_size, pax_path) = parse_pax(&data);
                    pending_size = pax_size;
                    pending_name = pax_path;
                } else {
                    let name = field_str(&data);
                    pending_name = Some(
                        String::from_utf8(name.to_vec())
                            .map_err(|_| bad("tar: long member name is not UTF-8"))?,
                    );
                }
            }
            _ => {
                // Directories, links, global pax headers: nothing a CUBE reader needs.
                pending_size = None;
                pending_name = None;
            }
        }
    }
    Ok(members)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn octal_fields_and_checksum_match_what_tar_expects() {
        let h = header("0.index", 1234, 0o1234).unwrap();
        assert_eq!(&h[124..136], b"00000002322\0");
        assert_eq!(&h[257..265], b"ustar\x0000");
        assert!(checksum_matches(&h).unwrap());
        assert_eq!(parse_number(&h[124..136], "size").unwrap(), 1234);
        assert!(header(&"n".repeat(100), 1, 0).is_err());
        assert!(header("big", MAX_MEMBER_SIZE + 1, 0).is_err());
    }

    #[test]
    fn base256_and_space_padded_numbers() {
        let mut field = [0u8; 12];
        field[0] = 0x80;
        field[10] = 1;
        field[11] = 2;
        assert_eq!(parse_number(&field, "size").unwrap(), 258);
        assert_eq!(parse_number(b"   17 \0", "x").unwrap(), 0o17);
        assert!(parse_number(b"12389\0", "x").is_err());
        assert!(parse_number(&[0xc0, 0, 0, 0], "x").is_err());
        assert!(parse_number(
            &[0x80, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            "x"
        )
        .is_err());
    }

    #[test]
    fn pax_records() {
        let (size, path) = parse_pax(b"19 size=9999999999\n17 path=long/nam\n");
        assert_eq!(size, Some(9_999_999_999));
        assert_eq!(path.as_deref(), Some("long/nam"));
        assert_eq!(parse_pax(b"99 size=1\n"), (None, None));
    }
}
