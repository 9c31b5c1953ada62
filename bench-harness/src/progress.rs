use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// Progress bars for long steps and one summary line per step, on standard error.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    quiet: bool,
}

impl Progress {
    /// Progress that prints nothing when `quiet`.
    pub fn new(quiet: bool) -> Self {
        Self { quiet }
    }

    /// A bar of `total` units for the step `name` (hidden when quiet).
    pub fn bar(&self, name: &str, total: usize) -> ProgressBar {
        if self.quiet {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::new(total as u64);
        bar.set_style(
            ProgressStyle::with_template("{prefix:>12} [{bar:30}] {pos}/{len} {msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.set_prefix(name.to_owned());
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    }

    /// Ends `bar` and prints the step's one-line summary.
    pub fn done(&self, bar: &ProgressBar, summary: &str) {
        bar.finish_and_clear();
        self.line(summary);
    }

    /// One line on standard error (nothing when quiet).
    pub fn line(&self, text: &str) {
        if !self.quiet {
            eprintln!("{text}");
        }
    }
}
