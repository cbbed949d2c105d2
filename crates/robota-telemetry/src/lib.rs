//! robota's OpenTelemetry export: the metrics and events Claude Code documents, under the
//! same names and attributes (`claude_code.session.count`, `claude_code.token.usage`,
//! `claude_code.user_prompt` …) so a dashboard built for Claude Code reads robota's, plus
//! robota's own (`robota.compaction.count`, `robota.sandbox.refusal.count`). Off by
//! default; on with `CLAUDE_CODE_ENABLE_TELEMETRY=1` or `ROBOTA_ENABLE_TELEMETRY=1` and the
//! standard `OTEL_*` variables (`config`). Exported over OTLP/HTTP (protobuf or JSON),
//! OTLP/gRPC (`grpc`) or to standard error (`export`, `console`) on the SDK's own threads:
//! recording never waits on the network, and shutting down waits a bounded time. What the
//! session records goes through [`Telemetry`] (`record`); it knows nothing of sessions'
//! events.

#![deny(missing_docs)]

pub mod config;
mod console;
mod events;
mod export;
mod grpc;
mod record;

pub use config::{Lookup, TelemetryConfig};
pub use events::{AssistantResponse, Compaction, RetriesExhausted};
pub use record::{
    ApiError, ApiRequest, Decision, DecisionSource, Identity, StartType, Telemetry, ToolDecision,
    ToolResult,
};

/// Why telemetry could not be started.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// An OTLP exporter could not be built (an endpoint that is not a URL …).
    #[error("cannot set up the OTLP exporter: {0}")]
    Exporter(#[source] opentelemetry_otlp::ExporterBuildError),
    /// The OTLP/gRPC exporter's runtime could not be made.
    #[error("cannot start the OTLP/gRPC exporter's runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The collector's address is not one a gRPC channel can use.
    #[error("the OTLP/gRPC endpoint {endpoint:?} cannot be used: {reason}")]
    Endpoint {
        /// The endpoint as configured.
        endpoint: String,
        /// Why.
        reason: String,
    },
}
