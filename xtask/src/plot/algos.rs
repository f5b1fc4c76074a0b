//! `plot-algos`: the library's benchmark (`bench/algos.cu` against CUB, `bench/torch_cupy.py` for
//! torch and CuPy; both write `timing,workload,n,impl,ms,gbps`) as two SVGs of line charts (CUB's time
//! over the library's against `n`, host-timed and cold), a Markdown file with every row, and the
//! summary table of the README (printed, and at the top of the Markdown file).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use plotters::prelude::*;

use super::sweep::{COLOURS, DrawResult, draw_legend, draw_line};
use crate::util::{self, Context, Error, Result, display_path};

pub const DEFAULT_CSV: &str = "bench/algos.csv";
pub const DEFAULT_TORCH: &str = "bench/torch_cupy.csv";
pub const DEFAULT_SVG: &str = "bench/algos.svg";
pub const DEFAULT_TABLES: &str = "bench/algos.md";

/// The library's rows are named so in the CSV.
pub const OURS: &str = "gpu-algos";
/// The other implementations, in column order.
pub const OTHERS: [&str; 3] = ["CUB", "torch", "CuPy"];
pub const HEADER: &str = "timing,workload,n,impl,ms,gbps";

/// Median milliseconds per (timing, workload, n, implementation); workloads by operation and type.
#[derive(Debug, Default)]
pub struct Results {
    pub workloads: Vec<String>,
    pub ms: BTreeMap<(String, String, u64, String), f64>,
}

impl Results {
    /// Adds the rows of one CSV file's text (`what` names it in errors).
    pub fn add(&mut self, text: &str, what: &str) -> Result<()> {
        let mut lines = text.lines().enumerate().filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty());
        match lines.next() {
            Some((_, h)) if h.trim() == HEADER => {}
            _ => return Err(Error::new(format!("{what}: the first line is not `{HEADER}`"))),
        }
        for (i, line) in lines {
            let f: Vec<&str> = line.split(',').collect();
            let bad = || Error::new(format!("{what}:{}: not `{HEADER}`: {line}", i + 1));
            if f.len() != 6 {
                return Err(bad());
            }
            let n: u64 = f[2].parse().map_err(|_| bad())?;
            let ms: f64 = f[4].parse().map_err(|_| bad())?;
            if ms.is_nan() || ms <= 0.0 {
                return Err(bad());
            }
            if !self.workloads.iter().any(|w| w == f[1]) {
                self.workloads.push(f[1].to_string());
                self.workloads.sort_by_key(|w| order_key(w));
            }
            self.ms.insert((f[0].to_string(), f[1].to_string(), n, f[3].to_string()), ms);
        }
        Ok(())
    }

    fn get(&self, timing: &str, workload: &str, n: u64, imp: &str) -> Option<f64> {
        self.ms.get(&(timing.to_string(), workload.to_string(), n, imp.to_string())).copied()
    }

    /// The sizes of `workload` measured for the library in `timing`, ascending.
    fn sizes(&self, timing: &str, workload: &str) -> Vec<u64> {
        self.ms.keys().filter(|(t, w, _, i)| t == timing && w == workload && i == OURS).map(|k| k.2).collect()
    }

    /// `other`'s time over the library's at each size where both were measured: `(log2 n, ratio)`.
    pub fn ratios(&self, timing: &str, workload: &str, other: &str) -> Vec<(f64, f64)> {
        self.sizes(timing, workload)
            .into_iter()
            .filter_map(|n| {
                Some(((n as f64).log2(), self.get(timing, workload, n, other)? / self.get(timing, workload, n, OURS)?))
            })
            .collect()
    }
}

/// The panel of a workload (its operation) and its line (the element type): `reduce sum u32` is
/// line `u32` of panel `reduce sum`; `histogram even u16` is line `even u16` of panel `histogram`.
pub fn panel_of(workload: &str) -> (String, String) {
    let words: Vec<&str> = workload.split_whitespace().collect();
    if words.first() == Some(&"histogram") {
        return ("histogram".to_string(), words[1..].join(" "));
    }
    let k = words.len().saturating_sub(1);
    (words[..k].join(" "), words[k..].join(" "))
}

