//! An SVG backend that draws text as filled glyph outlines from the embedded font, so an
//! SVG chart looks the same on a machine without fonts. Everything else is plotters' own
//! SVG backend.

use ab_glyph::{Font, FontRef, OutlineCurve, Point, PxScale, ScaleFont};
use plotters::prelude::SVGBackend;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
    FontTransform,
};

/// Wraps [`SVGBackend`]; only `draw_text` differs.
pub struct OutlinedSvg<'a> {
    inner: SVGBackend<'a>,
    font: FontRef<'static>,
}

impl std::fmt::Debug for OutlinedSvg<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutlinedSvg").finish_non_exhaustive()
    }
}

impl<'a> OutlinedSvg<'a> {
    /// An SVG of `size` pixels written into `buf` when presented, text drawn with `font`.
    pub fn new(buf: &'a mut String, size: (u32, u32), font: FontRef<'static>) -> Self {
        Self {
            inner: SVGBackend::with_string(buf, size),
            font,
        }
    }
}

type Failure = DrawingErrorKind<<SVGBackend<'static> as DrawingBackend>::ErrorType>;

impl DrawingBackend for OutlinedSvg<'_> {
    type ErrorType = <SVGBackend<'static> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }
    fn ensure_prepared(&mut self) -> Result<(), Failure> {
        self.inner.ensure_prepared()
    }
    fn present(&mut self) -> Result<(), Failure> {
        self.inner.present()
    }
    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Result<(), Failure> {
        self.inner.draw_pixel(point, color)
    }
    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), Failure> {
        self.inner.draw_line(from, to, style)
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        a: BackendCoord,
        b: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), Failure> {
        self.inner.draw_rect(a, b, style, fill)
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), Failure> {
        self.inner.draw_path(path, style)
    }
    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), Failure> {
        self.inner.draw_circle(center, radius, style, fill)
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), Failure> {
        self.inner.fill_polygon(vert, style)
    }

    fn draw_text<T: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &T,
        pos: BackendCoord,
    ) -> Result<(), Failure> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        #[allow(clippy::cast_possible_truncation)]
        let scaled = self.font.as_scaled(PxScale::from(style.size() as f32));
        // Lay out on one line, measuring width for the anchor.
        let mut placed = Vec::new();
        let mut x = 0.0f32;
        let mut previous = None;
        for c in text.chars() {
            let id = scaled.glyph_id(c);
            if let Some(p) = previous {
                x += scaled.kern(p, id);
            }
            placed.push((id, x));
            x += scaled.h_advance(id);
            previous = Some(id);
        }
        let (width, height) = (x, scaled.ascent() - scaled.descent());
        let dx = match style.anchor().h_pos {
            HPos::Left => 0.0,
            HPos::Center => -width / 2.0,
            HPos::Right => -width,
        };
        let top = match style.anchor().v_pos {
            VPos::Top => 0.0,
            VPos::Center => -height / 2.0,
            VPos::Bottom => -height,
        };
        let baseline = top + scaled.ascent();
        let (sx, sy) = (scaled.h_scale_factor(), scaled.v_scale_factor());
        let transform = style.transform();
        for (id, gx) in placed {
            let Some(outline) = self.font.outline(id) else {
                continue;
            };
            let to_local = |p: Point| (gx + dx + p.x * sx, baseline - p.y * sy);
            let mut contours: Vec<Vec<(f32, f32)>> = Vec::new();
            let mut last: Option<Point> = None;
            for curve in &outline.curves {
                let (start, points): (Point, Vec<Point>) = match *curve {
                    OutlineCurve::Line(a, b) => (a, vec![b]),
                    OutlineCurve::Quad(a, b, c) => (a, flatten(&[a, b, c])),
                    OutlineCurve::Cubic(a, b, c, d) => (a, flatten(&[a, b, c, d])),
                };
                if last != Some(start) {
                    contours.push(vec![to_local(start)]);
                }
                if let Some(contour) = contours.last_mut() {
                    contour.extend(points.iter().map(|&p| to_local(p)));
                }
                last = points.last().copied();
            }
            // One polygon per glyph: every contour joined to the first by a bridge walked
            // both ways, so holes stay holes under the nonzero fill rule.
            let Some(anchor) = contours.first().and_then(|c| c.first()).copied() else {
                continue;
            };
            let mut polygon = Vec::new();
            for contour in &contours {
                polygon.extend(contour.iter().copied());
                polygon.push(contour[0]);
                polygon.push(anchor);
            }
            let vertices: Vec<BackendCoord> = polygon
                .into_iter()
                .map(|(x, y)| {
                    let (x, y) = rotate(transform.clone(), x, y);
                    #[allow(clippy::cast_possible_truncation)]
                    (pos.0 + x.round() as i32, pos.1 + y.round() as i32)
                })
                .collect();
            self.inner.fill_polygon(vertices, &color)?;
        }
        Ok(())
    }
}

fn rotate(transform: FontTransform, x: f32, y: f32) -> (f32, f32) {
    match transform {
        FontTransform::None => (x, y),
        FontTransform::Rotate90 => (-y, x),
        FontTransform::Rotate180 => (-x, -y),
        FontTransform::Rotate270 => (y, -x),
    }
}

/// Points along a quadratic or cubic Bézier curve (the start point excluded).
fn flatten(control: &[Point]) -> Vec<Point> {
    const STEPS: u16 = 8;
    (1..=STEPS)
        .map(|i| {
            let t = f32::from(i) / f32::from(STEPS);
            let mut pts = control.to_vec();
            while pts.len() > 1 {
                pts = pts
                    .windows(2)
                    .map(|w| Point {
                        x: w[0].x + (w[1].x - w[0].x) * t,
                        y: w[0].y + (w[1].y - w[0].y) * t,
                    })
                    .collect();
            }
            pts[0]
        })
        .collect()
}
