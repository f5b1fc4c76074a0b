//! The benchmark results file written by `bench/bench.cu`: its data model and its parser.
//!
//! ```text
//! # device: NVIDIA H200, 132 SMs
//! workload,implementation,n,bytes,time_ms,gbps,pct_of_read_limit,ratio_to_cub
//! reduce f32 2^26,read-limit proxy (vec4 read-only sum),67108864,268435456,0.0673,3989.1,100.0,1.039
//! reduce f32 2^26,CUB DeviceReduce::Sum,67108864,268435456,0.0699,3843.0,96.3,1.000
//! ```
//!
//! Fields never contain commas, so there is no quoting. Lines starting with `#` are comments; a
//! `# device: NAME` comment before the header names the GPU. Empty lines are ignored. Rows are grouped
//! by workload, in the order each workload first appears.

use std::fs;
use std::path::Path;

use crate::util::{Context, Error, Result};

/// The header line, exactly.
pub const HEADER: &str = "workload,implementation,n,bytes,time_ms,gbps,pct_of_read_limit,ratio_to_cub";

/// Number of fields of the header and of every row.
const FIELDS: usize = 8;

/// What a row measures, told by how its implementation name starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `read-limit proxy ...`: the fastest a kernel reading the same bytes can go, the reference
    /// of `pct_of_read_limit`.
    ReadLimit,
    /// `CUB ...`: the reference of `ratio_to_cub`.
    Cub,
    /// `nvcc ...`: an algorithm compiled by nvcc.
    Nvcc,
    /// `Rust ...`: a kernel of this project.
    Rust,
    /// Any other name.
    Other,
}

/// Prefix of the read-limit row's implementation name.
pub const READ_LIMIT_PREFIX: &str = "read-limit proxy";

impl Kind {
    /// The kind of an implementation name.
    pub fn of(implementation: &str) -> Kind {
        if implementation.starts_with(READ_LIMIT_PREFIX) {
            Kind::ReadLimit
        } else if implementation.starts_with("CUB") {
            Kind::Cub
        } else if implementation.starts_with("nvcc") {
            Kind::Nvcc
        } else if implementation.starts_with("Rust") {
            Kind::Rust
        } else {
            Kind::Other
        }
    }
}

/// One measured row.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub implementation: String,
    pub kind: Kind,
    /// Number of elements.
    pub n: u64,
    /// Bytes moved, the numerator of `gbps`.
    pub bytes: u64,
    /// Median time of one launch, milliseconds.
    pub time_ms: f64,
    /// Throughput, GB/s (10^9 bytes per second).
    pub gbps: f64,
    /// `gbps` over the read limit's `gbps`, times 100, as written in the file.
    pub pct_of_read_limit: f64,
    /// CUB's time over this row's time (above 1: faster than CUB), as written in the file.
    pub ratio_to_cub: f64,
    /// 1-based line number in the file.
    pub line: usize,
}

/// The rows of one workload, in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    pub name: String,
    pub rows: Vec<Row>,
}

/// The family of a workload name, which `plot-sweep` draws as one panel and writes as one table: the
/// name without its `2^k` word (`histogram u8 2^20 zipf` -> `histogram u8 zipf`).
pub fn family_of(workload: &str) -> String {
    workload.split_whitespace().filter(|w| !w.starts_with("2^")).collect::<Vec<_>>().join(" ")
}

impl Workload {
    /// The read-limit row, if the workload has one.
    pub fn read_limit(&self) -> Option<&Row> {
        self.rows.iter().find(|r| r.kind == Kind::ReadLimit)
    }

    /// The rows drawn as bars: every row but the read limit.
    pub fn bars(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.kind != Kind::ReadLimit)
    }
}

/// A parsed results file.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchResults {
    /// From a `# device: NAME` comment before the header.
    pub device: Option<String>,
    /// In order of first appearance.
    pub workloads: Vec<Workload>,
}

impl BenchResults {
    /// Every row, workload by workload.
    pub fn rows(&self) -> impl Iterator<Item = (&Workload, &Row)> {
        self.workloads.iter().flat_map(|w| w.rows.iter().map(move |r| (w, r)))
    }
}

/// Reads and parses a results file; errors name the file (and the line, for a malformed one).
pub fn read(path: &Path) -> Result<BenchResults> {
    let text = fs::read_to_string(path).context(|| format!("cannot read {}", path.display()))?;
    parse(&text, &path.display().to_string())
}