/// Where a workload goes in the tables: by operation (reduce, histogram, scan), then element type.
fn order_key(workload: &str) -> (usize, usize, String) {
    const OPS: [&str; 7] = [
        "reduce sum",
        "reduce min",
        "reduce max",
        "reduce deterministic_sum",
        "histogram",
        "scan inclusive",
        "scan exclusive",
    ];
    const TYPES: [&str; 10] = ["u32", "i32", "u64", "i64", "f32", "f64", "bytes", "even u16", "even u32", "even f32"];
    let (panel, line) = panel_of(workload);
    let at = |list: &[&str], x: &str| list.iter().position(|y| *y == x).unwrap_or(list.len());
    (at(&OPS, &panel), at(&TYPES, &line), workload.to_string())
}

/// The lowest of `ratios` (from `from` on: a `log2 n`), with its `log2 n`.
fn lowest(ratios: &[(f64, f64)], from: f64) -> Option<(f64, f64)> {
    ratios.iter().copied().filter(|p| p.0 >= from).min_by(|a, b| a.1.total_cmp(&b.1))
}

fn micros(ms: Option<f64>) -> String {
    ms.map_or_else(|| "—".to_string(), |m| format!("{:.1}", m * 1e3))
}
fn times(ratio: Option<f64>) -> String {
    ratio.map_or_else(|| "—".to_string(), |r| format!("{r:.2}x"))
}

/// The README's table: per workload at the largest size, the library's time, CUB's, torch's (or
/// CuPy's where torch has no such call), their ratios, and the lowest ratio to CUB over every size
/// host-timed and from 2^20 on cold.
pub fn summary(r: &Results) -> String {
    let mut s = String::from(
        "| workload | n | gpu-algos µs | CUB µs | torch µs | vs CUB | vs torch | lowest vs CUB, host (at) | lowest vs CUB, cold from 2^20 (at) |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for w in &r.workloads {
        let Some(&n) = r.sizes("host", w).last() else { continue };
        let ours = r.get("host", w, n, OURS);
        let (torch_name, torch) = match (r.get("host", w, n, "torch"), r.get("host", w, n, "CuPy")) {
            (Some(t), _) => ("", Some(t)),
            (None, Some(c)) => (" (CuPy)", Some(c)),
            (None, None) => ("", None),
        };
        let cub = r.get("host", w, n, "CUB");
        let ratio = |o: Option<f64>| Some(o? / ours?);
        let low = |timing: &str, from: f64| {
            lowest(&r.ratios(timing, w, "CUB"), from).map_or("—".to_string(), |(k, x)| format!("{x:.2}x (2^{k})"))
        };
        let _ = writeln!(
            s,
            "| {w} | 2^{} | {} | {} | {}{torch_name} | {} | {} | {} | {} |",
            (n as f64).log2(),
            micros(ours),
            micros(cub),
            micros(torch),
            times(ratio(cub)),
            times(ratio(torch)),
            low("host", 0.0),
            low("cold", 20.0)
        );
    }
    s
}

/// Every row: one table per workload and timing, a line per size.
pub fn tables(r: &Results) -> String {
    let mut s = String::new();
    for w in &r.workloads {
        for timing in ["host", "cold"] {
            let sizes = r.sizes(timing, w);
            if sizes.is_empty() {
                continue;
            }
            let _ = writeln!(s, "\n### {w}, {timing}\n");
            let _ = writeln!(
                s,
                "| n | gpu-algos µs | CUB µs | torch µs | CuPy µs | CUB / gpu-algos | torch / gpu-algos | CuPy / gpu-algos |"
            );
            let _ = writeln!(s, "|---:|---:|---:|---:|---:|---:|---:|---:|");
            for n in sizes {
                let ours = r.get(timing, w, n, OURS);
                let t: Vec<Option<f64>> = OTHERS.iter().map(|o| r.get(timing, w, n, o)).collect();
                let ratio = |o: Option<f64>| times(o.zip(ours).map(|(a, b)| a / b));
                let _ = writeln!(
                    s,
                    "| 2^{} | {} | {} | {} | {} | {} | {} | {} |",
                    (n as f64).log2(),
                    micros(ours),
                    micros(t[0]),
                    micros(t[1]),
                    micros(t[2]),
                    ratio(t[0]),
                    ratio(t[1]),
                    ratio(t[2])
                );
            }
        }
    }
    s
}

