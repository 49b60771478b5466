//! The walks by item number: stat and read (mdtest's `mdtest_stat`, `mdtest_read`, in number
//! order or `-R`'s shuffled order) and the directory rename (`rename_dir_test`).

use super::layout::ItemKind;
use super::walk::{io_err, shown, Items, Probe, WalkResult, Walker};
use crate::workload::fsops::{NameBuf, Ops};
use std::io;

impl<O: Ops> Walker<'_, O> {
    /// The directory a [`Walker::probe`] over `count` items in `order` starts in, for
    /// [`Walker::hold`]; none when it names items by path from the test directory.
    pub fn probe_start(&self, count: u64, order: Option<&[u64]>) -> Option<u64> {
        if count == 0 || (order.is_some() && self.lay.item_dirs() > 1) {
            return None;
        }
        let first = order.map_or(Some(0), |o| o.first().copied())?;
        Some(self.lay.dir_of(self.lay.first_item() + first))
    }

    /// The directory [`Walker::rename_dirs`] works in, for [`Walker::hold`]; none when its
    /// items are in several directories (it then names them by path).
    pub fn rename_start(&self) -> Option<u64> {
        (self.lay.item_dirs() == 1).then(|| self.lay.dir_of(self.lay.first_item()))
    }

    /// Stat or read the first `count` of `owner`'s items in `tree` by number, or in
    /// `order` (indices below `count`, mdtest's `-R`). Returns the items done.
    pub fn probe(
        &mut self,
        testdir: &O::Dir,
        who: Items,
        count: u64,
        order: Option<&[u64]>,
        probe: Probe,
    ) -> WalkResult<u64> {
        let tree = who.tree;
        self.a.clear();
        who.kind.push_prefix(&mut self.a, who.owner);
        let mark = self.a.len();
        // Shuffled items over many directories: one call with the path from the test
        // directory (as mdtest does) instead of an open per item.
        let by_path = order.is_some() && self.lay.item_dirs() > 1;
        let first = self.lay.first_item();
        let total = order.map_or(count, |o| o.len() as u64);
        let mut cur: Option<(u64, O::Dir)> = None;
        for i in 0..total {
            let num = first + order.map_or(i, |o| o[i as usize]);
            let node = self.lay.dir_of(num);
            self.a.truncate(mark);
            self.a.push_u64(num);
            let r = if by_path {
                self.b.clear();
                tree.push_path(&mut self.b, &self.lay, node, &mut self.chain);
                self.b.push_str("/");
                self.b.push_name(&self.a);
                do_probe(&mut self.ops, testdir, &self.b, probe)
            } else {
                if cur.as_ref().map(|c| c.0) != Some(node) {
                    // The previous directory is closed as the walk moves on, not the last.
                    drop(cur.take());
                    cur = Some((node, self.take_dir(testdir, tree, node, true)?));
                }
                match &cur {
                    Some((_, d)) => do_probe(&mut self.ops, d, &self.a, probe),
                    None => Ok(()),
                }
            };
            if let Err(e) = r {
                let op = match probe {
                    Probe::Stat => "stat",
                    Probe::Read(_) => "read",
                };
                let path = shown(&self.lay, tree, Some(node), self.a.as_str());
                return Err(io_err(op, path, e));
            }
            self.pace.tick()?;
        }
        if let Some((node, d)) = cur {
            self.keep(tree, node, d);
        }
        Ok(total)
    }

    /// mdtest's directory rename over `who`'s first `count` items: item 0 to `<name>-XX`,
    /// each next item to its predecessor's name, the `-XX` entry to the name before the
    /// last. `count` renames; the set of names is the same afterwards. Returns the renames.
    pub fn rename_dirs(&mut self, testdir: &O::Dir, who: Items, count: u64) -> WalkResult<u64> {
        if count < 2 {
            return Ok(0);
        }
        let first = self.lay.first_item();
        // Items in one directory: names relative to it; else paths from the test directory.
        let single = self.lay.item_dirs() == 1;
        let node = self.lay.dir_of(first);
        let here = single
            .then(|| self.take_dir(testdir, who.tree, node, true))
            .transpose()?;
        let renamed = self.rename_in(here.as_ref().unwrap_or(testdir), who, count, single);
        if let Some(d) = here {
            self.keep(who.tree, node, d);
        }
        renamed
    }

    fn rename_in(&mut self, dir: &O::Dir, who: Items, count: u64, single: bool) -> WalkResult<u64> {
        let first = self.lay.first_item();
        // c: item 0's name with -XX; b: the previous item's name; a: this item's name.
        self.name_for(who, first, !single);
        self.a.push_str("-XX");
        self.c.clone_from(&self.a);
        self.b.clone_from(&self.c);
        for i in 0..count {
            if i == count - 1 {
                self.a.clone_from(&self.c);
            } else {
                self.name_for(who, first + i, !single);
            }
            if let Err(e) = self
                .ops
                .rename(dir, self.a.as_cstr(), dir, self.b.as_cstr())
            {
                let node = single.then(|| self.lay.dir_of(first));
                let path = shown(&self.lay, who.tree, node, self.a.as_str());
                return Err(io_err("rename", path, e));
            }
            self.pace.tick()?;
            std::mem::swap(&mut self.a, &mut self.b);
        }
        Ok(count)
    }

    /// The name (`with_path`: the path from the test directory) of `who`'s directory item
    /// `num`, into `a`.
    fn name_for(&mut self, who: Items, num: u64, with_path: bool) {
        let buf = &mut self.a;
        buf.clear();
        if with_path {
            who.tree
                .push_path(buf, &self.lay, self.lay.dir_of(num), &mut self.chain);
            buf.push_str("/");
        }
        ItemKind::Dir.push_prefix(buf, who.owner);
        buf.push_u64(num);
    }
}

#[inline]
fn do_probe<O: Ops>(ops: &mut O, dir: &O::Dir, name: &NameBuf, probe: Probe) -> io::Result<()> {
    match probe {
        Probe::Stat => ops.stat(dir, name.as_cstr()).map(|_| ()),
        Probe::Read(bytes) => {
            let got = ops.read_file(dir, name.as_cstr(), bytes)?;
            if got < bytes {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("read {got} of {bytes} bytes (the file is shorter than -e)"),
                ));
            }
            Ok(())
        }
    }
}
