//! One PNG per suite: grouped bars of the mean per parameter and variant, error bars ±1 sample
//! standard deviation. Text is drawn with ab_glyph from a TTF file (DejaVu Sans from Debian's
//! fonts-dejavu-core by default), so no fontconfig is needed.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{anyhow, Context, Result};
use plotters::prelude::*;

use super::model::{Results, Suite};
use super::report::row_cells;

pub const WIDTH: u32 = 1024;
pub const HEIGHT: u32 = 640;

const FONT_CANDIDATES: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
];

fn find_font() -> Option<PathBuf> {
    let env = std::env::var_os("SCX_SIS_BENCH_FONT").map(PathBuf::from);
    find_font_in(env, FONT_CANDIDATES, Path::new("/usr/share/fonts"))
}

/// `env` (SCX_SIS_BENCH_FONT) if set, else the first of `candidates` that exists, else any .ttf
/// under `root`.
fn find_font_in(env: Option<PathBuf>, candidates: &[&str], root: &Path) -> Option<PathBuf> {
    if env.is_some() {
        return env;
    }
    if let Some(p) = candidates.iter().map(PathBuf::from).find(|p| p.is_file()) {
        return Some(p);
    }
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x.eq_ignore_ascii_case("ttf")) {
                return Some(p);
            }
        }
    }
    None
}

/// Register a TTF as "sans-serif" once; Err(why) if there is none (plots are then skipped).
pub fn ensure_font() -> Result<(), String> {
    static FONT: OnceLock<Result<(), String>> = OnceLock::new();
    FONT.get_or_init(|| {
        let path = find_font().ok_or_else(|| {
            "no TTF font found under /usr/share/fonts (install fonts-dejavu-core, or set SCX_SIS_BENCH_FONT)"
                .to_string()
        })?;
        register_font("sans-serif", &path)
    })
    .clone()
}

/// Registers the TTF at `path` as `family` for plotters; Err(why) if it cannot draw with it.
fn register_font(family: &str, path: &Path) -> Result<(), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("reading font {}: {e}", path.display()))?;
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    plotters::style::register_font(family, FontStyle::Normal, bytes)
        .map_err(|_| format!("{} is not a usable TTF font", path.display()))
}

pub const PALETTE: &[RGBColor] = &[
    RGBColor(90, 90, 90),    // baseline: grey
    RGBColor(31, 119, 180),  // blue
    RGBColor(255, 127, 14),  // orange
    RGBColor(44, 160, 44),   // green
    RGBColor(214, 39, 40),   // red
    RGBColor(148, 103, 189), // purple
    RGBColor(140, 86, 75),   // brown
    RGBColor(227, 119, 194), // pink
];