const COLUMNS: usize = 4;
const PANEL: (u32, u32) = (430, 300);
const TITLE_HEIGHT: u32 = 40;

/// A line of a panel: its name and points `(log2 n, ratio)`.
pub type Line = (String, Vec<(f64, f64)>);
/// A panel: its name and lines.
pub type Panel = (String, Vec<Line>);

/// The panels of `timing`: per operation, a line per type of CUB's time over the library's.
pub fn panels(r: &Results, timing: &str) -> Vec<Panel> {
    let mut out: Vec<Panel> = Vec::new();
    for w in &r.workloads {
        let points = r.ratios(timing, w, "CUB");
        if points.is_empty() {
            continue;
        }
        let (panel, line) = panel_of(w);
        match out.iter_mut().find(|(p, _)| *p == panel) {
            Some((_, lines)) => lines.push((line, points)),
            None => out.push((panel, vec![(line, points)])),
        }
    }
    out
}

/// The chart of `timing` as SVG text.
pub fn render(r: &Results, timing: &str, title: &str) -> Result<String> {
    let panels = panels(r, timing);
    if panels.is_empty() {
        return Err(Error::new(format!("no {timing}-timed rows with both gpu-algos and CUB to plot")));
    }
    let rows = panels.len().div_ceil(COLUMNS);
    let size = (COLUMNS as u32 * PANEL.0, TITLE_HEIGHT + rows as u32 * PANEL.1);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        draw(&root, &panels, rows, title).map_err(|e| Error::new(format!("cannot draw the chart: {e}")))?;
        root.present().map_err(|e| Error::new(format!("cannot draw the chart: {e}")))?;
    }
    Ok(svg)
}

fn draw(
    root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    panels: &[Panel],
    rows: usize,
    title: &str,
) -> DrawResult {
    root.fill(&WHITE)?;
    let (top, body) = root.split_vertically(TITLE_HEIGHT);
    top.titled(title, ("sans-serif", 18))?;
    let areas = body.split_evenly((rows, COLUMNS));
    for ((name, lines), area) in panels.iter().zip(areas.iter()) {
        let pts = lines.iter().flat_map(|(_, p)| p.iter());
        let (lo, hi, ymax) =
            pts.fold((f64::MAX, f64::MIN, 1.2f64), |(a, b, y), p| (a.min(p.0), b.max(p.0), y.max(p.1 * 1.05)));
        let mut chart = ChartBuilder::on(area)
            .caption(name, ("sans-serif", 15))
            .margin(8)
            .x_label_area_size(26)
            .y_label_area_size(40)
            .build_cartesian_2d(lo..hi.max(lo + 1.0), 0.0..ymax)?;
        chart
            .configure_mesh()
            .x_labels(((hi - lo) as usize / 4 + 1).max(2))
            .x_label_formatter(&|x| format!("2^{}", x.round() as i64))
            .y_desc("CUB time / gpu-algos time")
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        chart.draw_series(std::iter::once(PathElement::new(vec![(lo, 1.0), (hi, 1.0)], BLACK.stroke_width(1))))?;
        for (k, (line, points)) in lines.iter().enumerate() {
            draw_line(&mut chart, points, line, COLOURS[k % COLOURS.len()].stroke_width(2))?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
    }
    Ok(())
}

fn read(path: &Path, r: &mut Results) -> Result<()> {
    let text = std::fs::read_to_string(path).context(|| format!("cannot read {}", path.display()))?;
    r.add(&text, &path.display().to_string())
}

fn write(root: &Path, path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        util::create_dir_all(dir)?;
    }
    util::replace_file(path, text.as_bytes(), false).context(|| format!("cannot write {}", path.display()))?;
    println!("wrote {}", display_path(root, path));
    Ok(())
}

