//! The results as an SVG chart: grouped bars of GB/s per workload, the workload's read limit as a
//! dashed line across its group, and a legend beside the plot.
//!
//! Colours follow the implementation, not its position: every CUB row has one colour, every nvcc row
//! another, and each other implementation name (each Rust tier) its own, the same in every workload.

use std::path::Path;

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::csv::{BenchResults, Kind, READ_LIMIT_PREFIX, Row};
use crate::util::{self, Context, Result};

/// What the title says after the device name.
const TITLE: &str = "GB/s per implementation (higher is better)";

const FONT: &str = "sans-serif";
/// Font sizes as plotters takes them (it writes 1/1.24 of them into the SVG).
const TITLE_SIZE: u32 = 28;
const TEXT_SIZE: u32 = 17;
/// An estimate of one character's average width at `TEXT_SIZE` in a sans-serif font, in pixels.
const CHAR_PX: f64 = 7.5;
/// Distance between the baselines of two lines of text at `TEXT_SIZE`.
const LINE_PX: u32 = 18;

/// Width of a chart with few workloads.
const MIN_WIDTH: u32 = 1200;
/// Height of the plotting area.
const PLOT_HEIGHT: u32 = 480;
const MARGIN: u32 = 20;
/// Room for the y axis's numbers and its description.
const Y_LABEL_AREA: u32 = 80;
/// Space between the plot and the legend.
const LEGEND_GAP: u32 = 24;
/// Smallest width of one workload's group of bars, and of one bar within it.
const MIN_GROUP_PX: u32 = 110;
const MIN_BAR_PX: u32 = 16;
/// Height of one legend entry, and the side of its colour swatch.
const LEGEND_ROW_PX: u32 = 24;
const SWATCH_PX: i32 = 14;

/// Part of a group's width (1.0) the bars span at most, and part of a bar's slot left as a gap.
const GROUP_FILL: f64 = 0.84;
const BAR_GAP: f64 = 0.12;
/// Widest slot of one bar (bar and gap): with few bars a group's bars stay together in its middle.
const MAX_SLOT_PX: f64 = 64.0;
/// How far the read-limit line reaches past the bars on each side, in group widths.
const READ_LIMIT_OVERHANG: f64 = 0.05;

const CUB_COLOUR: RGBColor = RGBColor(0x59, 0x59, 0x59);
const NVCC_COLOUR: RGBColor = RGBColor(0x4e, 0x79, 0xa7);
/// Colours of the other implementations, in order of first appearance; further ones get generated hues.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0xff, 0x9d, 0xa7),
];
const READ_LIMIT_COLOUR: RGBColor = RGBColor(0x1a, 0x1a, 0x1a);
const SEPARATOR_COLOUR: RGBColor = RGBColor(0xdd, 0xdd, 0xdd);

/// What `write_svg` drew.
#[derive(Debug, PartialEq)]
pub struct Drawn {
    pub workloads: usize,
    pub bars: usize,
    pub size: (u32, u32),
}

/// Draws the chart of `results` and writes it to `path` (creating its directory).
pub fn write_svg(results: &BenchResults, path: &Path) -> Result<Drawn> {
    let (svg, drawn) = render(results)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        util::create_dir_all(dir)?;
    }
    util::replace_file(path, svg.as_bytes(), false)?;
    Ok(drawn)
}

/// The chart as SVG text.
pub fn render(results: &BenchResults) -> Result<(String, Drawn)> {
    let legend = Legend::of(results);
    let layout = Layout::of(results, &legend);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, layout.size).into_drawing_area();
        draw(&root, results, &legend, &layout).context(|| "cannot draw the chart".to_string())?;
        root.present().context(|| "cannot draw the chart".to_string())?;
    }
    let bars = results.workloads.iter().map(|w| w.bars().count()).sum();
    Ok((svg, Drawn { workloads: results.workloads.len(), bars, size: layout.size }))
}

/// The chart's title: the device, when the file names it, then what is plotted.
pub fn title(results: &BenchResults) -> String {
    match &results.device {
        Some(device) => format!("{device}: {TITLE}"),
        None => TITLE.to_string(),
    }
}

/// One colour of the chart and what the legend calls it.
#[derive(Clone, Debug, PartialEq)]
struct Entry {
    /// What rows of this colour share: `CUB`, `nvcc`, or else the implementation name.
    key: String,
    label: String,
    colour: RGBAColor,
}

