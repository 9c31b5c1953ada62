//! The report's charts, each drawn once into a PNG and once into an SVG. Text comes from
//! the embedded DejaVu Sans in both: plotters rasterises it for the PNG, and
//! [`OutlinedSvg`](crate::svgtext::OutlinedSvg) writes glyph outlines into the SVG.

use std::path::Path;
use std::sync::Once;

use ab_glyph::FontRef;
use plotters::coord::Shift;
use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;

use crate::engine::insert::StorageName;
use crate::engine::report::{ChartFile, Results};
use crate::engine::{BarPair, BarPanel, Engine, InsertResults, RunOf};
use crate::svgtext::OutlinedSvg;
use crate::{Error, Progress};

/// The font family name the charts ask for; it is the embedded font, registered once.
const FAMILY: &str = "sans-serif";
/// Every chart's size in pixels (the SVG is drawn at `SVG_SCALE` times and scaled down by
/// its `viewBox`, so glyph outlines keep sub-pixel precision).
const SIZE: (u32, u32) = (1000, 600);
const SVG_SCALE: u32 = 4;

type DrawResult<E> = Result<(), DrawingAreaErrorKind<E>>;

/// A chart: one panel, or two side by side.
pub(crate) struct Chart {
    stem: &'static str,
    title: String,
    left: Panel,
    right: Option<Panel>,
}

/// A chart's panel.
enum Panel {
    Bars(Bars<'static>),
    Lines(Lines<'static>),
}

impl Panel {
    fn draw<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        s: f64,
    ) -> DrawResult<DB::ErrorType> {
        match self {
            Self::Bars(bars) => draw_bars(area, s, bars),
            Self::Lines(lines) => draw_lines(area, s, lines),
        }
    }
}

fn font() -> FontRef<'static> {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        // The embedded font always parses; if it did not, text drawing reports the error.
        let _ = plotters::style::register_font(FAMILY, FontStyle::Normal, dejavu::sans::regular());
    });
    match FontRef::try_from_slice(dejavu::sans::regular()) {
        Ok(f) => f,
        Err(_) => unreachable!("the embedded DejaVu Sans is a valid font"),
    }
}

/// Draws every chart into `dir` as PNG and SVG: the generation charts, then the engines'
/// (`engines`, each engine's [`engine_charts`] in the list's order).
///
/// # Errors
///
/// [`Error::Io`] when `dir` cannot be written, [`Error::Chart`] when drawing fails.
pub(crate) fn draw_all(
    results: &Results<'_>,
    engines: impl IntoIterator<Item = Chart>,
    dir: &Path,
    progress: &Progress,
) -> Result<Vec<ChartFile>, Error> {
    std::fs::create_dir_all(dir).map_err(Error::io(dir))?;
    let mut charts = vec![ns_per_id(results), threads(results)];
    charts.extend(engines);
    let bar = progress.bar("charts", charts.len());
    let mut files = Vec::new();
    for chart in &charts {
        bar.set_message(chart.stem);
        chart.render(dir)?;
        files.push(ChartFile {
            stem: chart.stem,
            title: chart.title.clone(),
        });
        bar.inc(1);
    }
    progress.done(
        &bar,
        &format!(
            "charts: {} charts as PNG and SVG in {}",
            files.len(),
            dir.display()
        ),
    );
    Ok(files)
}

impl Chart {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        s: f64,
    ) -> DrawResult<DB::ErrorType> {
        let Some(right) = &self.right else {
            return self.left.draw(root, s);
        };
        let (left_area, right_area) = root.split_horizontally(f64::from(SIZE.0) * s / 2.0);
        self.left.draw(&left_area, s)?;
        right.draw(&right_area, s)
    }

    /// Writes `<stem>.png` and `<stem>.svg` into `dir`.
    fn render(&self, dir: &Path) -> Result<(), Error> {
        let chart_err = |e: String| Error::Chart(format!("{}: {e}", self.stem));
        let font = font();
        let png = dir.join(format!("{}.png", self.stem));
        {
            let root = BitMapBackend::new(&png, SIZE).into_drawing_area();
            root.fill(&WHITE).map_err(|e| chart_err(e.to_string()))?;
            self.draw(&root, 1.0)
                .map_err(|e| chart_err(e.to_string()))?;
            root.present().map_err(|e| chart_err(e.to_string()))?;
        }
        let mut svg = String::new();
        let (w, h) = (SIZE.0 * SVG_SCALE, SIZE.1 * SVG_SCALE);
        {
            let root = OutlinedSvg::new(&mut svg, (w, h), font).into_drawing_area();
            root.fill(&WHITE).map_err(|e| chart_err(e.to_string()))?;
            self.draw(&root, f64::from(SVG_SCALE))
                .map_err(|e| chart_err(e.to_string()))?;
            root.present().map_err(|e| chart_err(e.to_string()))?;
        }
        let svg = svg.replacen(
            &format!("width=\"{w}\" height=\"{h}\""),
            &format!("width=\"{}\" height=\"{}\"", SIZE.0, SIZE.1),
            1,
        );
        let path = dir.join(format!("{}.svg", self.stem));
        std::fs::write(&path, svg).map_err(Error::io(path))
    }
}

