//! The real `robota` binary in a pseudo-terminal, its output parsed by a vt100 screen, for
//! end-to-end TUI tests: type keys, wait until the screen shows something (no sleeps: a
//! reader thread feeds the parser and wakes waiters), resize, and read the exit status.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

/// A running program in a pty.
pub struct PtySession {
    master: Box<dyn MasterPty + Send>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn Child + Send + Sync>,
    screen: Arc<(Mutex<ScreenState>, Condvar)>,
}

struct ScreenState {
    parser: vt100::Parser,
    /// Everything the program wrote, for asserting on escape sequences (mode restores).
    raw: Vec<u8>,
    closed: bool,
}

impl PtySession {
    /// Starts `cmd` in a `cols`×`rows` terminal.
    pub fn spawn(cmd: CommandBuilder, cols: u16, rows: u16) -> PtySession {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("openpty");
        let child = pty.slave.spawn_command(cmd).expect("spawn in pty");
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().expect("pty reader");
        let writer = pty.master.take_writer().expect("pty writer");
        let screen = Arc::new((
            Mutex::new(ScreenState {
                parser: vt100::Parser::new(nonzero(rows), nonzero(cols), 0),
                raw: Vec::new(),
                closed: false,
            }),
            Condvar::new(),
        ));
        let feed = screen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                let n = match reader.read(&mut buf) {
                    Ok(0) | Err(_) => 0,
                    Ok(n) => n,
                };
                let (lock, cvar) = &*feed;
                let mut state = lock.lock().unwrap();
                if n == 0 {
                    state.closed = true;
                    cvar.notify_all();
                    return;
                }
                state.parser.process(&buf[..n]);
                state.raw.extend_from_slice(&buf[..n]);
                cvar.notify_all();
            }
        });
        PtySession {
            master: pty.master,
            writer,
            child,
            screen,
        }
    }

    /// The program's process id.
    pub fn pid(&self) -> u32 {
        self.child.process_id().expect("a pid")
    }

    /// Sends bytes as if typed.
    pub fn send(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).expect("write to pty");
        self.writer.flush().expect("flush pty");
    }

    pub fn type_text(&mut self, text: &str) {
        for ch in text.chars() {
            let mut b = [0u8; 4];
            self.send(ch.encode_utf8(&mut b).as_bytes());
        }
    }

    /// Sends text as one bracketed paste.
    pub fn paste(&mut self, text: &str) {
        self.send(b"\x1b[200~");
        self.send(text.as_bytes());
        self.send(b"\x1b[201~");
    }

    pub fn resize(&mut self, cols: u16, rows: u16) {
        self.master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("resize pty");
        let (lock, _) = &*self.screen;
        lock.lock()
            .unwrap()
            .parser
            .set_size(nonzero(rows), nonzero(cols));
    }

    /// The screen's text, one string per row.
    pub fn contents(&self) -> String {
        let (lock, _) = &*self.screen;
        lock.lock().unwrap().parser.screen().contents()
    }

    /// The text drawn in reverse video, one string per row that has any (a highlight).
    pub fn reversed_text(&self) -> Vec<String> {
        let (lock, _) = &*self.screen;
        let state = lock.lock().unwrap();
        let screen = state.parser.screen();
        let (rows, cols) = screen.size();
        let (rows, cols) = (u16::from(rows), u16::from(cols));
        let mut out = Vec::new();
        for row in 0..rows {
            let text: String = (0..cols)
                .filter_map(|col| screen.cell(row, col))
                .filter(|cell| cell.inverse())
                .map(|cell| cell.contents())
                .collect();
            if !text.is_empty() {
                out.push(text);
            }
        }
        out
    }

    /// Everything written so far, raw.
    pub fn raw(&self) -> Vec<u8> {
        let (lock, _) = &*self.screen;
        lock.lock().unwrap().raw.clone()
    }

    /// Waits until `pred(screen text)` holds; panics with the screen after `limit`.
    pub fn wait_for(&self, what: &str, limit: Duration, pred: impl Fn(&str) -> bool) -> String {
        let (lock, cvar) = &*self.screen;
        let deadline = Instant::now() + limit;
        let mut state = lock.lock().unwrap();
        loop {
            let text = state.parser.screen().contents();
            if pred(&text) {
                return text;
            }
            let now = Instant::now();
            if now >= deadline || state.closed {
                panic!("timed out waiting for {what}; screen:\n{text}");
            }
            state = cvar.wait_timeout(state, deadline - now).unwrap().0;
        }
    }

    /// Waits until the raw output (escape sequences included) contains `needle`; panics
    /// after `limit`.
    pub fn wait_for_raw(&self, needle: &[u8], limit: Duration) {
        let (lock, cvar) = &*self.screen;
        let deadline = Instant::now() + limit;
        let mut state = lock.lock().unwrap();
        loop {
            if state.raw.windows(needle.len()).any(|w| w == needle) {
                return;
            }
            let now = Instant::now();
            if now >= deadline || state.closed {
                panic!(
                    "timed out waiting for {:?} in the output; screen:\n{}",
                    String::from_utf8_lossy(needle),
                    state.parser.screen().contents()
                );
            }
            state = cvar.wait_timeout(state, deadline - now).unwrap().0;
        }
    }

    pub fn wait_for_text(&self, needle: &str) -> String {
        self.wait_for(needle, Duration::from_secs(20), |s| s.contains(needle))
    }

    /// Waits for the program to exit (bounded) and returns its exit code.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<u32> {
        let deadline = Instant::now() + limit;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                // Let the reader drain what was written before the exit.
                let (lock, cvar) = &*self.screen;
                let state = lock.lock().unwrap();
                let _ = cvar.wait_timeout_while(state, Duration::from_secs(2), |s| !s.closed);
                return Some(status.exit_code());
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                return None;
            }
            let (lock, cvar) = &*self.screen;
            let state = lock.lock().unwrap();
            let _ = cvar.wait_timeout(state, Duration::from_millis(50));
        }
    }
}

impl Drop for PtySession {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

fn nonzero(n: u16) -> std::num::NonZero<u16> {
    std::num::NonZero::new(n.max(1)).unwrap()
}