/// Parses the text of a results file; `source` names it in errors (`source:LINE: ...`).
pub fn parse(text: &str, source: &str) -> Result<BenchResults> {
    let mut device = None;
    let mut header_seen = false;
    let mut workloads: Vec<Workload> = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        let line = raw.trim();
        let error = |what: String| Error::new(format!("{source}:{line_no}: {what}"));
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            if !header_seen && device.is_none() {
                device = device_comment(comment);
            }
            continue;
        }
        if !header_seen {
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            if fields.join(",") != HEADER {
                return Err(error(format!("expected the header `{HEADER}`, found `{line}`")));
            }
            header_seen = true;
            continue;
        }
        let (workload, row) = parse_row(line, line_no).map_err(error)?;
        match workloads.iter_mut().find(|w| w.name == workload) {
            Some(w) => {
                if row.kind == Kind::ReadLimit
                    && let Some(first) = w.read_limit()
                {
                    return Err(error(format!(
                        "workload `{workload}` has a second read-limit row (the first is on line {})",
                        first.line
                    )));
                }
                w.rows.push(row);
            }
            None => workloads.push(Workload { name: workload.to_string(), rows: vec![row] }),
        }
    }
    if !header_seen {
        return Err(Error::new(format!("{source}: no header line (expected `{HEADER}`)")));
    }
    if workloads.is_empty() {
        return Err(Error::new(format!("{source}: no data rows after the header")));
    }
    Ok(BenchResults { device, workloads })
}

/// The device name of a `# device: NAME` comment (the text after `#`), if it is one.
fn device_comment(comment: &str) -> Option<String> {
    let (key, value) = comment.split_once(':')?;
    let value = value.trim();
    (key.trim().eq_ignore_ascii_case("device") && !value.is_empty()).then(|| value.to_string())
}

/// One data line: its workload name and its row. The error says what is wrong, without the place.
fn parse_row(line: &str, line_no: usize) -> std::result::Result<(&str, Row), String> {
    let fields: Vec<&str> = line.split(',').map(str::trim).collect();
    let count = fields.len();
    let Ok::<[&str; FIELDS], _>([workload, implementation, n, bytes, time_ms, gbps, pct, ratio]) = fields.try_into()
    else {
        return Err(format!("expected {FIELDS} comma-separated fields, found {count}: `{line}`"));
    };
    for (name, value) in [("workload", workload), ("implementation", implementation)] {
        if value.is_empty() {
            return Err(format!("empty `{name}` field"));
        }
    }
    let row = Row {
        implementation: implementation.to_string(),
        kind: Kind::of(implementation),
        n: integer("n", n)?,
        bytes: integer("bytes", bytes)?,
        time_ms: measurement("time_ms", time_ms)?,
        gbps: measurement("gbps", gbps)?,
        pct_of_read_limit: number("pct_of_read_limit", pct)?,
        ratio_to_cub: number("ratio_to_cub", ratio)?,
        line: line_no,
    };
    Ok((workload, row))
}

fn integer(name: &str, text: &str) -> std::result::Result<u64, String> {
    text.parse().map_err(|_| format!("`{name}` is not a non-negative integer: `{text}`"))
}

/// Any number, `nan` included (a ratio or percentage that has no reference).
fn number(name: &str, text: &str) -> std::result::Result<f64, String> {
    text.parse().map_err(|_| format!("`{name}` is not a number: `{text}`"))
}

