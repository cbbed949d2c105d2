//! Fuzzy search over a [`FileIndex`] for `@` completion, fast enough per keystroke on
//! 100k paths: a query that extends the previous one searches only its matches; large
//! candidate sets are scored on several threads, greedily (then the shortlist exactly);
//! only the best few are selected and sorted, never the whole set.

use nucleo_matcher::pattern::Pattern;
use nucleo_matcher::{Matcher, Utf32Str};

use super::file_index::FileIndex;
use super::items::{matcher_for, pattern};

/// A path offered for `@` completion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMatch {
    /// Relative to the project root; directories end with `/`.
    pub path: String,
    pub(crate) is_dir: bool,
    /// Grapheme-cluster indices of `path` that matched the query (for highlighting).
    pub matched: Vec<u32>,
}

/// Candidates from which a query is scored on several threads at once.
const PARALLEL_FROM: usize = 16_384;

/// The fuzzy query state: matchers (one per worker thread) and the previous query's
/// matches, so typing one more character searches only what still can match.
pub struct FileSearch {
    matchers: Vec<Matcher>,
    /// (index generation, query, entry indices that matched it, in index order).
    narrowed: Option<(u64, String, Vec<u32>)>,
}

impl Default for FileSearch {
    fn default() -> Self {
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
        FileSearch {
            matchers: (0..workers).map(|_| matcher_for(true)).collect(),
            narrowed: None,
        }
    }
}

impl std::fmt::Debug for FileSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileSearch").finish_non_exhaustive()
    }
}

/// Candidates above which matches are scored greedily (fzf's "v1"): the same paths
/// match, each found in one pass, at a fraction of the optimal alignment's cost when a
/// short query matches nearly everything. The best of them are re-scored optimally.
const GREEDY_FROM: usize = 20_000;

/// (score, entry index) of the candidates that match, in candidate order.
fn score_all(
    index: &FileIndex,
    pattern: &Pattern,
    matcher: &mut Matcher,
    candidates: &[u32],
    greedy: bool,
) -> Vec<(u32, u32)> {
    let haystack = |i: u32| index.entries[i as usize].path.slice(..);
    match pattern.atoms.as_slice() {
        [atom] if greedy => {
            // Scoring once puts the atom's case and normalisation rules on the matcher.
            let _ = atom.score(Utf32Str::Ascii(b""), matcher);
            candidates
                .iter()
                .filter_map(|&i| {
                    let score = matcher.fuzzy_match_greedy(haystack(i), atom.needle_text())?;
                    Some((u32::from(score), i))
                })
                .collect()
        }
        _ => candidates
            .iter()
            .filter_map(|&i| pattern.score(haystack(i), matcher).map(|score| (score, i)))
            .collect(),
    }
}

impl FileSearch {
    /// The best `limit` paths for `query`: by match score, then shorter paths, then in
    /// index order. An empty query lists the shallowest paths.
    pub fn search(&mut self, index: &FileIndex, query: &str, limit: usize) -> Vec<FileMatch> {
        if query.is_empty() {
            self.narrowed = None;
            return (0..index.entries.len().min(limit))
                .map(|i| Self::to_match(index, i, Vec::new()))
                .collect();
        }
        let pattern = pattern(query);
        let candidates: Vec<u32> = match self.narrowed.take() {
            Some((generation, previous, hits))
                if generation == index.generation && query.starts_with(previous.as_str()) =>
            {
                hits
            }
            _ => (0..u32::try_from(index.entries.len()).unwrap_or(u32::MAX)).collect(),
        };
        let greedy = candidates.len() >= GREEDY_FROM;
        let mut scored: Vec<(u32, u32)> = Vec::new();
        if candidates.len() >= PARALLEL_FROM && self.matchers.len() > 1 {
            let chunk = candidates.len().div_ceil(self.matchers.len());
            let pattern = &pattern;
            std::thread::scope(|scope| {
                let workers: Vec<_> = candidates
                    .chunks(chunk)
                    .zip(self.matchers.iter_mut())
                    .map(|(part, matcher)| {
                        scope.spawn(move || score_all(index, pattern, matcher, part, greedy))
                    })
                    .collect();
                for worker in workers {
                    scored.extend(worker.join().unwrap_or_default());
                }
            });
        } else if let Some(matcher) = self.matchers.first_mut() {
            scored = score_all(index, &pattern, matcher, &candidates, greedy);
        }
        let hits: Vec<u32> = scored.iter().map(|&(_, i)| i).collect();
        let key = |&(score, i): &(u32, u32)| {
            (
                std::cmp::Reverse(score),
                index.entries[i as usize].path.len(),
                i,
            )
        };
        // Greedy scores only shortlist: the best few times `limit` are re-scored.
        let keep = if greedy {
            limit.saturating_mul(4)
        } else {
            limit
        };
        if scored.len() > keep && keep > 0 {
            scored.select_nth_unstable_by_key(keep - 1, key);
        }
        scored.truncate(keep);
        let Some(matcher) = self.matchers.first_mut() else {
            return Vec::new();
        };
        let mut best: Vec<(u32, u32, Vec<u32>)> = scored
            .into_iter()
            .map(|(score, i)| {
                let mut matched = Vec::new();
                let entry = &index.entries[i as usize];
                let optimal = pattern.indices(entry.path.slice(..), matcher, &mut matched);
                matched.sort_unstable();
                matched.dedup();
                (optimal.unwrap_or(score), i, matched)
            })
            .collect();
        best.sort_unstable_by_key(|(score, i, _)| key(&(*score, *i)));
        best.truncate(limit);
        let matches = best
            .into_iter()
            .map(|(_, i, matched)| Self::to_match(index, i as usize, matched))
            .collect();
        self.narrowed = Some((index.generation, query.to_string(), hits));
        matches
    }

