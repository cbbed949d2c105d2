//! What the environment asks of telemetry: whether it is on (`CLAUDE_CODE_ENABLE_TELEMETRY`
//! or `ROBOTA_ENABLE_TELEMETRY`), which exporters, where the OTLP collector is, its headers,
//! the resource attributes, the export intervals and what events may carry. Read through a
//! lookup function, so the settings' `env` can sit over the process environment. Header
//! values are credentials: they never appear in `Debug` output or in a warning.

use std::time::Duration;

/// The variables that turn telemetry on (either one).
pub const ENABLE_VARIABLES: [&str; 2] = ["CLAUDE_CODE_ENABLE_TELEMETRY", "ROBOTA_ENABLE_TELEMETRY"];

/// Where OTLP/HTTP goes when no endpoint is set (the collector's OTLP/HTTP port).
const DEFAULT_ENDPOINT: &str = "http://localhost:4318";

/// Where OTLP/gRPC goes when no endpoint is set (the collector's OTLP/gRPC port).
const DEFAULT_GRPC_ENDPOINT: &str = "http://localhost:4317";

/// How an OTLP exporter encodes its requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OtlpProtocol {
    /// `http/protobuf` (the default).
    HttpProtobuf,
    /// `http/json`.
    HttpJson,
    /// `grpc`: the OTLP services over HTTP/2.
    Grpc,
}

/// One signal's OTLP destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtlpTarget {
    /// The full URL requests are posted to (`…/v1/metrics`, `…/v1/logs`); for gRPC the
    /// collector's address (`http://host:4317`), the service's path being fixed.
    pub endpoint: String,
    /// The encoding.
    pub protocol: OtlpProtocol,
}

/// Where one signal (metrics, or logs/events) is exported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SignalExport {
    /// To an OTLP collector (`otlp`).
    pub otlp: Option<OtlpTarget>,
    /// To standard error, one line per record (`console`).
    pub console: bool,
}

impl SignalExport {
    /// Whether anything is exported.
    pub fn any(&self) -> bool {
        self.otlp.is_some() || self.console
    }
}

/// How metric sums are reported (`OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Temporality {
    /// Each export carries what happened since the last one (Claude Code's default).
    Delta,
    /// Each export carries the total since the session started.
    Cumulative,
}

/// Telemetry as the environment configures it; only built when telemetry is on.
#[derive(Clone, PartialEq, Eq)]
pub struct TelemetryConfig {
    /// Where metrics go.
    pub metrics: SignalExport,
    /// Where events (OTel log records) go.
    pub logs: SignalExport,
    /// Headers sent with every OTLP request (`OTEL_EXPORTER_OTLP_HEADERS`).
    pub headers: Vec<(String, String)>,
    /// Resource attributes: `service.name` and `OTEL_RESOURCE_ATTRIBUTES`.
    pub resource: Vec<(String, String)>,
    /// `OTEL_METRIC_EXPORT_INTERVAL` (default 60 s).
    pub metric_interval: Duration,
    /// `OTEL_LOGS_EXPORT_INTERVAL` (default 5 s).
    pub logs_interval: Duration,
    /// `OTEL_EXPORTER_OTLP_TIMEOUT` (default 10 s): one export's limit, on the export
    /// threads; the session never waits for it.
    pub export_timeout: Duration,
    /// `OTEL_LOG_USER_PROMPTS`: prompts' text is sent (otherwise `<REDACTED>`).
    pub log_user_prompts: bool,
    /// `OTEL_LOG_ASSISTANT_RESPONSES` (when unset, as `OTEL_LOG_USER_PROMPTS`): answers'
    /// text is sent (otherwise `<REDACTED>`).
    pub log_assistant_responses: bool,
    /// `OTEL_METRICS_INCLUDE_SESSION_ID` (default on).
    pub include_session_id: bool,
    /// `OTEL_METRICS_INCLUDE_VERSION` (default off).
    pub include_version: bool,
    /// `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE` (default delta).
    pub temporality: Temporality,
    /// `TERM_PROGRAM`, as the `terminal.type` attribute.
    pub terminal_type: Option<String>,
}

