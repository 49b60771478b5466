//! The walks of mdtest's steps over one rank's items, generic over the operations.
//!
//! Orders follow `mdtest.c`: tree creation is pre-order (a directory, then its first child's
//! whole subtree, then the next child); tree removal post-order; item creation and removal
//! visit the tree pre-order and each directory's items in ascending number; stat, read and
//! rename go by item number (or a shuffled order with `-R`). Names are built in reused
//! buffers; a directory is opened once per visit (`O_PATH`) and every item operation is
//! relative to it.
//!
//! Nothing of fslab's inside a timed phase: the first directory a phase's walk visits is
//! opened before its clock starts ([`Walker::hold`]) and the last one it used is closed
//! after the clock stops ([`Walker::release`]). mdtest names every item by its whole path
//! instead; these opens and closes are fslab's own way of walking, not the phase's work.

use super::layout::{ItemKind, Layout, Roles, Shift, Tree};
use crate::workload::fsops::{CreateHow, NameBuf, Ops};
use crate::workload::Observer;
use std::io;
use std::ops::Range;
use std::time::{Duration, Instant};

/// Items between checks of the stop flag and progress reports.
pub const CHECK_EVERY: u64 = 1024;
/// Least time between two progress reports.
const REPORT_EVERY: Duration = Duration::from_millis(100);

pub use crate::workload::fsops::WalkError;

/// A walk's result: the value, or why the walk stopped.
pub type WalkResult<T> = Result<T, WalkError>;

/// Stop checks and progress reports, every [`CHECK_EVERY`] items.
pub struct Pace<'a> {
    pending: u64,
    done: u64,
    stop: &'a dyn Fn() -> bool,
    report: Option<&'a dyn Observer>,
    last: Instant,
}

impl<'a> Pace<'a> {
    /// Poll `stop`; tell `report` (rank 0's observer) the items done in the current step.
    pub fn new(stop: &'a dyn Fn() -> bool, report: Option<&'a dyn Observer>) -> Pace<'a> {
        Pace {
            pending: 0,
            done: 0,
            stop,
            report,
            last: Instant::now(),
        }
    }

    /// A new step: the count starts again.
    pub fn restart(&mut self) {
        self.pending = 0;
        self.done = 0;
    }

    #[inline]
    pub(super) fn tick(&mut self) -> WalkResult<()> {
        self.pending += 1;
        if self.pending >= CHECK_EVERY {
            self.done += self.pending;
            self.pending = 0;
            if (self.stop)() {
                return Err(WalkError::Stopped);
            }
            if let Some(obs) = self.report {
                if self.last.elapsed() >= REPORT_EVERY {
                    obs.progress(self.done);
                    self.last = Instant::now();
                }
            }
        }
        Ok(())
    }

    /// Report the final count of a step.
    pub fn finish(&mut self) {
        self.done += std::mem::take(&mut self.pending);
        if let Some(obs) = self.report {
            obs.progress(self.done);
        }
    }
}

/// What happens to each item of a pre-order walk.
#[derive(Debug, Clone, Copy)]
pub enum ItemOp {
    /// `mkdir` (directory creation).
    Mkdir,
    /// `rmdir` (directory removal).
    Rmdir,
    /// create, write, maybe fsync, close (file creation).
    Create(CreateHow),
    /// `unlink` (file removal).
    Unlink,
}

/// What happens to each item of a walk by number.
#[derive(Debug, Clone, Copy)]
pub enum Probe {
    /// `fstatat`.
    Stat,
    /// open, read this many bytes (all of them, or it is an error), close.
    Read(u64),
}

/// Whose items, of which kind, in which tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Items {
    /// The tree that holds them.
    pub tree: Tree,
    /// Directories or files.
    pub kind: ItemKind,
    /// The rank whose items they are (their names carry it).
    pub owner: u32,
}

impl Items {
    /// The items of `kind` a rank with `roles` handles in step `s` (`unique`: `-u`).
    pub fn of(roles: Roles, s: Shift, unique: bool, kind: ItemKind) -> Items {
        let owner = roles.owner(s);
        Items {
            tree: roles.tree_of(owner, unique),
            kind,
            owner,
        }
    }
}

/// How far a pre-order walk got.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Reach {
    /// Items done.
    pub done: u64,
    /// The stonewall ended the walk early.
    pub walled: bool,
}

struct State {
    tree: Tree,
    pos: u64,
    range: Range<u64>,
    op: ItemOp,
    wall: Option<Instant>,
    reach: Reach,
    mark: usize,
}

