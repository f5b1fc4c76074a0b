//! The size sweep as Markdown tables, one per workload family (a workload name without its `2^k`): a
//! row per size with the proxy's GB/s, CUB's time and GB/s, and for each Rust implementation its time,
//! GB/s, CUB's time over its time (`x CUB`) and its nvcc twin's time over its time (`x nvcc`).

use std::fmt::Write as _;

use super::csv::{BenchResults, Kind, Row, Workload, family_of};

/// The nvcc row of `rust` (a `Rust …` row) in `w`: `nvcc` and the same name, or, failing that, the name
/// without its element type (`Rust reduce_fast_f32` → `nvcc reduce_fast`).
fn nvcc_twin<'a>(w: &'a Workload, rust: &Row) -> Option<&'a Row> {
    let name = rust.implementation.strip_prefix("Rust ")?;
    let generic = name
        .split_once(' ')
        .map_or(name, |(first, _)| first)
        .trim_end_matches(|c: char| c.is_ascii_digit())
        .trim_end_matches(['f', 'i', 'u'])
        .trim_end_matches('_');
    let exact = format!("nvcc {name}");
    let stripped = format!("nvcc {generic}");
    let find = |want: &str| w.rows.iter().find(|r| r.kind == Kind::Nvcc && r.implementation == want);
    find(&exact).or_else(|| find(&stripped))
}

/// `value` with `decimals` decimals, or `-` for none or a value that is not a finite number.
fn cell(value: Option<f64>, decimals: usize) -> String {
    match value {
        Some(v) if v.is_finite() => format!("{v:.decimals$}"),
        _ => "-".to_string(),
    }
}

/// The tables: for each family, in file order, a heading and one row per size.
pub fn markdown(results: &BenchResults) -> String {
    let mut families: Vec<(String, Vec<&Workload>)> = Vec::new();
    for w in &results.workloads {
        let name = family_of(&w.name);
        match families.iter_mut().find(|(f, _)| *f == name) {
            Some((_, ws)) => ws.push(w),
            None => families.push((name, vec![w])),
        }
    }
    let mut out = String::new();
    if let Some(device) = &results.device {
        let _ = writeln!(
            out,
            "Device: {device}. `x CUB`: CUB's time over the row's; `x nvcc`: the nvcc build's time over the Rust build's (above 1: Rust faster)."
        );
    }
    for (family, workloads) in families {
        let mut rust: Vec<&str> = Vec::new();
        for r in workloads.iter().flat_map(|w| &w.rows) {
            if r.kind == Kind::Rust && !rust.contains(&r.implementation.as_str()) {
                rust.push(&r.implementation);
            }
        }
        let _ = write!(out, "\n### {family}\n\n| n | proxy GB/s | CUB µs | CUB GB/s |");
        for name in &rust {
            let short = name.strip_prefix("Rust ").unwrap_or(name);
            let _ = write!(out, " {short} µs | GB/s | x CUB | x nvcc |");
        }
        out.push_str("\n|---|---:|---:|---:|");
        out.push_str(&"---:|---:|---:|---:|".repeat(rust.len()));
        out.push('\n');
        for w in workloads {
            let size = w.name.split_whitespace().find(|s| s.starts_with("2^")).unwrap_or("?");
            let proxy = w.rows.iter().find(|r| r.implementation.contains("proxy")).map(|r| r.gbps);
            let cub = w.rows.iter().find(|r| r.kind == Kind::Cub);
            let _ = write!(
                out,
                "| {size} | {} | {} | {} |",
                cell(proxy, 1),
                cell(cub.map(|r| r.time_ms * 1e3), 1),
                cell(cub.map(|r| r.gbps), 1)
            );
            for name in &rust {
                let row = w.rows.iter().find(|r| r.implementation == *name);
                let twin = row.and_then(|r| nvcc_twin(w, r));
                let x_nvcc = row.zip(twin).map(|(r, t)| t.time_ms / r.time_ms);
                let _ = write!(
                    out,
                    " {} | {} | {} | {} |",
                    cell(row.map(|r| r.time_ms * 1e3), 1),
                    cell(row.map(|r| r.gbps), 1),
                    cell(row.map(|r| r.ratio_to_cub), 3),
                    cell(x_nvcc, 3)
                );
            }
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::csv::{HEADER, parse};

    #[test]
    fn one_table_per_family_with_the_nvcc_twins() {
        let text = "# device: GPU X, 1 SMs\n".to_string()
            + HEADER
            + "\nreduce f32 2^10,read-limit proxy (vec4 read-only sum),1024,4096,0.004,1.0,100,2\n\
               reduce f32 2^10,CUB DeviceReduce::Sum,1024,4096,0.008,0.5,50,1\n\
               reduce f32 2^10,nvcc reduce_fast,1024,4096,0.006,0.7,70,1.33\n\
               reduce f32 2^10,Rust reduce_fast_f32,1024,4096,0.004,1.0,100,2\n\
               reduce f32 2^11,CUB DeviceReduce::Sum,2048,8192,0.008,1.0,50,1\n\
               reduce f32 2^11,Rust reduce_fast_f32,2048,8192,0.008,1.0,50,1\n\
               scan u32 2^10,copy proxy (read + write),1024,8192,0.01,0.8,100,2\n\
               scan u32 2^10,CUB DeviceScan::InclusiveSum,1024,8192,0.02,0.4,50,1\n\
               scan u32 2^10,Rust scan_u32 (single pass),1024,8192,0.01,0.8,100,2\n\
               scan u32 2^10,nvcc scan_u32 (single pass),1024,8192,0.011,0.7,90,1.8\n";
        let md = markdown(&parse(&text, "t").unwrap());
        assert!(md.starts_with("Device: GPU X, 1 SMs."), "{md}");
        assert!(md.contains("\n### reduce f32\n\n| n | proxy GB/s | CUB µs | CUB GB/s | reduce_fast_f32 µs | GB/s | x CUB | x nvcc |\n"), "{md}");
        assert!(md.contains("| 2^10 | 1.0 | 8.0 | 0.5 | 4.0 | 1.0 | 2.000 | 1.500 |\n"), "{md}");
        assert!(md.contains("| 2^11 | - | 8.0 | 1.0 | 8.0 | 1.0 | 1.000 | - |\n"), "{md}");
        assert!(md.contains("\n### scan u32\n"), "{md}");
        assert!(md.contains("| 2^10 | 0.8 | 20.0 | 0.4 | 10.0 | 0.8 | 2.000 | 1.100 |\n"), "{md}");
    }
}
