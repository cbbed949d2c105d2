//! OTLP over gRPC: opentelemetry-otlp's tonic exporters on a channel robota builds — a
//! one-second connect limit and the export timeout per request, `OTEL_EXPORTER_OTLP_HEADERS`
//! as gRPC metadata, and for `https://` collectors rustls with the compiled-in Mozilla roots
//! plus robota's own (the operating system's and `NODE_EXTRA_CA_CERTS`', from robota-core's
//! `http_client`). tonic needs a tokio runtime; each exporter owns a current-thread one and
//! drives it only inside its `export`, which the SDK calls on its own export thread — the
//! session's runtime never runs an export, and recording never waits on one. gRPC connects
//! directly: `HTTPS_PROXY` is not used (tonic has no proxy support).

use std::time::Duration;

use opentelemetry_otlp::{WithExportConfig, WithTonicConfig};
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::logs::{LogBatch, LogExporter};
use opentelemetry_sdk::metrics::Temporality;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use tonic::metadata::{AsciiMetadataKey, AsciiMetadataValue, MetadataMap};
use tonic::transport::{Channel, ClientTlsConfig, Endpoint};

use crate::TelemetryError;

/// The longest a connection to the collector may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// A current-thread tokio runtime that is never dropped in an async context (which would
/// panic): it is shut down in the background instead.
#[derive(Debug)]
struct OwnRuntime(Option<tokio::runtime::Runtime>);

impl OwnRuntime {
    fn new() -> Result<Self, TelemetryError> {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .thread_name("robota-otlp-grpc")
            .build()
            .map(|runtime| OwnRuntime(Some(runtime)))
            .map_err(TelemetryError::Runtime)
    }

    /// Runs `export` to its end on this runtime. Called from within another runtime (never
    /// the case on the SDK's export threads) it fails rather than panics.
    fn run(&self, export: impl Future<Output = OTelSdkResult>) -> OTelSdkResult {
        let Some(runtime) = &self.0 else {
            return Err(OTelSdkError::AlreadyShutdown);
        };
        if tokio::runtime::Handle::try_current().is_ok() {
            return Err(OTelSdkError::InternalFailure(
                "an OTLP/gRPC export was called on an async runtime's thread".into(),
            ));
        }
        runtime.block_on(export)
    }
}

impl Drop for OwnRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

/// An exporter whose exports run on a runtime of its own.
#[derive(Debug)]
pub(crate) struct OnOwnRuntime<E> {
    exporter: E,
    runtime: OwnRuntime,
}

/// What a gRPC exporter is built from.
pub(crate) struct GrpcTarget<'a> {
    /// The collector's address (`http://host:4317`, `https://…`).
    pub endpoint: &'a str,
    /// `OTEL_EXPORTER_OTLP_HEADERS`.
    pub headers: &'a [(String, String)],
    /// One export's limit.
    pub timeout: Duration,
}

impl GrpcTarget<'_> {
    /// The lazily connecting channel (it spawns its worker on `runtime`).
    fn channel(&self, runtime: &OwnRuntime) -> Result<Channel, TelemetryError> {
        let invalid = |reason: String| TelemetryError::Endpoint {
            endpoint: self.endpoint.to_string(),
            reason,
        };
        let mut endpoint = Endpoint::from_shared(self.endpoint.to_string())
            .map_err(|e| invalid(e.to_string()))?
            .user_agent(concat!("robota/", env!("CARGO_PKG_VERSION")))
            .map_err(|e| invalid(e.to_string()))?
            .connect_timeout(CONNECT_TIMEOUT.min(self.timeout))
            .timeout(self.timeout);
        if endpoint.uri().scheme_str() == Some("https") {
            let tls = ClientTlsConfig::new()
                .with_webpki_roots()
                .trust_anchors(robota_core::http_client::added_trust_anchors());
            endpoint = endpoint
                .tls_config(tls)
                .map_err(|e| invalid(e.to_string()))?;
        }
        let Some(runtime) = &runtime.0 else {
            return Err(invalid("no runtime".into()));
        };
        let _inside = runtime.enter();
        Ok(endpoint.connect_lazy())
    }

    /// The headers as gRPC metadata (the configuration has already left out, and said,
    /// those no request can carry).
    fn metadata(&self) -> MetadataMap {
        let mut metadata = MetadataMap::new();
        for (name, value) in self.headers {
            let key = name.to_ascii_lowercase().parse::<AsciiMetadataKey>();
            if let (Ok(key), Ok(value)) = (key, value.parse::<AsciiMetadataValue>()) {
                metadata.append(key, value);
            }
        }
        metadata
    }
}