/// Walks one rank's steps with one set of operations.
pub struct Walker<'a, O: Ops> {
    /// The operations.
    pub ops: O,
    pub(super) lay: Layout,
    pub(super) a: NameBuf,
    pub(super) b: NameBuf,
    pub(super) c: NameBuf,
    pub(super) chain: Vec<u64>,
    /// Stop checks and progress.
    pub pace: Pace<'a>,
    /// Directories a descent is done with, closed before the walk's next operation (or
    /// after the clock, if there is none): a phase never ends on a close.
    spent: Vec<O::Dir>,
    /// A directory opened outside the timed window: the one a phase's walk starts in
    /// (opened before the clock), or the last one it used (closed after the clock).
    held: Option<(Tree, u64, O::Dir)>,
}

/// The path of `name` in directory `node` of `tree`, for messages.
pub(super) fn shown(lay: &Layout, tree: Tree, node: Option<u64>, name: &str) -> String {
    let mut b = NameBuf::new();
    if let Some(n) = node {
        tree.push_path(&mut b, lay, n, &mut Vec::new());
        if !name.is_empty() {
            b.push_str("/");
        }
    }
    b.push_str(name);
    b.as_str().to_string()
}

pub(super) fn io_err(op: &'static str, path: String, err: io::Error) -> WalkError {
    WalkError::Io { op, path, err }
}

