//! The control protocol (`scx_sis set`) on a socket in a tempdir: exactly-once knob changes,
//! timeouts, malformed and oversize lines, the peer's uid both ways. No BPF: the run loop's side
//! is played here by draining the request channel.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crossbeam::channel::Receiver;
use scx_sis::control::{self, ClientError, Config, Pending, Request};
use scx_sis::knobs::Knobs;
use scx_sis::overload::StealMode;

fn me() -> u32 {
    unsafe { libc::geteuid() }
}

/// A control socket served in a tempdir for our own uid, with short timeouts.
fn server(cfg: Config) -> (tempfile::TempDir, PathBuf, control::Server, Receiver<Pending>) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("scx/scx_sis.ctl");
    let (srv, rx) = control::serve_with(&p, cfg).unwrap();
    (dir, p, srv, rx)
}

fn quick() -> Config {
    Config {
        client_uid: me(),
        read_timeout: Duration::from_millis(300),
        take_timeout: Duration::from_millis(300),
        answer_timeout: Duration::from_millis(300),
    }
}

fn request(p: &Path, line: &str) -> Result<String, ClientError> {
    control::request_with(p, line, me(), Duration::from_secs(5))
}

/// What the run loop does with a request: applies it to `knobs` if it may still take it.
fn run_loop_step(rx: &Receiver<Pending>, knobs: &mut Knobs) -> usize {
    let mut applied = 0;
    while let Ok(p) = rx.try_recv() {
        if !p.take() {
            continue;
        }
        let res = match p.req {
            Request::Set(k) => {
                let old = knobs.get(&k);
                knobs.set(k);
                applied += 1;
                Ok(format!("{k} (was {old})"))
            }
            Request::Get => Ok(knobs.summary()),
        };
        p.answer(res);
    }
    applied
}

/// The loader is busy (restarting, say): the request times out, its client is told nothing
/// changed (exit 1, not 2), and the request is never applied later.
#[test]
fn a_timed_out_request_is_never_applied() {
    let (_d, p, _srv, rx) = server(quick());
    let mut knobs = Knobs::default();
    let t = Instant::now();
    let r = request(&p, "set steal=off");
    let waited = t.elapsed();
    match &r {
        Err(ClientError::Failed(msg)) => assert!(msg.contains("dropped, nothing changed"), "{msg}"),
        other => panic!("want Failed, got {other:?}"),
    }
    assert!(waited >= Duration::from_millis(300) && waited < Duration::from_secs(2), "{waited:?}");
    // the loader comes back and drains its channel: nothing is applied
    assert_eq!(run_loop_step(&rx, &mut knobs), 0);
    assert_eq!(knobs.steal, StealMode::On);
}

/// Taken in time: applied once, answered ok.
#[test]
fn a_request_taken_in_time_is_applied_once() {
    let (_d, p, _srv, rx) = server(quick());
    let h = std::thread::spawn(move || {
        let mut knobs = Knobs::default();
        let mut n = 0;
        let t = Instant::now();
        while t.elapsed() < Duration::from_millis(600) {
            n += run_loop_step(&rx, &mut knobs);
            std::thread::sleep(Duration::from_millis(20));
        }
        (n, knobs)
    });
    assert_eq!(request(&p, "set steal=off"), Ok("steal=off (was steal=on)".into()));
    let (n, knobs) = h.join().unwrap();
    assert_eq!((n, knobs.steal), (1, StealMode::Off));
}

/// Taken but never answered (the loader died applying it): the outcome is unknown, said so.
#[test]
fn taken_but_unanswered_is_unknown() {
    let (_d, p, _srv, rx) = server(quick());
    let h = std::thread::spawn(move || {
        let p = rx.recv().unwrap();
        assert!(p.take());
        std::thread::sleep(Duration::from_secs(1));
        drop(p);
    });
    match request(&p, "set slice-us=500") {
        Err(ClientError::Unknown(msg)) => assert!(msg.contains("may have been applied"), "{msg}"),
        other => panic!("want Unknown, got {other:?}"),
    }
    h.join().unwrap();
}

fn raw(p: &Path, bytes: &[u8]) -> String {
    let mut s = UnixStream::connect(p).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = s.write_all(bytes);
    let mut l = String::new();
    BufReader::new(&s).read_line(&mut l).unwrap();
    l.trim_end().to_string()
}

/// Bad lines get one `error:` line each, and nothing reaches the run loop.
#[test]
fn malformed_and_oversize_lines_are_refused() {
    let (_d, p, _srv, rx) = server(quick());
    for (line, want) in [
        (&b"hello\n"[..], "error: unknown request \"hello\""),
        (b"set\n", "error: unknown request \"set\""),
        (b"set steal\n", "error: \"steal\" is not KEY=VALUE"),
        (b"set nosuch=1\n", "error: unknown key \"nosuch\""),
        (b"set steal=\xff\n", "error: the request is not UTF-8"),
        (b"get", "error: no request"),
    ] {
        let got = raw(&p, line);
        assert!(got.starts_with(want), "{:?}: {got}", String::from_utf8_lossy(line));
    }
    // a line far beyond the limit is not read whole
    let mut big = vec![b'x'; 16 << 20];
    big.push(b'\n');
    let t = Instant::now();
    assert_eq!(raw(&p, &big), format!("error: request longer than {} bytes", control::MAX_LINE));
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    // a client that sends nothing is answered and dropped after the read timeout; the next is served
    let s = UnixStream::connect(&p).unwrap();
    let mut l = String::new();
    BufReader::new(&s).read_line(&mut l).unwrap();
    assert!(l.starts_with("error: no request within 0.3 s"), "{l}");
    assert!(rx.try_recv().is_err(), "a refused line reached the run loop");
}

/// SO_PEERCRED both ways: the server refuses a client of another uid, the client a server of
/// another uid (someone who bound the path in place of root's scx_sis).
#[test]
fn wrong_uid_is_refused_both_ways() {
    let other = me() + 1;
    let (_d, p, _srv, rx) = server(Config { client_uid: other, ..quick() });
    // the server may answer and close before the request is written: the refusal still arrives
    for _ in 0..50 {
        assert_eq!(
            request(&p, "set steal=off"),
            Err(ClientError::Refused("permission denied: only root may change scx_sis".into()))
        );
    }
    assert!(rx.try_recv().is_err());

    let (_d, p, _srv, rx) = server(quick());
    match control::request_with(&p, "set steal=off", other, Duration::from_secs(5)) {
        Err(ClientError::Io(msg)) => assert!(msg.contains(&format!("is served by uid {}", me())), "{msg}"),
        r => panic!("want a refusal of the server, got {r:?}"),
    }
    assert!(rx.try_recv().is_err(), "the client sent to a server of the wrong uid");
}

/// A second instance cannot take the path of a live one, and exiting, an instance removes only
/// the socket it bound.
#[test]
fn a_second_instance_does_not_take_or_remove_the_socket() {
    let (_d, p, first, _rx) = server(quick());
    let e = control::serve_with(&p, quick()).err().expect("a second server on a live path");
    assert!(e.to_string().contains("is served by another process"), "{e:#}");
    // the first still serves
    assert!(matches!(request(&p, "set steal=off"), Err(ClientError::Failed(_))));
    // replaced behind its back (an older scx_sis would do so), then it exits: the other socket stays
    std::fs::remove_file(&p).unwrap();
    let other = std::os::unix::net::UnixListener::bind(&p).unwrap();
    drop(first);
    assert!(p.exists(), "the exiting instance removed a socket it did not bind");
    drop(other);
}
