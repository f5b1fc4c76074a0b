//! `plot`: the benchmark results of `bench/bench.cu` (a CSV file) as an SVG chart and a Markdown table;
//! `plot-sweep` ([`sweep`]) and `plot-algos` ([`algos`]) for the size sweeps.

pub mod algos;
pub mod chart;
pub mod csv;
pub mod sweep;
pub mod sweep_tables;
pub mod table;

use std::path::{Path, PathBuf};

use crate::util::{self, Error, Result, display_path};

/// Where `plot` reads and writes by default, relative to the workspace root.
pub const DEFAULT_CSV: &str = "bench/results.csv";
pub const DEFAULT_SVG: &str = "bench/results.svg";
pub const DEFAULT_MARKDOWN: &str = "bench/results.md";

/// The files of one `plot` run.
#[derive(Debug, PartialEq)]
pub struct PlotOptions {
    pub csv: PathBuf,
    pub svg: PathBuf,
    pub markdown: PathBuf,
}

impl PlotOptions {
    /// Parses `--csv PATH`, `--svg PATH` and `--markdown PATH` (or `--flag=PATH`). Paths given are taken
    /// as they are (relative to the current directory); the defaults lie under `root`.
    pub fn parse(root: &Path, args: &[String]) -> Result<PlotOptions> {
        let [csv, svg, markdown] = path_flags("plot", args, ["--csv", "--svg", "--markdown"])?;
        Ok(PlotOptions {
            csv: csv.unwrap_or_else(|| root.join(DEFAULT_CSV)),
            svg: svg.unwrap_or_else(|| root.join(DEFAULT_SVG)),
            markdown: markdown.unwrap_or_else(|| root.join(DEFAULT_MARKDOWN)),
        })
    }
}

/// The paths given to `command` as `--flag PATH` or `--flag=PATH`, one slot per flag of `flags` (each
/// at most once); anything else is a usage error.
pub fn path_flags<const N: usize>(command: &str, args: &[String], flags: [&str; N]) -> Result<[Option<PathBuf>; N]> {
    let mut slots: [Option<PathBuf>; N] = std::array::from_fn(|_| None);
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let Some(k) = flags.iter().position(|f| *f == flag) else {
            return Err(Error::usage(format!("`{command}` does not take `{arg}`")));
        };
        let value = inline
            .or_else(|| it.next().cloned())
            .filter(|v| !v.is_empty() && !v.starts_with("--"))
            .ok_or_else(|| Error::usage(format!("`{flag}` needs a path")))?;
        if slots[k].replace(PathBuf::from(value)).is_some() {
            return Err(Error::usage(format!("`{flag}` is given twice")));
        }
    }
    Ok(slots)
}

/// `cargo xtask plot`: reads the CSV, writes the chart and the table, and says what it wrote.
pub fn plot(root: &Path, args: &[String]) -> Result<()> {
    let opts = PlotOptions::parse(root, args)?;
    let results = csv::read(&opts.csv)?;
    let drawn = chart::write_svg(&results, &opts.svg)?;
    println!(
        "wrote {}: {} workload(s), {} bar(s), {}x{} px",
        display_path(root, &opts.svg),
        drawn.workloads,
        drawn.bars,
        drawn.size.0,
        drawn.size.1
    );
    if let Some(dir) = opts.markdown.parent().filter(|d| !d.as_os_str().is_empty()) {
        util::create_dir_all(dir)?;
    }
    util::replace_file(&opts.markdown, table::markdown(&results).as_bytes(), false)?;
    println!("wrote {}: {} row(s)", display_path(root, &opts.markdown), results.rows().count());
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use std::fs;

    use super::*;
    use crate::util::EXIT_USAGE;

    /// Test fixture: two workloads of made-up numbers in the format of `bench/bench.cu`.
    pub const SAMPLE: &str = include_str!("../../fixtures/bench/sample.csv");

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn options() {
        let root = Path::new("/ws");
        assert_eq!(
            PlotOptions::parse(root, &[]).unwrap(),
            PlotOptions {
                csv: root.join("bench/results.csv"),
                svg: root.join("bench/results.svg"),
                markdown: root.join("bench/results.md"),
            }
        );
        let o = PlotOptions::parse(root, &args(&["--csv", "a.csv", "--svg=out/b.svg", "--markdown", "c.md"])).unwrap();
        assert_eq!(o, PlotOptions { csv: "a.csv".into(), svg: "out/b.svg".into(), markdown: "c.md".into() });
    }

    #[test]
    fn bad_options_are_usage_errors() {
        for bad in [
            &["--csv"][..],
            &["--svg="],
            &["--csv", "--svg", "x"],
            &["--png", "x"],
            &["a.csv"],
            &["--csv", "a", "--csv=b"],
        ] {
            let err = PlotOptions::parse(Path::new("/ws"), &args(bad)).unwrap_err();
            assert_eq!(err.code, EXIT_USAGE, "{bad:?}");
        }
    }

    #[test]
    fn writes_chart_and_table() {
        let dir = std::env::temp_dir().join(format!("xtask-plot-{}", std::process::id()));
        util::create_dir_all(&dir).unwrap();
        let csv = dir.join("in.csv");
        fs::write(&csv, SAMPLE).unwrap();
        let (svg, md) = (dir.join("out/chart.svg"), dir.join("out/table.md"));
        let list = [csv.to_str().unwrap(), svg.to_str().unwrap(), md.to_str().unwrap()];
        plot(&dir, &args(&["--csv", list[0], "--svg", list[1], "--markdown", list[2]])).unwrap();
        let (svg_text, md_text) = (fs::read_to_string(&svg).unwrap(), fs::read_to_string(&md).unwrap());
        let missing = plot(&dir, &args(&["--csv", dir.join("none.csv").to_str().unwrap()])).unwrap_err();
        fs::remove_dir_all(&dir).unwrap();
        assert!(svg_text.contains(">\nhistogram u8 2^28 uniform\n</text>"));
        assert_eq!(md_text, table::markdown(&csv::parse(SAMPLE, "").unwrap()));
        assert!(missing.message.contains("none.csv"), "{}", missing.message);
    }
}
