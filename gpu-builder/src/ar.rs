//! Reader for `ar` archives (the container of `.rlib` files): GNU and BSD member naming.
//!
//! Layout: the magic `!<arch>\n`, then per member a 60-byte header (name 16, mtime 12, uid 6,
//! gid 6, mode 8, size 10, terminator ``` `\n ```) followed by `size` bytes, padded to an even offset.
//! GNU names end in `/`; long names are `/<offset>` into the `//` member; `/` and `/SYM64/` are
//! symbol tables. BSD long names are `#1/<len>` with the name stored at the start of the data.

const MAGIC: &[u8] = b"!<arch>\n";
const THIN_MAGIC: &[u8] = b"!<thin>\n";
const HEADER_LEN: usize = 60;

#[derive(Debug, PartialEq)]
pub(crate) struct Member<'a> {
    pub(crate) name: String,
    pub(crate) data: &'a [u8],
}

pub(crate) fn is_archive(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC) || bytes.starts_with(THIN_MAGIC)
}

/// Every file member of the archive, in order; symbol tables and the long-name table are left out.
pub(crate) fn members(bytes: &[u8]) -> Result<Vec<Member<'_>>, String> {
    if bytes.starts_with(THIN_MAGIC) {
        return Err("thin archives (members stored outside the file) are not supported".into());
    }
    if !bytes.starts_with(MAGIC) {
        return Err("not an ar archive (missing the !<arch> magic)".into());
    }
    let mut pos = MAGIC.len();
    let mut long_names: &[u8] = &[];
    let mut out = Vec::new();
    while pos < bytes.len() {
        if bytes.len() - pos < HEADER_LEN {
            // Some writers pad the archive with a trailing newline.
            if bytes[pos..].iter().all(|&b| b == b'\n') {
                break;
            }
            return Err(format!("truncated member header at offset {pos}"));
        }
        let header = &bytes[pos..pos + HEADER_LEN];
        if &header[58..60] != b"`\n" {
            return Err(format!("bad member header terminator at offset {pos}"));
        }
        let raw_name = field(&header[0..16]);
        let size: usize = field(&header[48..58]).parse().map_err(|_| format!("bad member size at offset {pos}"))?;
        let start = pos + HEADER_LEN;
        let end = start
            .checked_add(size)
            .filter(|&e| e <= bytes.len())
            .ok_or_else(|| format!("member at offset {pos} claims {size} bytes, past the end of the archive"))?;
        let mut data = &bytes[start..end];
        pos = end + (end % 2);

        let name = match raw_name.as_str() {
            "/" | "/SYM64/" | "__.SYMDEF" | "__.SYMDEF SORTED" => continue,
            "//" => {
                long_names = data;
                continue;
            }
            n if n.starts_with("#1/") => {
                let len: usize = n[3..].parse().map_err(|_| format!("bad BSD name length in {n:?}"))?;
                if len > data.len() {
                    return Err(format!("BSD name of {len} bytes exceeds its member"));
                }
                let name = String::from_utf8_lossy(&data[..len]).trim_end_matches('\0').to_string();
                data = &data[len..];
                if name.starts_with("__.SYMDEF") {
                    continue;
                }
                name
            }
            n if n.len() > 1 && n.starts_with('/') && n[1..].bytes().all(|b| b.is_ascii_digit()) => {
                let offset: usize = n[1..].parse().map_err(|_| format!("bad long-name offset {n:?}"))?;
                let rest = long_names
                    .get(offset..)
                    .ok_or_else(|| format!("long-name offset {offset} outside the name table"))?;
                let len = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
                let name = String::from_utf8_lossy(&rest[..len]);
                name.strip_suffix('/').unwrap_or(&name).to_string()
            }
            n => n.strip_suffix('/').unwrap_or(n).to_string(),
        };
        out.push(Member { name, data });
    }
    Ok(out)
}

fn field(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(name: &str, size: usize) -> Vec<u8> {
        let h = format!("{name:<16}{:<12}{:<6}{:<6}{:<8}{size:<10}`\n", 0, 0, 0, 644);
        assert_eq!(h.len(), HEADER_LEN);
        h.into_bytes()
    }

    fn push(archive: &mut Vec<u8>, name: &str, data: &[u8]) {
        archive.extend(header(name, data.len()));
        archive.extend(data);
        if data.len() % 2 == 1 {
            archive.push(b'\n');
        }
    }

    #[test]
    fn reads_gnu_archive_with_long_names_and_symbol_table() {
        let long = "core-0123456789abcdef.core.0123456789abcdef-cgu.00.rcgu.o";
        let mut a = MAGIC.to_vec();
        push(&mut a, "/", b"\0\0\0\0");
        push(&mut a, "//", format!("{long}/\n").as_bytes());
        push(&mut a, "lib.rmeta/", b"rust");
        push(&mut a, "/0", b"BC\xc0\xde odd");
        push(&mut a, "short.o/", b"xy");
        let m = members(&a).unwrap();
        let names: Vec<_> = m.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["lib.rmeta", long, "short.o"]);
        assert_eq!(m[1].data, b"BC\xc0\xde odd");
        assert_eq!(m[2].data, b"xy");
    }

    #[test]
    fn reads_bsd_long_names() {
        let mut a = MAGIC.to_vec();
        push(&mut a, "#1/20", b"a_rather_long_name.o\x01\x02\x03");
        let m = members(&a).unwrap();
        assert_eq!(m, [Member { name: "a_rather_long_name.o".into(), data: b"\x01\x02\x03" }]);
    }

    #[test]
    fn reads_the_toolchains_libcore() {
        // A real rlib: the host's prebuilt libcore from the active toolchain (ELF members there).
        let rustc = |args: &[&str]| {
            let out = std::process::Command::new("rustc").args(args).output().expect("rustc must answer for the test");
            String::from_utf8(out.stdout).unwrap()
        };
        let sysroot = rustc(&["--print", "sysroot"]);
        let version = rustc(&["-vV"]);
        let host = version.lines().find_map(|l| l.strip_prefix("host: ")).expect("host triple");
        let lib_dir = std::path::Path::new(sysroot.trim()).join("lib/rustlib").join(host).join("lib");
        let rlib = std::fs::read_dir(&lib_dir)
            .expect("toolchain lib dir")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("libcore-")))
            .expect("libcore-*.rlib in the sysroot");
        let bytes = std::fs::read(&rlib).unwrap();
        assert!(is_archive(&bytes));
        let m = members(&bytes).unwrap();
        assert!(m.iter().any(|m| m.name == "lib.rmeta"));
        let objects: Vec<_> = m.iter().filter(|m| m.name.ends_with(".rcgu.o")).collect();
        assert!(!objects.is_empty());
        assert!(objects.iter().all(|o| o.data.starts_with(b"\x7fELF")), "member data misaligned");
    }

    #[test]
    fn rejects_damaged_archives() {
        assert!(members(b"not an archive").is_err());
        assert!(members(b"!<thin>\n").is_err());
        let mut a = MAGIC.to_vec();
        a.extend(header("x.o/", 100));
        a.extend(b"short");
        assert!(members(&a).is_err());
    }
}
