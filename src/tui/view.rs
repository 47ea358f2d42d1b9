//! Rendering of `scx_sis top`: a pure function of the model, so tests render it into ratatui's
//! TestBackend. Every view fits 80x24 and uses more room when there is more.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row as TRow, Sparkline, Table, Wrap};
use ratatui::Frame;

use super::model::{Conn, Model, View, ROWS};
use crate::llc_stats::{CPU_BUSY, CPU_FAIL_PRONE, CPU_IDLE, CPU_OFFLINE, CPU_OVERLOADED};

const LABEL_W: u16 = 16;
const VALUE_W: u16 = 10;

pub fn render(f: &mut Frame, m: &Model) {
    let [header, body, footer] =
        Layout::vertical([Constraint::Length(2), Constraint::Min(0), Constraint::Length(1)]).areas(f.area());
    render_header(f, m, header);
    match (&m.conn, m.view) {
        (_, View::Help) => render_help(f, body),
        (Conn::Waiting { .. }, _) if m.latest.is_none() => render_waiting(f, m, body),
        (_, View::Overview) => render_overview(f, m, body),
        (_, View::Llc) => render_llc(f, m, body),
        (_, View::Cpu) => render_cpu(f, m, body),
        (_, View::Gb) => render_gb(f, m, body),
    }
    render_footer(f, m, footer);
}

fn render_header(f: &mut Frame, m: &Model, area: Rect) {
    let view = match m.view {
        View::Overview => "overview",
        View::Llc => "per LLC",
        View::Cpu => "per CPU",
        View::Gb => "group balancer",
        View::Help => "help",
    };
    let state = match &m.conn {
        Conn::Connected => Span::styled(
            format!("live, every {:.1}s (last {:.2}s)", m.interval, m.dt),
            Style::default().fg(Color::Green),
        ),
        Conn::Waiting { attempts, .. } => Span::styled(
            format!("no scx_sis running - retrying ({attempts})"),
            Style::default().fg(Color::Yellow).add_modifier(Modifier::BOLD),
        ),
    };
    let mut l1 = vec![
        Span::styled("scx_sis top", Style::default().add_modifier(Modifier::BOLD)),
        Span::raw(format!(" | {view} | ")),
        state,
    ];
    if m.control {
        l1.push(Span::styled(" | control", Style::default().fg(Color::Magenta)));
    }
    let l2 = match &m.message {
        Some(msg) => Line::from(Span::styled(msg.clone(), Style::default().fg(Color::Cyan))),
        None => Line::from(Span::styled(m.knobs_line(), Style::default().fg(Color::DarkGray))),
    };
    f.render_widget(Paragraph::new(vec![Line::from(l1), l2]), area);
}

fn render_footer(f: &mut Frame, m: &Model, area: Rect) {
    let mut keys = vec![("1", "overview"), ("2", "LLC"), ("3", "CPU"), ("4", "gb"), ("?", "help"), ("q", "quit")];
    if m.control {
        keys.extend([("s", "steal"), ("m", "sis-mode"), ("c", "scope"), ("o", "oracle"), ("+/-", "slice")]);
    }
    let mut spans = vec![];
    for (k, what) in keys {
        spans.push(Span::styled(k, Style::default().fg(Color::Black).bg(Color::Gray)));
        spans.push(Span::raw(format!(" {what} ")));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn render_waiting(f: &mut Frame, m: &Model, area: Rect) {
    let why = match &m.conn {
        Conn::Waiting { why, .. } => why.as_str(),
        Conn::Connected => "",
    };
    let text = vec![
        Line::from(""),
        Line::from(Span::styled(
            "no scx_sis running - retrying",
            Style::default().fg(Color::Yellow).add_modifier(Modifier::BOLD),
        )),
        Line::from(""),
        Line::from(format!("stats socket: {}", m.source)),
        Line::from(format!("last error: {why}")),
        Line::from(""),
        Line::from("start one with: sudo scx_sis"),
    ];
    f.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }).block(Block::default().borders(Borders::ALL)), area);
}

fn fmt_num(v: f64, prec: usize) -> String {
    if v.abs() >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v.abs() >= 1e4 && prec == 0 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.prec$}")
    }
}

