//! ext4's hashed directory index (htree: fs/ext4/namei.c make_indexed_dir, dx_probe,
//! do_split, ext4_dx_add_entry): which directory blocks a name lookup reads.
//!
//! # What the kernel does
//!
//! A directory is a file of 4 KiB blocks of variable-length entries (EXT4_DIR_REC_LEN: 8
//! bytes and the name, rounded up to 4; with metadata_csum a 12-byte tail ends each leaf).
//! A directory of one block is searched linearly. When its block fills, make_indexed_dir
//! turns block 0 into the dx root, moves the entries into a new block and splits them in
//! two by the hash of their names (half_md4 with the filesystem's seed): from then on the
//! root maps hash ranges to leaf blocks, and a leaf that fills is split (do_split) — the
//! entries of the upper hashes, about half its bytes, move to a new block appended to the
//! directory (ext4_append), which gets its own root entry. When the root's entries
//! (dx_root_limit, 507 with metadata_csum) are full, the tree grows a level: the root's
//! entries move into an index block and each index block full at dx_node_limit (510)
//! splits in two. Leaves split at random hashes are half to wholly full; on the project's
//! VM (Linux 6.18.44, ext4) 150,000 names `o0`…`o149999` created in order make a
//! directory of 894 blocks, 66 % of the 255 entries a leaf holds.
//!
//! A lookup that misses the dentry cache (ext4_lookup → ext4_find_entry →
//! ext4_dx_find_entry) reads the root, the index block of the name's hash when the tree
//! has two levels, and the leaf (dx_probe, ext4_read_dirblock: the block device's buffer
//! cache, no readahead); so does the negative lookup before a create.
//!
//! # What we model
//!
//! - [`Htree`]: each directory's leaves as the sorted hashes and sizes of their entries,
//!   split as the kernel splits them, and its index blocks, numbered as they are appended.
//!   The hash is a fixed 32-bit hash of the name (not half_md4 with a random seed: the same
//!   uniform spread), its low bit cleared as ext4's.
//! - The blocks of an indexed directory live in its filesystem's hidden metadata file (the
//!   inode table's: the block device's page cache), each directory at its own offset
//!   (`mm::slab`, `Sim::dx_read_blocks`); a lookup reads them as the inode table's blocks are
//!   read (created accessed, charged to the reader's memcg, GFP_NOFS). The directories the
//!   scenario's files (and a replay's object files) fill are on disk when the run begins;
//!   blocks a directory gains during the run were created in memory and are not read (nor
//!   reclaimed). The same 150,000 names make a directory of 918 blocks here (894 on the
//!   VM).
//! - Not modelled: a directory of one block (its block is taken as cached with the
//!   directory's inode, which mmsim keeps in core), the writes of a create or unlink (the
//!   leaf is dirtied and journaled), leaf merges (ext4 has none), htree depth 3
//!   (largedir), and directories' own dentries and inodes.

/// Bytes of a directory block.
const BLOCK: u64 = 4096;
/// Room for entries in a leaf: the block less ext4_dir_entry_tail (metadata_csum).
const LEAF_ROOM: u64 = BLOCK - 12;
/// Room in a linear directory's block 0: also `.` and `..` (12 bytes each).
const LINEAR_ROOM: u64 = LEAF_ROOM - 24;
/// dx_root_limit with metadata_csum: (4096 − 32 − sizeof(dx_tail)) / 8.
const ROOT_LIMIT: usize = (4096 - 32 - 8) / 8;
/// dx_node_limit with metadata_csum: (4096 − 8 − sizeof(dx_tail)) / 8.
const NODE_LIMIT: usize = (4096 - 8 - 8) / 8;

/// EXT4_DIR_REC_LEN: the bytes an entry named `name` takes.
pub fn rec_len(name: &str) -> u16 {
    ((name.len() as u64 + 8 + 3) & !3) as u16
}

/// The name's hash (a stand-in for half_md4: 32 bits, the low one clear as in
/// ext4fs_dirhash).
pub fn dx_hash(name: &str) -> u32 {
    // FNV-1a over the bytes, then a 64-bit finalizer for a uniform spread.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    (h >> 32) as u32 & !1
}

/// One leaf block: its entries as (hash, bytes), sorted by hash.
#[derive(Clone, Debug, Default)]
struct Leaf {
    /// The lowest hash the leaf covers (its dx_entry's hash; 0 for the first).
    start: u32,
    /// Block number in the directory.
    block: u32,
    entries: Vec<(u32, u16)>,
    bytes: u64,
}

