//! The static backend: a worker id given by the operator, guarded by two files in the
//! state directory. `SCOPE-worker-N.lock` is locked (`flock`) while a process holds the
//! worker id and names that process; `SCOPE-worker-N.mark` holds the high-water mark,
//! replaced atomically (write, fsync, rename, fsync the directory) before the fence moves.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::backend::{Backend, Grant, Want};
use crate::{LeaseError, LeaseErrorKind};

pub(crate) struct FileBackend {
    dir: PathBuf,
    worker: u64,
    lock_path: PathBuf,
    mark_path: PathBuf,
    lock: Option<File>,
    /// Grants of this worker id so far, this one included (the fencing token).
    grants: u64,
}

impl FileBackend {
    pub(crate) fn new(dir: &Path, scope: &str, worker: u64) -> Self {
        let stem = format!("{scope}-worker-{worker}");
        Self {
            dir: dir.to_path_buf(),
            worker,
            lock_path: dir.join(format!("{stem}.lock")),
            mark_path: dir.join(format!("{stem}.mark")),
            lock: None,
            grants: 0,
        }
    }

    fn io(&self, what: &str, path: &Path, e: &std::io::Error) -> LeaseError {
        LeaseError::unreachable(format!("{what} {}: {e}", path.display()))
    }

    /// The recorded mark, whether it was released, and the grants so far (no file: 0,
    /// released, 0).
    fn read_mark(&self) -> Result<(u64, bool, u64), LeaseError> {
        let text = match std::fs::read_to_string(&self.mark_path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((0, true, 0)),
            Err(e) => return Err(self.io("cannot read", &self.mark_path, &e)),
        };
        let mut mark = None;
        let mut released = false;
        let mut grants = 0;
        for line in text.lines() {
            match line.split_once('=') {
                Some(("mark_ms", v)) => mark = v.trim().parse().ok(),
                Some(("grants", v)) => grants = v.trim().parse().unwrap_or(0),
                Some(("released", v)) => released = v.trim() == "true",
                _ => {}
            }
        }
        let mark = mark.ok_or_else(|| {
            LeaseError::unreachable(format!(
                "{} is damaged (no mark_ms line): refusing to guess the high-water mark; \
                 remove it only if no id of this worker id was issued after its last change",
                self.mark_path.display()
            ))
        })?;
        Ok((mark, released, grants))
    }

    /// Replaces the mark file atomically and durably.
    fn write_mark(&self, mark_ms: u64, released: bool) -> Result<(), LeaseError> {
        let tmp = self.mark_path.with_extension("mark.tmp");
        let text = format!(
            "# idkit high-water mark of worker {}: ids of this worker id carry later times\n\
             mark_ms={mark_ms}\nreleased={released}\ngrants={}\n",
            self.worker, self.grants
        );
        let mut file = File::create(&tmp).map_err(|e| self.io("cannot write", &tmp, &e))?;
        file.write_all(text.as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(|e| self.io("cannot write", &tmp, &e))?;
        std::fs::rename(&tmp, &self.mark_path)
            .map_err(|e| self.io("cannot replace", &self.mark_path, &e))?;
        // The rename is durable once the directory is.
        if let Ok(dir) = File::open(&self.dir) {
            let _ = dir.sync_all();
        }
        Ok(())
    }
}

impl Backend for FileBackend {
    fn describe(&self) -> String {
        format!("static worker id with state in {}", self.dir.display())
    }

    fn acquire(&mut self, want: &Want, mark_ms: u64) -> Result<Grant, LeaseError> {
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| self.io("cannot create the state directory", &self.dir, &e))?;
        let mut lock = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&self.lock_path)
            .map_err(|e| self.io("cannot open", &self.lock_path, &e))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = lock.read_to_string(&mut holder);
                let holder = holder.trim();
                return Err(LeaseError::new(
                    LeaseErrorKind::Held,
                    format!(
                        "worker id {} of {} is held by {} (lock {}): two processes with one \
                         static worker id would issue the same ids; give this one another \
                         worker id, or lease one with --identity",
                        self.worker,
                        want.namespace,
                        if holder.is_empty() {
                            "another process"
                        } else {
                            holder
                        },
                        self.lock_path.display()
                    ),
                ));
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(self.io("cannot lock", &self.lock_path, &e));
            }
        }
        let (previous, released, grants) = self.read_mark()?;
        self.grants = grants + 1;
        self.write_mark(mark_ms.max(previous), false)?;
        let record = format!("{}\n", want.holder);
        lock.set_len(0)
            .and_then(|()| lock.seek(SeekFrom::Start(0)).map(drop))
            .and_then(|()| lock.write_all(record.as_bytes()))
            .map_err(|e| self.io("cannot write", &self.lock_path, &e))?;
        self.lock = Some(lock);
        Ok(Grant {
            worker: self.worker,
            token: self.grants,
            mark_ms: previous,
            released,
        })
    }

    fn renew(&mut self, mark_ms: u64) -> Result<(), LeaseError> {
        self.write_mark(mark_ms, false)
    }

    fn regrant(&mut self, mark_ms: u64) -> Result<u64, LeaseError> {
        self.write_mark(mark_ms, false).map(|()| self.grants)
    }

    fn release(&mut self, mark_ms: u64) -> Result<(), LeaseError> {
        let result = self.write_mark(mark_ms, true);
        if let Some(lock) = self.lock.take() {
            let _ = lock.set_len(0);
            drop(lock);
        }
        result
    }
}
