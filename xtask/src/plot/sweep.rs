//! `plot-sweep`: the size sweep of `bench/bench.cu --sweep` (a CSV file in the format of [`super::csv`])
//! as one SVG of line charts, GB/s against `n` (log scale), one panel per workload family (a workload
//! name without its `2^k`), one line per implementation: the proxy, CUB and the Rust tiers.

use std::path::Path;

use plotters::prelude::*;

use super::csv::{self, BenchResults, Kind, family_of};
use crate::util::{self, Context, Error, Result, display_path};

/// Where `plot-sweep` reads and writes by default, relative to the workspace root.
pub const DEFAULT_CSV: &str = "bench/sweep.csv";
pub const DEFAULT_SVG: &str = "bench/sweep.svg";
pub const DEFAULT_TABLES: &str = "bench/sweep-tables.md";

const COLUMNS: u32 = 3;
const PANEL: (u32, u32) = (520, 330);
const TITLE_HEIGHT: u32 = 40;
pub(super) const COLOURS: [RGBColor; 6] = [
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0x9c, 0x75, 0x5f),
];

/// One line of a panel: an implementation, its kind, and its points `(log2 n, GB/s)`.
pub type Line = (String, Kind, Vec<(f64, f64)>);

/// One panel: a family's lines, in file order.
#[derive(Debug, PartialEq)]
pub struct Family {
    pub name: String,
    pub lines: Vec<Line>,
}

/// Groups the rows into families and lines; nvcc rows and rows of other kinds than proxy, CUB and Rust
/// (tuning rows) are left out.
pub fn families(results: &BenchResults) -> Vec<Family> {
    let mut out: Vec<Family> = Vec::new();
    for (w, r) in results.rows() {
        let proxy = r.implementation.contains("proxy");
        if !(proxy || matches!(r.kind, Kind::Cub | Kind::Rust)) || r.n == 0 {
            continue;
        }
        let name = family_of(&w.name);
        let fam = match out.iter().position(|f| f.name == name) {
            Some(i) => &mut out[i],
            None => {
                out.push(Family { name, lines: Vec::new() });
                out.last_mut().expect("just pushed")
            }
        };
        let point = ((r.n as f64).log2(), r.gbps);
        match fam.lines.iter_mut().find(|(impl_name, _, _)| *impl_name == r.implementation) {
            Some((_, _, points)) => points.push(point),
            None => fam.lines.push((r.implementation.clone(), r.kind, vec![point])),
        }
    }
    out
}

/// Draws the sweep of `results` as SVG text; the number of panels.
pub fn render(results: &BenchResults) -> Result<(String, usize)> {
    let fams = families(results);
    if fams.is_empty() {
        return Err(Error::new("no proxy, CUB or Rust rows to plot".to_string()));
    }
    let rows = (fams.len() as u32).div_ceil(COLUMNS);
    let size = (COLUMNS * PANEL.0, TITLE_HEIGHT + rows * PANEL.1);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        draw(&root, results, &fams, rows).map_err(|e| Error::new(format!("cannot draw the sweep chart: {e}")))?;
        root.present().map_err(|e| Error::new(format!("cannot draw the sweep chart: {e}")))?;
    }
    Ok((svg, fams.len()))
}

pub(super) type DrawResult = std::result::Result<(), Box<dyn std::error::Error>>;

fn draw(
    root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    results: &BenchResults,
    fams: &[Family],
    rows: u32,
) -> DrawResult {
    root.fill(&WHITE)?;
    let title = match &results.device {
        Some(d) => format!("{d}: GB/s against n, every power of two (higher is better)"),
        None => "GB/s against n, every power of two (higher is better)".to_string(),
    };
    let (top, body) = root.split_vertically(TITLE_HEIGHT);
    top.titled(&title, ("sans-serif", 20))?;
    let panels = body.split_evenly((rows as usize, COLUMNS as usize));
    for (fam, area) in fams.iter().zip(panels.iter()) {
        let xs = fam.lines.iter().flat_map(|(_, _, p)| p.iter().map(|q| q.0));
        let (lo, hi) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
        let ymax = fam.lines.iter().flat_map(|(_, _, p)| p.iter().map(|q| q.1)).fold(0.0f64, f64::max) * 1.08;
        let mut chart = ChartBuilder::on(area)
            .caption(&fam.name, ("sans-serif", 16))
            .margin(8)
            .x_label_area_size(28)
            .y_label_area_size(48)
            .build_cartesian_2d(lo..hi.max(lo + 1.0), 0.0..ymax.max(1.0))?;
        chart
            .configure_mesh()
            .x_labels(((hi - lo) as usize / 2 + 1).max(2))
            .x_label_formatter(&|x| format!("2^{}", x.round() as i64))
            .y_desc("GB/s")
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        let mut colour = 0;
        for (name, kind, points) in &fam.lines {
            let style: ShapeStyle = if name.contains("proxy") {
                BLACK.stroke_width(1)
            } else if *kind == Kind::Cub {
                RGBColor(0x70, 0x70, 0x70).stroke_width(2)
            } else {
                colour += 1;
                COLOURS[(colour - 1) % COLOURS.len()].stroke_width(2)
            };
            draw_line(&mut chart, points, name, style)?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    }
    Ok(())
}

/// A panel of line charts over `(log2 n, value)`.
pub(super) type Panel<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// One line of a panel, named in its legend.
pub(super) fn draw_line<'a>(
    chart: &mut Panel<'a, 'a>,
    points: &[(f64, f64)],
    name: &str,
    style: ShapeStyle,
) -> DrawResult {
    chart
        .draw_series(std::iter::once(PathElement::new(points.to_vec(), style)))?
        .label(name)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], style));
    Ok(())
}