fn px(s: f64, size: f64) -> u32 {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let v = (size * s).round() as u32;
    v.max(1)
}

fn ipx(s: f64, size: f64) -> i32 {
    i32::try_from(px(s, size)).unwrap_or(i32::MAX)
}

/// Labels for a log axis spanning whole decades `lo..hi`: one per decade.
fn decade_count(lo: f64, hi: f64) -> usize {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let n = (hi - lo).round().max(0.0) as usize;
    n + 1
}

fn text(s: f64, size: f64) -> TextStyle<'static> {
    (FAMILY, size * s).into_font().color(&BLACK)
}

/// `10^v` for a log10 axis, in short form (1, 10, 100, 1k ... 1G).
fn pow10_label(v: f64) -> String {
    let value = 10f64.powf(v);
    let rounded = |x: f64| {
        if (x - x.round()).abs() < 1e-9 {
            format!("{x:.0}")
        } else {
            format!("{x:.1}")
        }
    };
    if value >= 1e9 {
        format!("{}G", rounded(value / 1e9))
    } else if value >= 1e6 {
        format!("{}M", rounded(value / 1e6))
    } else if value >= 1e3 {
        format!("{}k", rounded(value / 1e3))
    } else if value >= 1.0 {
        rounded(value)
    } else {
        format!("{value:.2}")
    }
}

/// Whole decades around the values (log10), for a log axis.
fn decades(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| *v > 0.0)
        .fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo > hi {
        return (0.0, 1.0);
    }
    let (lo, hi) = (lo.log10().floor(), hi.log10().ceil());
    (lo, if hi > lo { hi } else { lo + 1.0 })
}

/// One horizontal bar per label, top to bottom in order; an optional marker per bar.
struct Bars<'a> {
    title: &'a str,
    x_desc: &'a str,
    rows: Vec<(String, f64, Option<f64>)>,
    log: bool,
    percent: bool,
}

fn draw_bars<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: f64,
    bars: &Bars<'_>,
) -> DrawResult<DB::ErrorType> {
    let n = bars.rows.len();
    let value = |v: f64| {
        if bars.log {
            v.max(f64::MIN_POSITIVE).log10()
        } else {
            v
        }
    };
    let (x_lo, x_hi) = if bars.log {
        decades(
            bars.rows
                .iter()
                .flat_map(|(_, v, m)| [Some(*v), *m])
                .flatten(),
        )
    } else {
        let max = bars.rows.iter().map(|r| r.1).fold(0.0, f64::max);
        (0.0, if max > 0.0 { max * 1.1 } else { 1.0 })
    };
    let names: Vec<String> = bars.rows.iter().map(|r| r.0.clone()).collect();
    let mut chart = ChartBuilder::on(area)
        .caption(bars.title, text(s, 17.0))
        .margin(px(s, 10.0))
        .margin_right(px(s, 24.0))
        .x_label_area_size(px(s, 40.0))
        .y_label_area_size(px(s, 150.0))
        .build_cartesian_2d(x_lo..x_hi, (0..n.saturating_sub(1)).into_segmented())?;
    let log = bars.log;
    let percent = bars.percent;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc(bars.x_desc)
        .x_labels(if log { decade_count(x_lo, x_hi) } else { 8 })
        .x_label_formatter(&|v| {
            if log {
                pow10_label(*v)
            } else if percent {
                format!("{:.0}%", v * 100.0)
            } else {
                format!("{v:.0}")
            }
        })
        .y_labels(n)
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) if *i < n => names[n - 1 - *i].clone(),
            _ => String::new(),
        })
        .label_style(text(s, 12.0))
        .axis_desc_style(text(s, 13.0))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    let margin = px(s, 4.0);
    chart.draw_series(bars.rows.iter().enumerate().map(|(i, (_, v, _))| {
        let slot = n - 1 - i;
        let mut bar = Rectangle::new(
            [
                (x_lo, SegmentValue::Exact(slot)),
                (value(*v).max(x_lo), SegmentValue::Exact(slot + 1)),
            ],
            Palette99::pick(i).to_rgba().mix(0.85).filled(),
        );
        bar.set_margin(margin, margin, 0, 0);
        bar
    }))?;
    let markers: Vec<_> = bars
        .rows
        .iter()
        .enumerate()
        .filter_map(|(i, (_, _, m))| m.map(|m| (n - 1 - i, value(m))))
        .collect();
    if !markers.is_empty() {
        chart
            .draw_series(markers.iter().map(|&(slot, x)| {
                PathElement::new(
                    vec![
                        (x, SegmentValue::Exact(slot)),
                        (x, SegmentValue::Exact(slot + 1)),
                    ],
                    RED.stroke_width(px(s, 3.0)),
                )
            }))?
            .label("cap (fastest the layout allows)")
            .legend(move |(x, y)| {
                PathElement::new(
                    vec![(x, y - ipx(s, 6.0)), (x, y + ipx(s, 6.0))],
                    RED.stroke_width(px(s, 3.0)),
                )
            });
        legend(&mut chart, s, 12.0, SeriesLabelPosition::LowerRight)?;
    }
    Ok(())
}