fn render_overview(f: &mut Frame, m: &Model, area: Rect) {
    let block = Block::default()
        .borders(Borders::TOP)
        .title(" overview: rate per second over the last interval, history right ");
    let inner = block.inner(area);
    f.render_widget(block, area);
    // one line per row; rows that do not fit are left out from the bottom
    let n = (inner.height as usize).min(ROWS.len());
    let dim = matches!(m.conn, Conn::Waiting { .. });
    for (i, row) in ROWS.iter().take(n).enumerate() {
        let y = inner.y + i as u16;
        let [label, value, spark] =
            Layout::horizontal([Constraint::Length(LABEL_W), Constraint::Length(VALUE_W), Constraint::Min(0)])
                .areas(Rect { x: inner.x, y, width: inner.width, height: 1 });
        f.render_widget(Paragraph::new(row.label), label);
        let v = m.row_value(i).map_or("-".to_string(), |v| fmt_num(v, row.prec));
        let vs = if dim { Style::default().fg(Color::DarkGray) } else { Style::default().fg(Color::White) };
        f.render_widget(Paragraph::new(format!("{v:>w$} ", w = VALUE_W as usize - 1)).style(vs), value);
        let hist = &m.history[i];
        let w = spark.width as usize;
        let data: Vec<u64> =
            hist.iter().skip(hist.len().saturating_sub(w)).map(|v| (v * 100.0).max(0.0) as u64).collect();
        let top = row.max.map_or_else(|| data.iter().copied().max().unwrap_or(0), |t| (t * 100.0) as u64);
        f.render_widget(
            Sparkline::default().data(&data).max(top.max(1)).style(Style::default().fg(Color::Cyan)),
            spark,
        );
    }
}

fn render_llc(f: &mut Frame, m: &Model, area: Rect) {
    let header = TRow::new(
        ["LLC", "CPUs", "filter/idle", "FP%", "scans/s", "ok%", "recall%", "pr/scan", "ovl", "steals/s", "load"]
            .map(|h| Cell::from(h).style(Style::default().add_modifier(Modifier::BOLD))),
    );
    let rows = m.llc_rows().into_iter().map(|r| {
        TRow::new(vec![
            Cell::from(r.id.to_string()),
            Cell::from(r.cpus.clone()),
            Cell::from(format!("{}/{}", r.filter_weight, r.true_idle)),
            Cell::from(format!("{:.1}", r.fp_pct)),
            Cell::from(fmt_num(r.scans_s, 0)),
            Cell::from(format!("{:.1}", r.success_pct)),
            Cell::from(format!("{:.1}", r.recall_pct)),
            Cell::from(format!("{:.2}", r.probes_per_scan)),
            Cell::from(r.overloaded.to_string()),
            Cell::from(fmt_num(r.steals_s, 1)),
            Cell::from(format!("{}/{}", r.load, r.nr_cpus)),
        ])
    });
    let widths = [
        Constraint::Length(3),
        Constraint::Length(7),
        Constraint::Length(11),
        Constraint::Length(5),
        Constraint::Length(8),
        Constraint::Length(5),
        Constraint::Length(7),
        Constraint::Length(7),
        Constraint::Length(3),
        Constraint::Length(8),
        Constraint::Length(5),
    ];
    let t = Table::new(rows, widths).header(header).column_spacing(1).block(
        Block::default().borders(Borders::TOP).title(" per LLC: filter bits vs truly idle CPUs, scans, steals, load "),
    );
    f.render_widget(t, area);
}

fn state_style(c: char) -> Style {
    match c {
        CPU_OVERLOADED => Style::default().fg(Color::Black).bg(Color::Red),
        CPU_FAIL_PRONE => Style::default().fg(Color::Black).bg(Color::Yellow),
        CPU_BUSY => Style::default().fg(Color::Black).bg(Color::Green),
        CPU_IDLE => Style::default().fg(Color::Gray),
        _ => Style::default().fg(Color::DarkGray),
    }
}