impl<'a, O: Ops> Walker<'a, O> {
    /// A walker over trees of `lay`.
    pub fn new(ops: O, lay: Layout, pace: Pace<'a>) -> Walker<'a, O> {
        Walker {
            ops,
            lay,
            a: NameBuf::new(),
            b: NameBuf::new(),
            c: NameBuf::new(),
            chain: Vec::new(),
            pace,
            spent: Vec::new(),
            held: None,
        }
    }

    /// Close the directories descents are done with; called before every operation.
    #[inline]
    pub(super) fn settle(&mut self) {
        self.spent.clear();
    }

    /// Open directory `node` of `tree` (its path from `testdir`) now, before a phase's clock
    /// starts, for the walk that starts there. A failure is left to the walk, which opens the
    /// directory itself and reports it in its words.
    pub fn hold(&mut self, testdir: &O::Dir, tree: Tree, node: u64) {
        self.held = None;
        if let Ok(d) = self.take_dir(testdir, tree, node, true) {
            self.keep(tree, node, d);
        }
    }

    /// Close the held directory and any spent ones (after a phase's clock has stopped).
    pub fn release(&mut self) {
        self.held = None;
        self.spent.clear();
    }

    /// Directory `node` of `tree`: the held one if it is that, else opened in `parent` (one
    /// name, as the tree walks descend) or, with `from_testdir`, by its path from the test
    /// directory.
    pub(super) fn take_dir(
        &mut self,
        parent: &O::Dir,
        tree: Tree,
        node: u64,
        from_testdir: bool,
    ) -> WalkResult<O::Dir> {
        match self.held.take() {
            Some((t, n, d)) if t == tree && n == node => return Ok(d),
            other => self.held = other,
        }
        self.b.clear();
        if from_testdir {
            tree.push_path(&mut self.b, &self.lay, node, &mut self.chain);
        } else {
            tree.push_dir(&mut self.b, node);
        }
        self.ops
            .open_dir(parent, self.b.as_cstr())
            .map_err(|e| io_err("open", shown(&self.lay, tree, Some(node), ""), e))
    }

    /// Keep `dir` (directory `node` of `tree`) until [`Walker::release`], so that it is
    /// closed after the phase's clock has stopped.
    pub(super) fn keep(&mut self, tree: Tree, node: u64, dir: O::Dir) {
        self.held = Some((tree, node, dir));
    }

    /// Make the directories of `tree` in `testdir`, parents first, or with `remove` remove
    /// them, children first; returns how many.
    pub fn tree(&mut self, testdir: &O::Dir, tree: Tree, remove: bool) -> WalkResult<u64> {
        if !remove {
            self.tree_dir(testdir, tree, 0, false)?;
        }
        let mut done = 1;
        if self.lay.depth > 0 {
            let top = self.take_dir(testdir, tree, 0, false)?;
            let below = self.tree_below(&top, tree, 0, 0, remove);
            // Held until the clock stops; removing a directory that is open is allowed.
            self.keep(tree, 0, top);
            done += below?;
        }
        if remove {
            self.tree_dir(testdir, tree, 0, true)?;
        }
        Ok(done)
    }

    /// Directory `node` of `tree` in `parent`, for a descent.
    fn open(&mut self, parent: &O::Dir, tree: Tree, node: u64) -> WalkResult<O::Dir> {
        self.settle();
        self.take_dir(parent, tree, node, false)
    }

    /// Make or, with `remove`, remove the directory of `node` of `tree` in `dir`.
    fn tree_dir(&mut self, dir: &O::Dir, tree: Tree, node: u64, remove: bool) -> WalkResult<()> {
        self.b.clear();
        tree.push_dir(&mut self.b, node);
        let name = self.b.as_cstr();
        let (what, r) = match remove {
            false => ("mkdir", self.ops.mkdir(dir, name)),
            true => ("rmdir", self.ops.rmdir(dir, name)),
        };
        if let Err(e) = r {
            return Err(io_err(what, shown(&self.lay, tree, Some(node), ""), e));
        }
        self.pace.tick()
    }

    /// Make (pre-order) or, with `remove`, remove (post-order) the directories below `node`
    /// of `tree`, which is `dir`; returns how many.
    fn tree_below(
        &mut self,
        dir: &O::Dir,
        tree: Tree,
        node: u64,
        depth: u32,
        remove: bool,
    ) -> WalkResult<u64> {
        let mut done = 0;
        for c in self.lay.children(node, depth) {
            if !remove {
                self.settle();
                self.tree_dir(dir, tree, c, false)?;
                done += 1;
            }
            if depth + 1 < self.lay.depth {
                let d = self.open(dir, tree, c)?;
                let below = self.tree_below(&d, tree, c, depth + 1, remove);
                if !remove {
                    self.spent.push(d);
                }
                done += below?;
            }
            if remove {
                self.tree_dir(dir, tree, c, true)?;
                done += 1;
            }
        }
        Ok(done)
    }

    /// Do `op` on `owner`'s items in `tree`, in mdtest's creation order, for the items at
    /// positions `range` of that order; with `wall`, stop after the first item that ends
    /// past it (mdtest's stonewall).
    pub fn items_preorder(
        &mut self,
        testdir: &O::Dir,
        who: Items,
        op: ItemOp,
        range: Range<u64>,
        wall: Option<Instant>,
    ) -> WalkResult<Reach> {
        let tree = who.tree;
        self.a.clear();
        who.kind.push_prefix(&mut self.a, who.owner);
        let mut st = State {
            tree,
            pos: 0,
            range,
            op,
            wall,
            reach: Reach::default(),
            mark: self.a.len(),
        };
        if st.range.is_empty() {
            return Ok(st.reach);
        }
        let top = self.take_dir(testdir, tree, 0, false)?;
        let walked = self.visit(&top, 0, 0, &mut st);
        self.keep(tree, 0, top);
        walked.map(|()| st.reach)
    }

    fn visit(&mut self, dir: &O::Dir, node: u64, depth: u32, st: &mut State) -> WalkResult<()> {
        let per_dir = self.lay.items_per_dir;
        if self.lay.holds_items(depth) {
            if st.pos + per_dir <= st.range.start {
                st.pos += per_dir;
            } else {
                let first = node * per_dir;
                for i in 0..per_dir {
                    if st.pos >= st.range.end || st.reach.walled {
                        return Ok(());
                    }
                    if st.pos >= st.range.start {
                        self.item(dir, node, first + i, st)?;
                    }
                    st.pos += 1;
                }
            }
        }
        for c in self.lay.children(node, depth) {
            if st.pos >= st.range.end || st.reach.walled {
                break;
            }
            let d = self.open(dir, st.tree, c)?;
            let visited = self.visit(&d, c, depth + 1, st);
            self.spent.push(d);
            visited?;
        }
        Ok(())
    }

    /// One item of a pre-order walk, in `dir` (directory `node` of the walk's tree, where an
    /// error's path starts).
    #[inline]
    fn item(&mut self, dir: &O::Dir, node: u64, num: u64, st: &mut State) -> WalkResult<()> {
        self.settle();
        self.a.truncate(st.mark);
        self.a.push_u64(num);
        let name = self.a.as_cstr();
        // The call, and its name for an error.
        let (what, r) = match st.op {
            ItemOp::Mkdir => ("mkdir", self.ops.mkdir(dir, name)),
            ItemOp::Rmdir => ("rmdir", self.ops.rmdir(dir, name)),
            ItemOp::Create(how) => ("create", self.ops.create(dir, name, how)),
            ItemOp::Unlink => ("unlink", self.ops.unlink(dir, name)),
        };
        if let Err(e) = r {
            let path = shown(&self.lay, st.tree, Some(node), self.a.as_str());
            return Err(io_err(what, path, e));
        }
        st.reach.done += 1;
        self.pace.tick()?;
        if st.wall.is_some_and(|w| Instant::now() > w) {
            st.reach.walled = true;
        }
        Ok(())
    }
}
