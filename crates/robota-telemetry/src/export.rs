//! The export pipelines: an OTLP/HTTP or OTLP/gRPC exporter (and the console one) per
//! signal, behind the SDK's periodic metric reader and batch log processor, each of which
//! exports on its own thread — recording a measurement or an event only queues it. Shutting down flushes
//! what is queued but waits at most a bounded time: a collector that refuses connections or
//! accepts and never answers costs the session nothing but that bound at exit.

use std::sync::{Arc, OnceLock, mpsc};
use std::time::{Duration, Instant};

use opentelemetry::KeyValue;
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::logs::{
    BatchConfigBuilder, BatchLogProcessor, LogExporter, SdkLoggerProvider,
};
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};

use crate::TelemetryError;
use crate::config::{OtlpProtocol, OtlpTarget, TelemetryConfig, Temporality};
use crate::console::{ConsoleLogExporter, ConsoleMetricExporter};
use crate::grpc::{self, GrpcTarget};

/// The providers that own the export threads.
pub(crate) struct Pipelines {
    pub meters: Option<SdkMeterProvider>,
    pub loggers: Option<SdkLoggerProvider>,
}

impl Pipelines {
    /// Builds the pipelines `config` asks for; `version` is `service.version`.
    pub(crate) fn build(config: &TelemetryConfig, version: &str) -> Result<Self, TelemetryError> {
        let resource = resource(config, version);
        let client = LazyClient::new(config.export_timeout);
        let meters = config
            .metrics
            .any()
            .then(|| meter_provider(config, resource.clone(), &client))
            .transpose()?;
        let loggers = config
            .logs
            .any()
            .then(|| logger_provider(config, resource, &client))
            .transpose()?;
        Ok(Pipelines { meters, loggers })
    }

    /// Flushes and stops both pipelines, waiting at most `budget` in all. What the
    /// collector has not taken by then is dropped (the export threads end with the process).
    pub(crate) fn shutdown(self, budget: Duration) -> bool {
        let deadline = Instant::now() + budget;
        let (done_tx, done_rx) = mpsc::channel();
        let mut pending = 0;
        if let Some(meters) = self.meters {
            pending += spawn_shutdown(done_tx.clone(), move || meters.shutdown().is_ok());
        }
        if let Some(loggers) = self.loggers {
            pending += spawn_shutdown(done_tx, move || loggers.shutdown().is_ok());
        }
        let mut all_ok = true;
        for _ in 0..pending {
            let left = deadline.saturating_duration_since(Instant::now());
            match done_rx.recv_timeout(left) {
                Ok(ok) => all_ok &= ok,
                Err(_) => return false,
            }
        }
        all_ok
    }
}

/// Runs `stop` on a thread of its own that reports on `done`; 1 when it started.
fn spawn_shutdown(done: mpsc::Sender<bool>, stop: impl FnOnce() -> bool + Send + 'static) -> usize {
    let started = std::thread::Builder::new()
        .name("robota-telemetry-shutdown".into())
        .spawn(move || {
            let _ = done.send(stop());
        });
    usize::from(started.is_ok())
}

fn resource(config: &TelemetryConfig, version: &str) -> Resource {
    let mut attributes: Vec<KeyValue> = config
        .resource
        .iter()
        .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
        .collect();
    if !config.resource.iter().any(|(k, _)| k == "service.version") {
        attributes.push(KeyValue::new("service.version", version.to_string()));
    }
    Resource::builder_empty()
        .with_attributes(attributes)
        .build()
}

/// The blocking client the OTLP exporters post with, built on the first export (on an
/// export thread, off the session's start and off any async runtime, where a blocking
/// reqwest client may not be made). It connects within a second, so a collector that is not
/// there fails fast.
#[derive(Debug, Clone)]
pub(crate) struct LazyClient {
    timeout: Duration,
    client: Arc<OnceLock<Result<reqwest::blocking::Client, String>>>,
}

impl LazyClient {
    fn new(timeout: Duration) -> Self {
        LazyClient {
            timeout,
            client: Arc::new(OnceLock::new()),
        }
    }