/// The chart's legend: its series' labels in a box at `position`, `size` points.
fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    s: f64,
    size: f64,
    position: SeriesLabelPosition,
) -> DrawResult<DB::ErrorType> {
    chart
        .configure_series_labels()
        .label_font(text(s, size))
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .position(position)
        .draw()
}

/// Lines of (x, y) points per series, y on a log axis.
struct Lines<'a> {
    title: &'a str,
    x_desc: &'a str,
    y_desc: &'a str,
    series: Vec<(String, Vec<(f64, f64)>)>,
}

fn draw_lines<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: f64,
    lines: &Lines<'_>,
) -> DrawResult<DB::ErrorType> {
    let points = || lines.series.iter().flat_map(|(_, p)| p.iter().copied());
    let x_hi = points().map(|p| p.0).fold(0.0, f64::max);
    let x_lo = points().map(|p| p.0).fold(x_hi, f64::min);
    let (y_lo, y_hi) = decades(points().map(|p| p.1));
    let mut chart = ChartBuilder::on(area)
        .caption(lines.title, text(s, 17.0))
        .margin(px(s, 10.0))
        .x_label_area_size(px(s, 40.0))
        .y_label_area_size(px(s, 70.0))
        .build_cartesian_2d(x_lo..x_hi.max(x_lo + 1.0), y_lo..y_hi)?;
    chart
        .configure_mesh()
        .x_desc(lines.x_desc)
        .y_desc(lines.y_desc)
        .y_labels(decade_count(y_lo, y_hi))
        .y_label_formatter(&|v| pow10_label(*v))
        .x_label_formatter(&|v| pow10_label(v.max(1.0).log10()))
        .label_style(text(s, 12.0))
        .axis_desc_style(text(s, 13.0))
        .light_line_style(BLACK.mix(0.05))
        .draw()?;
    for (i, (name, pts)) in lines.series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let data: Vec<(f64, f64)> = pts
            .iter()
            .map(|&(x, y)| (x, y.max(f64::MIN_POSITIVE).log10()))
            .collect();
        chart
            .draw_series(LineSeries::new(
                data.clone(),
                color.stroke_width(px(s, 2.0)),
            ))?
            .label(name.clone())
            .legend(move |(x, y)| {
                PathElement::new(
                    vec![(x, y), (x + ipx(s, 16.0), y)],
                    color.stroke_width(px(s, 2.0)),
                )
            });
        chart.draw_series(
            data.into_iter()
                .map(|p| Circle::new(p, px(s, 2.5), color.filled())),
        )?;
    }
    legend(&mut chart, s, 11.0, SeriesLabelPosition::UpperRight)?;
    Ok(())
}

