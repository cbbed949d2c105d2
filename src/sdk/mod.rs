//! The client-facing API: `InteractiveSession` and its `SessionEvent` stream, plus what a
//! session is assembled from — system prompt, context files, commands. Provider-neutral:
//! it receives a provider, it never builds one.