fn render_cpu(f: &mut Frame, m: &Model, area: Rect) {
    let block = Block::default().borders(Borders::TOP).title(" per CPU ");
    let inner = block.inner(area);
    f.render_widget(block, area);
    let grid = m.cpu_grid();
    let mut counts = [0usize; 5];
    let mut lines = vec![];
    for (llc, cpus, cells) in &grid {
        lines.push(Line::from(Span::styled(
            match llc {
                Some(id) => format!("LLC {id} (CPUs {cpus})"),
                None => "not in an LLC (offline)".to_string(),
            },
            Style::default().add_modifier(Modifier::BOLD),
        )));
        // cells of 6 columns: "  12 B"
        let per_line = ((inner.width as usize) / 6).max(1);
        for chunk in cells.chunks(per_line) {
            let mut spans = vec![];
            for (cpu, c) in chunk {
                let k = [CPU_IDLE, CPU_BUSY, CPU_OVERLOADED, CPU_FAIL_PRONE, CPU_OFFLINE].iter().position(|s| s == c);
                if let Some(k) = k {
                    counts[k] += 1;
                }
                spans.push(Span::raw(format!("{cpu:>4} ")));
                spans.push(Span::styled(c.to_string(), state_style(*c)));
            }
            lines.push(Line::from(spans));
        }
    }
    let legend = Line::from(vec![
        Span::styled(format!(" {CPU_IDLE} "), state_style(CPU_IDLE)),
        Span::raw(format!(" idle {}  ", counts[0])),
        Span::styled(format!(" {CPU_BUSY} "), state_style(CPU_BUSY)),
        Span::raw(format!(" busy {}  ", counts[1])),
        Span::styled(format!(" {CPU_OVERLOADED} "), state_style(CPU_OVERLOADED)),
        Span::raw(format!(" overloaded {}  ", counts[2])),
        Span::styled(format!(" {CPU_FAIL_PRONE} "), state_style(CPU_FAIL_PRONE)),
        Span::raw(format!(" fail-prone {}", counts[3])),
    ]);
    lines.insert(0, legend);
    lines.insert(1, Line::from(""));
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}

/// What the group balancer view says when scx_sis runs without one.
pub const GB_OFF: &str = "group balancer off (start scx_sis with --gb-parent PATH or --gb-cgroup PATH)";

/// `s` in `w` columns, its start cut: cgroup paths differ at their end.
fn tail(s: &str, w: usize) -> String {
    let n = s.chars().count();
    if n <= w {
        return s.to_string();
    }
    let cut: String = s.chars().skip(n + 1 - w.max(1)).collect();
    format!("…{cut}")
}

