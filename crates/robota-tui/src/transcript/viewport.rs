//! The transcript's geometry: cell heights for the current width with a prefix sum of
//! their starts (row → cell by binary search; a changed cell only re-sums the cells after
//! it), and the scroll state — top row, follow mode, the "new output below" flag.

/// Heights of all cells at one width and where each starts.
#[derive(Debug, Default)]
pub(crate) struct HeightIndex {
    width: u16,
    heights: Vec<usize>,
    starts: Vec<usize>,
    /// Cells from here on need their heights measured again.
    dirty_from: usize,
}

impl HeightIndex {
    pub(crate) fn width(&self) -> u16 {
        self.width
    }

    /// Cell `index` (and so every start after it) changed.
    pub(crate) fn touch(&mut self, index: usize) {
        self.dirty_from = self.dirty_from.min(index);
    }

    /// Measures changed cells (all of them when the width changed).
    pub(crate) fn update(
        &mut self,
        width: u16,
        cells: usize,
        mut height_of: impl FnMut(usize) -> usize,
    ) {
        if width != self.width {
            self.width = width;
            self.dirty_from = 0;
        }
        let from = self.dirty_from.min(cells);
        if from == cells && self.heights.len() == cells {
            return;
        }
        self.heights.truncate(from);
        self.starts.truncate(from);
        for i in from..cells {
            let start = match i {
                0 => 0,
                _ => self.starts[i - 1] + self.heights[i - 1],
            };
            self.starts.push(start);
            self.heights.push(height_of(i));
        }
        self.dirty_from = cells;
    }

    pub(crate) fn total(&self) -> usize {
        match (self.starts.last(), self.heights.last()) {
            (Some(s), Some(h)) => s + h,
            _ => 0,
        }
    }

    /// The cell holding `row` and the row's offset in it; `None` past the end.
    pub(crate) fn locate(&self, row: usize) -> Option<(usize, usize)> {
        if row >= self.total() {
            return None;
        }
        let cell = self.starts.partition_point(|&s| s <= row).checked_sub(1)?;
        Some((cell, row - self.starts[cell]))
    }

    /// The row at `offset` within `cell` (clamped to the cell).
    pub(crate) fn position(&self, cell: usize, offset: usize) -> usize {
        match (self.starts.get(cell), self.heights.get(cell)) {
            (Some(s), Some(h)) => s + offset.min(h.saturating_sub(1)),
            _ => self.total(),
        }
    }
}

/// Where the view is.
#[derive(Debug)]
pub(crate) struct Scroll {
    pub top: usize,
    /// Stick to the end as output arrives.
    pub follow: bool,
    /// Output grew below the view while not following.
    pub new_below: bool,
    pub viewport_width: u16,
    pub viewport_height: usize,
    /// The total at the last frame that measured it (`None` after following frames).
    last_total: Option<usize>,
}

impl Default for Scroll {
    fn default() -> Self {
        Scroll {
            top: 0,
            follow: true,
            new_below: false,
            viewport_width: 0,
            viewport_height: 0,
            last_total: None,
        }
    }
}

impl Scroll {
    /// Fixes the top row for a frame of `height` rows over `total`.
    pub(crate) fn settle(&mut self, total: usize, width: u16, height: usize) {
        let max_top = total.saturating_sub(height);
        if self.follow {
            self.top = max_top;
            self.new_below = false;
        } else {
            self.top = self.top.min(max_top);
            let same_width = width == self.viewport_width;
            let grew = self.last_total.is_some_and(|last| total > last);
            if same_width && grew && self.top < max_top {
                self.new_below = true;
            }
        }
        self.last_total = Some(total);
        self.viewport_width = width;
        self.viewport_height = height;
    }

    /// A frame drawn following the end (without measuring the total).
    pub(crate) fn followed(&mut self, width: u16, height: usize) {
        self.new_below = false;
        self.last_total = None;
        self.viewport_width = width;
        self.viewport_height = height;
    }

    /// Rows came in above the view, which moved down to `top` with its content: the
    /// total grew, but not below.
    pub(crate) fn keep_view(&mut self, top: usize, total: usize) {
        self.top = top;
        if self.last_total.is_some() {
            self.last_total = Some(total);
        }
    }

    /// Rows a page key moves.
    pub(crate) fn page(&self) -> usize {
        self.viewport_height.saturating_sub(2).max(1)
    }

    pub(crate) fn up(&mut self, lines: usize, total: usize) {
        let max_top = total.saturating_sub(self.viewport_height);
        let top = if self.follow {
            max_top
        } else {
            self.top.min(max_top)
        };
        self.top = top.saturating_sub(lines);
        if self.top < max_top {
            self.follow = false;
        }
    }

    pub(crate) fn down(&mut self, lines: usize, total: usize) {
        if self.follow {
            return;
        }
        let max_top = total.saturating_sub(self.viewport_height);
        self.top = self.top.saturating_add(lines);
        if self.top >= max_top {
            self.scroll_to_bottom();
        }
    }

    pub(crate) fn scroll_to_top(&mut self, total: usize) {
        if total > self.viewport_height {
            self.top = 0;
            self.follow = false;
        }
    }

    pub(crate) fn scroll_to_bottom(&mut self) {
        self.follow = true;
        self.new_below = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_sums_locate_rows_and_update_from_the_changed_cell() {
        let mut index = HeightIndex::default();
        let mut heights = [3, 1, 4];
        index.update(80, 3, |i| heights[i]);
        assert_eq!(index.total(), 8);
        assert_eq!(index.locate(0), Some((0, 0)));
        assert_eq!(index.locate(3), Some((1, 0)));
        assert_eq!(index.locate(7), Some((2, 3)));
        assert_eq!(index.locate(8), None);
        heights[1] = 5;
        let mut measured = Vec::new();
        index.touch(1);
        index.update(80, 3, |i| {
            measured.push(i);
            heights[i]
        });
        assert_eq!(measured, [1, 2]);
        assert_eq!(index.total(), 12);
        assert_eq!(index.position(2, 100), 11);
    }

    #[test]
    fn follow_until_scrolled_up_then_flag_new_output() {
        let mut s = Scroll::default();
        s.settle(100, 80, 10);
        assert_eq!(s.top, 90);
        s.up(5, 100);
        assert!(!s.follow);
        assert_eq!(s.top, 85);
        s.settle(120, 80, 10);
        assert_eq!(s.top, 85);
        assert!(s.new_below);
        s.down(100, 120);
        assert!(s.follow);
        assert!(!s.new_below);
        s.settle(130, 80, 10);
        assert_eq!(s.top, 120);
    }
}