/// `cargo xtask plot-algos [--csv PATH] [--torch PATH] [--svg PATH] [--tables PATH]`: the cold chart
/// goes next to the host one (`NAME-cold.svg`).
pub fn plot_algos(root: &Path, args: &[String]) -> Result<()> {
    let [csv, torch, svg, tables_path] =
        super::path_flags("plot-algos", args, ["--csv", "--torch", "--svg", "--tables"])?;
    let mut r = Results::default();
    read(&csv.unwrap_or_else(|| root.join(DEFAULT_CSV)), &mut r)?;
    let torch = torch.unwrap_or_else(|| root.join(DEFAULT_TORCH));
    if torch.exists() {
        read(&torch, &mut r)?;
    } else {
        println!("plot-algos: no {} (torch and CuPy columns left empty)", display_path(root, &torch));
    }
    let svg = svg.unwrap_or_else(|| root.join(DEFAULT_SVG));
    let cold = svg.with_file_name(format!(
        "{}-cold.svg",
        svg.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
    ));
    write(
        root,
        &svg,
        &render(&r, "host", "CUB's time over gpu-algos' against n, host-timed (above 1: gpu-algos faster)")?,
    )?;
    write(root, &cold, &render(&r, "cold", "The same, GPU time with the L2 flushed (cold)")?)?;
    let summary = summary(&r);
    let text = format!(
        "# gpu-algos against CUB, torch and CuPy: every row\n\nTimes are medians in µs (`bench/README.md` says how they are taken).\n\n{summary}{}",
        tables(&r)
    );
    write(root, &tables_path.unwrap_or_else(|| root.join(DEFAULT_TABLES)), &text)?;
    print!("{summary}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "timing,workload,n,impl,ms,gbps\n\
        host,reduce sum f32,1024,gpu-algos,0.005,1\n\
        host,reduce sum f32,1024,CUB,0.010,1\n\
        host,reduce sum f32,2048,gpu-algos,0.010,1\n\
        host,reduce sum f32,2048,CUB,0.008,1\n\
        cold,reduce sum f32,2048,gpu-algos,0.004,1\n\
        cold,reduce sum f32,2048,CUB,0.006,1\n\
        host,histogram even u16,1024,gpu-algos,0.002,1\n\
        host,histogram even u16,1024,CUB,0.003,1\n";

    #[test]
    fn panels_are_operations_and_lines_are_types() {
        assert_eq!(panel_of("reduce deterministic_sum f64"), ("reduce deterministic_sum".into(), "f64".into()));
        assert_eq!(panel_of("histogram even u16"), ("histogram".into(), "even u16".into()));
        assert_eq!(panel_of("scan exclusive i64"), ("scan exclusive".into(), "i64".into()));
    }

    #[test]
    fn ratios_summary_and_tables() {
        let mut r = Results::default();
        r.add(CSV, "a").unwrap();
        r.add("timing,workload,n,impl,ms,gbps\nhost,reduce sum f32,2048,torch,0.020,1\n", "b").unwrap();
        assert_eq!(r.ratios("host", "reduce sum f32", "CUB"), [(10.0, 2.0), (11.0, 0.8)]);
        let s = summary(&r);
        assert!(s.contains("| reduce sum f32 | 2^11 | 10.0 | 8.0 | 20.0 | 0.80x | 2.00x | 0.80x (2^11) | — |"), "{s}");
        assert!(s.contains("| histogram even u16 | 2^10 | 2.0 | 3.0 | — | 1.50x | — | 1.50x (2^10) | — |"), "{s}");
        let t = tables(&r);
        assert!(
            t.contains("### reduce sum f32, cold") && t.contains("| 2^11 | 4.0 | 6.0 | — | — | 1.50x | — | — |"),
            "{t}"
        );
        let svg = render(&r, "host", "t").unwrap();
        assert!(svg.contains("reduce sum") && svg.contains("even u16"));
    }

    #[test]
    fn bad_rows_are_errors() {
        let mut r = Results::default();
        assert!(r.add("a,b\n", "x").unwrap_err().message.contains("first line"));
        let e = r.add("timing,workload,n,impl,ms,gbps\nhost,w,12,CUB,-1,1\n", "x").unwrap_err();
        assert!(e.message.starts_with("x:2:"), "{}", e.message);
    }
}