/// The legend's entries, in order of first appearance; the read limit's entry is drawn after them.
#[derive(Debug)]
struct Legend {
    entries: Vec<Entry>,
    /// The read limit's label, when any workload has one.
    read_limit: Option<String>,
}

impl Legend {
    fn of(results: &BenchResults) -> Legend {
        let mut entries: Vec<Entry> = Vec::new();
        let mut others = 0;
        for (_, row) in results.rows().filter(|(_, r)| r.kind != Kind::ReadLimit) {
            let key = colour_key(row);
            if entries.iter().any(|e| e.key == key) {
                continue;
            }
            let colour = match row.kind {
                Kind::Cub => CUB_COLOUR.to_rgba(),
                Kind::Nvcc => NVCC_COLOUR.to_rgba(),
                _ => {
                    others += 1;
                    other_colour(others - 1)
                }
            };
            // CUB and nvcc rows share a colour; the legend names them by kind unless they share a name.
            let mut names = results.rows().map(|(_, r)| r).filter(|r| colour_key(r) == key).map(|r| &r.implementation);
            let first = names.next().map_or(key.as_str(), String::as_str);
            let label = if names.all(|n| n == first) { first.to_string() } else { key.clone() };
            entries.push(Entry { key, label, colour });
        }
        let read_limit = results.rows().find(|(_, r)| r.kind == Kind::ReadLimit).map(|(_, r)| read_limit_label(r));
        Legend { entries, read_limit }
    }

    fn colour(&self, row: &Row) -> RGBAColor {
        let key = colour_key(row);
        self.entries.iter().find(|e| e.key == key).map_or(BLACK.to_rgba(), |e| e.colour)
    }

    fn labels(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.label.as_str()).chain(self.read_limit.as_deref())
    }
}

/// The name rows of one colour share.
fn colour_key(row: &Row) -> String {
    match row.kind {
        Kind::Cub => "CUB".to_string(),
        Kind::Nvcc => "nvcc".to_string(),
        _ => row.implementation.clone(),
    }
}

/// `read-limit proxy (vec4 read-only sum)` -> `read limit (vec4 read-only sum)`.
fn read_limit_label(row: &Row) -> String {
    format!("read limit{}", row.implementation.strip_prefix(READ_LIMIT_PREFIX).unwrap_or(""))
}

/// The `index`-th colour of the implementations other than CUB and nvcc.
fn other_colour(index: usize) -> RGBAColor {
    match PALETTE.get(index) {
        Some(c) => c.to_rgba(),
        // Hues a golden angle apart stay distinct from each other for a long while.
        None => HSLColor((index as f64 * 0.618_034).fract(), 0.55, 0.5).to_rgba(),
    }
}

/// Sizes of the picture and its parts, in pixels.
#[derive(Debug)]
struct Layout {
    size: (u32, u32),
    legend_width: u32,
    /// Each workload's name, wrapped to the width of its group.
    labels: Vec<Vec<String>>,
    label_area: u32,
}

impl Layout {
    fn of(results: &BenchResults, legend: &Legend) -> Layout {
        let n = results.workloads.len().max(1) as u32;
        let most_bars = results.workloads.iter().map(|w| w.bars().count()).max().unwrap_or(0) as u32;
        let group_min = MIN_GROUP_PX.max(most_bars * MIN_BAR_PX + 24);
        let longest_label = legend.labels().map(|l| l.chars().count()).max().unwrap_or(0);
        let legend_width = (longest_label as f64 * CHAR_PX) as u32 + SWATCH_PX as u32 + 40;
        let fixed = 2 * MARGIN + Y_LABEL_AREA + LEGEND_GAP + legend_width;
        let width = MIN_WIDTH.max(fixed + n * group_min);
        let group_px = (width - fixed) / n;
        let chars = (((group_px - 12) as f64) / CHAR_PX).max(1.0) as usize;
        let labels: Vec<Vec<String>> = results.workloads.iter().map(|w| wrap(&w.name, chars)).collect();
        let lines = labels.iter().map(Vec::len).max().unwrap_or(1) as u32;
        let label_area = 16 + lines * LINE_PX;
        let legend_height = (legend.labels().count() as u32 + 1) * LEGEND_ROW_PX;
        let height = (2 * MARGIN + 40 + PLOT_HEIGHT.max(legend_height) + label_area).max(600);
        Layout { size: (width, height), legend_width, labels, label_area }
    }
}