/// The OTLP/gRPC metric exporter for `target`.
pub(crate) fn metric_exporter(
    target: &GrpcTarget<'_>,
    temporality: Temporality,
) -> Result<OnOwnRuntime<opentelemetry_otlp::MetricExporter>, TelemetryError> {
    let runtime = OwnRuntime::new()?;
    let exporter = opentelemetry_otlp::MetricExporter::builder()
        .with_tonic()
        .with_channel(target.channel(&runtime)?)
        .with_metadata(target.metadata())
        .with_timeout(target.timeout)
        .with_temporality(temporality)
        .build()
        .map_err(TelemetryError::Exporter)?;
    Ok(OnOwnRuntime { exporter, runtime })
}

/// The OTLP/gRPC log (event) exporter for `target`.
pub(crate) fn log_exporter(
    target: &GrpcTarget<'_>,
) -> Result<OnOwnRuntime<opentelemetry_otlp::LogExporter>, TelemetryError> {
    let runtime = OwnRuntime::new()?;
    let exporter = opentelemetry_otlp::LogExporter::builder()
        .with_tonic()
        .with_channel(target.channel(&runtime)?)
        .with_metadata(target.metadata())
        .with_timeout(target.timeout)
        .build()
        .map_err(TelemetryError::Exporter)?;
    Ok(OnOwnRuntime { exporter, runtime })
}

impl PushMetricExporter for OnOwnRuntime<opentelemetry_otlp::MetricExporter> {
    fn export(&self, metrics: &ResourceMetrics) -> impl Future<Output = OTelSdkResult> + Send {
        std::future::ready(self.runtime.run(self.exporter.export(metrics)))
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.exporter.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.exporter.shutdown_with_timeout(timeout)
    }

    fn temporality(&self) -> Temporality {
        self.exporter.temporality()
    }
}

impl LogExporter for OnOwnRuntime<opentelemetry_otlp::LogExporter> {
    fn export(&self, batch: LogBatch<'_>) -> impl Future<Output = OTelSdkResult> + Send {
        std::future::ready(self.runtime.run(self.exporter.export(batch)))
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.exporter.shutdown_with_timeout(timeout)
    }

    fn set_resource(&mut self, resource: &opentelemetry_sdk::Resource) {
        self.exporter.set_resource(resource);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_become_lower_case_metadata() {
        let headers = [("Authorization".to_string(), "Bearer t".to_string())];
        let target = GrpcTarget {
            endpoint: "http://127.0.0.1:4317",
            headers: &headers,
            timeout: Duration::from_secs(1),
        };
        let metadata = target.metadata();
        assert_eq!(
            metadata.get("authorization").and_then(|v| v.to_str().ok()),
            Some("Bearer t")
        );
    }

    #[test]
    fn an_endpoint_that_is_no_uri_is_named_in_the_error() {
        let target = GrpcTarget {
            endpoint: "not a uri",
            headers: &[],
            timeout: Duration::from_secs(1),
        };
        let runtime = OwnRuntime::new().unwrap();
        let error = target.channel(&runtime).unwrap_err().to_string();
        assert!(error.contains("\"not a uri\""), "{error}");
    }

    #[test]
    fn an_export_called_on_an_async_runtime_fails_instead_of_panicking() {
        let own = OwnRuntime::new().unwrap();
        let other = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let result = other.block_on(async { own.run(async { Ok(()) }) });
        assert!(matches!(result, Err(OTelSdkError::InternalFailure(_))));
        assert!(own.run(async { Ok(()) }).is_ok());
    }
}
