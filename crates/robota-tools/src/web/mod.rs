//! The machinery behind WebFetch and WebSearch: which addresses may be reached and how
//! host names resolve (`address`, `checked_resolver`), one capped download with its redirects (`fetch`),
//! turning a body into text or markdown (`content`), and the search services a WebSearch
//! without a provider-side search calls (`search_backend`).

pub mod address;
pub(crate) mod checked_resolver;
pub(crate) mod content;
pub(crate) mod fetch;
pub(crate) mod search_backend;