/// A directory's hashed index: its leaves in hash order and, with two levels, its index
/// blocks (each the number of consecutive leaves it maps and its block).
#[derive(Clone, Debug, Default)]
pub struct Htree {
    leaves: Vec<Leaf>,
    index: Vec<(u32, u32)>,
    indexed: bool,
    /// Blocks the directory has.
    nr_blocks: u32,
    /// Blocks it had on disk when the run began: blocks appended later were created in
    /// the buffer cache (ext4_append) and are not read.
    disk_blocks: u32,
}

/// The blocks a lookup reads: the root, the index block when the tree has two levels, and
/// the leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DxPath {
    /// The index block of the hash (two levels).
    pub index: Option<u32>,
    /// The leaf block.
    pub leaf: u32,
}

impl Htree {
    /// Blocks of the directory (1 while linear).
    pub fn nr_blocks(&self) -> u32 {
        self.nr_blocks.max(1)
    }

    /// The run begins: the blocks of a directory indexed so far are on disk (a linear
    /// directory's one block is taken as cached with its inode, and stays so when it
    /// becomes the root of an index).
    pub fn mark_on_disk(&mut self) {
        self.disk_blocks = if self.indexed { self.nr_blocks } else { 0 };
    }

    /// Was `block` on disk when the run began (else it was created in memory)?
    pub fn on_disk(&self, block: u32) -> bool {
        block < self.disk_blocks
    }

    /// Has the directory an index (more than one block)?
    pub fn is_indexed(&self) -> bool {
        self.indexed
    }

    /// The leaf covering `hash`.
    fn leaf_of(&self, hash: u32) -> usize {
        self.leaves
            .partition_point(|l| l.start <= hash)
            .saturating_sub(1)
    }

    /// dx_probe of `name`: the blocks its lookup reads (None while the directory is linear).
    pub fn probe(&self, name: &str) -> Option<DxPath> {
        if !self.indexed {
            return None;
        }
        let pos = self.leaf_of(dx_hash(name));
        let index = (!self.index.is_empty()).then(|| {
            let mut first = 0usize;
            for &(n, block) in &self.index {
                if pos < first + n as usize {
                    return block;
                }
                first += n as usize;
            }
            self.index.last().expect("index blocks").1
        });
        Some(DxPath {
            index,
            leaf: self.leaves[pos].block,
        })
    }

    /// A new block at the directory's end (ext4_append).
    fn append(&mut self) -> u32 {
        let b = self.nr_blocks;
        self.nr_blocks += 1;
        b
    }

    /// Add an entry named `name` (ext4_add_entry).
    pub fn insert(&mut self, name: &str) {
        let e = (dx_hash(name), rec_len(name));
        if self.leaves.is_empty() {
            self.nr_blocks = 1;
            self.leaves.push(Leaf::default());
        }
        if !self.indexed {
            if self.leaves[0].bytes + u64::from(e.1) <= LINEAR_ROOM {
                push_sorted(&mut self.leaves[0], e);
                return;
            }
            // make_indexed_dir: block 0 becomes the root, its entries go to block 1,
            // which splits into a second leaf.
            self.indexed = true;
            self.leaves[0].block = self.append();
            self.split(0);
        }
        let mut pos = self.leaf_of(e.0);
        if self.leaves[pos].bytes + u64::from(e.1) > LEAF_ROOM {
            self.split(pos);
            pos = self.leaf_of(e.0);
        }
        push_sorted(&mut self.leaves[pos], e);
    }

    /// do_split of leaf `pos`: entries of the upper hashes, about half its bytes, move to a
    /// new block covering hashes from the first moved one (entries of that hash stay
    /// together); its dx_entry goes after the leaf's, in its index block.
    fn split(&mut self, pos: usize) {
        let leaf = &self.leaves[pos];
        let mut moved_bytes = 0u64;
        let mut cut = leaf.entries.len();
        for i in (0..leaf.entries.len()).rev() {
            let sz = u64::from(leaf.entries[i].1);
            if moved_bytes + sz / 2 > BLOCK / 2 {
                break;
            }
            moved_bytes += sz;
            cut = i;
        }
        // Keep equal hashes on one side; leave at least one entry behind.
        while cut > 1 && cut < leaf.entries.len() && leaf.entries[cut - 1].0 == leaf.entries[cut].0
        {
            cut -= 1;
        }
        let cut = cut.max(1).min(leaf.entries.len());
        let upper: Vec<(u32, u16)> = self.leaves[pos].entries.split_off(cut);
        let up_bytes: u64 = upper.iter().map(|e| u64::from(e.1)).sum();
        self.leaves[pos].bytes -= up_bytes;
        let start = upper.first().map_or(self.leaves[pos].start, |e| e.0);
        let block = self.append();
        self.leaves.insert(
            pos + 1,
            Leaf {
                start,
                block,
                entries: upper,
                bytes: up_bytes,
            },
        );
        self.add_dx_entry(pos);
    }