impl std::fmt::Debug for TelemetryConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let header_names: Vec<&str> = self.headers.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("TelemetryConfig")
            .field("metrics", &self.metrics)
            .field("logs", &self.logs)
            .field("header_names", &header_names)
            .field("resource", &self.resource)
            .field("metric_interval", &self.metric_interval)
            .field("logs_interval", &self.logs_interval)
            .field("log_user_prompts", &self.log_user_prompts)
            .finish_non_exhaustive()
    }
}

/// Reads one variable; blank counts as unset.
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

impl TelemetryConfig {
    /// The configuration `lookup` describes, or `None` when telemetry is off (the default)
    /// or nothing would be exported. What cannot be honoured is said in `warnings`.
    pub fn from_lookup(lookup: Lookup<'_>, warnings: &mut Vec<String>) -> Option<Self> {
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        if !ENABLE_VARIABLES
            .iter()
            .any(|v| get(v).is_some_and(|v| truthy(&v)))
        {
            return None;
        }
        let metrics = signal_export(&get, Signal::Metrics, warnings);
        let logs = signal_export(&get, Signal::Logs, warnings);
        if !metrics.any() && !logs.any() {
            return None;
        }
        let millis = |name: &str, default: u64| {
            Duration::from_millis(
                get(name)
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(default),
            )
        };
        Some(TelemetryConfig {
            metrics,
            logs,
            headers: get("OTEL_EXPORTER_OTLP_HEADERS")
                .map(|v| sendable_headers(parse_pairs(&v), warnings))
                .unwrap_or_default(),
            resource: resource(&get),
            metric_interval: millis("OTEL_METRIC_EXPORT_INTERVAL", 60_000),
            logs_interval: millis("OTEL_LOGS_EXPORT_INTERVAL", 5_000),
            export_timeout: millis("OTEL_EXPORTER_OTLP_TIMEOUT", 10_000),
            log_user_prompts: get("OTEL_LOG_USER_PROMPTS").is_some_and(|v| truthy(&v)),
            log_assistant_responses: get("OTEL_LOG_ASSISTANT_RESPONSES")
                .or_else(|| get("OTEL_LOG_USER_PROMPTS"))
                .is_some_and(|v| truthy(&v)),
            include_session_id: get("OTEL_METRICS_INCLUDE_SESSION_ID").is_none_or(|v| truthy(&v)),
            include_version: get("OTEL_METRICS_INCLUDE_VERSION").is_some_and(|v| truthy(&v)),
            temporality: match get("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE") {
                Some(v) if v.trim().eq_ignore_ascii_case("cumulative") => Temporality::Cumulative,
                _ => Temporality::Delta,
            },
            terminal_type: get("TERM_PROGRAM"),
        })
    }
}

#[derive(Clone, Copy)]
enum Signal {
    Metrics,
    Logs,
}

impl Signal {
    fn upper(self) -> &'static str {
        match self {
            Signal::Metrics => "METRICS",
            Signal::Logs => "LOGS",
        }
    }

    fn path(self) -> &'static str {
        match self {
            Signal::Metrics => "/v1/metrics",
            Signal::Logs => "/v1/logs",
        }
    }
}

/// `OTEL_<SIGNAL>_EXPORTER` (default `otlp`) and, for OTLP, the signal's endpoint and
/// protocol.
fn signal_export(
    get: &dyn Fn(&str) -> Option<String>,
    signal: Signal,
    warnings: &mut Vec<String>,
) -> SignalExport {
    let variable = format!("OTEL_{}_EXPORTER", signal.upper());
    let mut export = SignalExport::default();
    let list = get(&variable).unwrap_or_else(|| "otlp".to_string());
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        match name.to_ascii_lowercase().as_str() {
            "otlp" => export.otlp = otlp_target(get, signal, warnings),
            "console" => export.console = true,
            "none" => {}
            other => warnings.push(format!(
                "{variable}={other} is not supported by robota (use otlp, console or none); that exporter is off"
            )),
        }
    }
    export
}