    fn to_match(index: &FileIndex, i: usize, matched: Vec<u32>) -> FileMatch {
        let entry = &index.entries[i];
        FileMatch {
            path: entry.text(),
            is_dir: entry.is_dir,
            matched,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::completion::file_index::tests::{paths, tree};

    #[test]
    fn fuzzy_queries_rank_and_narrow_as_the_user_types() {
        let dir = tree();
        let index = FileIndex::build(dir.path());
        let mut search = FileSearch::default();
        let first = search.search(&index, "mod", 10);
        assert_eq!(
            paths(&first),
            vec!["src/tui/mod.rs", "src/tui/composer/mod.rs"]
        );
        let narrowed = search.search(&index, "cmod", 10);
        assert_eq!(
            paths(&narrowed),
            vec!["src/tui/composer/mod.rs", "src/tui/mod.rs"]
        );
        // Deleting a character searches everything again.
        let wider = search.search(&index, "mo", 10);
        assert!(wider.len() >= first.len());
        let main = search.search(&index, "srcmain", 10);
        assert_eq!(paths(&main), vec!["src/main.rs"]);
        assert_eq!(main[0].matched, vec![0, 1, 2, 4, 5, 6, 7]);
        assert!(search.search(&index, "zzz", 10).is_empty());
    }

    #[test]
    fn narrowing_finds_what_a_fresh_search_finds() {
        let dir = tree();
        let index = FileIndex::build(dir.path());
        let mut incremental = FileSearch::default();
        let query = "srctuimodrs";
        for end in 1..=query.len() {
            let typed = &query[..end];
            let fresh = FileSearch::default().search(&index, typed, 100);
            assert_eq!(
                incremental.search(&index, typed, 100),
                fresh,
                "query {typed}"
            );
        }
    }

    fn synthetic(count: usize, extra: &[&str]) -> FileIndex {
        FileIndex::from_paths(
            (0..count)
                .map(|i| format!("dir{}/sub{}/file_{i}.rs", i % 97, i % 13))
                .chain(extra.iter().map(|p| p.to_string())),
        )
    }

    #[test]
    fn parallel_scoring_matches_one_thread() {
        let index = synthetic(3 * PARALLEL_FROM, &[]);
        let mut parallel = FileSearch {
            matchers: (0..4).map(|_| matcher_for(true)).collect(),
            narrowed: None,
        };
        let mut single = FileSearch {
            matchers: vec![matcher_for(true)],
            narrowed: None,
        };
        for query in ["d", "dir1", "dir1/sub", "s5f7", "file_4"] {
            let expected = single.search(&index, query, 40);
            assert!(!expected.is_empty());
            assert_eq!(
                parallel.search(&index, query, 40),
                expected,
                "query {query}"
            );
        }
    }

    #[test]
    fn large_candidate_sets_still_rank_the_obvious_match_first() {
        let index = synthetic(GREEDY_FROM + 1_000, &["docs/README.md"]);
        let mut search = FileSearch::default();
        let found = search.search(&index, "readme", 5);
        assert_eq!(
            found.first().map(|m| m.path.as_str()),
            Some("docs/README.md")
        );
        assert_eq!(found[0].matched, vec![5, 6, 7, 8, 9, 10]);
        let found = search.search(&index, "file_20999", 5);
        assert_eq!(found[0].path, "dir47/sub4/file_20999.rs");
    }
}