/// `text` in lines of at most `width` characters, broken at spaces; a longer word keeps a line of its own.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

type DrawResult = std::result::Result<(), DrawingAreaErrorKind<std::io::Error>>;

fn draw(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    results: &BenchResults,
    legend: &Legend,
    layout: &Layout,
) -> DrawResult {
    root.fill(&WHITE)?;
    let (width, _) = layout.size;
    let (plot_area, legend_area) = root.split_horizontally(width - MARGIN - layout.legend_width);
    let n = results.workloads.len().max(1);
    let top = results.workloads.iter().flat_map(|w| w.rows.iter().map(|r| r.gbps)).fold(0.0_f64, f64::max);
    let y_max = if top > 0.0 { top * 1.1 } else { 1.0 };

    let mut chart = ChartBuilder::on(&plot_area)
        .caption(title(results), (FONT, TITLE_SIZE))
        .margin(MARGIN)
        .margin_right(LEGEND_GAP)
        .x_label_area_size(layout.label_area)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(0.0..n as f64, 0.0..y_max)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc("GB/s")
        .y_label_formatter(&|v| format!("{v:.0}"))
        .label_style((FONT, TEXT_SIZE))
        .axis_desc_style((FONT, TEXT_SIZE + 2))
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.12))
        .draw()?;

    // Thin lines between the groups.
    chart.draw_series(
        (1..n).map(|i| PathElement::new(vec![(i as f64, 0.0), (i as f64, y_max)], SEPARATOR_COLOUR.stroke_width(1))),
    )?;

    let group_px = f64::from(chart.backend_coord(&(1.0, 0.0)).0 - chart.backend_coord(&(0.0, 0.0)).0).max(1.0);
    for (i, workload) in results.workloads.iter().enumerate() {
        let bars: Vec<&Row> = workload.bars().collect();
        let slot = (GROUP_FILL / bars.len().max(1) as f64).min(MAX_SLOT_PX / group_px);
        let start = i as f64 + 0.5 - slot * bars.len() as f64 / 2.0;
        chart.draw_series(bars.iter().enumerate().map(|(j, row)| {
            let x0 = start + j as f64 * slot + slot * BAR_GAP / 2.0;
            let x1 = start + (j + 1) as f64 * slot - slot * BAR_GAP / 2.0;
            Rectangle::new([(x0, 0.0), (x1, row.gbps)], legend.colour(row).filled())
        }))?;
        if let Some(limit) = workload.read_limit() {
            let reach = (slot * bars.len() as f64 / 2.0 + READ_LIMIT_OVERHANG).max(0.25);
            let (x0, x1) = (i as f64 + 0.5 - reach, i as f64 + 0.5 + reach);
            chart.draw_series(std::iter::once(DashedPathElement::new(
                vec![(x0, limit.gbps), (x1, limit.gbps)],
                8,
                5,
                READ_LIMIT_COLOUR.stroke_width(2),
            )))?;
        }
    }

    // Workload names under their groups, centred, one text element per line.
    let (_, plot_y) = chart.plotting_area().get_pixel_range();
    let label_style = TextStyle::from((FONT, TEXT_SIZE).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    for (i, lines) in layout.labels.iter().enumerate() {
        let (x, _) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
        for (k, line) in lines.iter().enumerate() {
            let y = plot_y.end + 10 + (k as u32 * LINE_PX) as i32;
            plot_area.draw(&Text::new(line.as_str(), (x, y), label_style.clone()))?;
        }
    }

    draw_legend(&legend_area, legend, plot_y.start)
}