fn otlp_target(
    get: &dyn Fn(&str) -> Option<String>,
    signal: Signal,
    warnings: &mut Vec<String>,
) -> Option<OtlpTarget> {
    let upper = signal.upper();
    let protocol_variable = format!("OTEL_EXPORTER_OTLP_{upper}_PROTOCOL");
    let (variable, protocol) = match get(&protocol_variable) {
        Some(p) => (protocol_variable, p),
        None => (
            "OTEL_EXPORTER_OTLP_PROTOCOL".to_string(),
            get("OTEL_EXPORTER_OTLP_PROTOCOL").unwrap_or_else(|| "http/protobuf".to_string()),
        ),
    };
    let protocol = match protocol.trim().to_ascii_lowercase().as_str() {
        "http/protobuf" => OtlpProtocol::HttpProtobuf,
        "http/json" => OtlpProtocol::HttpJson,
        "grpc" => OtlpProtocol::Grpc,
        other => {
            warnings.push(format!(
                "{variable}={other} is not supported (use grpc, http/protobuf or http/json); OTLP {} export is off",
                upper.to_ascii_lowercase()
            ));
            return None;
        }
    };
    let endpoint = match get(&format!("OTEL_EXPORTER_OTLP_{upper}_ENDPOINT")) {
        Some(full) => full.trim().to_string(),
        // gRPC's path is the service's: the base address is the endpoint.
        None if protocol == OtlpProtocol::Grpc => get("OTEL_EXPORTER_OTLP_ENDPOINT")
            .unwrap_or_else(|| DEFAULT_GRPC_ENDPOINT.into())
            .trim()
            .to_string(),
        None => {
            let base =
                get("OTEL_EXPORTER_OTLP_ENDPOINT").unwrap_or_else(|| DEFAULT_ENDPOINT.into());
            format!("{}{}", base.trim().trim_end_matches('/'), signal.path())
        }
    };
    Some(OtlpTarget { endpoint, protocol })
}

/// `service.name` (`OTEL_SERVICE_NAME`, default `robota`) and `OTEL_RESOURCE_ATTRIBUTES`.
fn resource(get: &dyn Fn(&str) -> Option<String>) -> Vec<(String, String)> {
    let mut attributes = get("OTEL_RESOURCE_ATTRIBUTES")
        .map(|v| parse_pairs(&v))
        .unwrap_or_default();
    let service = get("OTEL_SERVICE_NAME");
    attributes.retain(|(k, _)| !(k == "service.name" && service.is_some()));
    if let Some(name) = service {
        attributes.push(("service.name".into(), name));
    } else if !attributes.iter().any(|(k, _)| k == "service.name") {
        attributes.push(("service.name".into(), "robota".into()));
    }
    attributes
}

/// The headers an HTTP request (and gRPC's metadata) can carry: a name of token characters
/// (not ending in `-bin`, gRPC's binary metadata) and a value of visible ASCII. The others
/// are left out and said, by name only (values are credentials).
fn sendable_headers(
    headers: Vec<(String, String)>,
    warnings: &mut Vec<String>,
) -> Vec<(String, String)> {
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    let visible = |c: char| c == ' ' || c == '\t' || c.is_ascii_graphic();
    headers
        .into_iter()
        .filter(|(name, value)| {
            let ok = name.chars().all(token)
                && !name.to_ascii_lowercase().ends_with("-bin")
                && value.chars().all(visible);
            if !ok {
                warnings.push(format!(
                    "OTEL_EXPORTER_OTLP_HEADERS: the header {name:?} cannot be sent (its name or value holds characters a header cannot); it is left out"
                ));
            }
            ok
        })
        .collect()
}

/// `key=value,key=value` with percent-encoded values (the W3C baggage form the OTel
/// variables use); malformed entries are skipped.
pub fn parse_pairs(text: &str) -> Vec<(String, String)> {
    text.split(',')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), percent_decode(v.trim())))
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

fn percent_decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
}