/// Nanoseconds per id of each scheme's shared generator on one thread, with its layout's cap.
fn ns_per_id(r: &Results<'_>) -> Chart {
    let rows = r
        .generation
        .rows
        .iter()
        .filter(|g| g.variant == "shared" && g.threads == 1)
        .map(|g| {
            (
                g.scheme.to_owned(),
                g.ns_per_id,
                g.cap_ids_per_sec.map(|c| 1e9 / c as f64),
            )
        })
        .collect();
    Chart {
        stem: "generation_ns_per_id",
        title: "Nanoseconds per id, one thread, the registry's shared generator (red: the \
                layout's cap)"
            .to_owned(),
        left: Panel::Bars(Bars {
            title: "ns per id, 1 thread (red: the layout's cap)",
            x_desc: "nanoseconds per id (log scale; shorter is faster)",
            rows,
            log: true,
            percent: false,
        }),
        right: None,
    }
}

/// Ids per second against threads: one shared generator, and one generator per thread.
fn threads(r: &Results<'_>) -> Chart {
    let series = |variant: &str, with_one: bool| {
        r.entries()
            .map(|name| {
                let pts = r
                    .generation
                    .rows
                    .iter()
                    .filter(|g| {
                        g.scheme == name
                            && (g.variant == variant
                                || (with_one && g.variant == "shared" && g.threads == 1))
                    })
                    .map(|g| (g.threads as f64, g.ids_per_sec))
                    .collect();
                (name.to_owned(), pts)
            })
            .collect()
    };
    let panel = |title, series| {
        Panel::Lines(Lines {
            title,
            x_desc: "threads",
            y_desc: "ids per second (log)",
            series,
        })
    };
    Chart {
        stem: "generation_threads",
        title: "Ids per second against threads: one shared generator, and one generator per \
                thread"
            .to_owned(),
        left: panel("one shared generator", series("shared", false)),
        right: Some(panel(
            "one generator per thread",
            series("per-thread", true),
        )),
    }
}

/// An insert-rate panel: one line per scheme, from the curve points `points` gives it
/// (rows so far, rows per second), labelled with its storage.
fn insert_rate(
    r: &Results<'_>,
    title: &'static str,
    points: impl Fn(&str, u32) -> (&'static str, Vec<(f64, f64)>),
) -> Lines<'static> {
    Lines {
        title,
        x_desc: "rows in the table",
        y_desc: "rows per second (log)",
        series: r
            .entries_with_bits()
            .map(|(name, bits)| {
                let (storage, pts) = points(name, bits);
                (format!("{name} ({storage})"), pts)
            })
            .collect(),
    }
}

/// An engine's charts ([`Engine::CHARTS`]): its insert-rate curve over each scheme's own key
/// (small cache, the profile's rows per commit), and its two charts of bar panels over the
/// same runs (one writer, each panel's cache).
pub(crate) fn engine_charts<E: Engine>(r: &Results<'_>, results: &E::Results) -> Vec<Chart> {
    if results.runs().is_empty() {
        return Vec::new();
    }
    let charts = &E::CHARTS;
    let commit_rows = r.params.commit_rows;
    let curve = Chart {
        stem: charts.curve_stem,
        title: (charts.curve_title)(commit_rows, results.small_cache_kib()),
        left: Panel::Lines(insert_rate(r, charts.curve_panel, |name, bits| {
            let storage = <<E::Results as InsertResults>::Storage as StorageName>::native(bits);
            let pts = results
                .curve()
                .iter()
                .filter(|c| {
                    c.scheme == name
                        && c.storage == storage
                        && c.cache == "small"
                        && c.commit_rows == commit_rows
                })
                .map(|c| (c.rows_so_far as f64, c.batch_rows_per_sec))
                .collect();
            (storage.name(), pts)
        })),
        right: None,
    };
    // One bar per scheme: its own key, one writer, the panel's cache.
    let panel = |p: &BarPanel<RunOf<E::Results>>| {
        Panel::Bars(Bars {
            title: p.title,
            x_desc: p.x_desc,
            rows: r
                .entries()
                .filter_map(|name| results.native(name, p.cache))
                .map(|b| (b.scheme.to_string(), (p.value)(b), None))
                .collect(),
            log: p.log,
            percent: p.percent,
        })
    };
    let bars = |pair: &BarPair<RunOf<E::Results>>| Chart {
        stem: pair.stem,
        title: (pair.title)(commit_rows),
        left: panel(&pair.panels[0]),
        right: Some(panel(&pair.panels[1])),
    };
    vec![curve, bars(&charts.first), bars(&charts.second)]
}
