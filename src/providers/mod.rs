//! HTTP adapters for model APIs (Anthropic now; OpenAI, OpenAI-compatible and Gemini
//! later), the shared SSE decoder and the retry policy. Each adapter implements
//! `core::Provider`; nothing above this layer sees a wire format.
