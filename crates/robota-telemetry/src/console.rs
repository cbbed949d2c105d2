//! The `console` exporters: each metric sum and each event as one line on standard error
//! (never standard output, which `-p` and the protocol drivers write their answers to).
//! For looking at what would be sent, not for machines.

use std::fmt::Write as _;
use std::io::Write as _;
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::logs::AnyValue;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::logs::{LogBatch, LogExporter};
use opentelemetry_sdk::metrics::Temporality;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;

/// Writes metric sums to standard error.
#[derive(Debug)]
pub(crate) struct ConsoleMetricExporter {
    temporality: Temporality,
}

impl ConsoleMetricExporter {
    pub(crate) fn new(temporality: Temporality) -> Self {
        ConsoleMetricExporter { temporality }
    }
}

fn attributes<'a>(pairs: impl Iterator<Item = &'a KeyValue>) -> String {
    pairs
        .map(|kv| format!("{}={}", kv.key, kv.value))
        .collect::<Vec<_>>()
        .join(",")
}

/// One line per data point of each sum: `name{attributes} value`.
fn metric_lines(metrics: &ResourceMetrics) -> String {
    let mut out = String::new();
    for scope in metrics.scope_metrics() {
        for metric in scope.metrics() {
            let name = metric.name();
            match metric.data() {
                AggregatedMetrics::U64(MetricData::Sum(sum)) => {
                    for p in sum.data_points() {
                        let _ = writeln!(
                            out,
                            "otel metric {name}{{{}}} {}",
                            attributes(p.attributes()),
                            p.value()
                        );
                    }
                }
                AggregatedMetrics::F64(MetricData::Sum(sum)) => {
                    for p in sum.data_points() {
                        let _ = writeln!(
                            out,
                            "otel metric {name}{{{}}} {}",
                            attributes(p.attributes()),
                            p.value()
                        );
                    }
                }
                _ => {}
            }
        }
    }
    out
}

impl PushMetricExporter for ConsoleMetricExporter {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        let _ = std::io::stderr().write_all(metric_lines(metrics).as_bytes());
        Ok(())
    }

    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }

    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        Ok(())
    }

    fn temporality(&self) -> Temporality {
        self.temporality
    }
}

/// Writes events to standard error.
#[derive(Debug)]
pub(crate) struct ConsoleLogExporter;

fn any_value(value: &AnyValue) -> String {
    match value {
        AnyValue::String(s) => format!("{:?}", s.as_str()),
        AnyValue::Int(i) => i.to_string(),
        AnyValue::Double(d) => d.to_string(),
        AnyValue::Boolean(b) => b.to_string(),
        other => format!("{other:?}"),
    }
}

impl LogExporter for ConsoleLogExporter {
    async fn export(&self, batch: LogBatch<'_>) -> OTelSdkResult {
        let mut out = String::new();
        for (record, _) in batch.iter() {
            let fields: Vec<String> = record
                .attributes_iter()
                .map(|(k, v)| format!("{k}={}", any_value(v)))
                .collect();
            let name = record.event_name().unwrap_or("event");
            let _ = writeln!(out, "otel event {name} {}", fields.join(" "));
        }
        let _ = std::io::stderr().write_all(out.as_bytes());
        Ok(())
    }
}
