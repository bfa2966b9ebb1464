//! The progress bar of the timed part: elapsed against the whole run, the phase's name,
//! and requests so far.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use tokio::time::Instant;

use super::traffic::Traffic;

pub struct Progress {
    bar: ProgressBar,
    phase: Arc<AtomicUsize>,
    ticker: tokio::task::JoinHandle<()>,
}

impl Progress {
    /// Starts at the first of `phases` (their names, in order).
    pub fn start(show: bool, total: Duration, phases: Vec<String>, traffic: Arc<Traffic>) -> Self {
        let phase = Arc::new(AtomicUsize::new(0));
        let bar = if show {
            let bar = ProgressBar::new(total.as_millis() as u64);
            if let Ok(style) = ProgressStyle::with_template("{spinner} [{bar:40}] {msg}") {
                bar.set_style(style.progress_chars("=> "));
            }
            bar
        } else {
            ProgressBar::hidden()
        };
        let ticker = {
            let (bar, phase) = (bar.clone(), phase.clone());
            tokio::spawn(async move {
                let start = Instant::now();
                let mut every = tokio::time::interval(Duration::from_millis(100));
                loop {
                    every.tick().await;
                    let elapsed = start.elapsed().min(total);
                    let name = phases
                        .get(phase.load(Ordering::Relaxed))
                        .map_or("", String::as_str);
                    bar.set_position(elapsed.as_millis() as u64);
                    bar.set_message(format!(
                        "{:>5.1}s / {:.0}s  {name}  {} requests",
                        elapsed.as_secs_f64(),
                        total.as_secs_f64(),
                        traffic.requests.load(Ordering::Relaxed)
                    ));
                }
            })
        };
        Self { bar, phase, ticker }
    }

    /// The phase numbered `i` (from 0) has begun.
    pub fn phase(&self, i: usize) {
        self.phase.store(i, Ordering::Relaxed);
    }

    pub fn finish(self) {
        self.ticker.abort();
        self.bar.finish_and_clear();
    }
}
