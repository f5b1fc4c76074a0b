//! The results as one Markdown table: every row of every workload, with the file's numbers formatted.

use std::fmt::Write as _;

use super::csv::BenchResults;

/// The Markdown document: a line naming the device (when the file does), the table, and a note on the
/// two relative columns.
pub fn markdown(results: &BenchResults) -> String {
    let mut out = String::new();
    if let Some(device) = &results.device {
        let _ = writeln!(out, "Device: {}\n", escape(device));
    }
    out.push_str("| workload | implementation | time (ms) | GB/s | % of read limit | vs CUB |\n");
    out.push_str("|---|---|---:|---:|---:|---:|\n");
    for workload in &results.workloads {
        for (i, row) in workload.rows.iter().enumerate() {
            // The workload is named on its first row only, so the groups stand out.
            let name = if i == 0 { escape(&workload.name) } else { String::new() };
            let _ = writeln!(
                out,
                "| {name} | {} | {} | {} | {} | {} |",
                escape(&row.implementation),
                fixed(row.time_ms, 4, ""),
                fixed(row.gbps, 0, ""),
                fixed(row.pct_of_read_limit, 1, ""),
                fixed(row.ratio_to_cub, 3, "x"),
            );
        }
    }
    out.push_str(
        "\n% of read limit: GB/s over the GB/s of the workload's read-limit proxy. \
         vs CUB: CUB's time over this row's time (above 1x: faster than CUB).\n",
    );
    out
}

/// `value` with `decimals` decimals and `suffix`, or `n/a` for a value that is not a finite number.
fn fixed(value: f64, decimals: usize, suffix: &str) -> String {
    if value.is_finite() { format!("{value:.decimals$}{suffix}") } else { "n/a".to_string() }
}

/// Text safe inside a table cell.
fn escape(text: &str) -> String {
    text.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::csv::{HEADER, parse};
    use crate::plot::tests::SAMPLE;

    #[test]
    fn two_workloads() {
        let md = markdown(&parse(SAMPLE, "sample.csv").unwrap());
        let expected = "\
Device: NVIDIA H200, 132 SMs

| workload | implementation | time (ms) | GB/s | % of read limit | vs CUB |
|---|---|---:|---:|---:|---:|
| reduce f32 2^26 | read-limit proxy (vec4 read-only sum) | 0.0673 | 3989 | 100.0 | 1.039x |
|  | CUB DeviceReduce::Sum | 0.0699 | 3843 | 96.3 | 1.000x |
|  | nvcc reduce_fast | 0.0712 | 3770 | 94.5 | 0.982x |
|  | Rust reduce_fast | 0.0709 | 3786 | 94.9 | 0.986x |
|  | Rust reduce_deterministic | 0.0745 | 3603 | 90.3 | 0.938x |
|  | Rust reduce_sum (chapter) | 0.1131 | 2373 | 59.5 | 0.618x |
| histogram u8 2^28 uniform | read-limit proxy (vec4 read-only sum) | 0.0702 | 3824 | 100.0 | 1.910x |
|  | CUB HistogramEven | 0.1341 | 2002 | 52.3 | 1.000x |
|  | nvcc histogram_privatised | 0.3790 | 708 | 18.5 | 0.354x |
|  | Rust histogram_privatised | 0.3802 | 706 | 18.5 | 0.353x |

% of read limit: GB/s over the GB/s of the workload's read-limit proxy. vs CUB: CUB's time over this row's time (above 1x: faster than CUB).
";
        assert_eq!(md, expected);
    }

    #[test]
    fn no_device_line_nan_and_pipes() {
        let text = format!("{HEADER}\na|b,Rust x,1,4,0.12345,1234.4,nan,NaN\n");
        let md = markdown(&parse(&text, "t").unwrap());
        assert!(md.starts_with("| workload |"), "{md}");
        assert!(md.contains("| a\\|b | Rust x | 0.1235 | 1234 | n/a | n/a |\n"), "{md}");
    }
}