/// A panel's legend, at `position`.
pub(super) fn draw_legend<'a>(chart: &mut Panel<'a, 'a>, position: SeriesLabelPosition) -> DrawResult {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .label_font(("sans-serif", 11))
        .draw()?;
    Ok(())
}

/// `cargo xtask plot-sweep [--csv PATH] [--svg PATH] [--tables PATH]`: reads the sweep CSV and writes
/// the chart and the tables.
pub fn plot_sweep(root: &Path, args: &[String]) -> Result<()> {
    let [csv_path, svg_path, tables_path] = super::path_flags("plot-sweep", args, ["--csv", "--svg", "--tables"])?;
    let csv_path = csv_path.unwrap_or_else(|| root.join(DEFAULT_CSV));
    let svg_path = svg_path.unwrap_or_else(|| root.join(DEFAULT_SVG));
    let tables_path = tables_path.unwrap_or_else(|| root.join(DEFAULT_TABLES));
    let results = csv::read(&csv_path)?;
    let (svg, panels) = render(&results)?;
    if let Some(dir) = svg_path.parent().filter(|d| !d.as_os_str().is_empty()) {
        util::create_dir_all(dir)?;
    }
    util::replace_file(&svg_path, svg.as_bytes(), false).context(|| format!("cannot write {}", svg_path.display()))?;
    println!("wrote {}: {panels} panel(s)", display_path(root, &svg_path));
    let tables = super::sweep_tables::markdown(&results);
    if let Some(dir) = tables_path.parent().filter(|d| !d.as_os_str().is_empty()) {
        util::create_dir_all(dir)?;
    }
    util::replace_file(&tables_path, tables.as_bytes(), false)
        .context(|| format!("cannot write {}", tables_path.display()))?;
    println!("wrote {}", display_path(root, &tables_path));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_per_implementation_over_sizes() {
        let text = "# device: GPU X, 1 SMs\n".to_string()
            + csv::HEADER
            + "\nscan u32 2^10,copy proxy (read + write),1024,8192,0.01,0.8,100,2\n\
               scan u32 2^10,CUB DeviceScan::InclusiveSum,1024,8192,0.02,0.4,50,1\n\
               scan u32 2^10,Rust scan_u32 (single pass),1024,8192,0.01,0.8,100,2\n\
               scan u32 2^10,tune scan_u32 block 128,1024,8192,0.01,0.8,100,2\n\
               scan u32 2^11,copy proxy (read + write),2048,16384,0.01,1.6,100,2\n\
               scan u32 2^11,CUB DeviceScan::InclusiveSum,2048,16384,0.02,0.8,50,1\n\
               scan u32 2^11,Rust scan_u32 (single pass),2048,16384,0.01,1.6,100,2\n";
        let r = csv::parse(&text, "t").unwrap();
        let f = families(&r);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].name, "scan u32");
        let names: Vec<&str> = f[0].lines.iter().map(|l| l.0.as_str()).collect();
        assert_eq!(names, ["copy proxy (read + write)", "CUB DeviceScan::InclusiveSum", "Rust scan_u32 (single pass)"]);
        assert_eq!(f[0].lines[2].2, [(10.0, 0.8), (11.0, 1.6)]);
        let (svg, panels) = render(&r).unwrap();
        assert_eq!(panels, 1);
        assert!(svg.contains("scan u32") && svg.contains("GPU X"));
    }
}
