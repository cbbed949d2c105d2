//! Running one `http` hook: the event JSON POSTed to the handler's URL with its headers
//! (`$VAR` / `${VAR}` expanded only for the variables it lists in `allowedEnvVars`). A 2xx
//! body is read like a command's stdout; any other status or a connection failure is a
//! non-blocking error — an HTTP hook cannot block by status.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::protocol::{RawRun, RunEnding};

/// What to send and where.
pub(super) struct HttpSpec<'a> {
    pub url: &'a str,
    pub headers: &'a [(String, String)],
    pub allowed_env_vars: &'a [String],
    pub env: &'a [(String, String)],
    pub body: &'a [u8],
    pub timeout: Duration,
}

pub(super) async fn run_http(
    client: &reqwest::Client,
    spec: &HttpSpec<'_>,
    cancel: &CancellationToken,
) -> RawRun {
    let failed = |message: String| RawRun {
        ending: RunEnding::Failed(message),
        stdout: String::new(),
        stderr: String::new(),
    };
    let mut request = client
        .post(spec.url)
        .timeout(spec.timeout)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(spec.body.to_vec());
    for (name, value) in spec.headers {
        request = request.header(name, expand_allowed(value, spec.allowed_env_vars, spec.env));
    }
    let exchange = async {
        let response = request.send().await?;
        let status = response.status();
        let body = response.text().await?;
        Ok::<_, reqwest::Error>((status, body))
    };
    let result = tokio::select! {
        result = exchange => result,
        _ = cancel.cancelled() => {
            return RawRun { ending: RunEnding::Cancelled, stdout: String::new(), stderr: String::new() };
        }
    };
    match result {
        Ok((status, body)) if status.is_success() => RawRun {
            ending: RunEnding::Exited(0),
            stdout: body,
            stderr: String::new(),
        },
        Ok((status, body)) => {
            let excerpt: String = body.chars().take(200).collect();
            failed(format!("the server answered HTTP {status}: {excerpt}"))
        }
        Err(err) if err.is_timeout() => RawRun {
            ending: RunEnding::TimedOut,
            stdout: String::new(),
            stderr: String::new(),
        },
        Err(err) => failed(format!("request failed: {err}")),
    }
}

/// Expands `$NAME` and `${NAME}` for the allowed names (a credential robota uses expands to
/// nothing unless the user passes it on); other references stay as written.
fn expand_allowed(value: &str, allowed: &[String], env: &[(String, String)]) -> String {
    let mut out = value.to_string();
    for name in allowed {
        let found = env
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .or_else(|| crate::credentials::shared_variable(name))
            .filter(|v| !crate::credentials::is_withheld(name, v))
            .unwrap_or_default();
        out = out
            .replace(&format!("${{{name}}}"), &found)
            .replace(&format!("${name}"), &found);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_allowed_variables_expand_in_headers() {
        let env = vec![
            ("HOOK_TOKEN".to_string(), "t0k".to_string()),
            ("SECRET".to_string(), "s".to_string()),
        ];
        let allowed = vec!["HOOK_TOKEN".to_string()];
        assert_eq!(
            expand_allowed("Bearer ${HOOK_TOKEN} $SECRET", &allowed, &env),
            "Bearer t0k $SECRET"
        );
        assert_eq!(expand_allowed("x $HOOK_TOKEN", &allowed, &env), "x t0k");
    }
}