/// A finite, non-negative number: a time or a throughput.
fn measurement(name: &str, text: &str) -> std::result::Result<f64, String> {
    match number(name, text)? {
        v if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("`{name}` must be a finite number >= 0: `{text}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::tests::SAMPLE;

    #[test]
    fn families_drop_the_size() {
        assert_eq!(family_of("histogram u8 2^20 zipf"), "histogram u8 zipf");
        assert_eq!(family_of("reduce f32 2^10"), "reduce f32");
    }

    #[test]
    fn parses_the_sample() {
        let r = parse(SAMPLE, "sample.csv").unwrap();
        assert_eq!(r.device.as_deref(), Some("NVIDIA H200, 132 SMs"));
        let names: Vec<&str> = r.workloads.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names, ["reduce f32 2^26", "histogram u8 2^28 uniform"]);
        let reduce = &r.workloads[0];
        assert_eq!(reduce.rows.len(), 6);
        let limit = reduce.read_limit().unwrap();
        assert_eq!(limit.implementation, "read-limit proxy (vec4 read-only sum)");
        assert_eq!((limit.n, limit.bytes), (67108864, 268435456));
        assert_eq!(limit.line, 4);
        let kinds: Vec<Kind> = reduce.bars().map(|b| b.kind).collect();
        assert_eq!(kinds, [Kind::Cub, Kind::Nvcc, Kind::Rust, Kind::Rust, Kind::Rust]);
        assert_eq!(r.workloads[1].rows.len(), 4);
        assert_eq!(r.rows().count(), 10);
    }

    #[test]
    fn ratio_and_percentage_are_read_as_given() {
        let r = parse(SAMPLE, "sample.csv").unwrap();
        let cub = &r.workloads[0].rows[1];
        assert_eq!(cub.implementation, "CUB DeviceReduce::Sum");
        assert_eq!((cub.time_ms, cub.gbps), (0.0699, 3843.0));
        assert_eq!((cub.pct_of_read_limit, cub.ratio_to_cub), (96.3, 1.0));
        // Not recomputed from time and GB/s: the file's rounding stays.
        let limit = r.workloads[0].read_limit().unwrap();
        assert_eq!((limit.pct_of_read_limit, limit.ratio_to_cub), (100.0, 1.039));
    }

    #[test]
    fn comments_blank_lines_crlf_and_spaces() {
        let text = "\r\n# made by hand\r\n# device: A100\r\n\r\n workload, implementation,n,bytes,time_ms,gbps,pct_of_read_limit,ratio_to_cub\r\n\
                    w,CUB x,1,4,0.5,8.0,50.0,1.0\r\n# device: later comments are ignored\r\n\r\nw, Rust y ,1,4,0.25,16.0,100.0,2.0\r\n";
        let r = parse(text, "t.csv").unwrap();
        assert_eq!(r.device.as_deref(), Some("A100"));
        assert_eq!(r.workloads.len(), 1);
        assert_eq!(r.workloads[0].rows[1].implementation, "Rust y");
        assert_eq!(r.workloads[0].rows[1].line, 9);
        assert!(r.workloads[0].read_limit().is_none());
        assert_eq!(parse(&format!("{HEADER}\nw,CUB,1,1,1,1,1,1\n"), "t").unwrap().device, None);
    }

    #[test]
    fn workloads_keep_first_appearance_order() {
        let text = format!("{HEADER}\nb,Rust x,1,1,1,1,1,1\na,Rust x,1,1,1,1,1,1\nb,CUB,1,1,1,1,1,1\n");
        let r = parse(&text, "t").unwrap();
        let names: Vec<&str> = r.workloads.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names, ["b", "a"]);
        assert_eq!(r.workloads[0].rows.len(), 2);
    }

    #[test]
    fn a_missing_ratio_may_be_nan() {
        let r = parse(&format!("{HEADER}\nw,Rust x,1,1,1,1,nan,nan\n"), "t").unwrap();
        assert!(r.workloads[0].rows[0].ratio_to_cub.is_nan());
    }

    fn error_of(body: &str) -> String {
        parse(&format!("# device: X\n{HEADER}\nw,CUB,1,4,0.5,8,50,1\n{body}\n"), "bench/results.csv")
            .unwrap_err()
            .message
    }

    #[test]
    fn malformed_lines_are_errors_naming_file_and_line() {
        for (body, what) in [
            ("w,Rust x,1,4,0.5,8,50", "expected 8 comma-separated fields, found 7"),
            ("w,Rust x,1,4,0.5,8,50,1,9", "found 9"),
            ("w,Rust x,1,4,fast,8,50,1", "`time_ms` is not a number: `fast`"),
            ("w,Rust x,-1,4,0.5,8,50,1", "`n` is not a non-negative integer: `-1`"),
            ("w,Rust x,1,4.5,0.5,8,50,1", "`bytes` is not a non-negative integer"),
            ("w,Rust x,1,4,0.5,inf,50,1", "`gbps` must be a finite number >= 0: `inf`"),
            ("w,Rust x,1,4,-0.5,8,50,1", "`time_ms` must be a finite number >= 0"),
            ("w,Rust x,1,4,0.5,8,half,1", "`pct_of_read_limit` is not a number: `half`"),
            (",Rust x,1,4,0.5,8,50,1", "empty `workload` field"),
            ("w,,1,4,0.5,8,50,1", "empty `implementation` field"),
            ("w,read-limit proxy,1,4,0.5,8,100,1\nw,read-limit proxy 2,1,4,0.5,8,100,1", "second read-limit row"),
        ] {
            let message = error_of(body);
            let line = if what.contains("second") { 5 } else { 4 };
            assert!(message.starts_with(&format!("bench/results.csv:{line}: ")), "{body}: {message}");
            assert!(message.contains(what), "{body}: {message}");
            assert!(!message.contains('\n'), "one line: {message}");
        }
    }

    #[test]
    fn header_errors() {
        let e = parse("# device: X\nworkload,impl,n\nw,CUB,1,4,0.5,8,50,1\n", "r.csv").unwrap_err();
        assert!(e.message.starts_with("r.csv:2: expected the header `workload,implementation,"), "{}", e.message);
        let e = parse("\n# only comments\n", "r.csv").unwrap_err();
        assert_eq!(e.message, format!("r.csv: no header line (expected `{HEADER}`)"));
        let e = parse(&format!("{HEADER}\n\n"), "r.csv").unwrap_err();
        assert_eq!(e.message, "r.csv: no data rows after the header");
    }

    #[test]
    fn a_missing_file_is_named() {
        let path = std::env::temp_dir().join(format!("xtask-plot-missing-{}.csv", std::process::id()));
        let e = read(&path).unwrap_err();
        assert!(e.message.starts_with(&format!("cannot read {}", path.display())), "{}", e.message);
    }

    #[test]
    fn kinds_by_prefix() {
        assert_eq!(Kind::of("read-limit proxy (vec4 read-only sum)"), Kind::ReadLimit);
        assert_eq!(Kind::of("CUB HistogramEven"), Kind::Cub);
        assert_eq!(Kind::of("nvcc reduce_fast"), Kind::Nvcc);
        assert_eq!(Kind::of("Rust reduce_sum (chapter)"), Kind::Rust);
        assert_eq!(Kind::of("cuBLAS"), Kind::Other);
    }
}
