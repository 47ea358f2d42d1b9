//! `scx_sis top`: a live terminal UI of a running scx_sis. A client of its scx_stats socket
//! (`/var/run/scx/root/stats`), so it works in any terminal, over ssh, and against any running
//! scx_sis; with `--control`, keys change knobs over the control socket (control.rs).
//!
//! stats JSON -> `model::Model` -> `view::render`: the rendering is a pure function of the model.

pub mod model;
pub mod view;

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use scx_stats::prelude::StatsClient;

use crate::control;
use model::{control_key, Model, Sample, View};

#[derive(Debug, clap::Args)]
pub struct TopArgs {
    /// Refresh period in seconds (0.1..=3600).
    #[arg(short, long, value_name = "SECS", default_value_t = 1.0, value_parser = parse_interval)]
    interval: f64,

    /// Let keys change knobs (s, S, m, c, o, +, -) like `scx_sis set`; needs root.
    #[arg(long)]
    control: bool,

    /// The scx_stats socket of the scx_sis to watch.
    #[arg(long, value_name = "PATH", default_value = crate::access::STATS_SOCKET)]
    socket: PathBuf,

    /// No UI: print each reply as a JSON line {"dt": SECS, "stats": {...}} (for scripts, and
    /// the recorded fixtures of the UI's tests).
    #[arg(long)]
    json: bool,

    /// With --json: stop after N replies.
    #[arg(long, value_name = "N")]
    count: Option<u64>,
}

/// Bad options or a refused --control: exit 2.
#[derive(Debug)]
pub struct TopUsageError(pub String);

impl std::fmt::Display for TopUsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for TopUsageError {}

fn parse_interval(s: &str) -> std::result::Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !(0.1..=3600.0).contains(&v) {
        return Err(format!("{v} is out of range 0.1..=3600"));
    }
    Ok(v)
}

/// The stats connection: reconnects after the scheduler detaches or restarts.
struct Source {
    path: PathBuf,
    client: Option<(StatsClient, Instant)>,
}

impl Source {
    /// The next reply (a delta since the previous one on this connection) and its interval.
    fn fetch(&mut self) -> std::result::Result<Sample, String> {
        if self.client.is_none() {
            let c = StatsClient::new()
                .set_path(&self.path)
                .connect(Some(2000))
                .map_err(|e| format!("{}: {e}", self.path.display()))?;
            // the server reads its baseline when a connection opens: the first reply is a delta from now
            self.client = Some((c, Instant::now()));
            return Err("connected, waiting for the first interval".into());
        }
        let (c, last) = self.client.as_mut().unwrap();
        match c.request::<serde_json::Value>("stats", vec![]) {
            Ok(stats) => {
                let now = Instant::now();
                let dt = now.duration_since(*last).as_secs_f64();
                *last = now;
                Ok(Sample { dt, stats })
            }
            Err(e) => {
                self.client = None;
                Err(format!("the scheduler went away ({e})"))
            }
        }
    }
}

pub fn run(args: &TopArgs) -> Result<()> {
    if args.control && unsafe { libc::geteuid() } != 0 {
        return Err(TopUsageError("--control needs root (knob changes are root only)".into()).into());
    }
    // a socket we may not read: say so now, not as a UI that waits forever
    crate::access::check_readable(&args.socket).map_err(TopUsageError)?;
    let shutdown = Arc::new(AtomicBool::new(false));
    let sd = shutdown.clone();
    // SIGTERM/SIGHUP: leave the loop so the terminal is restored (Ctrl-C is a key in raw mode)
    let _ = ctrlc::set_handler(move || sd.store(true, Ordering::Relaxed));
    let mut src = Source { path: args.socket.clone(), client: None };
    if args.json {
        return run_json(args, &mut src, &shutdown);
    }
    let mut model = Model::new(&args.socket.display().to_string(), args.interval, args.control);
    let mut terminal = ratatui::init();
    let res = ui_loop(args, &mut terminal, &mut model, &mut src, &shutdown);
    ratatui::restore();
    res
}

fn run_json(args: &TopArgs, src: &mut Source, shutdown: &AtomicBool) -> Result<()> {
    let mut n = 0;
    let period = Duration::from_secs_f64(args.interval);
    while !shutdown.load(Ordering::Relaxed) && args.count.is_none_or(|c| n < c) {
        std::thread::sleep(period);
        match src.fetch() {
            Ok(s) => {
                let mut out = std::io::stdout().lock();
                writeln!(out, "{}", serde_json::to_string(&s)?)?;
                out.flush()?;
                n += 1;
            }
            Err(e) => eprintln!("scx_sis top: {e}"),
        }
    }
    Ok(())
}

fn ui_loop(
    args: &TopArgs,
    terminal: &mut ratatui::DefaultTerminal,
    model: &mut Model,
    src: &mut Source,
    shutdown: &AtomicBool,
) -> Result<()> {
    let period = Duration::from_secs_f64(args.interval);
    let mut next = Instant::now();
    while !shutdown.load(Ordering::Relaxed) {
        if Instant::now() >= next {
            match src.fetch() {
                Ok(s) => {
                    if let Err(e) = model.update_sample(&s) {
                        model.disconnected(&format!("{e:#}"));
                    }
                }
                Err(e) => model.disconnected(&e),
            }
            // retry a missing scheduler at most once a second, whatever the refresh period
            let retry = src.client.is_none();
            next = Instant::now() + if retry { period.max(Duration::from_secs(1)) } else { period };
        }
        terminal.draw(|f| view::render(f, model))?;
        let wait = next.saturating_duration_since(Instant::now()).min(Duration::from_millis(250));
        if !event::poll(wait)? {
            continue;
        }
        // resize: redrawn at the top of the loop
        let Event::Key(k) = event::read()? else { continue };
        if k.kind != KeyEventKind::Press {
            continue;
        }
        match k.code {
            KeyCode::Char('q') | KeyCode::Esc => break,
            KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => break,
            KeyCode::Char('1') => model.view = View::Overview,
            KeyCode::Char('2') => model.view = View::Llc,
            KeyCode::Char('3') => model.view = View::Cpu,
            KeyCode::Char('4') => model.view = View::Gb,
            KeyCode::Char('?') | KeyCode::Char('h') => model.view = View::Help,
            KeyCode::Char(c) => control(model, c),
            _ => {}
        }
    }
    Ok(())
}

/// A control key: asks the running scx_sis for the change; the answer goes to the status line.
fn control(model: &mut Model, key: char) {
    let Some(m) = &model.latest else { return };
    let Some(knob) = control_key(key, m) else { return };
    if !model.control {
        model.message = Some("read-only: start with --control (as root) to change knobs".into());
        return;
    }
    model.message = Some(match control::request(std::path::Path::new(control::CTL_PATH), &format!("set {knob}")) {
        Ok(r) => format!("set {r}"),
        Err(e) => format!("set {knob} failed: {e}"),
    });
}