    /// A new leaf after the one at `pos`: one more entry in the root or in `pos`'s index
    /// block, which grows the tree a level or splits when full.
    fn add_dx_entry(&mut self, pos: usize) {
        if self.index.is_empty() {
            if self.leaves.len() <= ROOT_LIMIT {
                return;
            }
            // The root's entries move into a new index block, which splits at once.
            let b = self.append();
            self.index.push((self.leaves.len() as u32, b));
            self.split_index(0);
            return;
        }
        let mut first = 0usize;
        let mut k = self.index.len() - 1;
        for (i, &(n, _)) in self.index.iter().enumerate() {
            if pos < first + n as usize {
                k = i;
                break;
            }
            first += n as usize;
        }
        self.index[k].0 += 1;
        if self.index[k].0 as usize > NODE_LIMIT {
            self.split_index(k);
        }
    }

    /// An index block split in two: its upper half of entries into a new block.
    fn split_index(&mut self, k: usize) {
        let n = self.index[k].0;
        let b = self.append();
        self.index[k].0 = n / 2;
        self.index.insert(k + 1, (n - n / 2, b));
    }

    /// Remove an entry named `name` (ext4_delete_entry: no merge).
    pub fn remove(&mut self, name: &str) {
        if self.leaves.is_empty() {
            return;
        }
        let e = (dx_hash(name), rec_len(name));
        let pos = if self.indexed { self.leaf_of(e.0) } else { 0 };
        let leaf = &mut self.leaves[pos];
        if let Ok(i) = leaf.entries.binary_search(&e) {
            leaf.entries.remove(i);
            leaf.bytes -= u64::from(e.1);
        }
    }

    /// Entries in the leaves (a check of the index against the directory).
    pub fn nr_entries(&self) -> usize {
        self.leaves.iter().map(|l| l.entries.len()).sum()
    }

    /// Invariants: leaves sorted by start and covering their entries' hashes, none above
    /// its room, the index blocks mapping every leaf, the blocks numbered once.
    pub fn check(&self) -> Result<(), String> {
        let mut blocks = vec![false; self.nr_blocks() as usize];
        if self.indexed {
            blocks[0] = true; // the root
        }
        for (i, l) in self.leaves.iter().enumerate() {
            let room = if self.indexed { LEAF_ROOM } else { LINEAR_ROOM };
            let bytes: u64 = l.entries.iter().map(|e| u64::from(e.1)).sum();
            if bytes != l.bytes || bytes > room {
                return Err(format!("leaf {i}: {bytes} bytes, counted {}", l.bytes));
            }
            if !l.entries.windows(2).all(|w| w[0] <= w[1]) {
                return Err(format!("leaf {i}: entries out of hash order"));
            }
            let end = self.leaves.get(i + 1).map(|n| n.start);
            if l.entries.iter().any(|e| e.0 < l.start && i > 0)
                || end.is_some_and(|end| l.entries.iter().any(|e| e.0 >= end))
                || end.is_some_and(|end| end < l.start)
            {
                return Err(format!("leaf {i}: an entry outside its hash range"));
            }
            let b = l.block as usize;
            if b >= blocks.len() || std::mem::replace(&mut blocks[b], true) {
                return Err(format!("leaf {i}: block {b} taken twice or beyond the end"));
            }
        }
        let mapped: u32 = self.index.iter().map(|&(n, _)| n).sum();
        if !self.index.is_empty() && mapped as usize != self.leaves.len() {
            return Err(format!(
                "index blocks map {mapped} leaves of {}",
                self.leaves.len()
            ));
        }
        if self.index.len() > ROOT_LIMIT || self.index.iter().any(|&(n, _)| n as usize > NODE_LIMIT)
        {
            return Err("an index block above its limit".into());
        }
        if self.index.is_empty() && self.leaves.len() > ROOT_LIMIT {
            return Err("the root above its limit".into());
        }
        for &(_, b) in &self.index {
            let b = b as usize;
            if b >= blocks.len() || std::mem::replace(&mut blocks[b], true) {
                return Err(format!("index block {b} taken twice or beyond the end"));
            }
        }
        if blocks.iter().any(|&b| !b) && self.indexed {
            return Err("a block of the directory belongs to nothing".into());
        }
        Ok(())
    }
}