/// `1`, `true`, `yes`, `on` (any case).
fn truthy(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(vars: &[(&str, &str)]) -> (Option<TelemetryConfig>, Vec<String>) {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let lookup = move |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        let mut warnings = Vec::new();
        (
            TelemetryConfig::from_lookup(&lookup, &mut warnings),
            warnings,
        )
    }

    #[test]
    fn off_unless_enabled() {
        assert!(
            config(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://x:4318")])
                .0
                .is_none()
        );
        assert!(config(&[("CLAUDE_CODE_ENABLE_TELEMETRY", "0")]).0.is_none());
        assert!(config(&[("ROBOTA_ENABLE_TELEMETRY", "1")]).0.is_some());
    }

    #[test]
    fn endpoints_per_signal_and_defaults() {
        let (c, _) = config(&[
            ("CLAUDE_CODE_ENABLE_TELEMETRY", "1"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"),
            (
                "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
                "http://logs:9999/ingest",
            ),
        ]);
        let c = c.unwrap();
        assert_eq!(
            c.metrics.otlp.unwrap().endpoint,
            "http://collector:4318/v1/metrics"
        );
        assert_eq!(c.logs.otlp.unwrap().endpoint, "http://logs:9999/ingest");
        assert_eq!(c.metric_interval, Duration::from_secs(60));
        assert!(!c.log_user_prompts && c.include_session_id && !c.include_version);
        assert!(!c.log_assistant_responses);
        let (prompts, _) = config(&[
            ("CLAUDE_CODE_ENABLE_TELEMETRY", "1"),
            ("OTEL_LOG_USER_PROMPTS", "1"),
        ]);
        assert!(prompts.unwrap().log_assistant_responses);
        let (not_answers, _) = config(&[
            ("CLAUDE_CODE_ENABLE_TELEMETRY", "1"),
            ("OTEL_LOG_USER_PROMPTS", "1"),
            ("OTEL_LOG_ASSISTANT_RESPONSES", "0"),
        ]);
        assert!(!not_answers.unwrap().log_assistant_responses);
        assert_eq!(c.resource, vec![("service.name".into(), "robota".into())]);
    }

    #[test]
    fn grpc_targets_the_collector_s_address_and_per_signal_protocols_win() {
        let (c, warnings) = config(&[
            ("CLAUDE_CODE_ENABLE_TELEMETRY", "1"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "http/json"),
        ]);
        let c = c.unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let metrics = c.metrics.otlp.unwrap();
        assert_eq!(metrics.protocol, OtlpProtocol::Grpc);
        assert_eq!(metrics.endpoint, "http://localhost:4317");
        let logs = c.logs.otlp.unwrap();
        assert_eq!(logs.protocol, OtlpProtocol::HttpJson);
        assert_eq!(logs.endpoint, "http://localhost:4318/v1/logs");
        let (c, _) = config(&[
            ("CLAUDE_CODE_ENABLE_TELEMETRY", "1"),
            ("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "grpc"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "https://collector.corp:4317"),
        ]);
        let c = c.unwrap();
        assert_eq!(
            c.metrics.otlp.unwrap().endpoint,
            "https://collector.corp:4317"
        );
        assert_eq!(c.logs.otlp.unwrap().protocol, OtlpProtocol::HttpProtobuf);
    }

    #[test]
    fn an_unknown_protocol_is_refused_by_name_and_that_export_is_off() {
        let (c, warnings) = config(&[
            ("CLAUDE_CODE_ENABLE_TELEMETRY", "1"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "thrift"),
            ("OTEL_LOGS_EXPORTER", "console"),
        ]);
        let c = c.unwrap();
        assert!(c.metrics.otlp.is_none() && c.logs.console);
        assert!(
            warnings[0].contains("OTEL_EXPORTER_OTLP_PROTOCOL=thrift"),
            "{warnings:?}"
        );
    }

    #[test]
    fn headers_and_resource_attributes_are_decoded_and_header_values_never_printed() {
        let (c, _) = config(&[
            ("CLAUDE_CODE_ENABLE_TELEMETRY", "true"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "Authorization=Bearer%20s3cret,x-team=a",
            ),
            ("OTEL_RESOURCE_ATTRIBUTES", "team=core,service.name=cc"),
        ]);
        let c = c.unwrap();
        assert_eq!(
            c.headers[0],
            ("Authorization".into(), "Bearer s3cret".into())
        );
        assert!(c.resource.contains(&("service.name".into(), "cc".into())));
        assert!(!format!("{c:?}").contains("s3cret"));
        let (c, warnings) = config(&[
            ("CLAUDE_CODE_ENABLE_TELEMETRY", "true"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "bad name=s3cret,x-ok=1,x-line=a%0Ab",
            ),
        ]);
        assert_eq!(c.unwrap().headers, [("x-ok".to_string(), "1".to_string())]);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("\"bad name\"") && !warnings[0].contains("s3cret"));
    }

    #[test]
    fn none_everywhere_is_off() {
        let (c, _) = config(&[
            ("CLAUDE_CODE_ENABLE_TELEMETRY", "1"),
            ("OTEL_METRICS_EXPORTER", "none"),
            ("OTEL_LOGS_EXPORTER", "none"),
        ]);
        assert!(c.is_none());
    }
}