fn render_gb(f: &mut Frame, m: &Model, area: Rect) {
    let block = Block::default()
        .borders(Borders::TOP)
        .title(" group balancer: partitions, the groups that prefer them; loads in CPUs ");
    let inner = block.inner(area);
    f.render_widget(block, area);
    let (Some(st), Some(r)) = (&m.latest, m.gb_rates()) else { return };
    if st.gb_enabled == 0 {
        f.render_widget(Paragraph::new(GB_OFF).wrap(Wrap { trim: true }), inner);
        return;
    }
    let [counters, table] = Layout::vertical([Constraint::Length(3), Constraint::Min(0)]).areas(inner);
    let mut moves = format!(
        "move/s  idle {}  swap {}    steal-pref/s {}",
        fmt_num(r.move_idle, 1),
        fmt_num(r.move_swap, 1),
        fmt_num(r.steal_pref, 1)
    );
    // a total, not a rate: cgroups that never got group state
    if st.gb_no_state > 0 {
        moves.push_str(&format!("    ungrouped (map full) {}", st.gb_no_state));
    }
    let lines = vec![
        Line::from(format!(
            "wake/s  prev {}  part {}  elsewhere {}",
            fmt_num(r.wake_prev, 0),
            fmt_num(r.wake_part, 0),
            fmt_num(r.wake_elsewhere, 0)
        )),
        Line::from(moves),
    ];
    f.render_widget(Paragraph::new(lines), counters);

    // the proposal's gb_stat per group: its load on each partition, * on the preferred one
    let by_part = |g: &crate::group::GbGroupMetrics| {
        let cells: Vec<String> = st
            .gb_parts
            .keys()
            .map(|id| {
                let l = g.by_part_mcpu.get(id).copied().unwrap_or(0) as f64 / 1000.0;
                format!("{l:.2}{}", if g.part == *id as u64 { "*" } else { "" })
            })
            .collect();
        cells.join(" ")
    };
    let by_part_w = st.gb_parts.values().flat_map(|p| p.groups.values()).map(|g| by_part(g).len()).max().unwrap_or(0);
    let by_part_w = by_part_w.max(12) as u16;
    let (part_w, load_w, grp_w, pct_w, moves_w) = (4, 10, 8, 8, 5);
    let longest = st.gb_parts.values().flat_map(|p| p.groups.values().map(|g| g.path.chars().count() + 2));
    let want_w = longest.chain(st.gb_parts.values().map(|p| p.cpus.len())).max().unwrap_or(0).max(12) as u16;
    // at most what is left (6 gaps of 1 between the 7 columns): more, and the table would
    // squeeze the other columns, cutting the path at its end
    let left = inner.width.saturating_sub(part_w + load_w + grp_w + pct_w + moves_w + by_part_w + 6);
    let path_w = want_w.min(left).max(8);
    let header = TRow::new(
        ["part", "CPUs / group", "load", "grp load", "in-part%", "moves", "load by part"]
            .map(|h| Cell::from(h).style(Style::default().add_modifier(Modifier::BOLD))),
    );
    let mut rows = vec![];
    for (id, p) in &st.gb_parts {
        rows.push(TRow::new(vec![
            Cell::from(id.to_string()),
            Cell::from(p.cpus.clone()),
            Cell::from(format!("{:.2}/{}", p.load, p.nr_cpus)),
            Cell::from(format!("{:.2}", p.group_load)),
        ]));
        for g in p.groups.values() {
            rows.push(TRow::new(vec![
                Cell::from(""),
                Cell::from(format!("  {}", tail(&g.path, path_w as usize - 2))),
                Cell::from(format!("{:.2}", g.load)),
                Cell::from(""),
                Cell::from(format!("{:.1}", g.in_part_pct)),
                Cell::from(g.moves.to_string()),
                Cell::from(by_part(g)),
            ]));
        }
    }
    let widths = [part_w, path_w, load_w, grp_w, pct_w, moves_w, by_part_w].map(Constraint::Length);
    f.render_widget(Table::new(rows, widths).header(header).column_spacing(1), table);
}

const HELP: &[(&str, &str)] = &[
    ("1 / 2 / 3", "overview / per-LLC table / per-CPU grid"),
    ("4", "group balancer: partitions, their groups, its counters"),
    ("? or h", "this help (any view key leaves it)"),
    ("q, Ctrl-C", "quit (the terminal is restored)"),
    ("s", "control: steal on <-> off"),
    ("S", "control: steal map-only"),
    ("m", "control: sis-mode linear -> filter -> full -> linear"),
    ("c", "control: steal-scope llc -> node -> all"),
    ("o", "control: oracle-every 0 -> 1 -> 4 -> 16 -> 64"),
    ("+ / -", "control: slice x2 / /2"),
];

fn render_help(f: &mut Frame, area: Rect) {
    let mut lines = vec![Line::from(Span::styled("keys", Style::default().add_modifier(Modifier::BOLD)))];
    for (k, what) in HELP {
        lines.push(Line::from(vec![
            Span::styled(format!("{k:>10}  "), Style::default().fg(Color::Cyan)),
            Span::raw(*what),
        ]));
    }
    lines.extend([
        Line::from(""),
        Line::from("Control keys need --control and root; the same knobs as `scx_sis set KEY=VALUE`."),
        Line::from("Rates are per second over the last refresh; success, recall, FP are % of that interval."),
        Line::from("CPU grid: . idle, B busy, O overloaded (tasks waiting), F fail-prone (last scan failed)."),
        Line::from("Group balancer: loads in CPUs over its last period; * marks a group's preferred partition."),
    ]);
    f.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }).block(Block::default().borders(Borders::TOP).title(" help ")),
        area,
    );
}