/// The legend: a swatch and a label per colour, then the read limit's dashed line.
fn draw_legend(area: &DrawingArea<SVGBackend<'_>, Shift>, legend: &Legend, top: i32) -> DrawResult {
    let text = TextStyle::from((FONT, TEXT_SIZE).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    let row_y = |k: usize| top + 4 + (k as u32 * LEGEND_ROW_PX) as i32;
    let text_x = SWATCH_PX + 10;
    for (k, entry) in legend.entries.iter().enumerate() {
        let y = row_y(k);
        area.draw(&Rectangle::new([(0, y), (SWATCH_PX, y + SWATCH_PX)], entry.colour.filled()))?;
        area.draw(&Text::new(entry.label.as_str(), (text_x, y + SWATCH_PX / 2), text.clone()))?;
    }
    if let Some(label) = &legend.read_limit {
        let y = row_y(legend.entries.len()) + SWATCH_PX / 2;
        area.draw(&DashedPathElement::new(vec![(0, y), (SWATCH_PX + 4, y)], 6, 3, READ_LIMIT_COLOUR.stroke_width(2)))?;
        area.draw(&Text::new(label.as_str(), (text_x, y), text))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::plot::csv::{HEADER, parse};
    use crate::plot::tests::SAMPLE;

    /// Whether the SVG has a text element saying exactly `text`.
    fn has_text(svg: &str, text: &str) -> bool {
        svg.contains(&format!(">\n{text}\n</text>"))
    }

    /// `(x, height)` of each `<rect` filled with `colour`, in document order.
    fn rects_of(svg: &str, colour: RGBAColor) -> Vec<(i32, i32)> {
        let (r, g, b) = colour.rgb();
        let fill = format!("fill=\"#{r:02X}{g:02X}{b:02X}\"");
        let attr = |line: &str, name: &str| -> i32 {
            let value = line.split(&format!(" {name}=\"")).nth(1).and_then(|v| v.split('"').next());
            value.and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("no {name} in {line}"))
        };
        svg.lines()
            .filter(|l| l.starts_with("<rect") && l.contains(&fill))
            .map(|l| (attr(l, "x"), attr(l, "height")))
            .collect()
    }

    #[test]
    fn writes_the_sample_chart() {
        let results = parse(SAMPLE, "sample.csv").unwrap();
        let dir = std::env::temp_dir().join(format!("xtask-plot-chart-{}", std::process::id()));
        let path = dir.join("nested").join("results.svg");
        let drawn = write_svg(&results, &path).unwrap();
        let svg = fs::read_to_string(&path).unwrap();
        fs::remove_dir_all(&dir).unwrap();
        assert_eq!(drawn, Drawn { workloads: 2, bars: 8, size: (MIN_WIDTH, 600) });
        assert!(svg.starts_with("<svg width=\"1200\" height=\"600\""), "a whole SVG document");
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(has_text(&svg, "NVIDIA H200, 132 SMs: GB/s per implementation (higher is better)"));
        assert!(has_text(&svg, "GB/s"));
        for label in ["reduce f32 2^26", "histogram u8 2^28 uniform"] {
            assert!(has_text(&svg, label), "workload label {label}");
        }
        // Legend: CUB and nvcc by kind (their names differ between workloads), each Rust tier by name.
        let legend = Legend::of(&results);
        let labels: Vec<&str> = legend.labels().collect();
        assert_eq!(
            labels,
            [
                "CUB",
                "nvcc",
                "Rust reduce_fast",
                "Rust reduce_deterministic",
                "Rust reduce_sum (chapter)",
                "Rust histogram_privatised",
                "read limit (vec4 read-only sum)"
            ]
        );
        for label in labels {
            assert!(has_text(&svg, label), "legend entry {label}");
        }
        // One rect per bar, then the legend's swatch. CUB and nvcc have a bar in each workload, as tall
        // as their GB/s: CUB 3843.0 and 2001.8, nvcc 3770.2 and 708.3.
        let cub = rects_of(&svg, CUB_COLOUR.to_rgba());
        let nvcc = rects_of(&svg, NVCC_COLOUR.to_rgba());
        assert_eq!((cub.len(), nvcc.len()), (2 + 1, 2 + 1));
        // Heights are whole pixels: the second bar within a pixel or so of the first, scaled.
        let scaled = |bars: &[(i32, i32)], first: f64, second: f64| {
            (f64::from(bars[1].1) - f64::from(bars[0].1) * second / first).abs() <= 1.5
        };
        assert!(scaled(&cub, 3843.0, 2001.8), "{cub:?}");
        assert!(scaled(&nvcc, 3770.2, 708.3), "{nvcc:?}");
        assert!(
            cub[0].0 < nvcc[0].0 && nvcc[0].0 < cub[1].0 && cub[1].0 < nvcc[1].0,
            "file order, groups left to right"
        );
        for entry in &legend.entries[2..] {
            assert_eq!(rects_of(&svg, entry.colour).len(), 1 + 1, "{}", entry.label);
        }
        // The read limit: a dashed line per workload and one in the legend, each several dashes.
        let (r, g, b) = READ_LIMIT_COLOUR.rgb();
        let dashes = svg.lines().filter(|l| l.contains(&format!("stroke=\"#{r:02X}{g:02X}{b:02X}\""))).count();
        assert!(dashes >= 3 * 2, "{dashes} dashes");
    }

    #[test]
    fn the_same_name_has_the_same_colour_everywhere() {
        let results = parse(SAMPLE, "sample.csv").unwrap();
        let legend = Legend::of(&results);
        let colours: Vec<RGBAColor> = legend.entries.iter().map(|e| e.colour).collect();
        for (i, a) in colours.iter().enumerate() {
            assert!(colours[i + 1..].iter().all(|b| a.rgb() != b.rgb()), "distinct colours: {colours:?}");
        }
        let reduce = &results.workloads[0];
        let histogram = &results.workloads[1];
        assert_eq!(legend.colour(&reduce.rows[1]).rgb(), legend.colour(&histogram.rows[1]).rgb(), "CUB");
        assert_eq!(legend.colour(&reduce.rows[2]).rgb(), legend.colour(&histogram.rows[2]).rgb(), "nvcc");
        assert_ne!(legend.colour(&reduce.rows[3]).rgb(), legend.colour(&reduce.rows[4]).rgb(), "Rust tiers");
    }

    #[test]
    fn many_workloads_widen_the_chart_and_wrap_their_names() {
        let mut text = format!("# device: GPU\n{HEADER}\n");
        for w in 0..12 {
            for (imp, gbps) in [("read-limit proxy", 4000), ("CUB x", 3000), ("nvcc y", 2000), ("Rust z", 2500)] {
                text.push_str(&format!("histogram u8 2^28 workload-{w},{imp},1,1,1,{gbps},1,1\n"));
            }
        }
        let results = parse(&text, "t").unwrap();
        let (svg, drawn) = render(&results).unwrap();
        assert_eq!((drawn.workloads, drawn.bars), (12, 12 * 3));
        assert!(drawn.size.0 >= 12 * MIN_GROUP_PX, "{:?}", drawn.size);
        assert!(!has_text(&svg, "histogram u8 2^28 workload-0"), "wrapped");
        assert_eq!(svg.matches(">\nhistogram u8\n</text>").count(), 12);
        assert_eq!(svg.matches(">\n2^28\n</text>").count(), 12);
        assert!(has_text(&svg, "workload-11"));
        assert!(has_text(&svg, "read limit"));
    }

    #[test]
    fn colours_stay_distinct_beyond_the_palette() {
        let mut text = format!("{HEADER}\nw,CUB,1,1,1,1,1,1\nw,nvcc,1,1,1,1,1,1\n");
        for tier in 0..12 {
            text.push_str(&format!("w,Rust tier {tier},1,1,1,{},1,1\n", 100 * tier));
        }
        let results = parse(&text, "t").unwrap();
        let legend = Legend::of(&results);
        assert_eq!(legend.entries.len(), 14);
        let colours: Vec<_> = legend.entries.iter().map(|e| e.colour.rgb()).collect();
        for (i, a) in colours.iter().enumerate() {
            assert!(!colours[i + 1..].contains(a), "distinct colours: {colours:?}");
        }
        let (svg, drawn) = render(&results).unwrap();
        assert_eq!(drawn.bars, 14);
        assert!(has_text(&svg, "Rust tier 11"));
    }

    #[test]
    fn no_device_no_read_limit() {
        let results = parse(&format!("{HEADER}\nw,Rust x,1,1,1,0,1,1\n"), "t").unwrap();
        assert_eq!(title(&results), "GB/s per implementation (higher is better)");
        let (svg, drawn) = render(&results).unwrap();
        assert_eq!((drawn.workloads, drawn.bars), (1, 1));
        assert!(!svg.contains("read limit"));
        assert_eq!(drawn.size, (MIN_WIDTH, 600));
    }

    #[test]
    fn wraps_at_spaces() {
        assert_eq!(wrap("histogram u8 2^28 uniform", 13), ["histogram u8", "2^28 uniform"]);
        assert_eq!(wrap("reduce f32 2^26", 40), ["reduce f32 2^26"]);
        assert_eq!(wrap("a_very_long_word b", 4), ["a_very_long_word", "b"]);
        assert!(wrap("  ", 4).is_empty());
    }
}