/// Draw `suite` of `res` into a PNG at `path`.
pub fn write_png(res: &Results, suite: &Suite, path: &Path) -> Result<()> {
    ensure_font().map_err(|e| anyhow!(e))?;
    let nv = res.variants.len().max(1);
    let np = suite.params.len().max(1);
    // (param index, variant index, mean, sd)
    let mut bars = vec![];
    let mut ymax: f64 = 0.0;
    for (pi, p) in suite.params.iter().enumerate() {
        for (vi, c) in row_cells(res, suite, &p.label).iter().enumerate() {
            if let Some(s) = &c.summary {
                if s.mean.is_finite() {
                    let sd = if s.stddev.is_finite() { s.stddev } else { 0.0 };
                    ymax = ymax.max(s.mean + sd);
                    bars.push((pi, vi, s.mean, sd));
                }
            }
        }
    }
    if ymax <= 0.0 {
        ymax = 1.0;
    }
    let root = BitMapBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let better = if suite.direction == super::statistics::Direction::LowerIsBetter { "lower" } else { "higher" };
    let caption = format!("{}: {} ({} is better)", suite.title, suite.direction.mean_name(), better);
    let labels: Vec<String> = suite.params.iter().map(|p| p.label.clone()).collect();
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d(0f64..np as f64, 0f64..ymax * 1.15)?;
    let unit = if suite.unit.is_empty() { String::new() } else { format!(" [{}]", suite.unit) };
    let first_word = suite.metric.split(" (").next().unwrap_or(&suite.metric).to_string();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(np * 2 + 1)
        .x_label_formatter(&|x: &f64| {
            // label only at the centre of each group
            let i = (x - 0.5).round();
            if (x - 0.5 - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < labels.len() {
                labels[i as usize].clone()
            } else {
                String::new()
            }
        })
        .x_desc(format!("parameter (mean ± sd of {} runs; failed runs excluded)", res.config.runs))
        .y_desc(format!("{first_word}{unit}"))
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 16))
        .draw()?;
    let group_w = 0.8;
    let bar_w = group_w / nv as f64;
    for (vi, v) in res.variants.iter().enumerate() {
        let color = PALETTE[vi % PALETTE.len()];
        let mine: Vec<(f64, f64, f64)> = bars
            .iter()
            .filter(|b| b.1 == vi)
            .map(|&(pi, _, m, sd)| (pi as f64 + 0.1 + bar_w * vi as f64, m, sd))
            .collect();
        chart
            .draw_series(
                mine.iter().map(|&(x0, m, _)| {
                    Rectangle::new([(x0 + bar_w * 0.05, 0.0), (x0 + bar_w * 0.95, m)], color.filled())
                }),
            )?
            .label(v.name.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled()));
        for &(x0, m, sd) in &mine {
            if sd > 0.0 {
                let xc = x0 + bar_w / 2.0;
                let cap = bar_w * 0.2;
                let style = BLACK.stroke_width(2);
                chart.draw_series(std::iter::once(PathElement::new(vec![(xc, m - sd), (xc, m + sd)], style)))?;
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(xc - cap, m + sd), (xc + cap, m + sd)],
                    style,
                )))?;
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(xc - cap, m - sd), (xc + cap, m - sd)],
                    style,
                )))?;
            }
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 15))
        .draw()?;
    root.present().with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With a font (the setup installs fonts-dejavu-core), every suite's PNG is drawn; without
    /// one, drawing fails with the reason the bench prints when it skips the plots.
    #[test]
    fn png_is_written() {
        let res = crate::report::tests::sample();
        let dir = tempfile::tempdir().unwrap();
        if let Err(e) = ensure_font() {
            assert!(e.starts_with("no TTF font found under /usr/share/fonts") || e.ends_with("usable TTF font"), "{e}");
            let err = write_png(&res, &res.suites[0], &dir.path().join("x.png")).unwrap_err();
            assert_eq!(err.to_string(), e);
            return;
        }
        for s in &res.suites {
            let p = dir.path().join(format!("{}.png", s.name));
            write_png(&res, s, &p).unwrap();
            let bytes = std::fs::read(&p).unwrap();
            assert!(bytes.len() > 1000, "{} bytes", bytes.len());
            assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
            assert_eq!(&bytes[12..16], b"IHDR");
            let w = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
            let h = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
            assert_eq!((w, h), (WIDTH, HEIGHT));
            // to look at them: SCX_SIS_BENCH_KEEP_PNG=/some/dir cargo test --lib bench::plot
            if let Some(keep) = std::env::var_os("SCX_SIS_BENCH_KEEP_PNG") {
                std::fs::copy(&p, std::path::Path::new(&keep).join(p.file_name().unwrap())).unwrap();
            }
        }
    }

    /// The font search without relying on this host's fonts: the override, the candidates, any
    /// .ttf below the root (case aside), none at all; and a file that is no font is refused.
    #[test]
    fn font_search() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert_eq!(find_font_in(None, &[], root), None);
        let ttf = root.join("truetype/x/Some.TTF");
        std::fs::create_dir_all(ttf.parent().unwrap()).unwrap();
        std::fs::write(&ttf, b"not a font").unwrap();
        std::fs::write(root.join("truetype/readme.txt"), b"").unwrap();
        assert_eq!(find_font_in(None, &[], root), Some(ttf.clone()));
        let cand = root.join("cand.ttf");
        std::fs::write(&cand, b"").unwrap();
        let c = cand.to_str().unwrap();
        assert_eq!(find_font_in(None, &["/nonexistent.ttf", c], root), Some(cand.clone()));
        let env = Some(PathBuf::from("/from/env.ttf"));
        assert_eq!(find_font_in(env.clone(), &[c], root), env);
        assert_eq!(register_font("scx-sis-test", &ttf), Err(format!("{} is not a usable TTF font", ttf.display())));
        assert!(register_font("scx-sis-test", &root.join("none.ttf")).unwrap_err().starts_with("reading font"));
    }
}