    fn get(&self) -> Result<&reqwest::blocking::Client, HttpError> {
        let timeout = self.timeout;
        self.client
            .get_or_init(|| {
                // robota's trust roots (`NODE_EXTRA_CA_CERTS` included) and proxies.
                robota_core::http_client::blocking_client_builder()
                    .connect_timeout(Duration::from_secs(1).min(timeout))
                    .timeout(timeout)
                    .build()
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|e| HttpError::from(e.clone()))
    }
}

#[async_trait::async_trait]
impl HttpClient for LazyClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        self.get()?.send_bytes(request).await
    }
}

/// The HTTP encoding of `target`; `None` for gRPC.
fn http_protocol(target: &OtlpTarget) -> Option<Protocol> {
    match target.protocol {
        OtlpProtocol::HttpProtobuf => Some(Protocol::HttpBinary),
        OtlpProtocol::HttpJson => Some(Protocol::HttpJson),
        OtlpProtocol::Grpc => None,
    }
}

fn grpc_target<'a>(config: &'a TelemetryConfig, target: &'a OtlpTarget) -> GrpcTarget<'a> {
    GrpcTarget {
        endpoint: &target.endpoint,
        headers: &config.headers,
        timeout: config.export_timeout,
    }
}

fn meter_provider(
    config: &TelemetryConfig,
    resource: Resource,
    client: &LazyClient,
) -> Result<SdkMeterProvider, TelemetryError> {
    let temporality = match config.temporality {
        Temporality::Delta => opentelemetry_sdk::metrics::Temporality::Delta,
        Temporality::Cumulative => opentelemetry_sdk::metrics::Temporality::Cumulative,
    };
    let mut builder = SdkMeterProvider::builder().with_resource(resource);
    let every = config.metric_interval;
    if let Some(target) = &config.metrics.otlp {
        match http_protocol(target) {
            Some(protocol) => {
                let exporter = opentelemetry_otlp::MetricExporter::builder()
                    .with_http()
                    .with_http_client(client.clone())
                    .with_endpoint(target.endpoint.clone())
                    .with_protocol(protocol)
                    .with_timeout(config.export_timeout)
                    .with_headers(config.headers.iter().cloned().collect())
                    .with_temporality(temporality)
                    .build()
                    .map_err(TelemetryError::Exporter)?;
                builder = builder.with_reader(periodic(exporter, every));
            }
            None => {
                let exporter = grpc::metric_exporter(&grpc_target(config, target), temporality)?;
                builder = builder.with_reader(periodic(exporter, every));
            }
        }
    }
    if config.metrics.console {
        builder = builder.with_reader(periodic(ConsoleMetricExporter::new(temporality), every));
    }
    Ok(builder.build())
}

fn periodic<E: PushMetricExporter>(exporter: E, every: Duration) -> PeriodicReader<E> {
    PeriodicReader::builder(exporter)
        .with_interval(every)
        .build()
}

fn logger_provider(
    config: &TelemetryConfig,
    resource: Resource,
    client: &LazyClient,
) -> Result<SdkLoggerProvider, TelemetryError> {
    let every = config.logs_interval;
    let mut builder = SdkLoggerProvider::builder().with_resource(resource);
    if let Some(target) = &config.logs.otlp {
        match http_protocol(target) {
            Some(protocol) => {
                let exporter = opentelemetry_otlp::LogExporter::builder()
                    .with_http()
                    .with_http_client(client.clone())
                    .with_endpoint(target.endpoint.clone())
                    .with_protocol(protocol)
                    .with_timeout(config.export_timeout)
                    .with_headers(config.headers.iter().cloned().collect())
                    .build()
                    .map_err(TelemetryError::Exporter)?;
                builder = builder.with_log_processor(batched(exporter, every));
            }
            None => {
                let exporter = grpc::log_exporter(&grpc_target(config, target))?;
                builder = builder.with_log_processor(batched(exporter, every));
            }
        }
    }
    if config.logs.console {
        builder = builder.with_log_processor(batched(ConsoleLogExporter, every));
    }
    Ok(builder.build())
}

fn batched<E: LogExporter + 'static>(exporter: E, every: Duration) -> BatchLogProcessor {
    BatchLogProcessor::builder(exporter)
        .with_batch_config(
            BatchConfigBuilder::default()
                .with_scheduled_delay(every)
                .build(),
        )
        .build()
}