/// Insert `e` into `leaf` in hash order.
fn push_sorted(leaf: &mut Leaf, e: (u32, u16)) {
    let i = leaf.entries.partition_point(|x| *x <= e);
    leaf.entries.insert(i, e);
    leaf.bytes += u64::from(e.1);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Over random creates and unlinks of names of any length (up to 60 bytes), the
        /// index stays well formed (leaves within their room and hash ranges, blocks
        /// numbered once, index blocks within their limits), holds exactly the directory's
        /// names, and finds each one in the leaf that holds its hash; it never shrinks.
        #[test]
        fn the_index_holds_exactly_the_names_and_finds_each(
            ops in proptest::collection::vec((any::<bool>(), 0u32..3000, 0usize..50), 1..2500)
        ) {
            let mut t = Htree::default();
            let mut names = std::collections::BTreeSet::new();
            let mut blocks = 0;
            for (create, id, pad) in ops {
                let name = format!("{id}{}", "x".repeat(pad));
                if create {
                    if names.insert(name.clone()) {
                        t.insert(&name);
                    }
                } else if names.remove(&name) {
                    t.remove(&name);
                }
                prop_assert!(t.nr_blocks() >= blocks);
                blocks = t.nr_blocks();
            }
            t.check().map_err(TestCaseError::fail)?;
            prop_assert_eq!(t.nr_entries(), names.len());
            for n in &names {
                match t.probe(n) {
                    None => prop_assert!(!t.is_indexed()),
                    Some(p) => {
                        let l = t.leaves.iter().find(|l| l.block == p.leaf).expect("a leaf");
                        prop_assert!(l.entries.contains(&(dx_hash(n), rec_len(n))));
                    }
                }
            }
        }
    }

    #[test]
    fn a_directory_is_linear_until_its_block_fills_then_splits_by_hash() {
        let mut t = Htree::default();
        // "o0".."o9": 12 bytes each; block 0 holds (4084 − 24) / 12 = 338 of them.
        let names: Vec<String> = (0..10_000).map(|i| format!("o{i}")).collect();
        let mut first_indexed = None;
        for (i, n) in names.iter().enumerate() {
            t.insert(n);
            if t.is_indexed() && first_indexed.is_none() {
                first_indexed = Some(i);
            }
            t.check().unwrap();
        }
        // o0..o9 12 bytes, o10..o99 12, o100..o999 12 (8 + 4): 338 fit the linear block.
        assert_eq!(first_indexed, Some(338));
        assert_eq!(t.nr_entries(), 10_000);
        let p = t.probe("o1234").expect("indexed");
        assert_eq!(p.index, None, "one level for {} blocks", t.nr_blocks());
        // Leaves are half to wholly full: 16-byte entries (o1000..o9999), 255 a leaf.
        let leaves = t.nr_blocks() as f64 - 1.0;
        let fill = 10_000.0 / (leaves * 255.0);
        assert!((0.5..=1.0).contains(&fill), "fill {fill}");
        for n in &names {
            t.remove(n);
        }
        assert_eq!(t.nr_entries(), 0);
        assert!(t.is_indexed(), "ext4 never shrinks a directory");
    }

    #[test]
    fn a_large_directory_grows_a_second_level_of_index_blocks() {
        let mut t = Htree::default();
        for i in 0..150_000u32 {
            t.insert(&format!("o{i}"));
        }
        t.check().unwrap();
        // The VM's ext4 made a directory of 894 blocks of these names (module doc).
        let blocks = t.nr_blocks();
        assert!((850..=940).contains(&blocks), "{blocks} blocks");
        let p = t.probe("o77").expect("indexed");
        assert!(p.index.is_some(), "{} blocks", t.nr_blocks());
        // Each leaf is found by its own entries' hashes.
        for i in (0..150_000u32).step_by(997) {
            let n = format!("o{i}");
            let leaf = t.probe(&n).unwrap().leaf;
            let l = t.leaves.iter().find(|l| l.block == leaf).unwrap();
            assert!(l.entries.contains(&(dx_hash(&n), rec_len(&n))));
        }
    }
}
